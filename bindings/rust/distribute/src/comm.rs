//! Communicators and the seven collectives.
//!
//! Blocking calls take slices (`&[T]` to send, `&mut [T]` to receive); the
//! `*_start` calls take ownership of a `Vec<T>` and give it back from
//! [`Request::wait`], so no buffer can be freed or touched while the call runs.
use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::context::{millis, Context};
use crate::dtype::{describe, Element, Op};
use crate::error::{check, Error, Result};
use crate::request::Request;
use crate::sys;

/// All-reduce algorithm choice (dist_allreduce_algorithm_t).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllreduceAlgorithm {
    Auto,
    Ring,
    Rabenseifner,
    RecursiveDoubling,
    /// Through the segment the ranks share; needs [`CommPath::SharedMemory`]
    /// (else `DIST_ERR_UNSUPPORTED`).
    SharedMemory,
    /// Shared memory within each host and UCX messages between hosts (the
    /// hierarchical all-reduces, chosen by size); needs [`CommPath::Hierarchical`]
    /// (else `DIST_ERR_UNSUPPORTED`).
    Hierarchical,
}

impl AllreduceAlgorithm {
    pub fn raw(self) -> sys::dist_allreduce_algorithm_t {
        match self {
            AllreduceAlgorithm::Auto => sys::DIST_ALLREDUCE_AUTO,
            AllreduceAlgorithm::Ring => sys::DIST_ALLREDUCE_RING,
            AllreduceAlgorithm::Rabenseifner => sys::DIST_ALLREDUCE_RABENSEIFNER,
            AllreduceAlgorithm::RecursiveDoubling => sys::DIST_ALLREDUCE_RECURSIVE_DOUBLING,
            AllreduceAlgorithm::SharedMemory => sys::DIST_ALLREDUCE_SHARED_MEMORY,
            AllreduceAlgorithm::Hierarchical => sys::DIST_ALLREDUCE_HIERARCHICAL,
        }
    }
}

/// How a communicator's collectives travel (dist_comm_path_t), decided by all its
/// ranks when it is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommPath {
    /// One rank: nothing travels (DIST_COMM_PATH_SELF).
    SingleRank,
    /// UCX messages between ranks.
    PointToPoint,
    /// A memory segment shared by all ranks, on one host.
    SharedMemory,
    /// Shared memory within each host, UCX messages between hosts.
    Hierarchical,
    /// Calls on CUDA memory: NCCL ([`Comm::device_path`]).
    Nccl,
    /// Calls on CUDA memory: through pinned host memory ([`Comm::device_path`]).
    Staged,
}

impl CommPath {
    pub fn from_raw(path: sys::dist_comm_path_t) -> Option<CommPath> {
        match path {
            sys::DIST_COMM_PATH_SELF => Some(CommPath::SingleRank),
            sys::DIST_COMM_PATH_POINT_TO_POINT => Some(CommPath::PointToPoint),
            sys::DIST_COMM_PATH_SHARED_MEMORY => Some(CommPath::SharedMemory),
            sys::DIST_COMM_PATH_HIERARCHICAL => Some(CommPath::Hierarchical),
            sys::DIST_COMM_PATH_NCCL => Some(CommPath::Nccl),
            sys::DIST_COMM_PATH_STAGED => Some(CommPath::Staged),
            _ => None,
        }
    }
}

/// A collective (dist_collective_t): the seven and all_to_all_v, to ask which
/// algorithm one runs and to name the rows of [`Comm::stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Collective {
    AllReduce,
    Reduce,
    Broadcast,
    AllGather,
    ReduceScatter,
    AllToAll,
    Barrier,
    /// [`Comm::all_to_all_v`]; for [`Comm::algorithm`], `bytes` is its largest block.
    AllToAllV,
}

impl Collective {
    pub const ALL: [Collective; 8] = [
        Collective::AllReduce,
        Collective::Reduce,
        Collective::Broadcast,
        Collective::AllGather,
        Collective::ReduceScatter,
        Collective::AllToAll,
        Collective::Barrier,
        Collective::AllToAllV,
    ];

    pub fn from_raw(collective: sys::dist_collective_t) -> Option<Collective> {
        Collective::ALL.into_iter().find(|c| c.raw() == collective)
    }

    pub fn raw(self) -> sys::dist_collective_t {
        match self {
            Collective::AllReduce => sys::DIST_COLLECTIVE_ALL_REDUCE,
            Collective::Reduce => sys::DIST_COLLECTIVE_REDUCE,
            Collective::Broadcast => sys::DIST_COLLECTIVE_BROADCAST,
            Collective::AllGather => sys::DIST_COLLECTIVE_ALL_GATHER,
            Collective::ReduceScatter => sys::DIST_COLLECTIVE_REDUCE_SCATTER,
            Collective::AllToAll => sys::DIST_COLLECTIVE_ALL_TO_ALL,
            Collective::Barrier => sys::DIST_COLLECTIVE_BARRIER,
            Collective::AllToAllV => sys::DIST_COLLECTIVE_ALL_TO_ALL_V,
        }
    }
}

/// dist_comm_options_t; `None` keeps the current setting's default.
#[derive(Debug, Clone, Default)]
pub struct CommOptions {
    pub timeout: Option<Duration>,
    pub allreduce: Option<AllreduceAlgorithm>,
    /// Time every call for [`Comm::stats`] (off by default: two clock reads per call).
    pub timing: Option<bool>,
    /// How long a call waits for its peers before each waiting rank logs who is
    /// behind and where (default 30 s); `Duration::ZERO`: no warning.
    pub stall_warning: Option<Duration>,
    /// Float SUM, PROD and MEAN reductions combine the ranks in rank order, the
    /// same bits on every path (off by default).
    pub deterministic: Option<bool>,
}

/// One row of [`Comm::stats`]: the calls of one collective that ran on one path
/// under one algorithm (dist_comm_stat_t).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommStat {
    pub collective: Collective,
    pub path: CommPath,
    /// dist_comm_algorithm's name, or "self", "nccl", "staged".
    pub algorithm: &'static str,
    /// The calls past their argument checks, failed ones included.
    pub calls: u64,
    pub failed: u64,
    /// Carried per rank: count times the element size (per block for all_gather
    /// and all_to_all, every block sent for all_to_all_v, none for a barrier).
    pub bytes: u64,
    /// The calls `time_ns` covers: none while timing is off.
    pub timed_calls: u64,
    pub time_ns: u64,
}

impl CommStat {
    fn from_raw(row: &sys::dist_comm_stat_t) -> Result<CommStat> {
        let collective = Collective::from_raw(row.collective)
            .ok_or_else(|| Error::invalid(format!("unknown collective {} in the communicator's stats", row.collective)))?;
        let path = CommPath::from_raw(row.path)
            .ok_or_else(|| Error::invalid(format!("unknown communicator path {} in its stats", row.path)))?;
        // SAFETY: the library's algorithm names are static NUL-terminated ASCII strings.
        let algorithm = unsafe { std::ffi::CStr::from_ptr(row.algorithm) }.to_str().unwrap_or("");
        Ok(CommStat {
            collective,
            path,
            algorithm,
            calls: row.calls,
            failed: row.failed,
            bytes: row.bytes,
            timed_calls: row.timed_calls,
            time_ns: row.time_ns,
        })
    }

    /// `time_ns` as a Duration.
    pub fn time(&self) -> Duration {
        Duration::from_nanos(self.time_ns)
    }
}

/// A communicator. Send but not Sync: the header requires calls on one
/// communicator from one thread at a time, in the same order on every member.
#[derive(Debug)]
pub struct Comm<'ctx> {
    raw: *mut sys::dist_comm_t,
    /// Set for the world communicator, which the context owns.
    world_taken: Option<&'ctx AtomicBool>,
    _context: PhantomData<&'ctx Context>,
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: a communicator may move to another thread; !Sync keeps its use single-threaded.
unsafe impl Send for Comm<'_> {}

/// Which buffers a C collective reads and writes.
struct Buffers {
    send: Option<sys::dist_buffer_t>,
    recv: Option<sys::dist_buffer_t>,
}

impl Buffers {
    fn send(&self) -> *const sys::dist_buffer_t {
        self.send.as_ref().map_or(ptr::null(), |b| b)
    }
    fn recv(&self) -> *const sys::dist_buffer_t {
        self.recv.as_ref().map_or(ptr::null(), |b| b)
    }
}

fn pair<T: Element>(send: &[T], recv: &mut [T]) -> Buffers {
    Buffers { send: Some(describe(send.as_ptr(), send.len())), recv: Some(describe(recv.as_ptr(), recv.len())) }
}

fn in_place<T: Element>(data: &mut [T]) -> Buffers {
    Buffers { send: None, recv: Some(describe(data.as_ptr(), data.len())) }
}

/// One of the seven collectives, with its scalar arguments.
#[derive(Clone, Copy)]
enum Kind {
    AllReduce(Op),
    Reduce(Op, i32),
    Broadcast(i32),
    AllGather,
    ReduceScatter(Op),
    AllToAll,
    Barrier,
}

impl<'ctx> Comm<'ctx> {
    pub(crate) fn world(raw: *mut sys::dist_comm_t, _context: &'ctx Context, taken: &'ctx AtomicBool) -> Comm<'ctx> {
        Comm { raw, world_taken: Some(taken), _context: PhantomData, _not_sync: PhantomData }
    }

    pub fn as_raw(&self) -> *mut sys::dist_comm_t {
        self.raw
    }

    /// One of the header's `int32_t` queries of a communicator.
    fn query(&self, function: unsafe extern "C" fn(*const sys::dist_comm_t, *mut i32) -> sys::dist_status_t) -> Result<i32> {
        let mut value = 0;
        // SAFETY: a live handle and a valid output.
        check(unsafe { function(self.raw, &mut value) })?;
        Ok(value)
    }

    pub fn rank(&self) -> Result<i32> {
        self.query(sys::dist_comm_rank)
    }

    pub fn size(&self) -> Result<i32> {
        self.query(sys::dist_comm_size)
    }

    /// This rank's position among the ranks of its host, in rank order.
    pub fn local_rank(&self) -> Result<i32> {
        self.query(sys::dist_comm_local_rank)
    }

    /// How many ranks of this communicator run on this rank's host.
    pub fn local_size(&self) -> Result<i32> {
        self.query(sys::dist_comm_local_size)
    }

    /// How many hosts this communicator's ranks run on.
    pub fn num_hosts(&self) -> Result<i32> {
        self.query(sys::dist_comm_num_hosts)
    }

    /// How this communicator's collectives travel.
    pub fn path(&self) -> Result<CommPath> {
        let mut path = 0;
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dist_comm_path(self.raw, &mut path) })?;
        CommPath::from_raw(path).ok_or_else(|| Error::invalid(format!("unknown communicator path {path}")))
    }

    /// How this communicator's calls on CUDA memory travel ([`CommPath::Nccl`] or
    /// [`CommPath::Staged`]), which its ranks choose together at the first such
    /// call. DIST_ERR_UNAVAILABLE before that call, and in builds without CUDA.
    pub fn device_path(&self) -> Result<CommPath> {
        let mut path = 0;
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dist_comm_device_path(self.raw, &mut path) })?;
        CommPath::from_raw(path).ok_or_else(|| Error::invalid(format!("unknown communicator path {path}")))
    }

    /// The algorithm this communicator runs for `collective` with `bytes` bytes per
    /// rank: "shm_direct", "ring", "self", ... (see dist_comm_algorithm).
    pub fn algorithm(&self, collective: Collective, bytes: u64) -> Result<&'static str> {
        self.algorithm_raw(collective.raw(), bytes)
    }

    /// [`Comm::algorithm`] for a raw dist_collective_t (one read from elsewhere):
    /// the library checks the value.
    pub fn algorithm_raw(&self, collective: sys::dist_collective_t, bytes: u64) -> Result<&'static str> {
        let mut name = ptr::null();
        // SAFETY: a live handle and a valid output; the library checks `collective`.
        check(unsafe { sys::dist_comm_algorithm(self.raw, collective, bytes, &mut name) })?;
        // SAFETY: on success `name` is a static NUL-terminated ASCII string.
        Ok(unsafe { std::ffi::CStr::from_ptr(name) }.to_str().unwrap_or(""))
    }

    /// dist_comm_split (collective over this communicator): members with the same
    /// color form a new communicator ranked by (key, rank); a negative color gives None.
    pub fn split(&self, color: i32, key: i32) -> Result<Option<Comm<'ctx>>> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dist_comm_split(self.raw, color, key, &mut raw) })?;
        Ok((!raw.is_null()).then(|| Comm::owned(raw)))
    }

    /// dist_comm_split_host (collective over this communicator): the communicator
    /// of this rank's host, its ranks in this communicator's order.
    pub fn split_host(&self) -> Result<Comm<'ctx>> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dist_comm_split_host(self.raw, &mut raw) })?;
        Ok(Comm::owned(raw))
    }

    /// A communicator this value destroys when dropped.
    fn owned(raw: *mut sys::dist_comm_t) -> Comm<'ctx> {
        Comm { raw, world_taken: None, _context: PhantomData, _not_sync: PhantomData }
    }

    pub fn configure(&self, options: &CommOptions) -> Result<()> {
        let mut raw = sys::dist_comm_options_t::default();
        if let Some(t) = options.timeout {
            raw.field_mask |= sys::DIST_COMM_OPT_TIMEOUT_MS;
            raw.timeout_ms = millis(t);
        }
        if let Some(a) = options.allreduce {
            raw.field_mask |= sys::DIST_COMM_OPT_ALLREDUCE;
            raw.allreduce = a.raw();
        }
        if let Some(timing) = options.timing {
            raw.field_mask |= sys::DIST_COMM_OPT_TIMING;
            raw.timing = i32::from(timing);
        }
        if let Some(stall) = options.stall_warning {
            raw.field_mask |= sys::DIST_COMM_OPT_STALL_WARNING_MS;
            // millis saturates, so a Duration never reaches C negative; a positive
            // one under 1 ms would round to 0 (no warning): round it up instead.
            raw.stall_warning_ms = if stall.is_zero() { 0 } else { millis(stall).max(1) };
        }
        if let Some(deterministic) = options.deterministic {
            raw.field_mask |= sys::DIST_COMM_OPT_DETERMINISTIC;
            raw.deterministic = i32::from(deterministic);
        }
        // SAFETY: a live handle; no call runs concurrently on it (Comm is !Sync and
        // every pending Request borrows it).
        check(unsafe { sys::dist_comm_configure(self.raw, &raw) })
    }

    /// This communicator's counters, one row per collective, path and algorithm
    /// that ran, in the order they first ran.
    pub fn stats(&self) -> Result<Vec<CommStat>> {
        let mut count = 0u64;
        // SAFETY: a live handle; capacity 0 writes no row, so NULL stats is allowed.
        check(unsafe { sys::dist_comm_stats(self.raw, ptr::null_mut(), 0, &mut count) })?;
        loop {
            let mut rows = vec![sys::dist_comm_stat_t::default(); count as usize];
            let capacity = count;
            // SAFETY: `rows` holds `capacity` rows for the library to write.
            check(unsafe { sys::dist_comm_stats(self.raw, rows.as_mut_ptr(), capacity, &mut count) })?;
            // A request completing on the library's thread may add a row between the
            // two calls: then ask again with room for it.
            if count <= capacity {
                rows.truncate(count as usize);
                return rows.iter().map(CommStat::from_raw).collect();
            }
        }
    }

    /// Sets every counter of [`Comm::stats`] to zero. Call it between calls: a
    /// request still running may count after it.
    pub fn reset_stats(&self) -> Result<()> {
        // SAFETY: a live handle. The counters are atomics, so a request running on
        // the library's thread meanwhile only races with the reset's outcome.
        check(unsafe { sys::dist_comm_stats_reset(self.raw) })
    }

    /// Issues a collective: blocking when `request` is None.
    fn issue(&self, kind: Kind, b: &Buffers, request: Option<&mut *mut sys::dist_request_t>) -> Result<()> {
        let out = request.map_or(ptr::null_mut(), |r| r as *mut _);
        let c = self.raw;
        // SAFETY: the descriptors point into buffers the caller keeps alive and
        // unaliased for the whole call (borrowed slices, or Vecs a Request owns).
        let status = unsafe {
            match kind {
                Kind::AllReduce(op) => sys::dist_all_reduce(c, b.send(), b.recv(), op.raw(), out),
                Kind::Reduce(op, root) => sys::dist_reduce(c, b.send(), b.recv(), op.raw(), root, out),
                Kind::Broadcast(root) => sys::dist_broadcast(c, b.recv(), root, out),
                Kind::AllGather => sys::dist_all_gather(c, b.send(), b.recv(), out),
                Kind::ReduceScatter(op) => sys::dist_reduce_scatter(c, b.send(), b.recv(), op.raw(), out),
                Kind::AllToAll => sys::dist_all_to_all(c, b.send(), b.recv(), out),
                Kind::Barrier => sys::dist_barrier(c, out),
            }
        };
        check(status)
    }

    fn start<T: Element>(&self, kind: Kind, data: Vec<T>, recv_count: usize) -> Result<Request<'_, T>> {
        let buffers = Buffers { send: None, recv: Some(describe(data.as_ptr(), recv_count)) };
        let mut raw = ptr::null_mut();
        self.issue(kind, &buffers, Some(&mut raw))?;
        // The Vec's heap block does not move when the Vec does.
        Ok(Request::new(raw, data))
    }

    /// The block count of an in-place reduce-scatter over `len` elements.
    #[allow(clippy::manual_is_multiple_of)] // is_multiple_of needs a newer Rust than this crate's minimum
    fn block_of(&self, len: usize) -> Result<usize> {
        let size = self.size()? as usize;
        if len % size != 0 {
            return Err(Error::invalid(format!("reduce_scatter: {len} elements are not a multiple of the {size} ranks")));
        }
        Ok(len / size)
    }

    /// Element-wise reduction of `send` over all ranks into `recv` (same length).
    pub fn all_reduce<T: Element>(&self, send: &[T], recv: &mut [T], op: Op) -> Result<()> {
        self.issue(Kind::AllReduce(op), &pair(send, recv), None)
    }

    pub fn all_reduce_in_place<T: Element>(&self, data: &mut [T], op: Op) -> Result<()> {
        self.issue(Kind::AllReduce(op), &in_place(data), None)
    }

    /// Reduces onto `root`; `recv` is needed at the root only.
    pub fn reduce<T: Element>(&self, send: &[T], recv: Option<&mut [T]>, op: Op, root: i32) -> Result<()> {
        let buffers = Buffers {
            send: Some(describe(send.as_ptr(), send.len())),
            recv: recv.map(|r| describe(r.as_ptr(), r.len())),
        };
        self.issue(Kind::Reduce(op, root), &buffers, None)
    }

    pub fn reduce_in_place<T: Element>(&self, data: &mut [T], op: Op, root: i32) -> Result<()> {
        self.issue(Kind::Reduce(op, root), &in_place(data), None)
    }

    /// Sends `data` from `root` to every rank.
    pub fn broadcast<T: Element>(&self, data: &mut [T], root: i32) -> Result<()> {
        self.issue(Kind::Broadcast(root), &in_place(data), None)
    }

    /// `recv` (size × send.len()) gets rank r's `send` at block r.
    pub fn all_gather<T: Element>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        self.issue(Kind::AllGather, &pair(send, recv), None)
    }

    /// In place: this rank's block is already in `recv`.
    pub fn all_gather_in_place<T: Element>(&self, recv: &mut [T]) -> Result<()> {
        self.issue(Kind::AllGather, &in_place(recv), None)
    }

    /// `recv` (c elements) gets block `rank` of the reduction of `send` (size × c).
    pub fn reduce_scatter<T: Element>(&self, send: &[T], recv: &mut [T], op: Op) -> Result<()> {
        self.issue(Kind::ReduceScatter(op), &pair(send, recv), None)
    }

    /// In place: `data` holds size × c inputs; the result lands in its first c.
    pub fn reduce_scatter_in_place<T: Element>(&self, data: &mut [T], op: Op) -> Result<()> {
        let block = self.block_of(data.len())?;
        let buffers = Buffers { send: None, recv: Some(describe(data.as_ptr(), block)) };
        self.issue(Kind::ReduceScatter(op), &buffers, None)
    }

    /// Block j of this rank's `send` becomes block `rank` of rank j's `recv`.
    pub fn all_to_all<T: Element>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        self.issue(Kind::AllToAll, &pair(send, recv), None)
    }

    pub fn all_to_all_in_place<T: Element>(&self, data: &mut [T]) -> Result<()> {
        self.issue(Kind::AllToAll, &in_place(data), None)
    }

    pub fn barrier(&self) -> Result<()> {
        self.issue(Kind::Barrier, &Buffers { send: None, recv: None }, None)
    }

    // ---- Non-blocking, in place, on owned buffers ----------------------------

    pub fn all_reduce_start<T: Element>(&self, data: Vec<T>, op: Op) -> Result<Request<'_, T>> {
        let n = data.len();
        self.start(Kind::AllReduce(op), data, n)
    }

    pub fn reduce_start<T: Element>(&self, data: Vec<T>, op: Op, root: i32) -> Result<Request<'_, T>> {
        let n = data.len();
        self.start(Kind::Reduce(op, root), data, n)
    }

    pub fn broadcast_start<T: Element>(&self, data: Vec<T>, root: i32) -> Result<Request<'_, T>> {
        let n = data.len();
        self.start(Kind::Broadcast(root), data, n)
    }

    pub fn all_gather_start<T: Element>(&self, recv: Vec<T>) -> Result<Request<'_, T>> {
        let n = recv.len();
        self.start(Kind::AllGather, recv, n)
    }

    pub fn reduce_scatter_start<T: Element>(&self, data: Vec<T>, op: Op) -> Result<Request<'_, T>> {
        let block = self.block_of(data.len())?;
        self.start(Kind::ReduceScatter(op), data, block)
    }

    pub fn all_to_all_start<T: Element>(&self, data: Vec<T>) -> Result<Request<'_, T>> {
        let n = data.len();
        self.start(Kind::AllToAll, data, n)
    }

    pub fn barrier_start(&self) -> Result<Request<'_, u8>> {
        let mut raw = ptr::null_mut();
        self.issue(Kind::Barrier, &Buffers { send: None, recv: None }, Some(&mut raw))?;
        Ok(Request::new(raw, Vec::new()))
    }
}

impl Drop for Comm<'_> {
    fn drop(&mut self) {
        match self.world_taken {
            // The world is the context's: only give it back.
            Some(taken) => taken.store(false, Ordering::Release),
            // SAFETY: a split communicator, destroyed once; its requests borrowed it and are gone.
            None => unsafe { sys::dist_comm_destroy(self.raw) },
        }
    }
}
