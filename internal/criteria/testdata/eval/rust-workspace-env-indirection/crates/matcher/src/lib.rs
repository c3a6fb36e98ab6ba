//! grep-matcher crate.
