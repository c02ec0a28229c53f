//! The uneven all-to-all (dist_all_to_all_v): rank i sends its block j to rank j,
//! which receives it as its block i; each block has its own length.
use std::ptr;

use crate::comm::Comm;
use crate::dtype::{describe, Element};
use crate::error::{check, Error, Result};
use crate::request::Request;
use crate::sys;

/// Where each rank's block sits in one buffer of an uneven all-to-all: a count per
/// communicator rank (elements; zeros allowed) and, optionally, each block's
/// offset (elements). Without offsets the blocks are packed in rank order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocks {
    counts: Vec<u64>,
    offsets: Option<Vec<u64>>,
}

impl Blocks {
    /// Blocks of `counts[j]` elements packed in rank order.
    pub fn packed(counts: &[usize]) -> Blocks {
        Blocks { counts: counts.iter().map(|&c| c as u64).collect(), offsets: None }
    }

    /// Block j is `counts[j]` elements at element `offsets[j]` (one offset per count).
    pub fn at(counts: &[usize], offsets: &[usize]) -> Blocks {
        Blocks { offsets: Some(offsets.iter().map(|&o| o as u64).collect()), ..Blocks::packed(counts) }
    }

    /// The elements a buffer needs to hold every block.
    pub fn extent(&self) -> usize {
        match &self.offsets {
            None => self.counts.iter().sum::<u64>() as usize,
            Some(offsets) => self.counts.iter().zip(offsets).map(|(c, o)| (c + o) as usize).max().unwrap_or(0),
        }
    }

    /// The C arrays, after checking that they have one entry per rank (C reads that many).
    fn raw(&self, which: &str, size: usize) -> Result<(*const u64, *const u64)> {
        if self.counts.len() != size {
            return Err(Error::invalid(format!(
                "all_to_all_v: {which} has {} counts for a communicator of {size} ranks",
                self.counts.len()
            )));
        }
        let offsets = match &self.offsets {
            None => ptr::null(),
            Some(offsets) if offsets.len() == size => offsets.as_ptr(),
            Some(offsets) => {
                return Err(Error::invalid(format!(
                    "all_to_all_v: {which} has {} offsets for a communicator of {size} ranks",
                    offsets.len()
                )))
            }
        };
        Ok((self.counts.as_ptr(), offsets))
    }
}

impl<'ctx> Comm<'ctx> {
    /// Sends block j of `send` (as `send_blocks` places it) to rank j, and receives
    /// rank j's block for this rank into block j of `recv`. `send_blocks` counts on
    /// rank i must equal `recv_blocks` counts of rank j at i, else DIST_ERR_MISMATCH.
    pub fn all_to_all_v<T: Element>(&self, send: &[T], send_blocks: &Blocks, recv: &mut [T], recv_blocks: &Blocks) -> Result<()> {
        self.issue_all_to_all_v(send, send_blocks, (recv.as_mut_ptr(), recv.len()), recv_blocks, None)
    }

    /// The non-blocking form: the request owns both buffers and the block tables;
    /// [`Request::wait`] returns `recv` with the result.
    pub fn all_to_all_v_start<T: Element>(
        &self,
        send: Vec<T>,
        send_blocks: Blocks,
        mut recv: Vec<T>,
        recv_blocks: Blocks,
    ) -> Result<Request<'_, T>> {
        let mut raw = ptr::null_mut();
        let target = (recv.as_mut_ptr(), recv.len());
        self.issue_all_to_all_v(&send, &send_blocks, target, &recv_blocks, Some(&mut raw))?;
        // The Vecs' heap blocks do not move when the Vecs do.
        Ok(Request::holding(raw, recv, Box::new((send, send_blocks, recv_blocks))))
    }

    fn issue_all_to_all_v<T: Element>(
        &self,
        send: &[T],
        send_blocks: &Blocks,
        (recv, recv_len): (*mut T, usize),
        recv_blocks: &Blocks,
        request: Option<&mut *mut sys::dist_request_t>,
    ) -> Result<()> {
        let size = self.size()? as usize;
        let (send_counts, send_offsets) = send_blocks.raw("send_blocks", size)?;
        let (recv_counts, recv_offsets) = recv_blocks.raw("recv_blocks", size)?;
        let send = describe(send.as_ptr(), send.len());
        let recv = describe(recv, recv_len);
        let out = request.map_or(ptr::null_mut(), |r| r as *mut _);
        // SAFETY: a live communicator; the arrays hold `size` entries (checked) and
        // the buffers stay alive and unaliased for the call (the library checks that
        // each block lies inside its buffer's count): borrowed slices, or Vecs the
        // returned Request owns.
        check(unsafe {
            sys::dist_all_to_all_v(self.as_raw(), &send, send_counts, send_offsets, &recv, recv_counts, recv_offsets, out)
        })
    }
}
