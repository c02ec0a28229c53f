//! Contexts built through the caller's own exchange (`dist_context_create_oob`).
//!
//! The library asks for one or more all-gathers, in the same order on every rank.
//! Each runs the caller's function on a thread of its own, so that the library can
//! poll it and give up at its connect deadline. The function cannot be interrupted,
//! so it must be `'static`: an answer that comes after the library gave up is
//! dropped. An error the function returns, or an answer of the wrong shape, fails
//! the exchange and becomes the `source()` of the error returned; a panic is
//! resumed once the C call has returned, as `Strategy::run` does. No unwinding
//! ever crosses C.
use std::any::Any;
use std::ffi::c_void;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;

use crate::error::{BoxError, Error, Result};
use crate::sys;

/// The caller's all-gather, its error type erased.
pub(crate) type AllGatherFn = dyn Fn(&[u8]) -> std::result::Result<Vec<Vec<u8>>, BoxError> + Send + Sync;

enum Failure {
    Error(BoxError),
    Panic(Box<dyn Any + Send + 'static>),
}

enum Answer {
    Pending,
    Parts(Vec<Vec<u8>>),
    /// The failure, until `test` hands it to the exchange.
    Failed(Option<Failure>),
}

/// One all-gather in flight. The library's request holds one reference (from
/// `Arc::into_raw`, released by `free`), the function's thread another.
struct Gather {
    recv: *mut u8,
    answer: Mutex<Answer>,
}

// SAFETY: `recv` is only written by `test`, on the library's thread, while the
// library keeps the buffer for the request; the thread touches `answer` only.
unsafe impl Send for Gather {}
unsafe impl Sync for Gather {}

/// What the three trampolines share for one dist_context_create_oob call.
struct Exchange {
    function: Arc<AllGatherFn>,
    rank: usize,
    size: usize,
    failure: Mutex<Option<Failure>>,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Exchange {
    fn fail(&self, failure: Failure) {
        locked(&self.failure).get_or_insert(failure);
    }

    /// Starts the function on a thread of its own; the request for the library.
    fn start(&self, sent: Vec<u8>, recv: *mut u8) -> std::io::Result<*mut c_void> {
        let gather = Arc::new(Gather { recv, answer: Mutex::new(Answer::Pending) });
        let (function, mine, size, rank) = (Arc::clone(&self.function), Arc::clone(&gather), self.size, self.rank);
        thread::Builder::new().name(format!("distribute-exchange-{rank}")).spawn(move || {
            let answer = match catch_unwind(AssertUnwindSafe(|| function(&sent))) {
                Ok(Ok(parts)) => match check_answer(&parts, &sent, size, rank) {
                    Ok(()) => Answer::Parts(parts),
                    Err(error) => Answer::Failed(Some(Failure::Error(error))),
                },
                Ok(Err(error)) => Answer::Failed(Some(Failure::Error(error))),
                Err(panic) => Answer::Failed(Some(Failure::Panic(panic))),
            };
            *locked(&mine.answer) = answer;
        })?;
        Ok(Arc::into_raw(gather) as *mut c_void)
    }

    /// 0 complete (recv filled), 1 in progress, -1 failed.
    fn test(&self, gather: &Gather) -> i32 {
        let mut answer = locked(&gather.answer);
        match &mut *answer {
            Answer::Pending => 1,
            Answer::Parts(parts) => {
                for (r, part) in parts.iter().enumerate() {
                    // SAFETY: recv holds size * bytes; check_answer made every part `bytes` long.
                    unsafe { ptr::copy_nonoverlapping(part.as_ptr(), gather.recv.add(r * part.len()), part.len()) };
                }
                0
            }
            Answer::Failed(failure) => {
                if let Some(failure) = failure.take() {
                    self.fail(failure);
                }
                -1
            }
        }
    }
}

/// `size` parts as long as `sent`, this rank's own at `rank`.
fn check_answer(parts: &[Vec<u8>], sent: &[u8], size: usize, rank: usize) -> std::result::Result<(), BoxError> {
    if parts.len() != size {
        return Err(format!("the all-gather returned {} items for {size} ranks", parts.len()).into());
    }
    if let Some((r, part)) = parts.iter().enumerate().find(|(_, part)| part.len() != sent.len()) {
        return Err(format!("the all-gather returned {} bytes for rank {r}, expected {}", part.len(), sent.len()).into());
    }
    if parts[rank] != sent {
        return Err(format!("the all-gather returned at index {rank} other bytes than this rank sent").into());
    }
    Ok(())
}

/// Runs `body` for a trampoline: a panic in the binding's own code is a failed exchange.
fn guarded(exchange: &Exchange, failed: i32, body: impl FnOnce() -> i32) -> i32 {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|panic| {
        exchange.fail(Failure::Panic(panic));
        failed
    })
}

unsafe extern "C" fn allgather_trampoline(
    user_data: *mut c_void,
    send: *const c_void,
    recv: *mut c_void,
    bytes: usize,
    request: *mut *mut c_void,
) -> i32 {
    // SAFETY: user_data is the Exchange that `create` keeps alive across the C call.
    let exchange = unsafe { &*(user_data as *const Exchange) };
    guarded(exchange, 1, || {
        let sent = if bytes == 0 {
            Vec::new()
        } else {
            // SAFETY: the library passes `bytes` readable bytes at `send`.
            unsafe { std::slice::from_raw_parts(send as *const u8, bytes) }.to_vec()
        };
        match exchange.start(sent, recv as *mut u8) {
            Ok(started) => {
                // SAFETY: the library passes a writable request slot.
                unsafe { *request = started };
                0
            }
            Err(error) => {
                exchange.fail(Failure::Error(format!("could not start a thread for the all-gather: {error}").into()));
                1
            }
        }
    })
}

unsafe extern "C" fn test_trampoline(user_data: *mut c_void, request: *mut c_void) -> i32 {
    // SAFETY: as above; request is a Gather from `start` that `free` has not released.
    let (exchange, gather) = unsafe { (&*(user_data as *const Exchange), &*(request as *const Gather)) };
    guarded(exchange, -1, || exchange.test(gather))
}

unsafe extern "C" fn free_trampoline(_user_data: *mut c_void, request: *mut c_void) {
    // SAFETY: request came from Arc::into_raw in `start`; the library frees it once.
    drop(unsafe { Arc::from_raw(request as *const Gather) });
}

/// dist_context_create_oob through `function`: the new context's handle.
pub(crate) fn create(
    rank: i32,
    size: i32,
    function: Arc<AllGatherFn>,
    options: &sys::dist_context_options_t,
) -> Result<*mut sys::dist_context_t> {
    let exchange = Exchange {
        function,
        rank: usize::try_from(rank).unwrap_or(0),
        size: usize::try_from(size).unwrap_or(0),
        failure: Mutex::new(None),
    };
    let oob = sys::dist_oob_t {
        field_mask: 0,
        rank,
        size,
        allgather: Some(allgather_trampoline),
        test: Some(test_trampoline),
        free: Some(free_trampoline),
        user_data: &exchange as *const Exchange as *mut c_void,
    };
    let mut raw = ptr::null_mut();
    // SAFETY: `oob`, `exchange` and the options outlive the call.
    let status = unsafe { sys::dist_context_create_oob(&oob, options, &mut raw) };
    if status == sys::DIST_OK {
        return Ok(raw);
    }
    let error = Error::last(status);
    match exchange.failure.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner()) {
        Some(Failure::Panic(panic)) => resume_unwind(panic),
        Some(Failure::Error(source)) => Err(error.caused_by(source)),
        None => Err(error),
    }
}
