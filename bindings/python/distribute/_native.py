"""The C ABI through ctypes: locating libdistribute, its structs and prototypes.

Everything here mirrors include/c_api.h one to one; the idiomatic classes live
in the other modules. To bind a new C function, add one line to _PROTOTYPES.
"""
import ctypes
import ctypes.util
import os

from . import constants as C


def _candidates():
    """Where libdistribute may be, in the order tried."""
    explicit = os.environ.get("DIST_LIBRARY")
    if explicit:
        yield explicit
    # Installed by pip (pyproject.toml): the copy built with these modules, beside
    # them. It comes before every search so that an installed package never picks
    # up another build's library; only DIST_LIBRARY, said outright, overrides it.
    yield os.path.join(os.path.dirname(os.path.abspath(__file__)), f"libdistribute.so.{C.ABI_VERSION}")
    build = os.environ.get("DIST_BUILD_DIR")
    if build:
        yield os.path.join(build, "src", "libdistribute.so")
        yield os.path.join(build, "libdistribute.so")
    # The build tree of the checkout this package sits in.
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    yield os.path.join(repo, "build", "src", "libdistribute.so")
    # Installed: the dynamic loader's path (LD_LIBRARY_PATH, ldconfig).
    yield f"libdistribute.so.{C.ABI_VERSION}"
    found = ctypes.util.find_library("distribute")
    if found:
        yield found


def _load():
    """The loaded library and the path it was loaded by (library_path)."""
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{path} (missing)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise ImportError("libdistribute not found; set DIST_LIBRARY to the .so or DIST_BUILD_DIR "
                      "to the build tree. Tried: " + "; ".join(tried))


lib, library_path = _load()

status_t = ctypes.c_int32
handle_p = ctypes.c_void_p
_out_handle = ctypes.POINTER(ctypes.c_void_p)
_out_str = ctypes.POINTER(ctypes.c_char_p)
_out_owned_str = ctypes.POINTER(ctypes.c_void_p)  # char**: freed with dist_string_free


class ClusterOptions(ctypes.Structure):
    _fields_ = [
        ("field_mask", ctypes.c_uint64),
        ("resolver", ctypes.c_int32),
        ("task_type", ctypes.c_char_p),
        ("task_id", ctypes.c_int32),
        ("rpc_layer", ctypes.c_char_p),
        ("environment", ctypes.c_char_p),
        ("cluster_spec_json", ctypes.c_char_p),
        ("master", ctypes.c_char_p),
        ("job_names", ctypes.POINTER(ctypes.c_char_p)),
        ("job_counts", ctypes.POINTER(ctypes.c_int32)),
        ("num_jobs", ctypes.c_size_t),
        ("port_base", ctypes.c_int32),
        ("tasks_per_node", ctypes.c_int32),
        ("gpus_per_node", ctypes.c_int32),
        ("gpus_per_task", ctypes.c_int32),
        ("auto_set_gpu", ctypes.c_int32),
        ("members", ctypes.POINTER(ctypes.c_void_p)),
        ("num_members", ctypes.c_size_t),
        ("env", ctypes.POINTER(ctypes.c_char_p)),
        ("num_gpus", ctypes.c_int32),
    ]


class ContextOptions(ctypes.Structure):
    _fields_ = [
        ("field_mask", ctypes.c_uint64),
        ("token", ctypes.c_char_p),
        ("token_file", ctypes.c_char_p),
        ("connect_timeout_ms", ctypes.c_int64),
        ("timeout_ms", ctypes.c_int64),
        ("timeline", ctypes.c_char_p),
    ]


# dist_oob_t's functions: the caller's all-gather, started, tested and freed by the library.
OOB_ALLGATHER_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p))
OOB_TEST_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)
OOB_FREE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


class Oob(ctypes.Structure):
    _fields_ = [
        ("field_mask", ctypes.c_uint64),
        ("rank", ctypes.c_int32),
        ("size", ctypes.c_int32),
        ("allgather", OOB_ALLGATHER_FN),
        ("test", OOB_TEST_FN),
        ("free", OOB_FREE_FN),
        ("user_data", ctypes.c_void_p),
    ]


class CommOptions(ctypes.Structure):
    _fields_ = [
        ("field_mask", ctypes.c_uint64),
        ("timeout_ms", ctypes.c_int64),
        ("allreduce", ctypes.c_int32),
        ("timing", ctypes.c_int32),
        ("stall_warning_ms", ctypes.c_int64),
        ("deterministic", ctypes.c_int32),
    ]


class CommStat(ctypes.Structure):
    """One row of dist_comm_stats (comm.CommStat is its Python form)."""
    _fields_ = [
        ("collective", ctypes.c_int32),
        ("path", ctypes.c_int32),
        ("algorithm", ctypes.c_char_p),
        ("calls", ctypes.c_uint64),
        ("failed", ctypes.c_uint64),
        ("bytes", ctypes.c_uint64),
        ("timed_calls", ctypes.c_uint64),
        ("time_ns", ctypes.c_uint64),
        ("reserved", ctypes.c_uint64 * 4),
    ]


class Buffer(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("count", ctypes.c_uint64),
        ("dtype", ctypes.c_int32),
        ("memory_kind", ctypes.c_int32),
        ("stream", ctypes.c_void_p),
    ]


class StrategyOptions(ctypes.Structure):
    _fields_ = [
        ("field_mask", ctypes.c_uint64),
        ("kind", ctypes.c_int32),
        ("num_cpu_devices", ctypes.c_int32),
        ("communication", ctypes.c_int32),
        ("bytes_per_pack", ctypes.c_uint64),
        ("timeout_seconds", ctypes.c_double),
        ("bind_threads", ctypes.c_int32),
        ("cluster", ctypes.c_void_p),
        ("token", ctypes.c_char_p),
        ("token_file", ctypes.c_char_p),
        ("placement", ctypes.c_int32),
        ("cross_device_ops", ctypes.c_int32),
        ("reduce_to_device", ctypes.c_char_p),
        ("num_packs", ctypes.c_int32),
    ]


class OptimizerOptions(ctypes.Structure):
    _fields_ = [
        ("field_mask", ctypes.c_uint64),
        ("kind", ctypes.c_int32),
        ("learning_rate", ctypes.c_double),
        ("momentum", ctypes.c_double),
        ("nesterov", ctypes.c_int32),
        ("beta_1", ctypes.c_double),
        ("beta_2", ctypes.c_double),
        ("epsilon", ctypes.c_double),
        ("initial_accumulator_value", ctypes.c_double),
    ]


class VariableOptions(ctypes.Structure):
    _fields_ = [
        ("field_mask", ctypes.c_uint64),
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("rank", ctypes.c_int32),
        ("initial_value", ctypes.c_void_p),
        ("synchronization", ctypes.c_int32),
        ("aggregation", ctypes.c_int32),
        ("optimizer", ctypes.POINTER(OptimizerOptions)),
        ("num_shards", ctypes.c_int32),
        ("max_shard_bytes", ctypes.c_uint64),
        ("min_shard_bytes", ctypes.c_uint64),
        ("max_shards", ctypes.c_int32),
        ("colocate_with", ctypes.c_void_p),
        ("sync_gradients", ctypes.c_int32),
        ("replicas_to_aggregate", ctypes.c_int32),
        ("max_staleness", ctypes.c_int32),
    ]


# dist_log_fn_t: called from the server's threads, possibly concurrently.
LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_void_p)


class ServerOptions(ctypes.Structure):
    _fields_ = [
        ("field_mask", ctypes.c_uint64),
        ("address", ctypes.c_char_p),
        ("token", ctypes.c_char_p),
        ("token_file", ctypes.c_char_p),
        ("checkpoint_dir", ctypes.c_char_p),
        ("io_timeout_ms", ctypes.c_int64),
        ("log", LOG_FN),
        ("log_user_data", ctypes.c_void_p),
    ]


class CheckpointOptions(ctypes.Structure):
    _fields_ = [
        ("field_mask", ctypes.c_uint64),
        ("token", ctypes.c_char_p),
        ("token_file", ctypes.c_char_p),
        ("timeout_ms", ctypes.c_int64),
    ]


_buf = ctypes.POINTER(Buffer)
_u64_array = ctypes.POINTER(ctypes.c_uint64)

# dist_request_callback_t: runs on a library thread (ctypes takes the GIL for it).
REQUEST_CALLBACK_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, status_t, ctypes.c_char_p)
_i32_out = ctypes.POINTER(ctypes.c_int32)
_i64_out = ctypes.POINTER(ctypes.c_int64)

# dist_replica_fn_t and dist_merge_fn_t. ctypes takes the GIL around each call
# of a Python function made from one of the library's replica threads.
REPLICA_FN = ctypes.CFUNCTYPE(status_t, handle_p, ctypes.c_void_p)
MERGE_FN = ctypes.CFUNCTYPE(status_t, handle_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int32, ctypes.c_void_p)

# name: (return type, [argument types])
_PROTOTYPES = {
    "dist_status_string": (ctypes.c_char_p, [status_t]),
    "dist_last_error": (ctypes.c_char_p, []),
    "dist_version": (ctypes.c_uint32, []),
    "dist_version_string": (ctypes.c_char_p, []),
    "dist_build_features": (ctypes.c_uint32, []),
    "dist_build_info": (status_t, [_out_owned_str]),
    "dist_string_free": (None, [ctypes.c_void_p]),
    "dist_cluster_resolve": (status_t, [ctypes.POINTER(ClusterOptions), _out_handle]),
    "dist_cluster_from_json": (status_t, [ctypes.c_char_p, _out_handle]),
    "dist_cluster_destroy": (None, [handle_p]),
    "dist_cluster_resolver": (status_t, [handle_p, _i32_out]),
    "dist_resolver_name": (ctypes.c_char_p, [ctypes.c_int32]),
    "dist_cluster_task_type": (status_t, [handle_p, _out_str]),
    "dist_cluster_task_id": (status_t, [handle_p, _i32_out]),
    "dist_cluster_rpc_layer": (status_t, [handle_p, _out_str]),
    "dist_cluster_environment": (status_t, [handle_p, _out_str]),
    "dist_cluster_num_jobs": (status_t, [handle_p, ctypes.POINTER(ctypes.c_size_t)]),
    "dist_cluster_job_name": (status_t, [handle_p, ctypes.c_size_t, _out_str]),
    "dist_cluster_num_tasks": (status_t, [handle_p, ctypes.c_char_p, _i32_out]),
    "dist_cluster_task_index": (status_t, [handle_p, ctypes.c_char_p, ctypes.c_int32, _i32_out]),
    "dist_cluster_task_address": (status_t, [handle_p, ctypes.c_char_p, ctypes.c_int32, _out_str]),
    "dist_cluster_master": (status_t, [handle_p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_char_p,
                                       _out_owned_str]),
    "dist_cluster_num_accelerators": (status_t, [handle_p, ctypes.c_char_p, _i32_out]),
    "dist_cluster_cuda_visible_devices": (status_t, [handle_p, _out_str]),
    "dist_cluster_to_json": (status_t, [handle_p, _out_owned_str]),
    "dist_context_create": (status_t, [handle_p, ctypes.POINTER(ContextOptions), _out_handle]),
    "dist_context_create_oob": (status_t, [ctypes.POINTER(Oob), ctypes.POINTER(ContextOptions), _out_handle]),
    "dist_context_destroy": (None, [handle_p]),
    "dist_context_rank": (status_t, [handle_p, _i32_out]),
    "dist_context_size": (status_t, [handle_p, _i32_out]),
    "dist_context_abort": (status_t, [handle_p, ctypes.c_char_p]),
    "dist_context_dump": (status_t, [handle_p, _out_owned_str]),
    "dist_comm_world": (status_t, [handle_p, _out_handle]),
    "dist_comm_split": (status_t, [handle_p, ctypes.c_int32, ctypes.c_int32, _out_handle]),
    "dist_comm_destroy": (None, [handle_p]),
    "dist_comm_rank": (status_t, [handle_p, _i32_out]),
    "dist_comm_size": (status_t, [handle_p, _i32_out]),
    "dist_comm_configure": (status_t, [handle_p, ctypes.POINTER(CommOptions)]),
    "dist_comm_path": (status_t, [handle_p, _i32_out]),
    "dist_comm_device_path": (status_t, [handle_p, _i32_out]),
    "dist_comm_local_rank": (status_t, [handle_p, _i32_out]),
    "dist_comm_local_size": (status_t, [handle_p, _i32_out]),
    "dist_comm_num_hosts": (status_t, [handle_p, _i32_out]),
    "dist_comm_split_host": (status_t, [handle_p, _out_handle]),
    "dist_comm_algorithm": (status_t, [handle_p, ctypes.c_int32, ctypes.c_uint64, _out_str]),
    "dist_comm_stats": (status_t, [handle_p, ctypes.POINTER(CommStat), ctypes.c_uint64,
                                   ctypes.POINTER(ctypes.c_uint64)]),
    "dist_comm_stats_reset": (status_t, [handle_p]),
    "dist_all_reduce": (status_t, [handle_p, _buf, _buf, ctypes.c_int32, _out_handle]),
    "dist_reduce": (status_t, [handle_p, _buf, _buf, ctypes.c_int32, ctypes.c_int32, _out_handle]),
    "dist_broadcast": (status_t, [handle_p, _buf, ctypes.c_int32, _out_handle]),
    "dist_all_gather": (status_t, [handle_p, _buf, _buf, _out_handle]),
    "dist_reduce_scatter": (status_t, [handle_p, _buf, _buf, ctypes.c_int32, _out_handle]),
    "dist_all_to_all": (status_t, [handle_p, _buf, _buf, _out_handle]),
    "dist_barrier": (status_t, [handle_p, _out_handle]),
    "dist_request_test": (status_t, [handle_p, _i32_out]),
    "dist_request_wait": (status_t, [handle_p, ctypes.c_int64]),
    "dist_request_free": (None, [handle_p]),
    "dist_all_to_all_v": (status_t, [handle_p, _buf, _u64_array, _u64_array, _buf, _u64_array, _u64_array,
                                     _out_handle]),
    "dist_send": (status_t, [handle_p, _buf, ctypes.c_int32, ctypes.c_int32, _out_handle]),
    "dist_recv": (status_t, [handle_p, _buf, ctypes.c_int32, ctypes.c_int32, _out_handle]),
    "dist_request_source": (status_t, [handle_p, _i32_out]),
    "dist_request_on_complete": (status_t, [handle_p, REQUEST_CALLBACK_FN, ctypes.c_void_p]),
    "dist_strategy_create": (status_t, [handle_p, ctypes.POINTER(StrategyOptions), _out_handle]),
    "dist_strategy_destroy": (None, [handle_p]),
    "dist_strategy_kind": (status_t, [handle_p, _i32_out]),
    "dist_strategy_num_replicas_in_sync": (status_t, [handle_p, _i32_out]),
    "dist_strategy_num_local_replicas": (status_t, [handle_p, _i32_out]),
    "dist_strategy_device": (status_t, [handle_p, ctypes.c_int32, _out_str]),
    "dist_strategy_cross_device_ops": (status_t, [handle_p, _i32_out]),
    "dist_strategy_cluster": (status_t, [handle_p, _out_handle]),
    "dist_strategy_task_type": (status_t, [handle_p, _out_str]),
    "dist_strategy_task_id": (status_t, [handle_p, _i32_out]),
    "dist_strategy_worker_index": (status_t, [handle_p, _i32_out, _i32_out]),
    "dist_strategy_run": (status_t, [handle_p, REPLICA_FN, ctypes.c_void_p]),
    "dist_replica_id": (status_t, [handle_p, _i32_out]),
    "dist_replica_num_replicas_in_sync": (status_t, [handle_p, _i32_out]),
    "dist_replica_local_index": (status_t, [handle_p, _i32_out]),
    "dist_replica_strategy": (status_t, [handle_p, _out_handle]),
    "dist_replica_device": (status_t, [handle_p, _i32_out]),
    "dist_replica_stream": (status_t, [handle_p, _out_handle]),
    "dist_replica_all_reduce": (status_t, [handle_p, ctypes.c_int32, _buf]),
    "dist_replica_merge_call": (status_t, [handle_p, MERGE_FN, ctypes.c_void_p, ctypes.c_void_p]),
    "dist_replica_set_result": (status_t, [handle_p, _buf]),
    "dist_strategy_local_results": (status_t, [handle_p, ctypes.POINTER(_buf), _i32_out]),
    "dist_strategy_reduce": (status_t, [handle_p, ctypes.c_int32, _buf, ctypes.c_int32, ctypes.c_int32, _buf]),
    "dist_input_context_create": (status_t, [ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, _out_handle]),
    "dist_strategy_input_context": (status_t, [handle_p, _out_handle]),
    "dist_input_context_destroy": (None, [handle_p]),
    "dist_input_context_num_input_pipelines": (status_t, [handle_p, _i32_out]),
    "dist_input_context_input_pipeline_id": (status_t, [handle_p, _i32_out]),
    "dist_input_context_num_replicas_in_sync": (status_t, [handle_p, _i32_out]),
    "dist_input_context_per_replica_batch_size": (status_t, [handle_p, ctypes.c_int64, _i64_out]),
    "dist_input_context_shard_files": (status_t, [handle_p, ctypes.c_int64, _i64_out, ctypes.c_int64, _i64_out]),
    "dist_input_context_shard_range": (status_t, [handle_p, ctypes.c_int64, _i64_out, _i64_out]),
    "dist_strategy_split_batch": (status_t, [handle_p, _buf, ctypes.c_uint64, _buf, ctypes.c_int32]),
    "dist_variable_create": (status_t, [handle_p, ctypes.POINTER(VariableOptions), _out_handle]),
    "dist_variable_destroy": (None, [handle_p]),
    "dist_variable_name": (status_t, [handle_p, _out_str]),
    "dist_variable_dtype": (status_t, [handle_p, _i32_out]),
    "dist_variable_shape": (status_t, [handle_p, ctypes.POINTER(_i64_out), _i32_out]),
    "dist_variable_count": (status_t, [handle_p, ctypes.POINTER(ctypes.c_uint64)]),
    "dist_variable_synchronization": (status_t, [handle_p, _i32_out]),
    "dist_variable_aggregation": (status_t, [handle_p, _i32_out]),
    "dist_variable_read": (status_t, [handle_p, handle_p, _buf]),
    "dist_variable_assign": (status_t, [handle_p, handle_p, _buf]),
    "dist_variable_assign_add": (status_t, [handle_p, handle_p, _buf]),
    "dist_variable_assign_sub": (status_t, [handle_p, handle_p, _buf]),
    "dist_variable_apply_gradient": (status_t, [handle_p, handle_p, _buf]),
    "dist_variable_read_rows": (status_t, [handle_p, handle_p, _i64_out, ctypes.c_uint64, _buf]),
    "dist_variable_add_rows": (status_t, [handle_p, handle_p, _i64_out, ctypes.c_uint64, _buf]),
    "dist_variable_apply_rows": (status_t, [handle_p, handle_p, _i64_out, ctypes.c_uint64, _buf]),
    "dist_variable_num_shards": (status_t, [handle_p, _i32_out]),
    "dist_variable_shard": (status_t, [handle_p, ctypes.c_int32, _i32_out, ctypes.POINTER(ctypes.c_uint64),
                                       ctypes.POINTER(ctypes.c_uint64)]),
    "dist_variable_num_copies": (status_t, [handle_p, _i32_out]),
    "dist_variable_read_copy": (status_t, [handle_p, ctypes.c_int32, _buf]),
    "dist_optimizer_create": (status_t, [ctypes.POINTER(OptimizerOptions), _out_handle]),
    "dist_optimizer_destroy": (None, [handle_p]),
    "dist_optimizer_iterations": (status_t, [handle_p, _i64_out]),
    "dist_strategy_batch_all_reduce": (status_t, [handle_p, ctypes.c_int32, _buf, ctypes.c_size_t]),
    "dist_strategy_apply_gradients": (status_t, [handle_p, ctypes.POINTER(ctypes.c_void_p), _buf, ctypes.c_size_t,
                                                 handle_p]),
    "dist_server_start": (status_t, [handle_p, ctypes.POINTER(ServerOptions), _out_handle]),
    "dist_server_address": (status_t, [handle_p, _out_str]),
    "dist_server_describe": (status_t, [handle_p, _out_owned_str]),
    "dist_server_join": (status_t, [handle_p, ctypes.c_int64]),
    "dist_server_stop": (status_t, [handle_p]),
    "dist_server_destroy": (None, [handle_p]),
    "dist_checkpoint_save": (status_t, [handle_p, ctypes.c_char_p, ctypes.c_int64,
                                        ctypes.POINTER(CheckpointOptions), _out_owned_str]),
    "dist_checkpoint_restore": (status_t, [handle_p, ctypes.c_char_p, ctypes.POINTER(CheckpointOptions),
                                           _out_owned_str]),
}

for _name, (_restype, _argtypes) in _PROTOTYPES.items():
    _function = getattr(lib, _name)
    _function.restype = _restype
    _function.argtypes = _argtypes


def text(raw):
    """A borrowed C string as str (None stays None)."""
    return None if raw is None else raw.decode("utf-8", "replace")


def take_string(pointer):
    """A char* the library handed over: copied into a str, then freed."""
    try:
        return ctypes.string_at(pointer.value).decode("utf-8", "replace")
    finally:
        lib.dist_string_free(pointer)


def set_fields(options, fields):
    """Sets each (field_mask bit, field name, value) of an options struct whose value
    is not None, and its bit; None keeps the library's default."""
    for bit, name, value in fields:
        if value is not None:
            options.field_mask |= bit
            setattr(options, name, value)
    return options


def encode(value):
    return None if value is None else value.encode("utf-8")
