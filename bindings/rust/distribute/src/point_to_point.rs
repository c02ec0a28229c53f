//! Point-to-point messages between two ranks of a communicator (dist_send,
//! dist_recv), apart from its collectives: a receive matches the oldest unmatched
//! send from its peer with the same tag; one (peer, tag) keeps the order sent. A
//! matched pair must agree on dtype and count, else the receive fails with
//! DIST_ERR_MISMATCH naming both sides. Each call ends by the communicator's
//! deadline at the latest.
use std::ptr;

use crate::comm::Comm;
use crate::dtype::{describe, Element};
use crate::error::{check, Result};
use crate::request::Request;
use crate::sys;

/// A receive's peer that matches a send from any rank (the result says which).
pub const ANY_SOURCE: i32 = sys::DIST_ANY_SOURCE;
/// The largest tag: tags are 0 ..= TAG_MAX.
pub const TAG_MAX: i32 = sys::DIST_TAG_MAX;

type P2pFn = unsafe extern "C" fn(
    *mut sys::dist_comm_t,
    *const sys::dist_buffer_t,
    i32,
    i32,
    *mut *mut sys::dist_request_t,
) -> sys::dist_status_t;

impl<'ctx> Comm<'ctx> {
    /// Sends `data` to rank `peer` with `tag`; returns when `data` may be reused.
    pub fn send<T: Element>(&self, data: &[T], peer: i32, tag: i32) -> Result<()> {
        self.p2p(sys::dist_send, describe(data.as_ptr(), data.len()), peer, tag, None)
    }

    /// Receives into `data` (exactly as many elements as were sent) from `peer`, or
    /// from any rank with [`ANY_SOURCE`]; returns the rank it came from.
    pub fn recv<T: Element>(&self, data: &mut [T], peer: i32, tag: i32) -> Result<i32> {
        let buffer = describe(data.as_ptr(), data.len());
        if peer != ANY_SOURCE {
            self.p2p(sys::dist_recv, buffer, peer, tag, None)?;
            return Ok(peer);
        }
        // Only a request tells the sender: wait on one while `data` stays borrowed.
        let mut raw = ptr::null_mut();
        self.p2p(sys::dist_recv, buffer, peer, tag, Some(&mut raw))?;
        let mut source = -1;
        // SAFETY: a live request, waited for (its call ended) before it is read and freed once.
        let outcome = unsafe {
            let mut status = sys::dist_request_wait(raw, -1);
            if status == sys::DIST_OK {
                status = sys::dist_request_source(raw, &mut source);
            }
            let outcome = check(status);
            sys::dist_request_free(raw);
            outcome
        };
        outcome.map(|()| source)
    }

    /// Starts a send of `data`; [`Request::wait`] gives it back once it may be reused.
    pub fn send_start<T: Element>(&self, data: Vec<T>, peer: i32, tag: i32) -> Result<Request<'_, T>> {
        let mut raw = ptr::null_mut();
        self.p2p(sys::dist_send, describe(data.as_ptr(), data.len()), peer, tag, Some(&mut raw))?;
        // The Vec's heap block does not move when the Vec does.
        Ok(Request::new(raw, data))
    }

    /// Starts a receive into `data`; [`Request::wait`] returns it filled and
    /// [`Request::wait_with_source`] also the rank it came from.
    pub fn recv_start<T: Element>(&self, data: Vec<T>, peer: i32, tag: i32) -> Result<Request<'_, T>> {
        let mut raw = ptr::null_mut();
        self.p2p(sys::dist_recv, describe(data.as_ptr(), data.len()), peer, tag, Some(&mut raw))?;
        Ok(Request::new(raw, data))
    }

    fn p2p(
        &self,
        function: P2pFn,
        buffer: sys::dist_buffer_t,
        peer: i32,
        tag: i32,
        request: Option<&mut *mut sys::dist_request_t>,
    ) -> Result<()> {
        let out = request.map_or(ptr::null_mut(), |r| r as *mut _);
        // SAFETY: a live communicator; the descriptor points into a buffer the caller
        // keeps alive and unaliased for the whole call (a borrowed slice, or a Vec
        // the returned Request owns).
        check(unsafe { function(self.as_raw(), &buffer, peer, tag, out) })
    }
}
