"""Distributed variables: dist_variable_t as Variable (tf.Variable under a strategy)."""
import ctypes

import numpy as np

from . import constants as C
from ._native import VariableOptions, encode, lib, set_fields, text
from .dtypes import as_dist, as_numpy, describe
from .errors import check
from .handle import HandleOwner
from .optimizer import optimizer_options

SYNCHRONIZATIONS = {"auto": C.SYNC_AUTO, "on_write": C.SYNC_ON_WRITE, "on_read": C.SYNC_ON_READ,
                    "none": C.SYNC_NONE}
AGGREGATIONS = {"none": C.AGGREGATION_NONE, "sum": C.AGGREGATION_SUM, "mean": C.AGGREGATION_MEAN,
                "only_first_replica": C.AGGREGATION_ONLY_FIRST_REPLICA}
SYNCHRONIZATION_NAMES = {value: name for name, value in SYNCHRONIZATIONS.items()}
AGGREGATION_NAMES = {value: name for name, value in AGGREGATIONS.items()}


def _choice(table, value):
    return table[value] if isinstance(value, str) else int(value)


def _replica(replica):
    """The C handle of a replica context (NULL: cross-replica). A context whose
    replica function has returned must not silently become cross-replica."""
    if replica is None:
        return None
    if replica._handle is None:
        raise ValueError("this ReplicaContext is no longer valid: its replica function has returned")
    return replica._handle


class Variable(HandleOwner):
    """A variable mirrored (ON_WRITE) or kept per replica (ON_READ) by its strategy.

    Made by Strategy.variable(initial_value, name=, dtype=, shape=,
    synchronization=, aggregation=); creation is collective (every worker starts
    from the chief's initial value). dtype and shape default to the initial
    value's; synchronization and aggregation are names ("on_write", "mean", ...)
    or SYNC_* / AGGREGATION_* values. read/assign* take replica= inside
    Strategy.run (that replica's context) and none in cross-replica context.
    The variable keeps its strategy's state alive; its context must outlive it
    (closing the context closes it).

    Under a "parameter_server" strategy the variable lives on the ps tasks (names
    are its identity there): `optimizer` is the servers' optimizer of
    apply_gradient / apply_rows, a dict of optimizer_options' arguments
    ({"kind": "adam", "learning_rate": 0.01}) or a kind name; the partitioner
    `num_shards`, or `max_shard_bytes` / `min_shard_bytes` with `max_shards`,
    splits its rows into shards over the servers; `colocate_with` (a Variable)
    places shard i with that variable's; `sync_gradients` (with
    `replicas_to_aggregate`, `max_staleness`) makes apply_gradient synchronous.
    The row calls (read_rows, add_rows, apply_rows) take row indices into the
    first dimension.
    """

    def __init__(self, strategy, initial_value=None, *, name=None, dtype=None, shape=None, synchronization=None,
                 aggregation=None, optimizer=None, num_shards=None, max_shard_bytes=None, min_shard_bytes=None,
                 max_shards=None, colocate_with=None, sync_gradients=None, replicas_to_aggregate=None,
                 max_staleness=None):
        self._handle = None
        options = VariableOptions()
        keep = []
        if initial_value is not None:
            initial_value = np.ascontiguousarray(initial_value,
                                                 dtype=None if dtype is None or isinstance(dtype, int) else dtype)
            if dtype is None:
                dtype = initial_value.dtype
            if shape is None:
                shape = initial_value.shape
            if initial_value.dtype.itemsize != as_numpy(as_dist(dtype)).itemsize:
                raise TypeError(f"initial value of dtype {initial_value.dtype} for a variable of dtype {dtype}")
            keep.append(initial_value)
            options.field_mask |= C.VARIABLE_OPT_INITIAL_VALUE
            options.initial_value = initial_value.ctypes.data
        if name is not None:
            options.field_mask |= C.VARIABLE_OPT_NAME
            options.name = encode(name)
        if dtype is not None:
            options.field_mask |= C.VARIABLE_OPT_DTYPE
            options.dtype = as_dist(dtype)
        if shape is not None:
            dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
            keep.append(dims)
            options.field_mask |= C.VARIABLE_OPT_SHAPE
            options.shape, options.rank = dims, len(shape)
        if synchronization is not None:
            options.field_mask |= C.VARIABLE_OPT_SYNCHRONIZATION
            options.synchronization = _choice(SYNCHRONIZATIONS, synchronization)
        if aggregation is not None:
            options.field_mask |= C.VARIABLE_OPT_AGGREGATION
            options.aggregation = _choice(AGGREGATIONS, aggregation)
        if optimizer is not None:
            server_optimizer = optimizer_options(**optimizer) if isinstance(optimizer, dict) else \
                optimizer_options(optimizer)
            keep.append(server_optimizer)
            options.field_mask |= C.VARIABLE_OPT_OPTIMIZER
            options.optimizer = ctypes.pointer(server_optimizer)
        if colocate_with is not None and colocate_with.closed:
            raise ValueError("colocate_with is closed")
        set_fields(options, ((C.VARIABLE_OPT_NUM_SHARDS, "num_shards", num_shards),
                             (C.VARIABLE_OPT_MAX_SHARD_BYTES, "max_shard_bytes", max_shard_bytes),
                             (C.VARIABLE_OPT_MIN_SHARD_BYTES, "min_shard_bytes", min_shard_bytes),
                             (C.VARIABLE_OPT_MAX_SHARDS, "max_shards", max_shards),
                             (C.VARIABLE_OPT_COLOCATE_WITH, "colocate_with",
                              None if colocate_with is None else colocate_with._handle),
                             (C.VARIABLE_OPT_SYNC_GRADIENTS, "sync_gradients",
                              None if sync_gradients is None else int(sync_gradients)),
                             (C.VARIABLE_OPT_REPLICAS_TO_AGGREGATE, "replicas_to_aggregate", replicas_to_aggregate),
                             (C.VARIABLE_OPT_MAX_STALENESS, "max_staleness", max_staleness)))
        if initial_value is not None and initial_value.size != int(np.prod(shape, dtype=np.int64)):
            raise ValueError(f"initial value has {initial_value.size} elements, shape {tuple(shape)} needs "
                             f"{int(np.prod(shape, dtype=np.int64))}")
        handle = ctypes.c_void_p()
        check(lib.dist_variable_create(strategy._handle, ctypes.byref(options), ctypes.byref(handle)))
        self._handle = handle
        self._context = strategy._context
        self._cluster = strategy._cluster  # a parameter_server strategy's, borrowed by the C side
        if self._context is not None:
            self._context._adopt(self)

    def close(self):
        handle, self._handle = self._handle, None
        if handle is None:
            return
        lib.dist_variable_destroy(handle)
        if self._context is not None:
            self._context._forget(self)


    @property
    def name(self):
        return text(self._query(lib.dist_variable_name, ctype=ctypes.c_char_p))

    @property
    def dist_dtype(self):
        """The DIST_DTYPE value."""
        return self._query(lib.dist_variable_dtype)

    @property
    def dtype(self):
        """The numpy dtype of its values (uint16 for bfloat16)."""
        return as_numpy(self.dist_dtype)

    @property
    def shape(self):
        dims, rank = ctypes.POINTER(ctypes.c_int64)(), ctypes.c_int32()
        check(lib.dist_variable_shape(self._handle, ctypes.byref(dims), ctypes.byref(rank)))
        return tuple(dims[i] for i in range(rank.value))

    @property
    def size(self):
        return self._query(lib.dist_variable_count, ctype=ctypes.c_uint64)

    @property
    def synchronization(self):
        """"on_write", "on_read" or "none" (as resolved: never "auto")."""
        return SYNCHRONIZATION_NAMES[self._query(lib.dist_variable_synchronization)]

    @property
    def aggregation(self):
        """"none", "sum", "mean" or "only_first_replica"."""
        return AGGREGATION_NAMES[self._query(lib.dist_variable_aggregation)]

    @property
    def num_copies(self):
        """Local copies: one per local replica, 1 for CENTRAL_STORAGE ON_WRITE, 0 on parameter servers."""
        return self._query(lib.dist_variable_num_copies)

    @property
    def shards(self):
        """Where a parameter_server variable lives: one (server index in the "ps" job,
        first row, rows) per shard; empty for other strategies' variables."""
        found = []
        server, first, rows = ctypes.c_int32(), ctypes.c_uint64(), ctypes.c_uint64()
        for i in range(self._query(lib.dist_variable_num_shards)):
            check(lib.dist_variable_shard(self._handle, i, ctypes.byref(server), ctypes.byref(first),
                                          ctypes.byref(rows)))
            found.append((server.value, first.value, rows.value))
        return found

    def _out(self, out):
        if out is None:
            return np.empty(self.shape, self.dtype)
        return out

    def read(self, replica=None, *, out=None):
        """The value (a new array of the variable's shape, or into `out`). Cross-replica
        reads of an ON_READ variable aggregate all replicas' copies (collective)."""
        out = self._out(out)
        buffer = describe(out, True, self.dist_dtype)
        check(lib.dist_variable_read(self._handle, _replica(replica), ctypes.byref(buffer)))
        return out

    def numpy(self):
        return self.read()

    def read_copy(self, i, *, out=None):
        """Local copy i as stored (to check the mirroring)."""
        out = self._out(out)
        buffer = describe(out, True, self.dist_dtype)
        check(lib.dist_variable_read_copy(self._handle, i, ctypes.byref(buffer)))
        return out

    def _update(self, function, value, replica):
        value = np.ascontiguousarray(value, dtype=self.dtype)
        buffer = describe(value, False, self.dist_dtype)
        check(function(self._handle, _replica(replica), ctypes.byref(buffer)))

    def assign(self, value, replica=None):
        """In a replica: every local replica calls it and the values are aggregated
        (ON_WRITE, collective); in cross-replica context it sets every copy."""
        self._update(lib.dist_variable_assign, value, replica)

    def assign_add(self, value, replica=None):
        self._update(lib.dist_variable_assign_add, value, replica)

    def assign_sub(self, value, replica=None):
        self._update(lib.dist_variable_assign_sub, value, replica)

    def apply_gradient(self, gradient, replica=None):
        """parameter_server: the servers apply `gradient` (the variable's shape) with
        the variable's optimizer, asynchronously to other workers."""
        self._update(lib.dist_variable_apply_gradient, gradient, replica)

    def _row_shape(self, count):
        return (count,) + self.shape[1:]

    def _row_call(self, function, rows, values, replica, writable):
        rows = np.ascontiguousarray(rows, dtype=np.int64).reshape(-1)
        buffer = describe(values, writable, self.dist_dtype)
        check(function(self._handle, _replica(replica), rows.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                       rows.size, ctypes.byref(buffer)))

    def read_rows(self, rows, replica=None, *, out=None):
        """parameter_server: rows[i] of the variable (an embedding lookup; repeats
        allowed), as a new array of shape (len(rows),) + shape[1:] or into `out`."""
        rows = np.ascontiguousarray(rows, dtype=np.int64).reshape(-1)
        if out is None:
            out = np.empty(self._row_shape(rows.size), self.dtype)
        self._row_call(lib.dist_variable_read_rows, rows, out, replica, True)
        return out

    def add_rows(self, rows, values, replica=None):
        """parameter_server: adds values' row i to row rows[i] on the servers (scatter-add)."""
        values = np.ascontiguousarray(values, dtype=self.dtype)
        self._row_call(lib.dist_variable_add_rows, rows, values, replica, False)

    def apply_rows(self, rows, gradients, replica=None):
        """parameter_server: the optimizer updates rows[i] with gradients' row i and
        touches no other row (a sparse gradient)."""
        gradients = np.ascontiguousarray(gradients, dtype=self.dtype)
        self._row_call(lib.dist_variable_apply_rows, rows, gradients, replica, False)
