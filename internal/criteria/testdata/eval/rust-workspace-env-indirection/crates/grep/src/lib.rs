//! grep crate.
