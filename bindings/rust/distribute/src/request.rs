//! A collective in flight.
use std::marker::PhantomData;
use std::ptr;
use std::time::Duration;

use crate::comm::Comm;
use crate::context::millis;
use crate::error::{check, Result};
use crate::sys;

/// Owns the buffer of a non-blocking collective until it completes. Dropping an
/// unfinished request waits for the call first (bounded by the communicator's
/// deadline), so the buffer is never freed under it; forgetting one (mem::forget)
/// leaks the buffer rather than freeing it early.
#[derive(Debug)]
pub struct Request<'c, T> {
    raw: *mut sys::dist_request_t,
    data: Vec<T>,
    _comm: PhantomData<&'c Comm<'c>>,
}

impl<'c, T> Request<'c, T> {
    pub(crate) fn new(raw: *mut sys::dist_request_t, data: Vec<T>) -> Request<'c, T> {
        Request { raw, data, _comm: PhantomData }
    }

    /// Ok(true) once the call has completed successfully; its error if it failed.
    pub fn test(&mut self) -> Result<bool> {
        let mut done = 0;
        // SAFETY: a live request, used from one thread (&mut self).
        check(unsafe { sys::dist_request_test(self.raw, &mut done) })?;
        Ok(done != 0)
    }

    /// Waits up to `timeout`: Ok(false) if it ran out (the request stays valid).
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<bool> {
        // SAFETY: as above.
        let status = unsafe { sys::dist_request_wait(self.raw, millis(timeout)) };
        if status == sys::DIST_ERR_TIMEOUT {
            // This wait ran out (test: not done) or the call itself ended (test: its status).
            return self.test();
        }
        check(status).map(|()| true)
    }

    /// Waits for completion and returns the buffer with the result.
    pub fn wait(mut self) -> Result<Vec<T>> {
        let raw = std::mem::replace(&mut self.raw, ptr::null_mut());
        // SAFETY: a live request; freed exactly once, after the call ended.
        let status = unsafe { sys::dist_request_wait(raw, -1) };
        unsafe { sys::dist_request_free(raw) };
        check(status)?;
        Ok(std::mem::take(&mut self.data))
    }
}

impl<T> Drop for Request<'_, T> {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        // SAFETY: wait (bounded by the deadline) before freeing, so the buffer
        // outlives the call; then free once.
        unsafe {
            sys::dist_request_wait(self.raw, -1);
            sys::dist_request_free(self.raw);
        }
    }
}
