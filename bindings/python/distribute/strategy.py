"""Strategies and replica contexts: dist_strategy_t as Strategy, dist_replica_context_t
as ReplicaContext (tf.distribute's Strategy, ReplicaContext and merge_call).

Strategy.run(fn) calls fn on the library's replica threads. ctypes takes the GIL
for each call into Python and releases it during every C call, so replicas
waiting in an all-reduce or merge call let the others run. An exception raised
in a replica (or merge) function is caught there, reported to the library as a
failed status, and raised again from run() once every replica has returned.
"""
import ctypes
import math

import numpy as np

from . import constants as C
from ._native import MERGE_FN, REPLICA_FN, Buffer, StrategyOptions, encode, handle_p, lib, set_fields, text
from .cluster import Cluster
from .comm import _op
from .dtypes import as_numpy, describe
from .errors import DistError, check, error_for
from .handle import HandleOwner, query
from .input import InputContext
from .variable import Variable, _choice

KINDS = {"one_device": C.STRATEGY_ONE_DEVICE, "mirrored": C.STRATEGY_MIRRORED,
         "multi_worker_mirrored": C.STRATEGY_MULTI_WORKER_MIRRORED, "central_storage": C.STRATEGY_CENTRAL_STORAGE,
         "parameter_server": C.STRATEGY_PARAMETER_SERVER}
KIND_NAMES = {value: name for name, value in KINDS.items()}
COMMUNICATIONS = {"auto": C.COMMUNICATION_AUTO, "ring": C.COMMUNICATION_RING, "nccl": C.COMMUNICATION_NCCL}
PLACEMENTS = {"round_robin": C.PLACEMENT_ROUND_ROBIN, "greedy_bytes": C.PLACEMENT_GREEDY_BYTES}
CROSS_DEVICE_OPS = {"auto": C.CROSS_DEVICE_OPS_AUTO, "nccl_all_reduce": C.CROSS_DEVICE_OPS_NCCL_ALL_REDUCE,
                    "hierarchical_copy": C.CROSS_DEVICE_OPS_HIERARCHICAL_COPY,
                    "reduction_to_one_device": C.CROSS_DEVICE_OPS_REDUCTION_TO_ONE_DEVICE}
CROSS_DEVICE_OPS_NAMES = {value: name for name, value in CROSS_DEVICE_OPS.items()}


def _status_of(error):
    """What a failed Python callback returns to the library: a DistError keeps its
    status; any other exception is reported as ABORTED (it is raised again anyway)."""
    if isinstance(error, DistError) and error.status < 0:
        return error.status
    return C.ERR_ABORTED


def _buffers(descriptors):
    return (Buffer * len(descriptors))(*descriptors)


class _RunState:
    """What one Strategy.run shares between its replica threads (under the GIL)."""

    def __init__(self, replicas):
        self.returns = [None] * replicas
        self.errors = []  # in the order raised: the first is the cause, later ones its ABORTED echoes
        self.merge_values = {}
        self.merge_result = None
        self.merge_error = None


class ReplicaContext:
    """One replica inside Strategy.run; valid only during the call it was given to."""

    def __init__(self, handle, strategy, state):
        self._handle = handle
        self._strategy = strategy
        self._state = state

    @property
    def replica_id(self):
        """This replica's id in the sync group (worker rank * local replicas + local index)."""
        return query(self._handle, lib.dist_replica_id)

    @property
    def num_replicas_in_sync(self):
        return query(self._handle, lib.dist_replica_num_replicas_in_sync)

    @property
    def local_index(self):
        return query(self._handle, lib.dist_replica_local_index)

    @property
    def device(self):
        """The CUDA device ordinal (under CUDA_VISIBLE_DEVICES) this replica drives, the
        current device of its thread while fn runs; -1 for a CPU replica."""
        return query(self._handle, lib.dist_replica_device)

    @property
    def stream(self):
        """The replica's CUDA stream (a cudaStream_t, owned by the strategy and the
        same in every run) as an integer address, for a Buffer's stream or a CUDA
        library; None for a CPU replica."""
        return query(self._handle, lib.dist_replica_stream, ctype=ctypes.c_void_p)

    @property
    def strategy(self):
        """The Strategy running this replica."""
        assert query(self._handle, lib.dist_replica_strategy, ctype=ctypes.c_void_p) == self._strategy._handle.value
        return self._strategy

    def all_reduce(self, data, op="sum", *, dtype=None):
        """All-reduces `data` in place across every replica in sync (every local
        replica calls it with the same dtype, size and op); returns data."""
        buffer = describe(data, True, dtype)
        check(lib.dist_replica_all_reduce(self._handle, _op(op), ctypes.byref(buffer)))
        return data

    def merge_call(self, fn, value=None):
        """Every local replica calls it; fn(strategy, values) runs once in
        cross-replica context, values[i] being what local replica i passed, and its
        return value is returned to every replica. An exception in fn is raised
        from every replica's merge_call."""
        state = self._state
        index = self.local_index
        state.merge_values[index] = value

        def merge(_strategy, values, count, _user_data):
            state.merge_error = None
            try:
                # values[i] is index + 1 of the replica that passed it (never NULL).
                ordered = [state.merge_values[values[i] - 1] for i in range(count)]
                state.merge_result = fn(self._strategy, ordered)
                return C.OK
            except BaseException as error:  # noqa: B902 -- raised again by every replica
                state.merge_error = error
                return _status_of(error)

        callback = MERGE_FN(merge)
        status = lib.dist_replica_merge_call(self._handle, callback, index + 1, None)
        if status != C.OK:
            if state.merge_error is not None:
                raise state.merge_error
            raise error_for(status)
        return state.merge_result

    def set_result(self, value, *, dtype=None):
        """Records this replica's result of the run (copied): Strategy.local_results() afterwards."""
        buffer = describe(value, False, dtype)
        check(lib.dist_replica_set_result(self._handle, ctypes.byref(buffer)))


class Strategy(HandleOwner):
    """A tf.distribute strategy over an optional Context (None: one worker alone).

    kind is "one_device", "mirrored", "multi_worker_mirrored", "central_storage" or
    "parameter_server" (or a STRATEGY_* value). Creating a multi-worker strategy
    over a context is collective. Use it from one thread at a time; closing the
    context closes it (and its variables) first.

    "parameter_server" (tf.distribute's ParameterServerStrategy) keeps its
    variables on the tasks of a cluster's "ps" job: the context's cluster, or
    `cluster` without a context (kept alive as long as the strategy and its
    variables); `token` / `token_file` are the cluster token the servers expect
    (default DIST_CLUSTER_TOKEN, then DIST_CLUSTER_TOKEN_FILE); `placement` is
    "round_robin" (the default) or "greedy_bytes". It is not collective.

    `cross_device_ops` (mirrored and multi_worker_mirrored only; tf.distribute's
    CrossDeviceOps) says how the GPU replicas of one worker combine their values:
    "auto" (the default: "nccl_all_reduce" when every replica is a GPU and NCCL is
    available, else "reduction_to_one_device"), "nccl_all_reduce",
    "hierarchical_copy" or "reduction_to_one_device" (or a CROSS_DEVICE_OPS_*
    value); CPU replicas take only "auto" and "reduction_to_one_device".
    `reduce_to_device` is the device "reduction_to_one_device" sums on ("CPU:0" or
    "GPU:i"; default the first replica's device).
    `num_packs` (1..64; TF's num_packs) makes apply_gradients pack each dtype's
    gradients into that many packs of about equal size instead of buckets of
    `bytes_per_pack`; only "nccl_all_reduce" and "hierarchical_copy" (as given or
    as "auto" chose them) take it, so CPU replicas refuse it.
    """

    def __init__(self, context=None, kind="one_device", *, num_cpu_devices=None, communication=None,
                 bytes_per_pack=None, timeout_seconds=None, bind_threads=None, cluster=None, token=None,
                 token_file=None, placement=None, cross_device_ops=None, reduce_to_device=None,
                 num_packs=None):
        self._handle = None
        if cluster is not None and cluster.closed:
            raise ValueError("the cluster is closed")
        options = set_fields(StrategyOptions(), (
            (C.STRATEGY_OPT_KIND, "kind", KINDS[kind] if isinstance(kind, str) else kind),
            (C.STRATEGY_OPT_NUM_CPU_DEVICES, "num_cpu_devices", num_cpu_devices),
            (C.STRATEGY_OPT_COMMUNICATION, "communication",
             COMMUNICATIONS[communication] if isinstance(communication, str) else communication),
            (C.STRATEGY_OPT_BYTES_PER_PACK, "bytes_per_pack", bytes_per_pack),
            (C.STRATEGY_OPT_TIMEOUT_SECONDS, "timeout_seconds", timeout_seconds),
            (C.STRATEGY_OPT_BIND_THREADS, "bind_threads", None if bind_threads is None else int(bind_threads)),
            (C.STRATEGY_OPT_CLUSTER, "cluster", None if cluster is None else cluster._live_handle()),
            (C.STRATEGY_OPT_TOKEN, "token", encode(token)),
            (C.STRATEGY_OPT_TOKEN_FILE, "token_file", encode(token_file)),
            (C.STRATEGY_OPT_PLACEMENT, "placement", None if placement is None else _choice(PLACEMENTS, placement)),
            (C.STRATEGY_OPT_CROSS_DEVICE_OPS, "cross_device_ops",
             None if cross_device_ops is None else _choice(CROSS_DEVICE_OPS, cross_device_ops)),
            (C.STRATEGY_OPT_REDUCE_TO_DEVICE, "reduce_to_device", encode(reduce_to_device)),
            (C.STRATEGY_OPT_NUM_PACKS, "num_packs", num_packs)))
        if context is not None and context.closed:
            # NULL would silently mean "one worker alone".
            raise ValueError("the context is closed")
        handle = ctypes.c_void_p()
        check(lib.dist_strategy_create(context._handle if context is not None else None, ctypes.byref(options),
                                       ctypes.byref(handle)))
        self._handle = handle
        self._context = context
        self._cluster = cluster  # borrowed by the C strategy
        if context is not None:
            context._adopt(self)

    def close(self):
        """Destroys the strategy; its variables stay usable (they keep its state alive)."""
        handle, self._handle = self._handle, None
        if handle is None:
            return
        lib.dist_strategy_destroy(handle)
        if self._context is not None:
            self._context._forget(self)


    @property
    def kind(self):
        """"one_device", "mirrored", "multi_worker_mirrored", "central_storage" or "parameter_server"."""
        return KIND_NAMES[self._query(lib.dist_strategy_kind)]

    @property
    def num_replicas_in_sync(self):
        return self._query(lib.dist_strategy_num_replicas_in_sync)

    @property
    def num_local_replicas(self):
        return self._query(lib.dist_strategy_num_local_replicas)

    @property
    def devices(self):
        """The local devices, "/job:worker/replica:0/task:1/device:CPU:0", one per local replica."""
        return [text(self._query(lib.dist_strategy_device, i, ctype=ctypes.c_char_p))
                for i in range(self.num_local_replicas)]

    @property
    def cross_device_ops(self):
        """The cross-device ops in effect ("auto" resolved): "nccl_all_reduce",
        "hierarchical_copy" or "reduction_to_one_device" (always the last on CPU
        replicas)."""
        return CROSS_DEVICE_OPS_NAMES[self._query(lib.dist_strategy_cross_device_ops)]

    @property
    def cluster(self):
        """The cluster of the strategy's context (borrowed from it), or the cluster a
        parameter_server strategy was given; None without either."""
        out = ctypes.c_void_p()
        check(lib.dist_strategy_cluster(self._handle, ctypes.byref(out)))
        return None if out.value is None else Cluster._borrow(out, self)

    @property
    def task_type(self):
        """"worker", "chief", ... (None for a worker alone)."""
        return text(self._query(lib.dist_strategy_task_type, ctype=ctypes.c_char_p))

    @property
    def task_id(self):
        """-1 for a worker alone."""
        return self._query(lib.dist_strategy_task_id)

    @property
    def worker_index(self):
        """(this worker's index, number of workers)."""
        index, count = ctypes.c_int32(), ctypes.c_int32()
        check(lib.dist_strategy_worker_index(self._handle, ctypes.byref(index), ctypes.byref(count)))
        return index.value, count.value

    def input_context(self):
        """The strategy's InputContext: one input pipeline per worker, this worker's index."""
        out = ctypes.c_void_p()
        check(lib.dist_strategy_input_context(self._handle, ctypes.byref(out)))
        return InputContext(out)

    def variable(self, initial_value=None, **options):
        """A distributed variable (collective); see Variable."""
        return Variable(self, initial_value, **options)

    def run(self, fn, args=(), kwargs=None):
        """Calls fn(replica, *args, **kwargs) once per local replica, each on its own
        thread, and returns their return values in local replica order. If a
        replica raises, the other replicas waiting for it are released and the
        first exception raised is raised here once all have returned."""
        kwargs = kwargs or {}
        state = _RunState(self.num_local_replicas)

        def replica_main(replica_handle, _user_data):
            replica = ReplicaContext(handle_p(replica_handle), self, state)
            try:
                state.returns[replica.local_index] = fn(replica, *args, **kwargs)
                return C.OK
            except BaseException as error:  # noqa: B902 -- raised again after dist_strategy_run
                state.errors.append(error)
                return _status_of(error)
            finally:
                replica._handle = None  # the C context ends with this call

        callback = REPLICA_FN(replica_main)  # alive until dist_strategy_run returns
        status = lib.dist_strategy_run(self._handle, callback, None)
        if state.errors:
            raise state.errors[0]
        check(status)
        return state.returns

    def local_results(self):
        """What each local replica passed to set_result in the last run (copies; None
        for a replica that set none)."""
        results, count = ctypes.POINTER(Buffer)(), ctypes.c_int32()
        check(lib.dist_strategy_local_results(self._handle, ctypes.byref(results), ctypes.byref(count)))
        out = []
        for i in range(count.value):
            buffer = results[i]
            if not buffer.data:
                out.append(None)
                continue
            dtype = as_numpy(buffer.dtype)
            raw = ctypes.string_at(buffer.data, buffer.count * dtype.itemsize)
            out.append(np.frombuffer(raw, dtype).copy())
        return out

    def reduce(self, op, values, axis=None, *, out=None, dtype=None):
        """tf's strategy.reduce in cross-replica context (collective): values[i] is
        local replica i's array. axis None: the element-wise sum (or mean) over all
        replicas; axis 0: the sum (or mean over the true number of rows) of every
        replica's rows. Returns `out` (allocated when None)."""
        if len(values) == 0:
            raise ValueError("reduce needs one value per local replica")
        first = values[0]
        if out is None:
            shape = first.shape if axis is None else first.shape[1:]
            out = np.empty(shape, first.dtype)
        descriptors = _buffers([describe(v, False, dtype) for v in values])
        result = describe(out, True, dtype)
        check(lib.dist_strategy_reduce(self._handle, _op(op), descriptors, len(values),
                                       C.AXIS_NONE if axis is None else axis, ctypes.byref(result)))
        return out

    def split_batch(self, batch, rows=None, *, dtype=None):
        """This worker's batch split across the local replicas: a list of views into
        `batch` (no copy), ceil(rows / replicas) rows each, the last fewer."""
        if rows is None:
            if batch.ndim == 0:
                raise ValueError("a scalar is not a batch: pass rows")
            rows = batch.shape[0]
        replicas = self.num_local_replicas
        parts = (Buffer * replicas)()
        source = describe(batch, False, dtype)
        check(lib.dist_strategy_split_batch(self._handle, ctypes.byref(source), rows, parts, replicas))
        flat = batch.reshape(-1)
        row_shape = batch.shape[1:] if batch.ndim >= 1 and rows == batch.shape[0] else None
        views = []
        for part in parts:
            start = 0 if not part.data else (part.data - batch.ctypes.data) // batch.itemsize
            view = flat[start:start + part.count]
            if row_shape is not None and math.prod(row_shape) > 0:
                view = view.reshape((-1,) + row_shape)
            views.append(view)
        return views

    def batch_all_reduce(self, op, per_replica, *, dtype=None):
        """Fused all-reduce (collective): per_replica[r] is local replica r's list of
        arrays (the same sizes and dtypes on every replica), reduced in place so
        each holds the sum (or mean) over all replicas. Returns per_replica."""
        flat = self._per_replica(per_replica, "per_replica")
        n = len(flat) // len(per_replica) if per_replica else 0
        descriptors = _buffers([describe(a, True, dtype) for a in flat])
        check(lib.dist_strategy_batch_all_reduce(self._handle, _op(op), descriptors, n))
        return per_replica

    def apply_gradients(self, variables, per_replica_gradients, optimizer):
        """Cross-replica (collective): per_replica_gradients[r][i] is local replica r's
        gradient of variables[i]. They are mean-all-reduced in fused buckets and the
        optimizer updates every copy of every variable. The gradient arrays are
        scratch (some may hold the all-reduced sum afterwards)."""
        flat = self._per_replica(per_replica_gradients, "per_replica_gradients", len(variables))
        handles = (ctypes.c_void_p * max(len(variables), 1))(*[v._handle for v in variables])
        descriptors = _buffers([describe(g, True) for g in flat])
        check(lib.dist_strategy_apply_gradients(self._handle, handles, descriptors, len(variables),
                                                optimizer._handle))

    def _per_replica(self, per_replica, what, n=None):
        """The replica-major flat list of per_replica (one list per local replica, each of n arrays)."""
        if len(per_replica) != self.num_local_replicas:
            raise ValueError(f"{what} needs one list per local replica ({self.num_local_replicas}), "
                             f"got {len(per_replica)}")
        if n is None:
            n = len(per_replica[0]) if per_replica else 0
        for r, tensors in enumerate(per_replica):
            if len(tensors) != n:
                raise ValueError(f"{what}[{r}] has {len(tensors)} arrays, expected {n}")
        return [array for tensors in per_replica for array in tensors]
