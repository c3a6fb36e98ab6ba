//! Flexible concrete Error type built on `std::error::Error`.

/// `Result<T, Error>`
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// The `Error` type, a wrapper around a dynamic error type.
#[derive(Debug)]
pub struct Error {
    msg: String,
}

impl Error {
    /// Create a new error object from a printable error message.
    pub fn msg(msg: &str) -> Self {
        Error { msg: msg.to_owned() }
    }

    /// The message this error was created with.
    pub fn message(&self) -> &str {
        &self.msg
    }
}
