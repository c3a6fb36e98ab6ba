//! grep-printer crate.
