"""torch Work objects over the library's requests.

A Work completes when all its requests did. The library reports each request's
end from one of its own threads (Request.on_complete); that callback only counts
and hands the Work to a dispatch thread of this module, which copies results
out, frees the requests, wakes wait() and completes the torch future: the
callbacks users chain on that future (DDP's comm hooks, for one) may issue new
calls and block, which the library's threads must never do.
"""
import datetime
import queue
import sys
import threading

import torch
import torch.distributed as dist

from ..errors import DistError


def backend_error(what, error):
    """A torch DistBackendError that carries the library's status and message."""
    if isinstance(error, dist.DistBackendError):
        return error  # already one (a work of a coalescing window)
    if isinstance(error, DistError):
        return dist.DistBackendError(f"distribute: {what} failed: {error.status_name}: {error.message}")
    return dist.DistBackendError(f"distribute: {what} failed: {type(error).__name__}: {error}")


class _Failed:
    """The value a work's inner future gets when the call failed (see get_future)."""

    def __init__(self, error):
        self.error = error


def _raise_failure(inner):
    value = inner.value()
    if isinstance(value, _Failed):
        raise value.error
    return value


class _Dispatcher:
    """One daemon thread that runs what completions hand it, in order."""

    def __init__(self):
        self._queue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread = None

    def submit(self, function):
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="distribute-torch-completions",
                                                    daemon=True)
                    self._thread.start()
        self._queue.put(function)

    def _run(self):
        while True:
            function = self._queue.get()
            try:
                function()
            except BaseException:  # noqa: B902 -- reported; the thread must go on for the other works
                sys.excepthook(*sys.exc_info())


dispatcher = _Dispatcher()

# The events of a work made already finished (Work.ran), shared by all of them
# and never cleared: making and setting three events of its own cost a
# blocking call more than a 4 KiB all-reduce takes.
_ALREADY = threading.Event()
_ALREADY.set()


class Work(dist._Work):
    """The outcome of one backend call: wait(timeout) and get_future().

    `outputs` is the future's value (the output tensors, as gloo gives);
    `finishers` run in order once every request succeeded (copies out of staging
    buffers). Requests are added with track(); seal() says none will follow."""

    def __init__(self, what, outputs, finishers=(), ended=False):
        super().__init__()
        self._what = what
        self._outputs = list(outputs)
        self._finishers = list(finishers)
        self._requests = []
        self._pending = 0 if ended else 1  # the issuer's hold, released by seal()
        self._error = None
        self._receive = None  # the request whose source rank source_rank() gives
        self._source = None
        self._claimed = False  # _finish runs once, on whichever thread comes first
        if ended:
            self._completed = self._done = self._released = _ALREADY
        else:
            self._completed = threading.Event()  # every request ended (set on the library's thread)
            self._done = threading.Event()  # finished: outputs copied out
            self._released = threading.Event()  # and its requests freed
        self._future = None  # the inner future; get_future() gives self._outer
        self._outer = None
        self._listeners = []  # on_complete callbacks (a coalescing window's work)
        self._lock = threading.Lock()

    # -- building (the issuing thread) --

    def track(self, request):
        with self._lock:
            self._pending += 1
        self._requests.append(request)
        request.on_complete(self._request_done)

    def join(self, work):
        """Completes only once `work` did too (and fails with it)."""
        with self._lock:
            self._pending += 1
        work.on_complete(self._request_done)

    def on_complete(self, callback):
        """callback(error) once this work finished and freed its requests: None, or its DistBackendError."""
        with self._lock:
            if not self._released.is_set():
                self._listeners.append(callback)
                return
        callback(self._error)

    def source_from(self, request):
        self._receive = request

    def seal(self):
        self._request_done(None)
        return self

    def fail_now(self, error):
        """The call failed before (or while) it was issued: complete with `error`
        once what was issued has ended."""
        with self._lock:
            self._error = self._error or backend_error(self._what, error)
        return self.seal()

    @classmethod
    def ran(cls, what, outputs, finishers=(), error=None):
        """The work of a call that has already run to its end in this thread
        (blocking), or failed with `error`: finished here."""
        work = cls(what, outputs, finishers, ended=True)
        if error is not None:
            work._error = backend_error(what, error)
        work._finish()
        return work

    # -- completion --

    def _request_done(self, error):
        """Library thread (or this one): counts; the last one hands over."""
        with self._lock:
            if error is not None and self._error is None:
                self._error = backend_error(self._what, error)
            self._pending -= 1
            last = self._pending == 0
        if last:
            self._completed.set()  # a thread in wait() finishes at once
            dispatcher.submit(self._finish)  # else the dispatch thread does (and completes the future)

    def _finish(self):
        with self._lock:
            if self._claimed:
                return
            self._claimed = True
        if self._error is None:
            try:
                for finish in self._finishers:
                    finish()
                if self._receive is not None:
                    self._source = self._receive.source
            except Exception as error:  # noqa: BLE001 -- becomes this work's error
                self._error = backend_error(self._what, error)
        requests, self._requests = self._requests, []
        self._finishers = []
        self._receive = None
        with self._lock:
            if not self._done.is_set():
                self._done.set()
            future = self._future
        # The future first: a waiter needs nothing more of the call, whose
        # end the library has reported, and each close is a call into C that
        # lets go of the GIL, which another thread may then keep.
        if future is not None:
            self._complete(future)
        for request in requests:
            request.close()
        with self._lock:
            if not self._released.is_set():
                self._released.set()
            listeners, self._listeners = self._listeners, []
        for listener in listeners:  # after the release: the backend's shutdown waits for what they report
            listener(self._error)

    def _complete(self, inner):
        inner.set_result(self._outputs if self._error is None else _Failed(self._error))

    def wait_finished(self):
        """Blocks until finished and its requests freed, without raising (shutdown)."""
        self._released.wait()

    # -- torch's Work --

    def wait(self, timeout=datetime.timedelta(0)):
        """Blocks until done; raises the call's DistBackendError. A timeout (other
        than torch's 0, "none") that runs out raises DistBackendError; the call
        goes on."""
        seconds = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout or 0)
        if not self._completed.wait(seconds if seconds > 0 else None):
            raise dist.DistBackendError(f"distribute: {self._what}: Work.wait timed out after {seconds:g} s; "
                                        "the call is still running")
        self._finish()  # here, unless the dispatch thread is at it already
        self._done.wait()
        if self._error is not None:
            raise self._error
        return True

    def get_future(self):
        """A torch future of the output tensors, completed on this module's
        dispatch thread. A failed call fails it; torch hands a Python backend's
        future on as its C++ object, which carries no Python exception type, so
        its wait() raises RuntimeError("... DistBackendError: <the library's
        message>"), raised by a callback chained on an inner future."""
        with self._lock:
            created = self._future is None
            if created:
                self._future = torch.futures.Future()
                self._outer = self._future.then(_raise_failure)
            inner, outer, done = self._future, self._outer, self._done.is_set()
        if created and done:  # else _finish completes it
            self._complete(inner)
        return outer

    def is_completed(self):
        return self._done.is_set()

    def is_success(self):
        return self._done.is_set() and self._error is None

    def exception(self):
        return self._error

    def source_rank(self):
        """The rank a receive from any source came from (after wait())."""
        if self._source is None:
            raise ValueError(f"distribute: {self._what} has no source rank (not a completed receive)")
        return self._source

    _source_rank = source_rank
