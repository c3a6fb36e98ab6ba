//! grep-pcre2 crate.
