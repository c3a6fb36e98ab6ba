//! globset crate.
