//! Joining the cluster: `dist_context_t` as `Context`.
use std::path::PathBuf;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::cluster::Cluster;
use crate::comm::Comm;
use crate::error::{check, BoxError, Error, Result};
use crate::exchange::{self, AllGatherFn};
use crate::server::path_to_c;
use crate::strings::{self, opt_to_c, ptr as c_ptr};
use crate::sys;

/// dist_context_options_t; `None` takes the library's default.
#[derive(Debug, Clone, Default)]
pub struct ContextOptions {
    /// The cluster token (else DIST_CLUSTER_TOKEN, else DIST_CLUSTER_TOKEN_FILE).
    pub token: Option<String>,
    pub token_file: Option<String>,
    /// How long to wait for every member (default 120 s).
    pub connect_timeout: Option<Duration>,
    /// Default deadline of every collective (default 60 s).
    pub timeout: Option<Duration>,
    /// Records a timeline: this rank writes "<timeline>.<rank>.json", a JSON array of
    /// Chrome trace events, complete once the context and everything made from it
    /// are dropped. Turns on timing. Default: DIST_TIMELINE's value, else off.
    pub timeline: Option<PathBuf>,
}

/// Calls `f` with the C options of `options`, whose strings live until it returns.
fn with_raw_options<T>(options: &ContextOptions, f: impl FnOnce(&sys::dist_context_options_t) -> Result<T>) -> Result<T> {
    let token = opt_to_c(options.token.as_deref())?;
    let token_file = opt_to_c(options.token_file.as_deref())?;
    let timeline = options.timeline.as_deref().map(path_to_c).transpose()?;
    let mut raw = sys::dist_context_options_t::default();
    if token.is_some() {
        raw.field_mask |= sys::DIST_CONTEXT_OPT_TOKEN;
    }
    if token_file.is_some() {
        raw.field_mask |= sys::DIST_CONTEXT_OPT_TOKEN_FILE;
    }
    if timeline.is_some() {
        raw.field_mask |= sys::DIST_CONTEXT_OPT_TIMELINE;
    }
    (raw.token, raw.token_file, raw.timeline) = (c_ptr(&token), c_ptr(&token_file), c_ptr(&timeline));
    if let Some(t) = options.connect_timeout {
        raw.field_mask |= sys::DIST_CONTEXT_OPT_CONNECT_TIMEOUT_MS;
        raw.connect_timeout_ms = millis(t);
    }
    if let Some(t) = options.timeout {
        raw.field_mask |= sys::DIST_CONTEXT_OPT_TIMEOUT_MS;
        raw.timeout_ms = millis(t);
    }
    f(&raw)
}

pub(crate) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// This process's membership in the cluster.
///
/// rank, size and abort may be called from any thread (Send + Sync). The world
/// communicator is handed out once at a time ([`Context::world`]) so that the C
/// rule "one thread at a time per communicator" holds; communicators borrow the
/// context, so they are always dropped before it.
#[derive(Debug)]
pub struct Context {
    raw: *mut sys::dist_context_t,
    world_taken: AtomicBool,
}

// SAFETY: the header allows rank/size/abort from any thread at any time; comm_world is
// serialised by `world_taken`; destroy runs in Drop with exclusive access.
unsafe impl Send for Context {}
unsafe impl Sync for Context {}

impl Context {
    /// dist_context_create: blocks until every member has connected.
    pub fn new(cluster: &Cluster, options: &ContextOptions) -> Result<Context> {
        with_raw_options(options, |raw_options| {
            let mut raw = ptr::null_mut();
            // SAFETY: a live cluster; the option strings outlive the call.
            check(unsafe { sys::dist_context_create(cluster.as_raw(), raw_options, &mut raw) })?;
            Ok(Context::adopt(raw))
        })
    }

    /// dist_context_create_oob: joins through the caller's own exchange, for
    /// frameworks that already have a rendezvous (torch's Store, an MPI
    /// communicator, JAX's key-value store) and no cluster spec.
    ///
    /// `all_gather` gets this rank's bytes and returns every rank's, rank r's at
    /// index r, each as long as the bytes given. It is called one or more times,
    /// in the same order on every rank, each time on a thread of its own (hence
    /// `Send + Sync + 'static`); the connect deadline bounds the whole join. An
    /// error it returns fails the join: the `Error` names it and has it as its
    /// `source()`. A panic in it is resumed here once the C call has returned. The
    /// cluster token authenticates the members as with a cluster (the options,
    /// else DIST_CLUSTER_TOKEN / DIST_CLUSTER_TOKEN_FILE).
    pub fn from_exchange<F, E>(rank: i32, size: i32, all_gather: F, options: &ContextOptions) -> Result<Context>
    where
        F: Fn(&[u8]) -> std::result::Result<Vec<Vec<u8>>, E> + Send + Sync + 'static,
        E: Into<BoxError>,
    {
        let function: Arc<AllGatherFn> = Arc::new(move |sent: &[u8]| all_gather(sent).map_err(Into::into));
        with_raw_options(options, |raw_options| Ok(Context::adopt(exchange::create(rank, size, function, raw_options)?)))
    }

    fn adopt(raw: *mut sys::dist_context_t) -> Context {
        Context { raw, world_taken: AtomicBool::new(false) }
    }

    pub fn as_raw(&self) -> *mut sys::dist_context_t {
        self.raw
    }

    /// Joins with the default options.
    pub fn join(cluster: &Cluster) -> Result<Context> {
        Context::new(cluster, &ContextOptions::default())
    }

    pub fn rank(&self) -> Result<i32> {
        let mut rank = 0;
        // SAFETY: a live handle; allowed from any thread.
        check(unsafe { sys::dist_context_rank(self.raw, &mut rank) })?;
        Ok(rank)
    }

    pub fn size(&self) -> Result<i32> {
        let mut size = 0;
        // SAFETY: as above.
        check(unsafe { sys::dist_context_size(self.raw, &mut size) })?;
        Ok(size)
    }

    /// Makes every pending and later call on every communicator fail with
    /// DIST_ERR_ABORTED, here and on every peer.
    pub fn abort(&self, reason: Option<&str>) -> Result<()> {
        let reason = opt_to_c(reason)?;
        // SAFETY: a live handle; allowed from any thread.
        check(unsafe { sys::dist_context_abort(self.raw, c_ptr(&reason)) })
    }

    /// The flight recorder (dist_context_dump): JSON text with this rank (rank,
    /// size, task, host_id, pid, steady_ns, system_ns), lost_peers and
    /// communicators, each with its last calls (seq, kind, dtype, count, state
    /// "in flight"/"done"/"failed", status, path, algorithm, ...).
    pub fn dump(&self) -> Result<String> {
        let mut out = ptr::null_mut();
        // SAFETY: a live handle; allowed from any thread, also while calls hang.
        // The string is ours to free.
        check(unsafe { sys::dist_context_dump(self.raw, &mut out) })?;
        Ok(strings::owned(out))
    }

    /// The communicator of all members. Only one `Comm` for the world exists at a
    /// time; asking again while it lives is an error.
    pub fn world(&self) -> Result<Comm<'_>> {
        if self.world_taken.swap(true, Ordering::AcqRel) {
            return Err(Error::invalid("the world communicator is already in use (drop the other Comm first)"));
        }
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle; only one thread gets here at a time (world_taken).
        if let Err(e) = check(unsafe { sys::dist_comm_world(self.raw, &mut raw) }) {
            self.world_taken.store(false, Ordering::Release);
            return Err(e);
        }
        Ok(Comm::world(raw, self, &self.world_taken))
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: every Comm borrows the context, so none is left; destroyed once.
        unsafe { sys::dist_context_destroy(self.raw) };
    }
}
