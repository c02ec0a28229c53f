//! Errors: a failed C call becomes an `Error` carrying its status and message.
use std::ffi::CStr;
use std::fmt;
use std::sync::Arc;

use crate::sys;

/// An error of the caller's own code that made a call fail (an all-gather's).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A libdistribute call failed: `status` is the C status code (negative) and
/// `message` the text of `dist_last_error()` at the time of the failure. When the
/// caller's own code made it fail, that error is its `source()`.
#[derive(Debug, Clone)]
pub struct Error {
    status: i32,
    message: String,
    source: Option<Arc<dyn std::error::Error + Send + Sync + 'static>>,
}

/// Equal status and message (the source is not compared).
impl PartialEq for Error {
    fn eq(&self, other: &Error) -> bool {
        (self.status, &self.message) == (other.status, &other.message)
    }
}

impl Eq for Error {}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The error of the call that just failed on this thread.
    pub(crate) fn last(status: i32) -> Error {
        // SAFETY: dist_last_error never returns NULL; the text is copied at once.
        let message = unsafe { CStr::from_ptr(sys::dist_last_error()) }.to_string_lossy().into_owned();
        Error { status, message, source: None }
    }

    /// An error with the given status and message (a callback's, reported with its replica).
    pub(crate) fn new(status: i32, message: impl Into<String>) -> Error {
        Error { status, message: message.into(), source: None }
    }

    /// This error, caused by `source` (named in the message, and its `source()`).
    pub(crate) fn caused_by(mut self, source: BoxError) -> Error {
        self.message = format!("{} ({source})", self.message);
        self.source = Some(Arc::from(source));
        self
    }

    /// An error found by the binding before calling C (same shape as the library's).
    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::new(sys::DIST_ERR_INVALID_ARGUMENT, message)
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

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|source| source as &(dyn std::error::Error + 'static))
    }
}

/// Ok(()) for DIST_OK, else the thread's last error.
pub(crate) fn check(status: i32) -> Result<()> {
    if status == sys::DIST_OK {
        Ok(())
    } else {
        Err(Error::last(status))
    }
}
