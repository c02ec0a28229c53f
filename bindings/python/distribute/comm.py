"""Communicators, collectives and requests.

Buffers are C-contiguous numpy arrays used in place (zero copy). A non-blocking
call (wait=False) returns a Request that holds its arrays until it completes.
"""
import ctypes
import dataclasses
import itertools
import threading

from . import _native
from . import constants as C
from ._native import REQUEST_CALLBACK_FN, CommOptions, lib, text
from .dtypes import describe
from .errors import check, error_for, error_from
from .handle import HandleOwner

OPS = {"sum": C.OP_SUM, "prod": C.OP_PROD, "min": C.OP_MIN, "max": C.OP_MAX, "mean": C.OP_MEAN}
ALGORITHMS = {"auto": C.ALLREDUCE_AUTO, "ring": C.ALLREDUCE_RING, "rabenseifner": C.ALLREDUCE_RABENSEIFNER,
              "recursive_doubling": C.ALLREDUCE_RECURSIVE_DOUBLING, "shared_memory": C.ALLREDUCE_SHARED_MEMORY,
              "hierarchical": C.ALLREDUCE_HIERARCHICAL}
PATHS = {C.COMM_PATH_SELF: "self", C.COMM_PATH_POINT_TO_POINT: "point_to_point",
         C.COMM_PATH_SHARED_MEMORY: "shared_memory", C.COMM_PATH_HIERARCHICAL: "hierarchical",
         C.COMM_PATH_NCCL: "nccl", C.COMM_PATH_STAGED: "staged"}
COLLECTIVES = {"all_reduce": C.COLLECTIVE_ALL_REDUCE, "reduce": C.COLLECTIVE_REDUCE,
               "broadcast": C.COLLECTIVE_BROADCAST, "all_gather": C.COLLECTIVE_ALL_GATHER,
               "reduce_scatter": C.COLLECTIVE_REDUCE_SCATTER, "all_to_all": C.COLLECTIVE_ALL_TO_ALL,
               "barrier": C.COLLECTIVE_BARRIER, "all_to_all_v": C.COLLECTIVE_ALL_TO_ALL_V}
COLLECTIVE_NAMES = {value: name for name, value in COLLECTIVES.items()}


@dataclasses.dataclass(frozen=True)
class CommStat:
    """One row of Comm.stats(): the calls of one collective that ran on one path
    under one algorithm. collective and path are names ("all_reduce", "self"; the
    number where a newer library reports one this binding does not know), bytes
    those carried per rank, timed_calls the calls time_ns covers (none while
    timing is off)."""
    collective: object
    path: object
    algorithm: str
    calls: int
    failed: int
    bytes: int
    timed_calls: int
    time_ns: int

    @classmethod
    def _from_c(cls, row):
        return cls(COLLECTIVE_NAMES.get(row.collective, row.collective), PATHS.get(row.path, row.path),
                   text(row.algorithm), row.calls, row.failed, row.bytes, row.timed_calls, row.time_ns)


def _op(op):
    return OPS[op] if isinstance(op, str) else int(op)


def _counts(name, values, size):
    """uint64_t[size] of a sequence of counts or offsets (None stays NULL)."""
    if values is None:
        return None
    values = [int(value) for value in values]
    if len(values) != size:
        raise ValueError(f"{name} needs {size} entries (one per rank), got {len(values)}")
    if any(value < 0 for value in values):
        raise ValueError(f"{name} must not be negative: {values}")
    return (ctypes.c_uint64 * size)(*values)


class _Callbacks:
    """The Python functions of dist_request_on_complete, by the user_data the
    library hands back: one C function pointer for all of them (alive as long as
    the module), so that none is freed while the library may still call it."""

    def __init__(self):
        self._pending = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.trampoline = REQUEST_CALLBACK_FN(self._run)

    def add(self, callback):
        with self._lock:
            key = next(self._ids)
            self._pending[key] = callback
        return key

    def drop(self, key):
        with self._lock:
            self._pending.pop(key, None)

    def _run(self, user_data, status, message):
        with self._lock:
            callback = self._pending.pop(user_data, None)
        if callback is not None:  # what it raises, ctypes reports (sys.unraisablehook)
            callback(None if status == C.OK else error_from(status, text(message)))


_CALLBACKS = _Callbacks()
_CLOSING = threading.Lock()


class Request(HandleOwner):
    """A collective in flight. test() / wait() report its outcome (raising on error);
    close() waits for it before freeing, so its arrays are never released early.
    Its communicator holds it until it is closed (a `with` block, or closing the
    communicator or context)."""

    def __init__(self, handle, comm, arrays, result):
        self._handle = handle
        self._comm = comm  # the communicator must outlive its requests
        self._arrays = arrays
        self._result = result
        comm._requests.add(self)

    def test(self):
        """True once complete (then raises if the call failed)."""
        return bool(self._query(lib.dist_request_test))

    def wait(self, timeout=None):
        """Waits for completion and returns the result array. With `timeout` (seconds),
        raises DistTimeoutError if the wait runs out; the request stays valid."""
        ms = -1 if timeout is None else int(timeout * 1000)
        status = lib.dist_request_wait(self._handle, ms)
        if status == C.ERR_TIMEOUT and ms >= 0:
            # Either this wait ran out (the request stays valid) or the call itself timed out.
            ran_out = error_for(status)
            done = ctypes.c_int32(0)
            status = lib.dist_request_test(self._handle, ctypes.byref(done))
            if not done.value:
                raise ran_out
        check(status)
        return self._result

    def on_complete(self, callback):
        """Calls callback(error) once the call completes: error None on success,
        else the call's DistError. It runs on the library thread that completed
        the call (at once, on this thread, if it already has), so it must return
        quickly and never block on this communicator; what it raises is reported
        through sys.unraisablehook. One callback per request."""
        key = _CALLBACKS.add(callback)
        status = lib.dist_request_on_complete(self._handle, _CALLBACKS.trampoline, key)
        if status != C.OK:
            _CALLBACKS.drop(key)
            check(status)

    @property
    def source(self):
        """The communicator rank a completed receive came from (for DIST_ANY_SOURCE)."""
        return self._query(lib.dist_request_source)

    def close(self):
        with _CLOSING:  # one thread takes the handle (a completion thread and the communicator's close may race)
            handle, self._handle = self._handle, None
        if handle is None:
            return
        lib.dist_request_wait(handle, -1)  # its arrays are ours: never free them under a running call
        lib.dist_request_free(handle)
        self._arrays = None
        self._comm._requests.discard(self)

class Comm(HandleOwner):
    """A communicator. Use one from one thread at a time; different communicators
    may be used concurrently."""

    def __init__(self, handle, context, owned):
        self._handle = handle
        self._context = context  # keeps the context alive while this comm is
        self._owned = owned
        self._requests = set()  # strong, as Context._children, until each is closed
        if owned:
            context._adopt(self)

    def close(self):
        """Destroys a split communicator (the world is the context's: only detached).
        Waits for this communicator's requests first."""
        handle, self._handle = self._handle, None
        if handle is None:
            return
        for request in list(self._requests):
            request.close()
        if self._owned:
            lib.dist_comm_destroy(handle)
            self._context._forget(self)

    @property
    def rank(self):
        return self._query(lib.dist_comm_rank)

    @property
    def size(self):
        return self._query(lib.dist_comm_size)

    @property
    def path(self):
        """How the collectives travel: "self" (one rank), "point_to_point" (UCX
        messages), "shared_memory" (one host, a shared segment) or "hierarchical"
        (shared memory within each host, UCX messages between hosts)."""
        return PATHS[self._query(lib.dist_comm_path)]

    @property
    def device_path(self):
        """How the calls on CUDA memory travel: "nccl" or "staged" (through pinned
        host memory), which the ranks choose together at the first such call.
        Before that call, and in builds without CUDA, it raises DistError with
        status ERR_UNAVAILABLE."""
        return PATHS[self._query(lib.dist_comm_device_path)]

    @property
    def local_rank(self):
        """This rank's position among the ranks of its host, in rank order."""
        return self._query(lib.dist_comm_local_rank)

    @property
    def local_size(self):
        """How many ranks of this communicator run on this rank's host."""
        return self._query(lib.dist_comm_local_size)

    @property
    def num_hosts(self):
        """How many hosts this communicator's ranks run on."""
        return self._query(lib.dist_comm_num_hosts)

    def algorithm(self, collective, nbytes):
        """The algorithm this communicator runs for `collective` (a name such as
        "all_reduce", or a COLLECTIVE_* value) of `nbytes` bytes per rank, e.g.
        "shm_direct" or "ring"."""
        kind = COLLECTIVES[collective] if isinstance(collective, str) else int(collective)
        out = ctypes.c_char_p()
        check(lib.dist_comm_algorithm(self._handle, kind, nbytes, ctypes.byref(out)))
        return out.value.decode()

    def split(self, color, key=0):
        """dist_comm_split (collective): None for a negative color."""
        handle = ctypes.c_void_p()
        check(lib.dist_comm_split(self._handle, color, key, ctypes.byref(handle)))
        return Comm(handle, self._context, owned=True) if handle.value else None

    def split_host(self):
        """dist_comm_split_host (collective): the communicator of this rank's host,
        its ranks in this communicator's order."""
        handle = ctypes.c_void_p()
        check(lib.dist_comm_split_host(self._handle, ctypes.byref(handle)))
        return Comm(handle, self._context, owned=True)

    def configure(self, timeout_ms=None, allreduce=None, timing=None, stall_warning_ms=None, deterministic=None):
        """dist_comm_configure: the deadline of each call, the all-reduce algorithm,
        whether to time every call for stats() (True/False; the library refuses
        anything but 0 and 1), how long a call waits for its peers before warning
        who is behind (stall_warning_ms; 0: no warning, negative is refused) and
        whether float SUM/PROD/MEAN reductions combine the ranks in rank order, the
        same bits on every path (deterministic: True/False, 0 or 1). None keeps the
        current setting."""
        options = CommOptions()
        if timeout_ms is not None:
            options.field_mask |= C.COMM_OPT_TIMEOUT_MS
            options.timeout_ms = timeout_ms
        if allreduce is not None:
            options.field_mask |= C.COMM_OPT_ALLREDUCE
            options.allreduce = ALGORITHMS[allreduce] if isinstance(allreduce, str) else int(allreduce)
        if timing is not None:
            options.field_mask |= C.COMM_OPT_TIMING
            options.timing = int(timing)
        if stall_warning_ms is not None:
            options.field_mask |= C.COMM_OPT_STALL_WARNING_MS
            options.stall_warning_ms = stall_warning_ms
        if deterministic is not None:
            options.field_mask |= C.COMM_OPT_DETERMINISTIC
            options.deterministic = int(deterministic)
        check(lib.dist_comm_configure(self._handle, ctypes.byref(options)))

    def stats(self):
        """This communicator's counters: a list of CommStat, one per collective,
        path and algorithm that ran, in the order they first ran."""
        count = ctypes.c_uint64()
        check(lib.dist_comm_stats(self._handle, None, 0, ctypes.byref(count)))
        while True:
            # A request completing on the library's thread may add a row between the
            # calls: then ask again with room for it.
            capacity = count.value
            rows = (_native.CommStat * capacity)()
            check(lib.dist_comm_stats(self._handle, rows, capacity, ctypes.byref(count)))
            if count.value <= capacity:
                return [CommStat._from_c(row) for row in rows[:count.value]]

    def reset_stats(self):
        """Sets every counter of stats() to zero (not while calls run on this communicator)."""
        check(lib.dist_comm_stats_reset(self._handle))

    def _run(self, call, arrays, result, wait):
        """Makes the C call blocking (wait=True: returns `result`) or not (returns a Request)."""
        if wait:
            check(call(None))
            return result
        handle = ctypes.c_void_p()
        check(call(ctypes.byref(handle)))
        return Request(handle, self, arrays, result)

    @staticmethod
    def _pair(data, out, dtype):
        """(send, recv) descriptors: in place when out is None."""
        if out is None:
            return None, describe(data, True, dtype)
        return describe(data, False, dtype), describe(out, True, dtype)

    def all_reduce(self, data, op="sum", *, out=None, dtype=None, wait=True):
        """Reduces `data` over all ranks into `out` (in place when out is None)."""
        send, recv = self._pair(data, out, dtype)
        return self._run(lambda req: lib.dist_all_reduce(self._handle, send and ctypes.byref(send),
                                                         ctypes.byref(recv), _op(op), req),
                         (data, out), data if out is None else out, wait)

    def reduce(self, data, op="sum", root=0, *, out=None, dtype=None, wait=True):
        """Reduces onto `root`: into `out` there (in place when out is None); other ranks may pass out=None."""
        if out is None and self.rank != root:
            send, recv = describe(data, False, dtype), None
        else:
            send, recv = self._pair(data, out, dtype)
        return self._run(lambda req: lib.dist_reduce(self._handle, send and ctypes.byref(send),
                                                     recv and ctypes.byref(recv), _op(op), root, req),
                         (data, out), data if out is None else out, wait)

    def broadcast(self, data, root=0, *, dtype=None, wait=True):
        buffer = describe(data, True, dtype)
        return self._run(lambda req: lib.dist_broadcast(self._handle, ctypes.byref(buffer), root, req),
                         (data,), data, wait)

    def all_gather(self, data, out, *, dtype=None, wait=True):
        """Gathers every rank's `data` into `out` (size * len(data)); data=None: in place,
        this rank's block is already in out."""
        send = None if data is None else describe(data, False, dtype)
        recv = describe(out, True, dtype)
        return self._run(lambda req: lib.dist_all_gather(self._handle, send and ctypes.byref(send),
                                                         ctypes.byref(recv), req),
                         (data, out), out, wait)

    def reduce_scatter(self, data, out=None, op="sum", *, dtype=None, wait=True):
        """Block `rank` of the reduction of `data` (size * c elements) into `out` (c).
        out=None: in place, the result lands in the first c elements of data."""
        if out is None:
            size = self.size
            if data.size % size:
                raise ValueError(f"in-place reduce_scatter needs a multiple of {size} elements, got {data.size}")
            send, recv = None, describe(data, True, dtype, count=data.size // size)
        else:
            send, recv = describe(data, False, dtype), describe(out, True, dtype)
        return self._run(lambda req: lib.dist_reduce_scatter(self._handle, send and ctypes.byref(send),
                                                             ctypes.byref(recv), _op(op), req),
                         (data, out), data if out is None else out, wait)

    def all_to_all(self, data, out=None, *, dtype=None, wait=True):
        """Block j of this rank's data goes to rank j, landing as block `rank` of its out."""
        send, recv = self._pair(data, out, dtype)
        return self._run(lambda req: lib.dist_all_to_all(self._handle, send and ctypes.byref(send),
                                                         ctypes.byref(recv), req),
                         (data, out), data if out is None else out, wait)

    def barrier(self, *, wait=True):
        return self._run(lambda req: lib.dist_barrier(self._handle, req), (), None, wait)

    def all_to_all_v(self, data, send_counts, out, recv_counts, *, send_offsets=None, recv_offsets=None,
                     dtype=None, wait=True):
        """Uneven all-to-all (collective): send_counts[j] elements of `data` (from
        send_offsets[j], else packed in rank order) go to rank j, and
        recv_counts[j] elements from rank j land in `out` (at recv_offsets[j],
        else packed). send_counts[j] here must equal recv_counts[rank] on rank j."""
        size = self.size
        arrays = [_counts("send_counts", send_counts, size), _counts("send_offsets", send_offsets, size),
                  _counts("recv_counts", recv_counts, size), _counts("recv_offsets", recv_offsets, size)]
        send, recv = describe(data, False, dtype), describe(out, True, dtype)
        return self._run(lambda req: lib.dist_all_to_all_v(self._handle, ctypes.byref(send), arrays[0], arrays[1],
                                                           ctypes.byref(recv), arrays[2], arrays[3], req),
                         (data, out, arrays), out, wait)

    def send(self, data, peer, tag=0, *, dtype=None, wait=True):
        """Sends `data` to rank `peer` (point to point, apart from the collectives);
        blocking: until `data` may be reused."""
        buffer = describe(data, False, dtype)
        return self._run(lambda req: lib.dist_send(self._handle, ctypes.byref(buffer), peer, tag, req),
                         (data,), data, wait)

    def recv(self, out, peer=C.ANY_SOURCE, tag=0, *, dtype=None, wait=True):
        """Receives into `out` the oldest unmatched message from `peer` with `tag`
        (peer ANY_SOURCE: from any rank; the Request's `source` says which)."""
        buffer = describe(out, True, dtype)
        return self._run(lambda req: lib.dist_recv(self._handle, ctypes.byref(buffer), peer, tag, req),
                         (out,), out, wait)
