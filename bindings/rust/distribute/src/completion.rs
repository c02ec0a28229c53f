//! Completion callbacks (dist_request_on_complete): a boxed `FnOnce` that the
//! library calls once, on the thread that completed the request.
//!
//! The box goes to C as user_data and the trampoline takes it back, so it is freed
//! exactly once: by the trampoline after it ran, or by [`register`] when the
//! library refused it (then C never calls it). A request whose callback is
//! registered may be dropped before its call ends: its buffers are parked here and
//! dropped after the callback ran, when the library no longer touches them.
use std::any::Any;
use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::strings::borrowed;
use crate::sys;

/// What a dropped request leaves behind: buffers the call may still use.
pub(crate) type Parked = Box<dyn Any + Send>;

/// Whether the callback of one request has run, and what waits for it.
#[derive(Debug, Default)]
pub(crate) struct Completion {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    ran: bool,
    parked: Option<Parked>,
}

impl Completion {
    /// Keeps `buffers` until the callback has run (drops them now if it has).
    pub(crate) fn park(&self, buffers: Parked) {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !state.ran {
            state.parked = Some(buffers);
        }
        // else: dropped here, the call is over.
    }

    /// The callback has run: the call is over, the parked buffers can go.
    fn ran(&self) {
        let parked = {
            let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            state.ran = true;
            state.parked.take()
        };
        drop(parked); // outside the lock: a Vec's drop does not call back, but keep it short
    }
}

type Callback = Box<dyn FnOnce(Result<()>) + Send + 'static>;

/// The user_data C holds: the function and the request's completion state.
struct Pending {
    callback: Callback,
    completion: Arc<Completion>,
}

unsafe extern "C" fn trampoline(user_data: *mut c_void, status: sys::dist_status_t, message: *const c_char) {
    // SAFETY: user_data is the Box<Pending> register() leaked for exactly this one call.
    let pending = unsafe { Box::from_raw(user_data as *mut Pending) };
    let Pending { callback, completion } = *pending;
    let result = if status == sys::DIST_OK {
        Ok(())
    } else {
        Err(Error::new(status, borrowed(message).unwrap_or_default()))
    };
    // A panic must not unwind into the library's thread, and no caller waits to
    // resume it (the panic hook has already reported it): dropped, as a detached
    // thread's would be.
    let _ = catch_unwind(AssertUnwindSafe(move || callback(result)));
    completion.ran();
}

/// Registers `callback` on a live request: Ok(its completion state), or the
/// library's error (the callback is then dropped unrun).
pub(crate) fn register(
    raw: *mut sys::dist_request_t,
    callback: impl FnOnce(Result<()>) + Send + 'static,
) -> Result<Arc<Completion>> {
    let completion = Arc::new(Completion::default());
    let pending = Box::into_raw(Box::new(Pending { callback: Box::new(callback), completion: Arc::clone(&completion) }));
    // SAFETY: a live request; on success the library owns `pending` until the
    // trampoline takes it back (possibly at once, on this thread).
    let status = unsafe { sys::dist_request_on_complete(raw, Some(trampoline), pending as *mut c_void) };
    if status != sys::DIST_OK {
        let error = Error::last(status);
        // SAFETY: refused, so C never calls the trampoline: the box is still ours, freed once here.
        drop(unsafe { Box::from_raw(pending) });
        return Err(error);
    }
    Ok(completion)
}
