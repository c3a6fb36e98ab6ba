//! grep-cli crate.
