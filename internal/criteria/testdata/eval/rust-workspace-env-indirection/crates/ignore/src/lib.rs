//! ignore crate.
