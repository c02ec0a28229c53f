//! Strategies (`dist_strategy_t`): tf.distribute's replicas, reductions and fused
//! gradient all-reduce.
//!
//! Thread rules, from the header: the thread that created a strategy is its
//! cross-replica context, so `Strategy` is neither Send nor Sync. Replica
//! functions run on the library's threads: the closure given to
//! [`Strategy::run`] must be `Sync`, and the [`Replica`] it receives stays on its
//! thread.
use std::ffi::CString;
use std::marker::PhantomData;
use std::path::Path;
use std::ptr;
use std::time::Duration;

use crate::cluster::Cluster;
use crate::context::Context;
use crate::dtype::{describe, Element, Op};
use crate::error::{check, Error, Result};
use crate::input::InputContext;
use crate::optimizer::Optimizer;
use crate::replica::{self, Replica};
use crate::server::path_to_c;
use crate::strings::{borrowed, opt_to_c, owned, ptr as c_ptr};
use crate::sys;
use crate::variable::{Variable, VariableOptions};

/// dist_strategy_kind_t.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrategyKind {
    OneDevice,
    Mirrored,
    MultiWorkerMirrored,
    CentralStorage,
    /// tf.distribute's ParameterServerStrategy: variables live on the cluster's "ps" tasks.
    ParameterServer,
}

impl StrategyKind {
    pub fn raw(self) -> sys::dist_strategy_kind_t {
        match self {
            StrategyKind::OneDevice => sys::DIST_STRATEGY_ONE_DEVICE,
            StrategyKind::Mirrored => sys::DIST_STRATEGY_MIRRORED,
            StrategyKind::MultiWorkerMirrored => sys::DIST_STRATEGY_MULTI_WORKER_MIRRORED,
            StrategyKind::CentralStorage => sys::DIST_STRATEGY_CENTRAL_STORAGE,
            StrategyKind::ParameterServer => sys::DIST_STRATEGY_PARAMETER_SERVER,
        }
    }

    pub fn from_raw(kind: sys::dist_strategy_kind_t) -> Option<StrategyKind> {
        [
            StrategyKind::OneDevice,
            StrategyKind::Mirrored,
            StrategyKind::MultiWorkerMirrored,
            StrategyKind::CentralStorage,
            StrategyKind::ParameterServer,
        ]
        .into_iter()
            .find(|k| k.raw() == kind)
    }
}

/// Cross-worker communication (dist_communication_t) of MultiWorkerMirrored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Communication {
    Auto,
    Ring,
    /// One NCCL communicator over every GPU replica of every worker: needs GPU
    /// replicas on distinct GPUs and NCCL (DIST_ERR_UNSUPPORTED on CPU replicas).
    Nccl,
}

impl Communication {
    pub fn raw(self) -> sys::dist_communication_t {
        match self {
            Communication::Auto => sys::DIST_COMMUNICATION_AUTO,
            Communication::Ring => sys::DIST_COMMUNICATION_RING,
            Communication::Nccl => sys::DIST_COMMUNICATION_NCCL,
        }
    }
}

/// dist_cross_device_ops_t (tf.distribute's CrossDeviceOps): how the GPU replicas
/// of one worker combine their values, for Mirrored and the local step of
/// MultiWorkerMirrored. CPU replicas take only `Auto` and `ReductionToOneDevice`
/// to a CPU device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrossDeviceOps {
    /// `NcclAllReduce` when every replica is a GPU and NCCL is available, else
    /// `ReductionToOneDevice` (the default).
    Auto,
    /// One NCCL communicator over the local GPUs.
    NcclAllReduce,
    /// Two halves summed on their first GPU by peer copies, the sums exchanged.
    HierarchicalCopy,
    /// Every value copied to `reduce_to_device`, summed there, copied back.
    ReductionToOneDevice,
}

impl CrossDeviceOps {
    pub fn raw(self) -> sys::dist_cross_device_ops_t {
        match self {
            CrossDeviceOps::Auto => sys::DIST_CROSS_DEVICE_OPS_AUTO,
            CrossDeviceOps::NcclAllReduce => sys::DIST_CROSS_DEVICE_OPS_NCCL_ALL_REDUCE,
            CrossDeviceOps::HierarchicalCopy => sys::DIST_CROSS_DEVICE_OPS_HIERARCHICAL_COPY,
            CrossDeviceOps::ReductionToOneDevice => sys::DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE,
        }
    }

    pub fn from_raw(ops: sys::dist_cross_device_ops_t) -> Option<CrossDeviceOps> {
        [
            CrossDeviceOps::Auto,
            CrossDeviceOps::NcclAllReduce,
            CrossDeviceOps::HierarchicalCopy,
            CrossDeviceOps::ReductionToOneDevice,
        ]
        .into_iter()
        .find(|o| o.raw() == ops)
    }
}

/// dist_placement_t: where a ParameterServer strategy puts each new variable (shard).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Servers 0, 1, 2, ... in turn (the default).
    RoundRobin,
    /// The server holding the fewest bytes so far.
    GreedyBytes,
}

/// dist_strategy_options_t; `None` takes the library's default.
#[derive(Debug, Clone, Default)]
pub struct StrategyOptions<'a> {
    pub kind: Option<StrategyKind>,
    /// Logical CPU devices = local replicas (1..64).
    pub num_cpu_devices: Option<i32>,
    pub communication: Option<Communication>,
    /// Gradient fusion bucket size (0: 8 MiB).
    pub bytes_per_pack: Option<u64>,
    /// Deadline of each cross-worker collective.
    pub timeout: Option<Duration>,
    /// Bind each replica thread to its own core (needs hwloc).
    pub bind_threads: Option<bool>,
    /// ParameterServer without a context: the cluster whose "ps" job holds the
    /// variables (borrowed by the strategy for its whole life).
    pub cluster: Option<&'a Cluster>,
    /// ParameterServer: the cluster token the servers expect, or a file holding it
    /// (default DIST_CLUSTER_TOKEN, then DIST_CLUSTER_TOKEN_FILE).
    pub token: Option<&'a str>,
    pub token_file: Option<&'a Path>,
    pub placement: Option<Placement>,
    /// Mirrored and MultiWorkerMirrored only (default `Auto`).
    pub cross_device_ops: Option<CrossDeviceOps>,
    /// `ReductionToOneDevice`: the device it sums on, "CPU:0" or "GPU:i" (default
    /// the first replica's device).
    pub reduce_to_device: Option<&'a str>,
    /// NcclAllReduce and HierarchicalCopy only (as given or as `Auto` chose them;
    /// CPU replicas refuse it): `apply_gradients` packs each dtype's gradients into
    /// this many packs of about equal size (TF's num_packs, 1..64) instead of
    /// buckets of `bytes_per_pack`.
    pub num_packs: Option<i32>,
}

impl StrategyOptions<'_> {
    /// The C struct, with the strings it points to (alive as long as it is used).
    fn to_raw(&self) -> Result<(sys::dist_strategy_options_t, [Option<CString>; 3])> {
        let strings = [opt_to_c(self.token)?, self.token_file.map(path_to_c).transpose()?, opt_to_c(self.reduce_to_device)?];
        let mut raw = sys::dist_strategy_options_t::default();
        let mut set = |bit: u64, present: bool| {
            if present {
                raw.field_mask |= bit;
            }
        };
        set(sys::DIST_STRATEGY_OPT_KIND, self.kind.is_some());
        set(sys::DIST_STRATEGY_OPT_NUM_CPU_DEVICES, self.num_cpu_devices.is_some());
        set(sys::DIST_STRATEGY_OPT_COMMUNICATION, self.communication.is_some());
        set(sys::DIST_STRATEGY_OPT_BYTES_PER_PACK, self.bytes_per_pack.is_some());
        set(sys::DIST_STRATEGY_OPT_TIMEOUT_SECONDS, self.timeout.is_some());
        set(sys::DIST_STRATEGY_OPT_BIND_THREADS, self.bind_threads.is_some());
        set(sys::DIST_STRATEGY_OPT_CLUSTER, self.cluster.is_some());
        set(sys::DIST_STRATEGY_OPT_TOKEN, strings[0].is_some());
        set(sys::DIST_STRATEGY_OPT_TOKEN_FILE, strings[1].is_some());
        set(sys::DIST_STRATEGY_OPT_PLACEMENT, self.placement.is_some());
        set(sys::DIST_STRATEGY_OPT_CROSS_DEVICE_OPS, self.cross_device_ops.is_some());
        set(sys::DIST_STRATEGY_OPT_REDUCE_TO_DEVICE, strings[2].is_some());
        set(sys::DIST_STRATEGY_OPT_NUM_PACKS, self.num_packs.is_some());
        raw.kind = self.kind.map_or(0, StrategyKind::raw);
        raw.num_cpu_devices = self.num_cpu_devices.unwrap_or(0);
        raw.communication = self.communication.map_or(0, Communication::raw);
        raw.bytes_per_pack = self.bytes_per_pack.unwrap_or(0);
        raw.timeout_seconds = self.timeout.map_or(0.0, |t| t.as_secs_f64());
        raw.bind_threads = i32::from(self.bind_threads.unwrap_or(false));
        raw.cluster = self.cluster.map_or(ptr::null(), Cluster::as_raw);
        (raw.token, raw.token_file) = (c_ptr(&strings[0]), c_ptr(&strings[1]));
        raw.placement = match self.placement {
            Some(Placement::GreedyBytes) => sys::DIST_PLACEMENT_GREEDY_BYTES,
            _ => sys::DIST_PLACEMENT_ROUND_ROBIN,
        };
        raw.cross_device_ops = self.cross_device_ops.map_or(sys::DIST_CROSS_DEVICE_OPS_AUTO, CrossDeviceOps::raw);
        raw.reduce_to_device = c_ptr(&strings[2]);
        raw.num_packs = self.num_packs.unwrap_or(0);
        Ok((raw, strings))
    }
}

/// A distribution strategy. It borrows the context it was created with (the
/// context must outlive it), or a ParameterServer strategy's cluster; variables
/// borrow the strategy.
#[derive(Debug)]
pub struct Strategy<'ctx> {
    raw: *mut sys::dist_strategy_t,
    /// False for the view a merge function receives, which the library owns.
    owned: bool,
    _context: PhantomData<(&'ctx Context, &'ctx Cluster)>,
    /// Neither Send nor Sync: the creating thread is the cross-replica context.
    _thread: PhantomData<*mut ()>,
}

impl<'ctx> Strategy<'ctx> {
    /// dist_strategy_create. `context` None is a single worker; with a context,
    /// MULTI_WORKER_MIRRORED is collective over its world. ParameterServer takes
    /// the context's cluster, or `options.cluster`, and is not collective.
    pub fn new(context: Option<&'ctx Context>, options: &StrategyOptions<'ctx>) -> Result<Strategy<'ctx>> {
        let (raw_options, _strings) = options.to_raw()?;
        let mut raw = ptr::null_mut();
        let context = context.map_or(ptr::null_mut(), Context::as_raw);
        // SAFETY: a live context or NULL; a valid options struct and output.
        check(unsafe { sys::dist_strategy_create(context, &raw_options, &mut raw) })?;
        Ok(Strategy { raw, owned: true, _context: PhantomData, _thread: PhantomData })
    }

    /// The strategy a merge function runs in (borrowed from the library).
    pub(crate) fn borrowed(raw: *mut sys::dist_strategy_t) -> Strategy<'ctx> {
        Strategy { raw, owned: false, _context: PhantomData, _thread: PhantomData }
    }

    pub fn as_raw(&self) -> *mut sys::dist_strategy_t {
        self.raw
    }

    fn int(&self, f: unsafe extern "C" fn(*const sys::dist_strategy_t, *mut i32) -> i32) -> Result<i32> {
        let mut value = 0;
        // SAFETY: a live handle and a valid output.
        check(unsafe { f(self.raw, &mut value) })?;
        Ok(value)
    }

    pub fn kind(&self) -> Result<StrategyKind> {
        let kind = self.int(sys::dist_strategy_kind)?;
        StrategyKind::from_raw(kind).ok_or_else(|| Error::invalid(format!("unknown strategy kind {kind}")))
    }

    /// Replicas in the sync group (all workers).
    pub fn num_replicas_in_sync(&self) -> Result<i32> {
        self.int(sys::dist_strategy_num_replicas_in_sync)
    }

    pub fn num_local_replicas(&self) -> Result<i32> {
        self.int(sys::dist_strategy_num_local_replicas)
    }

    /// The i-th local device, "/job:worker/replica:0/task:1/device:CPU:0".
    pub fn device(&self, i: i32) -> Result<String> {
        let mut device = ptr::null();
        // SAFETY: a live handle; the library checks i.
        check(unsafe { sys::dist_strategy_device(self.raw, i, &mut device) })?;
        Ok(borrowed(device).unwrap_or_default())
    }

    /// The cross-device ops in effect (`Auto` resolved by TF's rule):
    /// `ReductionToOneDevice` on CPU replicas.
    pub fn cross_device_ops(&self) -> Result<CrossDeviceOps> {
        let ops = self.int(sys::dist_strategy_cross_device_ops)?;
        CrossDeviceOps::from_raw(ops).ok_or_else(|| Error::invalid(format!("unknown cross-device ops {ops}")))
    }

    /// A copy of the context's cluster (or a ParameterServer strategy's cluster);
    /// None without either.
    pub fn cluster(&self) -> Result<Option<Cluster>> {
        let mut cluster = ptr::null();
        // SAFETY: a live handle; the cluster is borrowed and serialised at once.
        check(unsafe { sys::dist_strategy_cluster(self.raw, &mut cluster) })?;
        if cluster.is_null() {
            return Ok(None);
        }
        let mut json = ptr::null_mut();
        // SAFETY: a live borrowed cluster; the string is ours to free.
        check(unsafe { sys::dist_cluster_to_json(cluster, &mut json) })?;
        Cluster::from_json(&owned(json)).map(Some)
    }

    /// This worker's task type ("worker", "chief"); None alone.
    pub fn task_type(&self) -> Result<Option<String>> {
        let mut task_type = ptr::null();
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dist_strategy_task_type(self.raw, &mut task_type) })?;
        Ok(borrowed(task_type))
    }

    /// This worker's task id (-1 alone).
    pub fn task_id(&self) -> Result<i32> {
        self.int(sys::dist_strategy_task_id)
    }

    /// (this worker's index, number of workers).
    pub fn worker_index(&self) -> Result<(i32, i32)> {
        let (mut index, mut workers) = (0, 0);
        // SAFETY: a live handle and valid outputs.
        check(unsafe { sys::dist_strategy_worker_index(self.raw, &mut index, &mut workers) })?;
        Ok((index, workers))
    }

    /// This worker's input context: one pipeline per worker.
    pub fn input_context(&self) -> Result<InputContext> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dist_strategy_input_context(self.raw, &mut raw) })?;
        Ok(InputContext::from_raw(raw))
    }

    /// Calls `f` once per local replica, each on its own library thread, and
    /// returns when all have returned. An error of one replica fails the run
    /// (the others waiting for it are released with DIST_ERR_ABORTED); a panic
    /// in `f` is caught on its thread and resumed here after the C call.
    pub fn run<F>(&self, f: F) -> Result<()>
    where
        F: Fn(&Replica<'_>) -> Result<()> + Sync,
    {
        replica::run(self.raw, &f)
    }

    /// The results the local replicas set with [`Replica::set_result`] in the last
    /// run, in local replica order (empty for a replica that set none).
    pub fn local_results<T: Element>(&self) -> Result<Vec<Vec<T>>> {
        let (mut results, mut count) = (ptr::null(), 0);
        // SAFETY: a live handle and valid outputs; the buffers are copied at once.
        check(unsafe { sys::dist_strategy_local_results(self.raw, &mut results, &mut count) })?;
        let mut out = Vec::with_capacity(count.max(0) as usize);
        for i in 0..count.max(0) as usize {
            // SAFETY: `count` buffers at `results`.
            let buffer = unsafe { &*results.add(i) };
            if buffer.count == 0 || buffer.data.is_null() {
                out.push(Vec::new());
                continue;
            }
            if buffer.dtype != T::DTYPE {
                return Err(Error::invalid(format!(
                    "local result {i} has dtype {}, not the requested {}",
                    buffer.dtype,
                    T::DTYPE
                )));
            }
            // SAFETY: `count` elements of T (checked dtype) live until the next run.
            out.push(unsafe { std::slice::from_raw_parts(buffer.data as *const T, buffer.count as usize) }.to_vec());
        }
        Ok(out)
    }

    /// strategy.reduce(op, per-replica values, axis): `values[i]` is local replica
    /// i's value. `axis` None reduces element-wise; Some(0) sums batches of rows of
    /// `result.len()` elements.
    pub fn reduce<T: Element>(&self, op: Op, values: &[&[T]], axis: Option<i32>, result: &mut [T]) -> Result<()> {
        let raw_values: Vec<_> = values.iter().map(|v| describe(v.as_ptr(), v.len())).collect();
        let out = describe(result.as_ptr(), result.len());
        let count = i32::try_from(values.len()).map_err(|_| Error::invalid("too many values"))?;
        // SAFETY: the slices outlive the call; `result` is exclusively borrowed.
        check(unsafe {
            sys::dist_strategy_reduce(self.raw, op.raw(), raw_values.as_ptr(), count, axis.unwrap_or(sys::DIST_AXIS_NONE), &out)
        })
    }

    /// Splits this worker's batch of `rows` rows across the local replicas without
    /// copying: one sub-slice per local replica (empty for a replica that gets none).
    pub fn split_batch<'b, T: Element>(&self, batch: &'b [T], rows: u64) -> Result<Vec<&'b [T]>> {
        let replicas = self.num_local_replicas()?;
        let empty = describe::<T>(ptr::null(), 0);
        let mut parts = vec![empty; replicas as usize];
        let raw = describe(batch.as_ptr(), batch.len());
        // SAFETY: `parts` has room for `replicas` entries; batch is only pointed into.
        check(unsafe { sys::dist_strategy_split_batch(self.raw, &raw, rows, parts.as_mut_ptr(), replicas) })?;
        Ok(parts
            .iter()
            .map(|part| {
                if part.data.is_null() || part.count == 0 {
                    return &batch[..0];
                }
                // The library points into `batch`: recover the offset.
                let offset = (part.data as usize - batch.as_ptr() as usize) / std::mem::size_of::<T>().max(1);
                &batch[offset..offset + part.count as usize]
            })
            .collect())
    }

    /// A distributed variable of this strategy (collective: the chief's initial
    /// value is broadcast).
    pub fn variable<T: Element>(&self, options: &VariableOptions<'_, T>) -> Result<Variable<'_, T>> {
        Variable::create(self, options)
    }

    /// Fused all-reduce: `buffers[r * n + i]` is local replica r's tensor i (n =
    /// buffers.len() / local replicas); every replica's tensor i holds the sum (or
    /// mean) over all replicas afterwards.
    pub fn batch_all_reduce<T: Element>(&self, op: Op, buffers: &mut [&mut [T]]) -> Result<()> {
        let raw: Vec<_> = buffers.iter().map(|b| describe(b.as_ptr(), b.len())).collect();
        // The library reads local replicas * n descriptors.
        let replicas = self.num_local_replicas()?.max(1) as usize;
        if raw.len() % replicas != 0 {
            return Err(Error::invalid(format!(
                "batch_all_reduce: {} buffers do not divide among {replicas} local replicas",
                raw.len()
            )));
        }
        // SAFETY: the buffers are exclusively borrowed for the call; replicas * n descriptors.
        check(unsafe { sys::dist_strategy_batch_all_reduce(self.raw, op.raw(), raw.as_ptr(), raw.len() / replicas) })
    }

    /// Mean-all-reduces the gradients (`grads[r * vars.len() + i]` is local replica
    /// r's gradient of `vars[i]`) and lets `optimizer` update every copy. The
    /// gradient buffers are scratch.
    pub fn apply_gradients<T: Element>(
        &self,
        vars: &[&Variable<'_, T>],
        grads: &mut [&mut [T]],
        optimizer: &mut Optimizer,
    ) -> Result<()> {
        let raw_vars: Vec<_> = vars.iter().map(|v| v.as_raw()).collect();
        let raw_grads: Vec<_> = grads.iter().map(|g| describe(g.as_ptr(), g.len())).collect();
        let replicas = self.num_local_replicas()? as usize;
        if raw_grads.len() != replicas * raw_vars.len() {
            return Err(Error::invalid(format!(
                "apply_gradients: {} gradients for {} variables and {replicas} local replicas (need {})",
                raw_grads.len(),
                raw_vars.len(),
                replicas * raw_vars.len()
            )));
        }
        // SAFETY: live handles; gradients exclusively borrowed; the optimizer is ours.
        check(unsafe {
            sys::dist_strategy_apply_gradients(self.raw, raw_vars.as_ptr(), raw_grads.as_ptr(), raw_vars.len(), optimizer.as_raw())
        })
    }
}

impl Drop for Strategy<'_> {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: created by dist_strategy_create, destroyed once; variables borrow it.
            unsafe { sys::dist_strategy_destroy(self.raw) };
        }
    }
}
