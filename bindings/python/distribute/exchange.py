"""Contexts built through the caller's own exchange (dist_context_create_oob).

The library asks for one or more all-gathers, in the same order on every rank,
and polls each (with short sleeps) on the thread that creates the context, until
its connect deadline. The caller's exchange is either nonblocking (an object with
start(data) and test(handle), polled as the library polls; torch's Store is used
so) or a blocking function, which then runs on a thread of its own per all-gather;
that function cannot be interrupted, so an answer that comes after the library
gave up is dropped. What the exchange raises, or an answer of the wrong shape,
fails it: the DistError the library then reports is raised from it (its __cause__).
"""
import ctypes
import itertools
import operator
import threading

from . import constants as C
from ._native import OOB_ALLGATHER_FN, OOB_FREE_FN, OOB_TEST_FN, Oob, lib
from .errors import InvalidArgumentError, error_for

_COMPLETE, _IN_PROGRESS, _FAILED = 0, 1, -1


def _checked(parts, sent, size, rank):
    """The function's answer as `size` bytes objects as long as `sent`, this rank's own at `rank`."""
    parts = [memoryview(part).tobytes() for part in parts]
    if len(parts) != size:
        raise ValueError(f"the all-gather returned {len(parts)} items for {size} ranks")
    for r, part in enumerate(parts):
        if len(part) != len(sent):
            raise ValueError(f"the all-gather returned {len(part)} bytes for rank {r}, expected {len(sent)}")
    if parts[rank] != sent:
        raise ValueError(f"the all-gather returned at index {rank} other bytes than this rank sent")
    return parts


class _Gather:
    """One all-gather of a blocking function: the function running on a thread of its own."""

    def __init__(self, function, sent, rank):
        self.done = threading.Event()
        self.parts = None
        self.error = None
        threading.Thread(target=self._run, args=(function, sent), daemon=True,
                         name=f"distribute-exchange-rank{rank}").start()

    def _run(self, function, sent):
        try:
            self.parts = function(sent)
        except BaseException as error:  # noqa: B902 -- reported through the library, raised from its error
            self.error = error
        finally:
            self.done.set()


class _Threaded:
    """A blocking all_gather(data) -> parts as a nonblocking exchange (start/test)."""

    def __init__(self, function, rank):
        self.function, self.rank = function, rank

    def start(self, data):
        return _Gather(self.function, data, self.rank)

    def test(self, gather):
        if not gather.done.is_set():
            return None
        if gather.error is not None:
            raise gather.error
        if gather.parts is None:  # not "in progress": the function answered None
            raise TypeError("the all-gather returned NoneType, not a sequence of bytes")
        return gather.parts


def nonblocking(exchange, rank):
    """`exchange` as an object with start(data) -> handle and test(handle) -> None
    (in progress) or the parts: itself when it has them, else a callable run on a
    thread per all-gather."""
    if callable(getattr(exchange, "start", None)) and callable(getattr(exchange, "test", None)):
        return exchange
    if callable(exchange):
        return _Threaded(exchange, rank)
    raise InvalidArgumentError(C.ERR_INVALID_ARGUMENT, f"all_gather must be callable or have start() and test(), "
                                                       f"not {exchange!r}")


class _Exchange:
    """The callbacks of one dist_context_create_oob call and what they share.
    Each callback catches everything: nothing may unwind into the library."""

    def __init__(self, rank, size, exchange):
        self.rank, self.size, self.exchange = rank, size, exchange
        self.gathers = {}  # request id (the void* the library holds) -> (handle, sent, recv)
        self.ids = itertools.count(1)
        self.failure = None  # the first error of the caller's exchange
        self.lock = threading.Lock()
        # Alive as long as this object, which outlives the C call.
        self.callbacks = (OOB_ALLGATHER_FN(self._allgather), OOB_TEST_FN(self._test), OOB_FREE_FN(self._free))

    def _fail(self, error):
        with self.lock:
            self.failure = self.failure or error

    def _allgather(self, _user_data, send, recv, nbytes, request):
        try:
            sent = ctypes.string_at(send, nbytes) if nbytes else b""
            handle = self.exchange.start(sent)
            with self.lock:
                request_id = next(self.ids)
                self.gathers[request_id] = (handle, sent, recv)
            request[0] = request_id
            return 0
        except BaseException as error:  # noqa: B902
            self._fail(error)
            return 1

    def _test(self, _user_data, request):
        try:
            with self.lock:
                handle, sent, recv = self.gathers[request]
            parts = self.exchange.test(handle)
            if parts is None:
                return _IN_PROGRESS
            for r, part in enumerate(_checked(parts, sent, self.size, self.rank)):
                ctypes.memmove(recv + r * len(part), part, len(part))
            return _COMPLETE
        except BaseException as error:  # noqa: B902
            self._fail(error)
            return _FAILED

    def _free(self, _user_data, request):
        with self.lock:
            handle, _, _ = self.gathers.pop(request, (None, None, None))
        free = getattr(self.exchange, "free", None)
        if handle is not None and free is not None:
            try:
                free(handle)
            except Exception:  # noqa: BLE001 -- nothing may unwind into the library; the join's outcome stands
                pass  # a running thread drops its answer


def _int32(name, value):
    try:
        value = operator.index(value)
    except TypeError:
        raise InvalidArgumentError(C.ERR_INVALID_ARGUMENT, f"{name} must be an int, not {value!r}") from None
    if not -2**31 <= value < 2**31:
        raise InvalidArgumentError(C.ERR_INVALID_ARGUMENT, f"{name} {value} does not fit in 32 bits")
    return value


def create_context(rank, size, all_gather, options):
    """The handle of a context built through `all_gather` (dist_context_create_oob), or raises."""
    rank, size = _int32("rank", rank), _int32("size", size)
    exchange = _Exchange(rank, size, nonblocking(all_gather, rank))
    oob = Oob(0, rank, size, *exchange.callbacks, None)
    handle = ctypes.c_void_p()
    status = lib.dist_context_create_oob(ctypes.byref(oob), ctypes.byref(options), ctypes.byref(handle))
    if status == C.OK:
        return handle
    failure = exchange.failure
    if failure is not None and not isinstance(failure, Exception):
        raise failure  # KeyboardInterrupt, SystemExit: as they were
    raise error_for(status, cause=failure) from failure
