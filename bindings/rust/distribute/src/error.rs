//! Errors: a failed C call becomes an `Error` carrying its status and message.
use std::ffi::CStr;
use std::fmt;

use crate::sys;

/// A libdistribute call failed: `status` is the C status code (negative) and
/// `message` the text of `dist_last_error()` at the time of the failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    status: i32,
    message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The error of the call that just failed on this thread.
    pub(crate) fn last(status: i32) -> Error {
        // SAFETY: dist_last_error never returns NULL; the text is copied at once.
        let message = unsafe { CStr::from_ptr(sys::dist_last_error()) }.to_string_lossy().into_owned();
        Error { status, message }
    }

    /// An error with the given status and message (a callback's, reported with its replica).
    pub(crate) fn new(status: i32, message: impl Into<String>) -> Error {
        Error { status, message: message.into() }
    }

    /// An error found by the binding before calling C (same shape as the library's).
    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error { status: sys::DIST_ERR_INVALID_ARGUMENT, message: message.into() }
    }

    pub fn status(&self) -> i32 {
        self.status
    }

    /// "DIST_ERR_INVALID_ARGUMENT" and so on.
    pub fn status_name(&self) -> &'static str {
        status_string(self.status)
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// A peer or link failed (-200 ..= -299): the communicator or cluster is affected.
    pub fn is_peer_failure(&self) -> bool {
        (-299..=-200).contains(&self.status)
    }
}

/// The static name of a status code.
pub fn status_string(status: i32) -> &'static str {
    // SAFETY: the library returns static storage, never NULL.
    unsafe { CStr::from_ptr(sys::dist_status_string(status)) }.to_str().unwrap_or("DIST_ERR_UNKNOWN")
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status_name(), self.message)
    }
}

impl std::error::Error for Error {}

/// Ok(()) for DIST_OK, else the thread's last error.
pub(crate) fn check(status: i32) -> Result<()> {
    if status == sys::DIST_OK {
        Ok(())
    } else {
        Err(Error::last(status))
    }
}
