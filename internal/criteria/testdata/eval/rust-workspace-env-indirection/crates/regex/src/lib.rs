//! grep-regex crate.
