//! Parameter servers (`dist_server_t`) and checkpoints of a cluster's ps tasks.
use std::ffi::{c_char, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::ptr;
use std::time::Duration;

use crate::cluster::Cluster;
use crate::context::millis;
use crate::error::{check, Error, Result};
use crate::strings::{borrowed, opt_to_c, owned, ptr as c_ptr, to_c};
use crate::sys;

/// A log sink: called with each line from the server's threads, possibly concurrently.
pub type LogFn = dyn Fn(&str) + Send + Sync;

/// dist_server_options_t; `None` takes the library's default.
#[derive(Default)]
pub struct ServerOptions<'a> {
    /// "host:port" to listen at; port 0 picks a free port. Default: the cluster task's address.
    pub address: Option<&'a str>,
    /// The cluster token (default DIST_CLUSTER_TOKEN, then DIST_CLUSTER_TOKEN_FILE).
    pub token: Option<&'a str>,
    pub token_file: Option<&'a Path>,
    /// A checkpoint root restored from (its LATEST) at start.
    pub checkpoint_dir: Option<&'a Path>,
    pub io_timeout: Option<Duration>,
    pub log: Option<Box<LogFn>>,
}

/// The standard parameter server, serving from background threads of this process.
///
/// address, describe, stop and join may be called from any thread (Send + Sync);
/// dropping it stops, joins and frees it.
pub struct Server {
    raw: *mut sys::dist_server_t,
    // The log sink the server's threads call; boxed twice so that user_data is a thin
    // pointer that stays put. Dropped after the server (see Drop).
    _log: Option<Box<Box<LogFn>>>,
}

// SAFETY: the header allows stop, join and address from any thread at any time, and
// describe reads the store under the server's own locks; destroy (Drop) is exclusive.
unsafe impl Send for Server {}
unsafe impl Sync for Server {}

unsafe extern "C" fn log_trampoline(message: *const c_char, user_data: *mut c_void) {
    // SAFETY: user_data is the Box<LogFn> the Server owns until dist_server_destroy returns.
    let sink = unsafe { &*(user_data as *const Box<LogFn>) };
    let line = borrowed(message).unwrap_or_default();
    // A panic must not unwind into C, and no call of ours waits to resume it: dropped.
    let _ = catch_unwind(AssertUnwindSafe(|| sink(&line)));
}

pub(crate) fn path_to_c(path: &Path) -> Result<CString> {
    to_c(path.to_str().ok_or_else(|| Error::invalid(format!("path {path:?} is not UTF-8")))?)
}

fn opt_path(path: Option<&Path>) -> Result<Option<CString>> {
    path.map(path_to_c).transpose()
}

impl Server {
    /// dist_server_start: serves `cluster`'s task (None when `options.address` is given).
    pub fn start(cluster: Option<&Cluster>, options: ServerOptions<'_>) -> Result<Server> {
        let (address, token) = (opt_to_c(options.address)?, opt_to_c(options.token)?);
        let (token_file, checkpoint_dir) = (opt_path(options.token_file)?, opt_path(options.checkpoint_dir)?);
        let log = options.log.map(Box::new);
        let mut raw_options = sys::dist_server_options_t {
            field_mask: 0,
            address: c_ptr(&address),
            token: c_ptr(&token),
            token_file: c_ptr(&token_file),
            checkpoint_dir: c_ptr(&checkpoint_dir),
            io_timeout_ms: options.io_timeout.map_or(0, millis),
            log: None,
            log_user_data: ptr::null_mut(),
        };
        for (bit, set) in [
            (sys::DIST_SERVER_OPT_ADDRESS, address.is_some()),
            (sys::DIST_SERVER_OPT_TOKEN, token.is_some()),
            (sys::DIST_SERVER_OPT_TOKEN_FILE, token_file.is_some()),
            (sys::DIST_SERVER_OPT_CHECKPOINT_DIR, checkpoint_dir.is_some()),
            (sys::DIST_SERVER_OPT_IO_TIMEOUT_MS, options.io_timeout.is_some()),
        ] {
            if set {
                raw_options.field_mask |= bit;
            }
        }
        if let Some(sink) = &log {
            raw_options.field_mask |= sys::DIST_SERVER_OPT_LOG;
            raw_options.log = Some(log_trampoline);
            raw_options.log_user_data = &**sink as *const Box<LogFn> as *mut c_void;
        }
        let cluster = cluster.map_or(ptr::null(), Cluster::as_raw);
        let mut raw = ptr::null_mut();
        // SAFETY: the strings live until the call returns; the log sink until Drop.
        check(unsafe { sys::dist_server_start(cluster, &raw_options, &mut raw) })?;
        Ok(Server { raw, _log: log })
    }

    pub fn as_raw(&self) -> *mut sys::dist_server_t {
        self.raw
    }

    /// The "host:port" actually listened at.
    pub fn address(&self) -> Result<String> {
        let mut out = ptr::null();
        // SAFETY: a live handle; the borrowed string is copied at once.
        check(unsafe { sys::dist_server_address(self.raw, &mut out) })?;
        Ok(borrowed(out).unwrap_or_default())
    }

    /// What the server holds, as JSON: address, stopping, requests, variables.
    pub fn describe(&self) -> Result<String> {
        let mut out = ptr::null_mut();
        // SAFETY: a live handle; the string is ours to free.
        check(unsafe { sys::dist_server_describe(self.raw, &mut out) })?;
        Ok(owned(out))
    }

    /// Waits until the server has stopped (None: without bound); DIST_ERR_TIMEOUT
    /// when it still serves at the timeout.
    pub fn join(&self, timeout: Option<Duration>) -> Result<()> {
        // SAFETY: a live handle; join may be called from any thread.
        check(unsafe { sys::dist_server_join(self.raw, timeout.map_or(-1, millis)) })
    }

    /// Asks the server to stop; join waits for it.
    pub fn stop(&self) -> Result<()> {
        // SAFETY: a live handle; stop may be called from any thread at any time.
        check(unsafe { sys::dist_server_stop(self.raw) })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SAFETY: started by dist_server_start, destroyed once; its threads have ended
        // when this returns, so the log sink is dropped only afterwards.
        unsafe { sys::dist_server_destroy(self.raw) };
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("raw", &self.raw).finish_non_exhaustive()
    }
}

/// dist_checkpoint_options_t; `None` takes the library's default.
#[derive(Debug, Default, Clone, Copy)]
pub struct CheckpointOptions<'a> {
    pub token: Option<&'a str>,
    pub token_file: Option<&'a Path>,
    /// For every server to finish (default 600 s).
    pub timeout: Option<Duration>,
}

fn with_checkpoint_options<T>(options: &CheckpointOptions<'_>, call: impl FnOnce(&sys::dist_checkpoint_options_t) -> T) -> Result<T> {
    let (token, token_file) = (opt_to_c(options.token)?, opt_path(options.token_file)?);
    let mut field_mask = 0;
    for (bit, set) in [
        (sys::DIST_CHECKPOINT_OPT_TOKEN, token.is_some()),
        (sys::DIST_CHECKPOINT_OPT_TOKEN_FILE, token_file.is_some()),
        (sys::DIST_CHECKPOINT_OPT_TIMEOUT_MS, options.timeout.is_some()),
    ] {
        if set {
            field_mask |= bit;
        }
    }
    let raw = sys::dist_checkpoint_options_t {
        field_mask,
        token: c_ptr(&token),
        token_file: c_ptr(&token_file),
        timeout_ms: options.timeout.map_or(0, millis),
    };
    Ok(call(&raw))
}

/// dist_checkpoint_save: every ps task of `cluster` saves its shards as checkpoint
/// `step` under `root`; returns "<root>/ckpt-<step>".
pub fn checkpoint_save(cluster: &Cluster, root: &Path, step: i64, options: &CheckpointOptions<'_>) -> Result<PathBuf> {
    let root = path_to_c(root)?;
    let mut out = ptr::null_mut();
    // SAFETY: a live cluster, strings alive for the call; the path is ours to free.
    let status = with_checkpoint_options(options, |o| unsafe {
        sys::dist_checkpoint_save(cluster.as_raw(), root.as_ptr(), step, o, &mut out)
    })?;
    check(status)?;
    Ok(PathBuf::from(owned(out)))
}

/// dist_checkpoint_restore: every ps task of `cluster` restores from `directory` (a
/// root, whose LATEST is used, or one ckpt-<step> directory); returns the one used.
pub fn checkpoint_restore(cluster: &Cluster, directory: &Path, options: &CheckpointOptions<'_>) -> Result<PathBuf> {
    let directory = path_to_c(directory)?;
    let mut out = ptr::null_mut();
    // SAFETY: a live cluster, strings alive for the call; the path is ours to free.
    let status = with_checkpoint_options(options, |o| unsafe {
        sys::dist_checkpoint_restore(cluster.as_raw(), directory.as_ptr(), o, &mut out)
    })?;
    check(status)?;
    Ok(PathBuf::from(owned(out)))
}
