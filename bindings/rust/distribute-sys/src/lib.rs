//! Raw declarations of libdistribute's C ABI, one to one with include/c_api.h
//! (one file past 500 lines, as the header it mirrors is one).
//!
//! Everything here is `unsafe` to call; the safe API is the `distribute` crate.
//! tests/layout.rs checks every constant and every struct's size, alignment and
//! field offsets against what the C compiler makes of the header.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};
use std::marker::{PhantomData, PhantomPinned};

// ---- Version ----------------------------------------------------------------
pub const DIST_VERSION_MAJOR: u32 = 0;
pub const DIST_VERSION_MINOR: u32 = 1;
pub const DIST_VERSION_PATCH: u32 = 0;
pub const DIST_VERSION_HEX: u32 = (DIST_VERSION_MAJOR << 16) | (DIST_VERSION_MINOR << 8) | DIST_VERSION_PATCH;
pub const DIST_ABI_VERSION: u32 = 0;

// ---- Status codes -----------------------------------------------------------
pub type dist_status_t = i32;
pub const DIST_OK: dist_status_t = 0;
pub const DIST_ERR_INVALID_ARGUMENT: dist_status_t = -1;
pub const DIST_ERR_UNSUPPORTED: dist_status_t = -2;
pub const DIST_ERR_NO_MEMORY: dist_status_t = -100;
pub const DIST_ERR_SYSTEM: dist_status_t = -101;
pub const DIST_ERR_PEER_FAILED: dist_status_t = -200;
pub const DIST_ERR_TIMEOUT: dist_status_t = -201;
pub const DIST_ERR_MISMATCH: dist_status_t = -202;
pub const DIST_ERR_AUTH: dist_status_t = -203;
pub const DIST_ERR_UNAVAILABLE: dist_status_t = -204;
pub const DIST_ERR_ABORTED: dist_status_t = -205;
pub const DIST_ERR_INTERNAL: dist_status_t = -300;

// ---- Build features ---------------------------------------------------------
pub type dist_features_t = u32;
pub const DIST_FEATURE_UCX: dist_features_t = 1 << 0;
pub const DIST_FEATURE_CUDA: dist_features_t = 1 << 1;
pub const DIST_FEATURE_NCCL: dist_features_t = 1 << 2;
pub const DIST_FEATURE_HWLOC: dist_features_t = 1 << 3;

/// An opaque C handle type: never constructed in Rust, only pointed to.
macro_rules! opaque {
    ($($name:ident),*) => {$(
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
    )*};
}
opaque!(
    dist_cluster_t,
    dist_context_t,
    dist_comm_t,
    dist_request_t,
    dist_strategy_t,
    dist_replica_context_t,
    dist_input_context_t,
    dist_variable_t,
    dist_optimizer_t
);

// ---- Cluster resolution -----------------------------------------------------
pub type dist_resolver_kind_t = i32;
pub const DIST_RESOLVER_AUTO: dist_resolver_kind_t = 0;
pub const DIST_RESOLVER_TF_CONFIG: dist_resolver_kind_t = 1;
pub const DIST_RESOLVER_SIMPLE: dist_resolver_kind_t = 2;
pub const DIST_RESOLVER_SLURM: dist_resolver_kind_t = 3;
pub const DIST_RESOLVER_MPI: dist_resolver_kind_t = 4;
pub const DIST_RESOLVER_TORCHRUN: dist_resolver_kind_t = 5;
pub const DIST_RESOLVER_UNION: dist_resolver_kind_t = 6;

pub const DIST_CLUSTER_OPT_RESOLVER: u64 = 1 << 0;
pub const DIST_CLUSTER_OPT_TASK_TYPE: u64 = 1 << 1;
pub const DIST_CLUSTER_OPT_TASK_ID: u64 = 1 << 2;
pub const DIST_CLUSTER_OPT_RPC_LAYER: u64 = 1 << 3;
pub const DIST_CLUSTER_OPT_ENVIRONMENT: u64 = 1 << 4;
pub const DIST_CLUSTER_OPT_CLUSTER_SPEC: u64 = 1 << 5;
pub const DIST_CLUSTER_OPT_MASTER: u64 = 1 << 6;
pub const DIST_CLUSTER_OPT_JOBS: u64 = 1 << 7;
pub const DIST_CLUSTER_OPT_PORT_BASE: u64 = 1 << 8;
pub const DIST_CLUSTER_OPT_TASKS_PER_NODE: u64 = 1 << 9;
pub const DIST_CLUSTER_OPT_GPUS_PER_NODE: u64 = 1 << 10;
pub const DIST_CLUSTER_OPT_GPUS_PER_TASK: u64 = 1 << 11;
pub const DIST_CLUSTER_OPT_AUTO_SET_GPU: u64 = 1 << 12;
pub const DIST_CLUSTER_OPT_MEMBERS: u64 = 1 << 13;
pub const DIST_CLUSTER_OPT_ENV: u64 = 1 << 14;
pub const DIST_CLUSTER_OPT_NUM_GPUS: u64 = 1 << 15;

/// Start from `Default::default()` (all fields unset, like DIST_CLUSTER_OPTIONS_INIT).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct dist_cluster_options_t {
    pub field_mask: u64,
    pub resolver: dist_resolver_kind_t,
    pub task_type: *const c_char,
    pub task_id: i32,
    pub rpc_layer: *const c_char,
    pub environment: *const c_char,
    pub cluster_spec_json: *const c_char,
    pub master: *const c_char,
    pub job_names: *const *const c_char,
    pub job_counts: *const i32,
    pub num_jobs: usize,
    pub port_base: i32,
    pub tasks_per_node: i32,
    pub gpus_per_node: i32,
    pub gpus_per_task: i32,
    pub auto_set_gpu: i32,
    pub members: *const *const dist_cluster_t,
    pub num_members: usize,
    pub env: *const *const c_char,
    pub num_gpus: i32,
}

// ---- Contexts ---------------------------------------------------------------
pub const DIST_CONTEXT_OPT_TOKEN: u64 = 1 << 0;
pub const DIST_CONTEXT_OPT_TOKEN_FILE: u64 = 1 << 1;
pub const DIST_CONTEXT_OPT_CONNECT_TIMEOUT_MS: u64 = 1 << 2;
pub const DIST_CONTEXT_OPT_TIMEOUT_MS: u64 = 1 << 3;
pub const DIST_CONTEXT_OPT_TIMELINE: u64 = 1 << 4;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct dist_context_options_t {
    pub field_mask: u64,
    pub token: *const c_char,
    pub token_file: *const c_char,
    pub connect_timeout_ms: i64,
    pub timeout_ms: i64,
    /// Prefix of this rank's timeline file "<timeline>.<rank>.json".
    pub timeline: *const c_char,
}

/// dist_oob_t's all-gather: starts one; sets *request (NULL when already complete).
pub type dist_oob_allgather_fn_t = Option<
    unsafe extern "C" fn(user_data: *mut c_void, send: *const c_void, recv: *mut c_void, bytes: usize, request: *mut *mut c_void) -> i32,
>;
/// dist_oob_t's test: 0 complete, 1 in progress, negative failed.
pub type dist_oob_test_fn_t = Option<unsafe extern "C" fn(user_data: *mut c_void, request: *mut c_void) -> i32>;
/// dist_oob_t's free (may be None).
pub type dist_oob_free_fn_t = Option<unsafe extern "C" fn(user_data: *mut c_void, request: *mut c_void)>;

/// A context through the caller's own all-gather (dist_context_create_oob).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct dist_oob_t {
    pub field_mask: u64,
    pub rank: i32,
    pub size: i32,
    pub allgather: dist_oob_allgather_fn_t,
    pub test: dist_oob_test_fn_t,
    pub free: dist_oob_free_fn_t,
    pub user_data: *mut c_void,
}

// ---- Communicators ----------------------------------------------------------
pub type dist_comm_path_t = i32;
pub const DIST_COMM_PATH_SELF: dist_comm_path_t = 0;
pub const DIST_COMM_PATH_POINT_TO_POINT: dist_comm_path_t = 1;
pub const DIST_COMM_PATH_SHARED_MEMORY: dist_comm_path_t = 2;
pub const DIST_COMM_PATH_HIERARCHICAL: dist_comm_path_t = 3;
pub const DIST_COMM_PATH_NCCL: dist_comm_path_t = 4;
pub const DIST_COMM_PATH_STAGED: dist_comm_path_t = 5;

pub type dist_allreduce_algorithm_t = i32;
pub const DIST_ALLREDUCE_AUTO: dist_allreduce_algorithm_t = 0;
pub const DIST_ALLREDUCE_RING: dist_allreduce_algorithm_t = 1;
pub const DIST_ALLREDUCE_RABENSEIFNER: dist_allreduce_algorithm_t = 2;
pub const DIST_ALLREDUCE_RECURSIVE_DOUBLING: dist_allreduce_algorithm_t = 3;
pub const DIST_ALLREDUCE_SHARED_MEMORY: dist_allreduce_algorithm_t = 4;
pub const DIST_ALLREDUCE_HIERARCHICAL: dist_allreduce_algorithm_t = 5;

pub const DIST_COMM_OPT_TIMEOUT_MS: u64 = 1 << 0;
pub const DIST_COMM_OPT_ALLREDUCE: u64 = 1 << 1;
pub const DIST_COMM_OPT_TIMING: u64 = 1 << 2;
pub const DIST_COMM_OPT_STALL_WARNING_MS: u64 = 1 << 3;
pub const DIST_COMM_OPT_DETERMINISTIC: u64 = 1 << 4;

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct dist_comm_options_t {
    pub field_mask: u64,
    pub timeout_ms: i64,
    pub allreduce: dist_allreduce_algorithm_t,
    /// 1: time every call for dist_comm_stats, 0: do not; anything else is refused.
    pub timing: i32,
    /// How long a call waits for its peers before each waiting rank logs who is
    /// behind; 0: no warning; negative is refused.
    pub stall_warning_ms: i64,
    /// 1: float SUM, PROD and MEAN combine the ranks in rank order (the same bits
    /// on every path), 0: the fastest order; anything else is refused.
    pub deterministic: i32,
}

// ---- Collectives ------------------------------------------------------------
pub type dist_dtype_t = i32;
pub const DIST_DTYPE_I8: dist_dtype_t = 0;
pub const DIST_DTYPE_U8: dist_dtype_t = 1;
pub const DIST_DTYPE_I32: dist_dtype_t = 2;
pub const DIST_DTYPE_U32: dist_dtype_t = 3;
pub const DIST_DTYPE_I64: dist_dtype_t = 4;
pub const DIST_DTYPE_U64: dist_dtype_t = 5;
pub const DIST_DTYPE_F16: dist_dtype_t = 6;
pub const DIST_DTYPE_BF16: dist_dtype_t = 7;
pub const DIST_DTYPE_F32: dist_dtype_t = 8;
pub const DIST_DTYPE_F64: dist_dtype_t = 9;

pub type dist_op_t = i32;
pub const DIST_OP_SUM: dist_op_t = 0;
pub const DIST_OP_PROD: dist_op_t = 1;
pub const DIST_OP_MIN: dist_op_t = 2;
pub const DIST_OP_MAX: dist_op_t = 3;
pub const DIST_OP_MEAN: dist_op_t = 4;

pub type dist_memory_kind_t = i32;
pub const DIST_MEMORY_HOST: dist_memory_kind_t = 0;
pub const DIST_MEMORY_CUDA: dist_memory_kind_t = 1;

pub type dist_collective_t = i32;
pub const DIST_COLLECTIVE_ALL_REDUCE: dist_collective_t = 0;
pub const DIST_COLLECTIVE_REDUCE: dist_collective_t = 1;
pub const DIST_COLLECTIVE_BROADCAST: dist_collective_t = 2;
pub const DIST_COLLECTIVE_ALL_GATHER: dist_collective_t = 3;
pub const DIST_COLLECTIVE_REDUCE_SCATTER: dist_collective_t = 4;
pub const DIST_COLLECTIVE_ALL_TO_ALL: dist_collective_t = 5;
pub const DIST_COLLECTIVE_BARRIER: dist_collective_t = 6;
/// dist_all_to_all_v (its rows of dist_comm_stats; dist_comm_algorithm's bytes: its largest block).
pub const DIST_COLLECTIVE_ALL_TO_ALL_V: dist_collective_t = 7;

/// One row of dist_comm_stats: the calls of one collective on one path under one algorithm.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct dist_comm_stat_t {
    pub collective: dist_collective_t,
    pub path: dist_comm_path_t,
    /// Static storage: dist_comm_algorithm's name, or "self", "nccl", "staged".
    pub algorithm: *const c_char,
    pub calls: u64,
    pub failed: u64,
    pub bytes: u64,
    /// The calls time_ns covers.
    pub timed_calls: u64,
    pub time_ns: u64,
    pub reserved: [u64; 4],
}

impl Default for dist_comm_stat_t {
    fn default() -> Self {
        // SAFETY: integers and a raw pointer, for which all-zero is valid (null / 0).
        unsafe { std::mem::zeroed() }
    }
}

// ---- Point to point and completion callbacks --------------------------------
/// dist_recv's peer for a send from any rank (dist_request_source tells which).
pub const DIST_ANY_SOURCE: i32 = -1;
/// The largest tag; tags are 0 ..= DIST_TAG_MAX.
pub const DIST_TAG_MAX: i32 = 0x7FFF_FFFF;
/// Runs once when a request's call completes, on the thread that completed it
/// (a library thread) or at once; `message` ("" on success) is valid only during the call.
pub type dist_request_callback_t = Option<unsafe extern "C" fn(user_data: *mut c_void, status: dist_status_t, message: *const c_char)>;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct dist_buffer_t {
    pub data: *mut c_void,
    pub count: u64,
    pub dtype: dist_dtype_t,
    pub memory_kind: dist_memory_kind_t,
    pub stream: *mut c_void,
}

// ---- Strategies -------------------------------------------------------------
pub type dist_strategy_kind_t = i32;
pub const DIST_STRATEGY_ONE_DEVICE: dist_strategy_kind_t = 0;
pub const DIST_STRATEGY_MIRRORED: dist_strategy_kind_t = 1;
pub const DIST_STRATEGY_MULTI_WORKER_MIRRORED: dist_strategy_kind_t = 2;
pub const DIST_STRATEGY_CENTRAL_STORAGE: dist_strategy_kind_t = 3;
pub const DIST_STRATEGY_PARAMETER_SERVER: dist_strategy_kind_t = 4;

pub type dist_communication_t = i32;
pub const DIST_COMMUNICATION_AUTO: dist_communication_t = 0;
pub const DIST_COMMUNICATION_RING: dist_communication_t = 1;
pub const DIST_COMMUNICATION_NCCL: dist_communication_t = 2;

pub type dist_cross_device_ops_t = i32;
pub const DIST_CROSS_DEVICE_OPS_AUTO: dist_cross_device_ops_t = 0;
pub const DIST_CROSS_DEVICE_OPS_NCCL_ALL_REDUCE: dist_cross_device_ops_t = 1;
pub const DIST_CROSS_DEVICE_OPS_HIERARCHICAL_COPY: dist_cross_device_ops_t = 2;
pub const DIST_CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE: dist_cross_device_ops_t = 3;

pub const DIST_STRATEGY_OPT_KIND: u64 = 1 << 0;
pub const DIST_STRATEGY_OPT_NUM_CPU_DEVICES: u64 = 1 << 1;
pub const DIST_STRATEGY_OPT_COMMUNICATION: u64 = 1 << 2;
pub const DIST_STRATEGY_OPT_BYTES_PER_PACK: u64 = 1 << 3;
pub const DIST_STRATEGY_OPT_TIMEOUT_SECONDS: u64 = 1 << 4;
pub const DIST_STRATEGY_OPT_BIND_THREADS: u64 = 1 << 5;
pub const DIST_STRATEGY_OPT_CLUSTER: u64 = 1 << 6;
pub const DIST_STRATEGY_OPT_TOKEN: u64 = 1 << 7;
pub const DIST_STRATEGY_OPT_TOKEN_FILE: u64 = 1 << 8;
pub const DIST_STRATEGY_OPT_PLACEMENT: u64 = 1 << 9;
pub const DIST_STRATEGY_OPT_CROSS_DEVICE_OPS: u64 = 1 << 10;
pub const DIST_STRATEGY_OPT_REDUCE_TO_DEVICE: u64 = 1 << 11;
pub const DIST_STRATEGY_OPT_NUM_PACKS: u64 = 1 << 12;

pub type dist_placement_t = i32;
pub const DIST_PLACEMENT_ROUND_ROBIN: dist_placement_t = 0;
pub const DIST_PLACEMENT_GREEDY_BYTES: dist_placement_t = 1;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct dist_strategy_options_t {
    pub field_mask: u64,
    pub kind: dist_strategy_kind_t,
    pub num_cpu_devices: i32,
    pub communication: dist_communication_t,
    pub bytes_per_pack: u64,
    pub timeout_seconds: f64,
    pub bind_threads: i32,
    pub cluster: *const dist_cluster_t,
    pub token: *const c_char,
    pub token_file: *const c_char,
    pub placement: dist_placement_t,
    pub cross_device_ops: dist_cross_device_ops_t,
    pub reduce_to_device: *const c_char,
    pub num_packs: i32,
}

pub type dist_replica_fn_t = Option<unsafe extern "C" fn(replica: *mut dist_replica_context_t, user_data: *mut c_void) -> dist_status_t>;
pub type dist_merge_fn_t = Option<
    unsafe extern "C" fn(strategy: *mut dist_strategy_t, values: *const *mut c_void, num_values: i32, user_data: *mut c_void) -> dist_status_t,
>;

pub const DIST_AXIS_NONE: i32 = -1;

// ---- Distributed variables --------------------------------------------------
pub type dist_synchronization_t = i32;
pub const DIST_SYNC_AUTO: dist_synchronization_t = 0;
pub const DIST_SYNC_ON_WRITE: dist_synchronization_t = 1;
pub const DIST_SYNC_ON_READ: dist_synchronization_t = 2;
pub const DIST_SYNC_NONE: dist_synchronization_t = 3;

pub type dist_aggregation_t = i32;
pub const DIST_AGGREGATION_NONE: dist_aggregation_t = 0;
pub const DIST_AGGREGATION_SUM: dist_aggregation_t = 1;
pub const DIST_AGGREGATION_MEAN: dist_aggregation_t = 2;
pub const DIST_AGGREGATION_ONLY_FIRST_REPLICA: dist_aggregation_t = 3;

pub const DIST_VARIABLE_OPT_NAME: u64 = 1 << 0;
pub const DIST_VARIABLE_OPT_DTYPE: u64 = 1 << 1;
pub const DIST_VARIABLE_OPT_SHAPE: u64 = 1 << 2;
pub const DIST_VARIABLE_OPT_INITIAL_VALUE: u64 = 1 << 3;
pub const DIST_VARIABLE_OPT_SYNCHRONIZATION: u64 = 1 << 4;
pub const DIST_VARIABLE_OPT_AGGREGATION: u64 = 1 << 5;
pub const DIST_VARIABLE_OPT_OPTIMIZER: u64 = 1 << 6;
pub const DIST_VARIABLE_OPT_NUM_SHARDS: u64 = 1 << 7;
pub const DIST_VARIABLE_OPT_MAX_SHARD_BYTES: u64 = 1 << 8;
pub const DIST_VARIABLE_OPT_MIN_SHARD_BYTES: u64 = 1 << 9;
pub const DIST_VARIABLE_OPT_MAX_SHARDS: u64 = 1 << 10;
pub const DIST_VARIABLE_OPT_COLOCATE_WITH: u64 = 1 << 11;
pub const DIST_VARIABLE_OPT_SYNC_GRADIENTS: u64 = 1 << 12;
pub const DIST_VARIABLE_OPT_REPLICAS_TO_AGGREGATE: u64 = 1 << 13;
pub const DIST_VARIABLE_OPT_MAX_STALENESS: u64 = 1 << 14;

pub const DIST_MAX_RANK: i32 = 8;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct dist_variable_options_t {
    pub field_mask: u64,
    pub name: *const c_char,
    pub dtype: dist_dtype_t,
    pub shape: *const i64,
    pub rank: i32,
    pub initial_value: *const c_void,
    pub synchronization: dist_synchronization_t,
    pub aggregation: dist_aggregation_t,
    pub optimizer: *const dist_optimizer_options_t,
    pub num_shards: i32,
    pub max_shard_bytes: u64,
    pub min_shard_bytes: u64,
    pub max_shards: i32,
    pub colocate_with: *const dist_variable_t,
    pub sync_gradients: i32,
    pub replicas_to_aggregate: i32,
    pub max_staleness: i32,
}

// ---- Optimizers -------------------------------------------------------------
pub type dist_optimizer_kind_t = i32;
pub const DIST_OPTIMIZER_SGD: dist_optimizer_kind_t = 0;
pub const DIST_OPTIMIZER_MOMENTUM: dist_optimizer_kind_t = 1;
pub const DIST_OPTIMIZER_ADAM: dist_optimizer_kind_t = 2;
pub const DIST_OPTIMIZER_ADAGRAD: dist_optimizer_kind_t = 3;

pub const DIST_OPTIMIZER_OPT_KIND: u64 = 1 << 0;
pub const DIST_OPTIMIZER_OPT_LEARNING_RATE: u64 = 1 << 1;
pub const DIST_OPTIMIZER_OPT_MOMENTUM: u64 = 1 << 2;
pub const DIST_OPTIMIZER_OPT_NESTEROV: u64 = 1 << 3;
pub const DIST_OPTIMIZER_OPT_BETA_1: u64 = 1 << 4;
pub const DIST_OPTIMIZER_OPT_BETA_2: u64 = 1 << 5;
pub const DIST_OPTIMIZER_OPT_EPSILON: u64 = 1 << 6;
pub const DIST_OPTIMIZER_OPT_INITIAL_ACCUMULATOR_VALUE: u64 = 1 << 7;

// Parameter server and checkpoint option bits.
pub const DIST_SERVER_OPT_ADDRESS: u64 = 1 << 0;
pub const DIST_SERVER_OPT_TOKEN: u64 = 1 << 1;
pub const DIST_SERVER_OPT_TOKEN_FILE: u64 = 1 << 2;
pub const DIST_SERVER_OPT_CHECKPOINT_DIR: u64 = 1 << 3;
pub const DIST_SERVER_OPT_IO_TIMEOUT_MS: u64 = 1 << 4;
pub const DIST_SERVER_OPT_LOG: u64 = 1 << 5;
pub const DIST_CHECKPOINT_OPT_TOKEN: u64 = 1 << 0;
pub const DIST_CHECKPOINT_OPT_TOKEN_FILE: u64 = 1 << 1;
pub const DIST_CHECKPOINT_OPT_TIMEOUT_MS: u64 = 1 << 2;

#[repr(C)]
pub struct dist_server_t {
    _private: [u8; 0],
}

pub type dist_log_fn_t = Option<unsafe extern "C" fn(message: *const c_char, user_data: *mut c_void)>;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct dist_server_options_t {
    pub field_mask: u64,
    pub address: *const c_char,
    pub token: *const c_char,
    pub token_file: *const c_char,
    pub checkpoint_dir: *const c_char,
    pub io_timeout_ms: i64,
    pub log: dist_log_fn_t,
    pub log_user_data: *mut c_void,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct dist_checkpoint_options_t {
    pub field_mask: u64,
    pub token: *const c_char,
    pub token_file: *const c_char,
    pub timeout_ms: i64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct dist_optimizer_options_t {
    pub field_mask: u64,
    pub kind: dist_optimizer_kind_t,
    pub learning_rate: f64,
    pub momentum: f64,
    pub nesterov: i32,
    pub beta_1: f64,
    pub beta_2: f64,
    pub epsilon: f64,
    pub initial_accumulator_value: f64,
}

impl Default for dist_variable_options_t {
    fn default() -> Self {
        // SAFETY: integers and raw pointers, all-zero as DIST_VARIABLE_OPTIONS_INIT.
        unsafe { std::mem::zeroed() }
    }
}

impl Default for dist_strategy_options_t {
    fn default() -> Self {
        // SAFETY: as above, DIST_STRATEGY_OPTIONS_INIT.
        unsafe { std::mem::zeroed() }
    }
}

impl Default for dist_cluster_options_t {
    fn default() -> Self {
        // SAFETY: every field is an integer or a raw pointer, for which all-zero is valid
        // (null / 0), exactly as DIST_CLUSTER_OPTIONS_INIT.
        unsafe { std::mem::zeroed() }
    }
}

impl Default for dist_context_options_t {
    fn default() -> Self {
        // SAFETY: as above, DIST_CONTEXT_OPTIONS_INIT.
        unsafe { std::mem::zeroed() }
    }
}

extern "C" {
    pub fn dist_status_string(status: dist_status_t) -> *const c_char;
    pub fn dist_last_error() -> *const c_char;
    pub fn dist_version() -> u32;
    pub fn dist_version_string() -> *const c_char;
    pub fn dist_build_features() -> dist_features_t;
    pub fn dist_build_info(json: *mut *mut c_char) -> dist_status_t;
    pub fn dist_string_free(str_: *mut c_char);

    pub fn dist_cluster_resolve(options: *const dist_cluster_options_t, cluster: *mut *mut dist_cluster_t) -> dist_status_t;
    pub fn dist_cluster_from_json(json: *const c_char, cluster: *mut *mut dist_cluster_t) -> dist_status_t;
    pub fn dist_cluster_destroy(cluster: *mut dist_cluster_t);
    pub fn dist_cluster_resolver(cluster: *const dist_cluster_t, kind: *mut dist_resolver_kind_t) -> dist_status_t;
    pub fn dist_resolver_name(kind: dist_resolver_kind_t) -> *const c_char;
    pub fn dist_cluster_task_type(cluster: *const dist_cluster_t, task_type: *mut *const c_char) -> dist_status_t;
    pub fn dist_cluster_task_id(cluster: *const dist_cluster_t, task_id: *mut i32) -> dist_status_t;
    pub fn dist_cluster_rpc_layer(cluster: *const dist_cluster_t, rpc_layer: *mut *const c_char) -> dist_status_t;
    pub fn dist_cluster_environment(cluster: *const dist_cluster_t, environment: *mut *const c_char) -> dist_status_t;
    pub fn dist_cluster_num_jobs(cluster: *const dist_cluster_t, num_jobs: *mut usize) -> dist_status_t;
    pub fn dist_cluster_job_name(cluster: *const dist_cluster_t, i: usize, job_name: *mut *const c_char) -> dist_status_t;
    pub fn dist_cluster_num_tasks(cluster: *const dist_cluster_t, job: *const c_char, num_tasks: *mut i32) -> dist_status_t;
    pub fn dist_cluster_task_index(cluster: *const dist_cluster_t, job: *const c_char, i: i32, task_index: *mut i32) -> dist_status_t;
    pub fn dist_cluster_task_address(
        cluster: *const dist_cluster_t,
        job: *const c_char,
        task_index: i32,
        address: *mut *const c_char,
    ) -> dist_status_t;
    pub fn dist_cluster_master(
        cluster: *const dist_cluster_t,
        task_type: *const c_char,
        task_id: i32,
        rpc_layer: *const c_char,
        master: *mut *mut c_char,
    ) -> dist_status_t;
    pub fn dist_cluster_num_accelerators(cluster: *const dist_cluster_t, device_type: *const c_char, count: *mut i32) -> dist_status_t;
    pub fn dist_cluster_cuda_visible_devices(cluster: *const dist_cluster_t, devices: *mut *const c_char) -> dist_status_t;
    pub fn dist_cluster_to_json(cluster: *const dist_cluster_t, json: *mut *mut c_char) -> dist_status_t;

    pub fn dist_context_create(
        cluster: *const dist_cluster_t,
        options: *const dist_context_options_t,
        context: *mut *mut dist_context_t,
    ) -> dist_status_t;
    pub fn dist_context_create_oob(
        oob: *const dist_oob_t,
        options: *const dist_context_options_t,
        context: *mut *mut dist_context_t,
    ) -> dist_status_t;
    pub fn dist_context_destroy(context: *mut dist_context_t);
    pub fn dist_context_rank(context: *const dist_context_t, rank: *mut i32) -> dist_status_t;
    pub fn dist_context_size(context: *const dist_context_t, size: *mut i32) -> dist_status_t;
    pub fn dist_context_abort(context: *mut dist_context_t, reason: *const c_char) -> dist_status_t;
    /// The flight recorder as JSON; free *json with dist_string_free. Any thread, any time.
    pub fn dist_context_dump(context: *mut dist_context_t, json: *mut *mut c_char) -> dist_status_t;

    pub fn dist_comm_world(context: *mut dist_context_t, comm: *mut *mut dist_comm_t) -> dist_status_t;
    pub fn dist_comm_split(comm: *mut dist_comm_t, color: i32, key: i32, new_comm: *mut *mut dist_comm_t) -> dist_status_t;
    pub fn dist_comm_destroy(comm: *mut dist_comm_t);
    pub fn dist_comm_rank(comm: *const dist_comm_t, rank: *mut i32) -> dist_status_t;
    pub fn dist_comm_size(comm: *const dist_comm_t, size: *mut i32) -> dist_status_t;
    pub fn dist_comm_path(comm: *const dist_comm_t, path: *mut dist_comm_path_t) -> dist_status_t;
    pub fn dist_comm_device_path(comm: *const dist_comm_t, path: *mut dist_comm_path_t) -> dist_status_t;
    pub fn dist_comm_local_rank(comm: *const dist_comm_t, local_rank: *mut i32) -> dist_status_t;
    pub fn dist_comm_local_size(comm: *const dist_comm_t, local_size: *mut i32) -> dist_status_t;
    pub fn dist_comm_num_hosts(comm: *const dist_comm_t, num_hosts: *mut i32) -> dist_status_t;
    pub fn dist_comm_split_host(comm: *mut dist_comm_t, host_comm: *mut *mut dist_comm_t) -> dist_status_t;
    pub fn dist_comm_configure(comm: *mut dist_comm_t, options: *const dist_comm_options_t) -> dist_status_t;

    pub fn dist_all_reduce(
        comm: *mut dist_comm_t,
        send: *const dist_buffer_t,
        recv: *const dist_buffer_t,
        op: dist_op_t,
        request: *mut *mut dist_request_t,
    ) -> dist_status_t;
    pub fn dist_reduce(
        comm: *mut dist_comm_t,
        send: *const dist_buffer_t,
        recv: *const dist_buffer_t,
        op: dist_op_t,
        root: i32,
        request: *mut *mut dist_request_t,
    ) -> dist_status_t;
    pub fn dist_broadcast(comm: *mut dist_comm_t, buffer: *const dist_buffer_t, root: i32, request: *mut *mut dist_request_t) -> dist_status_t;
    pub fn dist_all_gather(
        comm: *mut dist_comm_t,
        send: *const dist_buffer_t,
        recv: *const dist_buffer_t,
        request: *mut *mut dist_request_t,
    ) -> dist_status_t;
    pub fn dist_reduce_scatter(
        comm: *mut dist_comm_t,
        send: *const dist_buffer_t,
        recv: *const dist_buffer_t,
        op: dist_op_t,
        request: *mut *mut dist_request_t,
    ) -> dist_status_t;
    pub fn dist_all_to_all(
        comm: *mut dist_comm_t,
        send: *const dist_buffer_t,
        recv: *const dist_buffer_t,
        request: *mut *mut dist_request_t,
    ) -> dist_status_t;
    pub fn dist_barrier(comm: *mut dist_comm_t, request: *mut *mut dist_request_t) -> dist_status_t;
    pub fn dist_comm_algorithm(
        comm: *const dist_comm_t,
        collective: dist_collective_t,
        bytes: u64,
        name: *mut *const c_char,
    ) -> dist_status_t;
    pub fn dist_comm_stats(
        comm: *const dist_comm_t,
        stats: *mut dist_comm_stat_t,
        capacity: u64,
        count: *mut u64,
    ) -> dist_status_t;
    pub fn dist_comm_stats_reset(comm: *mut dist_comm_t) -> dist_status_t;

    pub fn dist_request_test(request: *mut dist_request_t, done: *mut i32) -> dist_status_t;
    pub fn dist_request_wait(request: *mut dist_request_t, timeout_ms: i64) -> dist_status_t;
    pub fn dist_request_free(request: *mut dist_request_t);

    pub fn dist_all_to_all_v(
        comm: *mut dist_comm_t,
        send: *const dist_buffer_t,
        send_counts: *const u64,
        send_offsets: *const u64,
        recv: *const dist_buffer_t,
        recv_counts: *const u64,
        recv_offsets: *const u64,
        request: *mut *mut dist_request_t,
    ) -> dist_status_t;
    pub fn dist_send(comm: *mut dist_comm_t, buffer: *const dist_buffer_t, peer: i32, tag: i32, request: *mut *mut dist_request_t) -> dist_status_t;
    pub fn dist_recv(comm: *mut dist_comm_t, buffer: *const dist_buffer_t, peer: i32, tag: i32, request: *mut *mut dist_request_t) -> dist_status_t;
    pub fn dist_request_source(request: *mut dist_request_t, source: *mut i32) -> dist_status_t;
    pub fn dist_request_on_complete(request: *mut dist_request_t, callback: dist_request_callback_t, user_data: *mut c_void) -> dist_status_t;

    pub fn dist_strategy_create(
        context: *mut dist_context_t,
        options: *const dist_strategy_options_t,
        strategy: *mut *mut dist_strategy_t,
    ) -> dist_status_t;
    pub fn dist_strategy_destroy(strategy: *mut dist_strategy_t);
    pub fn dist_strategy_kind(strategy: *const dist_strategy_t, kind: *mut dist_strategy_kind_t) -> dist_status_t;
    pub fn dist_strategy_num_replicas_in_sync(strategy: *const dist_strategy_t, count: *mut i32) -> dist_status_t;
    pub fn dist_strategy_num_local_replicas(strategy: *const dist_strategy_t, count: *mut i32) -> dist_status_t;
    pub fn dist_strategy_device(strategy: *const dist_strategy_t, i: i32, device: *mut *const c_char) -> dist_status_t;
    pub fn dist_strategy_cross_device_ops(strategy: *const dist_strategy_t, ops: *mut dist_cross_device_ops_t) -> dist_status_t;
    pub fn dist_strategy_cluster(strategy: *const dist_strategy_t, cluster: *mut *const dist_cluster_t) -> dist_status_t;
    pub fn dist_strategy_task_type(strategy: *const dist_strategy_t, task_type: *mut *const c_char) -> dist_status_t;
    pub fn dist_strategy_task_id(strategy: *const dist_strategy_t, task_id: *mut i32) -> dist_status_t;
    pub fn dist_strategy_worker_index(strategy: *const dist_strategy_t, index: *mut i32, num_workers: *mut i32) -> dist_status_t;

    pub fn dist_strategy_run(strategy: *mut dist_strategy_t, fn_: dist_replica_fn_t, user_data: *mut c_void) -> dist_status_t;
    pub fn dist_replica_id(replica: *const dist_replica_context_t, id: *mut i32) -> dist_status_t;
    pub fn dist_replica_num_replicas_in_sync(replica: *const dist_replica_context_t, count: *mut i32) -> dist_status_t;
    pub fn dist_replica_local_index(replica: *const dist_replica_context_t, index: *mut i32) -> dist_status_t;
    pub fn dist_replica_strategy(replica: *const dist_replica_context_t, strategy: *mut *mut dist_strategy_t) -> dist_status_t;
    pub fn dist_replica_device(replica: *const dist_replica_context_t, device: *mut i32) -> dist_status_t;
    pub fn dist_replica_stream(replica: *const dist_replica_context_t, stream: *mut *mut c_void) -> dist_status_t;
    pub fn dist_replica_all_reduce(replica: *mut dist_replica_context_t, op: dist_op_t, buffer: *const dist_buffer_t) -> dist_status_t;
    pub fn dist_replica_merge_call(
        replica: *mut dist_replica_context_t,
        fn_: dist_merge_fn_t,
        value: *mut c_void,
        user_data: *mut c_void,
    ) -> dist_status_t;
    pub fn dist_replica_set_result(replica: *mut dist_replica_context_t, value: *const dist_buffer_t) -> dist_status_t;
    pub fn dist_strategy_local_results(
        strategy: *const dist_strategy_t,
        results: *mut *const dist_buffer_t,
        count: *mut i32,
    ) -> dist_status_t;
    pub fn dist_strategy_reduce(
        strategy: *mut dist_strategy_t,
        op: dist_op_t,
        values: *const dist_buffer_t,
        num_values: i32,
        axis: i32,
        result: *const dist_buffer_t,
    ) -> dist_status_t;

    pub fn dist_input_context_create(
        num_input_pipelines: i32,
        input_pipeline_id: i32,
        num_replicas_in_sync: i32,
        input: *mut *mut dist_input_context_t,
    ) -> dist_status_t;
    pub fn dist_strategy_input_context(strategy: *const dist_strategy_t, input: *mut *mut dist_input_context_t) -> dist_status_t;
    pub fn dist_input_context_destroy(input: *mut dist_input_context_t);
    pub fn dist_input_context_num_input_pipelines(input: *const dist_input_context_t, count: *mut i32) -> dist_status_t;
    pub fn dist_input_context_input_pipeline_id(input: *const dist_input_context_t, id: *mut i32) -> dist_status_t;
    pub fn dist_input_context_num_replicas_in_sync(input: *const dist_input_context_t, count: *mut i32) -> dist_status_t;
    pub fn dist_input_context_per_replica_batch_size(
        input: *const dist_input_context_t,
        global_batch_size: i64,
        per_replica: *mut i64,
    ) -> dist_status_t;
    pub fn dist_input_context_shard_files(
        input: *const dist_input_context_t,
        num_files: i64,
        indices: *mut i64,
        capacity: i64,
        count: *mut i64,
    ) -> dist_status_t;
    pub fn dist_input_context_shard_range(
        input: *const dist_input_context_t,
        total: i64,
        begin: *mut i64,
        count: *mut i64,
    ) -> dist_status_t;
    pub fn dist_strategy_split_batch(
        strategy: *const dist_strategy_t,
        batch: *const dist_buffer_t,
        rows: u64,
        per_replica: *mut dist_buffer_t,
        num_per_replica: i32,
    ) -> dist_status_t;

    pub fn dist_variable_create(
        strategy: *mut dist_strategy_t,
        options: *const dist_variable_options_t,
        variable: *mut *mut dist_variable_t,
    ) -> dist_status_t;
    pub fn dist_variable_destroy(variable: *mut dist_variable_t);
    pub fn dist_variable_name(variable: *const dist_variable_t, name: *mut *const c_char) -> dist_status_t;
    pub fn dist_variable_dtype(variable: *const dist_variable_t, dtype: *mut dist_dtype_t) -> dist_status_t;
    pub fn dist_variable_shape(variable: *const dist_variable_t, shape: *mut *const i64, rank: *mut i32) -> dist_status_t;
    pub fn dist_variable_count(variable: *const dist_variable_t, count: *mut u64) -> dist_status_t;
    pub fn dist_variable_synchronization(variable: *const dist_variable_t, synchronization: *mut dist_synchronization_t) -> dist_status_t;
    pub fn dist_variable_aggregation(variable: *const dist_variable_t, aggregation: *mut dist_aggregation_t) -> dist_status_t;
    pub fn dist_variable_read(variable: *mut dist_variable_t, replica: *mut dist_replica_context_t, out: *const dist_buffer_t) -> dist_status_t;
    pub fn dist_variable_assign(variable: *mut dist_variable_t, replica: *mut dist_replica_context_t, value: *const dist_buffer_t) -> dist_status_t;
    pub fn dist_variable_assign_add(
        variable: *mut dist_variable_t,
        replica: *mut dist_replica_context_t,
        value: *const dist_buffer_t,
    ) -> dist_status_t;
    pub fn dist_variable_assign_sub(
        variable: *mut dist_variable_t,
        replica: *mut dist_replica_context_t,
        value: *const dist_buffer_t,
    ) -> dist_status_t;
    pub fn dist_variable_apply_gradient(
        variable: *mut dist_variable_t,
        replica: *mut dist_replica_context_t,
        gradient: *const dist_buffer_t,
    ) -> dist_status_t;
    pub fn dist_variable_read_rows(
        variable: *mut dist_variable_t,
        replica: *mut dist_replica_context_t,
        rows: *const i64,
        count: u64,
        out: *const dist_buffer_t,
    ) -> dist_status_t;
    pub fn dist_variable_add_rows(
        variable: *mut dist_variable_t,
        replica: *mut dist_replica_context_t,
        rows: *const i64,
        count: u64,
        values: *const dist_buffer_t,
    ) -> dist_status_t;
    pub fn dist_variable_apply_rows(
        variable: *mut dist_variable_t,
        replica: *mut dist_replica_context_t,
        rows: *const i64,
        count: u64,
        gradients: *const dist_buffer_t,
    ) -> dist_status_t;
    pub fn dist_variable_num_shards(variable: *const dist_variable_t, count: *mut i32) -> dist_status_t;
    pub fn dist_variable_shard(
        variable: *const dist_variable_t,
        i: i32,
        server: *mut i32,
        first_row: *mut u64,
        rows: *mut u64,
    ) -> dist_status_t;
    pub fn dist_variable_num_copies(variable: *const dist_variable_t, count: *mut i32) -> dist_status_t;
    pub fn dist_variable_read_copy(variable: *const dist_variable_t, i: i32, out: *const dist_buffer_t) -> dist_status_t;

    pub fn dist_optimizer_create(options: *const dist_optimizer_options_t, optimizer: *mut *mut dist_optimizer_t) -> dist_status_t;
    pub fn dist_optimizer_destroy(optimizer: *mut dist_optimizer_t);
    pub fn dist_optimizer_iterations(optimizer: *const dist_optimizer_t, iterations: *mut i64) -> dist_status_t;

    // Parameter servers and checkpoints.
    pub fn dist_server_start(cluster: *const dist_cluster_t, options: *const dist_server_options_t, server: *mut *mut dist_server_t) -> dist_status_t;
    pub fn dist_server_address(server: *const dist_server_t, address: *mut *const c_char) -> dist_status_t;
    pub fn dist_server_describe(server: *const dist_server_t, json: *mut *mut c_char) -> dist_status_t;
    pub fn dist_server_join(server: *mut dist_server_t, timeout_ms: i64) -> dist_status_t;
    pub fn dist_server_stop(server: *mut dist_server_t) -> dist_status_t;
    pub fn dist_server_destroy(server: *mut dist_server_t);
    pub fn dist_checkpoint_save(cluster: *const dist_cluster_t, root: *const c_char, step: i64, options: *const dist_checkpoint_options_t, path: *mut *mut c_char) -> dist_status_t;
    pub fn dist_checkpoint_restore(cluster: *const dist_cluster_t, directory: *const c_char, options: *const dist_checkpoint_options_t, path: *mut *mut c_char) -> dist_status_t;
    pub fn dist_strategy_batch_all_reduce(strategy: *mut dist_strategy_t, op: dist_op_t, buffers: *const dist_buffer_t, n: usize) -> dist_status_t;
    pub fn dist_strategy_apply_gradients(
        strategy: *mut dist_strategy_t,
        vars: *const *mut dist_variable_t,
        grads: *const dist_buffer_t,
        n: usize,
        optimizer: *mut dist_optimizer_t,
    ) -> dist_status_t;
}
