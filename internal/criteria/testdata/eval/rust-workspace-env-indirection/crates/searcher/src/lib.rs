//! grep-searcher crate.
