//! A call in flight: a non-blocking collective, send or receive.
use std::marker::PhantomData;
use std::ptr;
use std::sync::Arc;
use std::time::Duration;

use crate::comm::Comm;
use crate::completion::{self, Completion, Parked};
use crate::context::millis;
use crate::error::{check, Error, Result};
use crate::sys;

/// Owns the buffers of a non-blocking call until it completes. Dropping an
/// unfinished request waits for the call first (bounded by the communicator's
/// deadline), so the buffers are never freed under it; forgetting one
/// (mem::forget) leaks them rather than freeing them early. A request with a
/// completion callback ([`Request::on_complete`]) does not wait when dropped: its
/// buffers stay alive until the callback has run.
#[derive(Debug)]
pub struct Request<'c, T: Send + 'static> {
    raw: *mut sys::dist_request_t,
    data: Vec<T>,
    /// What else the call reads until it ends (an uneven all-to-all's send buffer).
    held: Option<Parked>,
    /// Set by on_complete.
    completion: Option<Arc<Completion>>,
    _comm: PhantomData<&'c Comm<'c>>,
}

impl<'c, T: Send + 'static> Request<'c, T> {
    pub(crate) fn new(raw: *mut sys::dist_request_t, data: Vec<T>) -> Request<'c, T> {
        Request { raw, data, held: None, completion: None, _comm: PhantomData }
    }

    /// A request that also keeps `held` alive until the call ends.
    pub(crate) fn holding(raw: *mut sys::dist_request_t, data: Vec<T>, held: Parked) -> Request<'c, T> {
        Request { raw, data, held: Some(held), completion: None, _comm: PhantomData }
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
    pub fn wait(self) -> Result<Vec<T>> {
        self.finish(false).map(|(data, _)| data)
    }

    /// The communicator rank a completed receive came from (the sender's for
    /// [`crate::ANY_SOURCE`]). An error for a request that is not a receive or has
    /// not completed successfully (test or wait_timeout has not returned true).
    pub fn source(&self) -> Result<i32> {
        let mut source = 0;
        // SAFETY: a live request and a valid output.
        check(unsafe { sys::dist_request_source(self.raw, &mut source) })?;
        Ok(source)
    }

    /// Waits for a receive and returns its buffer and the rank it came from.
    pub fn wait_with_source(self) -> Result<(Vec<T>, i32)> {
        self.finish(true)
    }

    /// Waits, reads the source if asked, frees the request and gives the buffer back.
    fn finish(mut self, with_source: bool) -> Result<(Vec<T>, i32)> {
        let raw = std::mem::replace(&mut self.raw, ptr::null_mut());
        let mut source = -1;
        // SAFETY: a live request and a valid output; freed exactly once, after the call ended.
        let outcome = unsafe {
            let mut status = sys::dist_request_wait(raw, -1);
            if status == sys::DIST_OK && with_source {
                status = sys::dist_request_source(raw, &mut source);
            }
            let outcome = check(status);
            sys::dist_request_free(raw);
            outcome
        };
        outcome?;
        Ok((std::mem::take(&mut self.data), source))
    }

    /// Runs `callback` once when the call completes, with Ok(()) or the call's
    /// error, on the thread that completed it (a library thread), or at once on
    /// this thread if it already has. It must return quickly and must not block
    /// on this communicator (no blocking call, no wait on one of its requests);
    /// send its result to a channel instead. A panic in it is reported by the
    /// panic hook and dropped. At most one per request (a second is the library's
    /// DIST_ERR_INVALID_ARGUMENT). The request stays usable (test, wait, source);
    /// dropping it no longer waits for the call.
    pub fn on_complete(&mut self, callback: impl FnOnce(Result<()>) + Send + 'static) -> Result<()> {
        if self.raw.is_null() {
            return Err(Error::invalid("on_complete: the request is already finished"));
        }
        let completion = completion::register(self.raw, callback)?;
        self.completion = Some(completion);
        Ok(())
    }
}

impl<T: Send + 'static> Drop for Request<'_, T> {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        if let Some(completion) = &self.completion {
            // The callback tells when the call is over: park the buffers with it and
            // release the handle now (the library lets the call finish in the background).
            let buffers: Parked = Box::new((std::mem::take(&mut self.data), self.held.take()));
            completion.park(buffers);
            // SAFETY: a live request, freed once.
            unsafe { sys::dist_request_free(self.raw) };
            return;
        }
        // SAFETY: wait (bounded by the deadline) before freeing, so the buffers
        // outlive the call; then free once.
        unsafe {
            sys::dist_request_wait(self.raw, -1);
            sys::dist_request_free(self.raw);
        }
    }
}
