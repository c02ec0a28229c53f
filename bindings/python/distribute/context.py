"""Joining the cluster: dist_context_t as Context."""
import ctypes
import json
import os

from . import constants as C
from ._native import ContextOptions, encode, lib, set_fields, take_string
from .comm import Comm
from .errors import check
from .exchange import create_context
from .handle import HandleOwner


def _options(token, token_file, connect_timeout_ms, timeout_ms, timeline):
    """dist_context_options_t of the keyword arguments; None keeps the library's default.
    The struct holds the encoded strings (ctypes keeps them in its _objects), so they
    live as long as the options do: across the create call."""
    timeline = None if timeline is None else os.fspath(timeline)
    return set_fields(ContextOptions(), ((C.CONTEXT_OPT_TOKEN, "token", encode(token)),
                                         (C.CONTEXT_OPT_TOKEN_FILE, "token_file", encode(token_file)),
                                         (C.CONTEXT_OPT_CONNECT_TIMEOUT_MS, "connect_timeout_ms", connect_timeout_ms),
                                         (C.CONTEXT_OPT_TIMEOUT_MS, "timeout_ms", timeout_ms),
                                         (C.CONTEXT_OPT_TIMELINE, "timeline", encode(timeline))))


class Context(HandleOwner):
    """This process's membership in the cluster (dist_context_create).

    rank, size and abort() may be used from any thread. close() first closes every
    communicator split from it (and their requests), strategy and variable made
    over it, then the context, so the C rule "communicators, strategies and
    variables before their context" holds whatever order Python collects
    objects in.

    timeline= (a str or path-like prefix) records a timeline: this rank writes
    "<prefix>.<rank>.json", Chrome trace events of its collectives, strategy runs
    and parameter-server requests, complete once the context and everything made
    from it are closed. It turns on timing; default: DIST_TIMELINE's value, else off.
    """

    def __init__(self, cluster, *, token=None, token_file=None, connect_timeout_ms=None, timeout_ms=None,
                 timeline=None):
        self._handle = None  # so that close() from __del__ is safe when joining fails
        options = _options(token, token_file, connect_timeout_ms, timeout_ms, timeline)
        handle = ctypes.c_void_p()
        check(lib.dist_context_create(cluster._live_handle(), ctypes.byref(options), ctypes.byref(handle)))
        self._own(handle)

    @classmethod
    def from_exchange(cls, rank, size, all_gather, *, token=None, token_file=None, connect_timeout_ms=None,
                      timeout_ms=None, timeline=None):
        """Joins through the caller's own exchange (dist_context_create_oob): for
        frameworks that already have a rendezvous (torch's Store, an MPI
        communicator, JAX's key-value store) and no cluster spec.

        all_gather(data: bytes) -> sequence of `size` bytes objects, rank r's at
        index r, each as long as `data`: called one or more times, in the same
        order on every rank, each time on a thread of its own. Or, nonblocking, an
        object with start(data: bytes) -> handle, test(handle) -> None while in
        progress, else that sequence, and optionally free(handle) (when the
        library gives up or is done), all called on this thread and polled as
        the library polls. What it raises
        fails the join: the DistError raised here names it and has it as its
        __cause__. The cluster token authenticates the members as with a cluster
        (these options, else DIST_CLUSTER_TOKEN / DIST_CLUSTER_TOKEN_FILE); the
        connect deadline bounds the whole join, the exchange included. timeline= as
        for Context().
        """
        context = cls.__new__(cls)
        context._own(create_context(rank, size, all_gather, _options(token, token_file, connect_timeout_ms,
                                                                      timeout_ms, timeline)))
        return context

    def _own(self, handle):
        self._handle = handle
        # Strong references: the garbage collector clears weak ones before running
        # finalizers, and a context finalized before its communicators must still
        # close them first. A communicator leaves this set when it is closed.
        self._children = set()
        self._world = None

    def close(self):
        handle, self._handle = self._handle, None
        if handle is None:
            return
        for child in list(self._children):
            child.close()
        if self._world is not None:
            self._world.close()
        lib.dist_context_destroy(handle)

    def _adopt(self, child):
        self._children.add(child)

    def _forget(self, child):
        self._children.discard(child)

    @property
    def rank(self):
        return self._query(lib.dist_context_rank)

    @property
    def size(self):
        return self._query(lib.dist_context_size)

    def abort(self, reason=None):
        """Makes every pending and later call on every communicator fail with ABORTED, here and on every peer."""
        check(lib.dist_context_abort(self._handle, encode(reason)))

    def dump(self):
        """The flight recorder (dist_context_dump), parsed: a dict with this rank
        (rank, size, task, host_id, pid, steady_ns, system_ns), lost_peers and
        communicators, each with its last calls (seq, kind, dtype, count, state
        "in flight"/"done"/"failed", status, path, algorithm, ...). Safe from any
        thread, also while a call hangs."""
        out = ctypes.c_void_p()
        check(lib.dist_context_dump(self._handle, ctypes.byref(out)))
        return json.loads(take_string(out))

    @property
    def world(self):
        """The communicator of all members (owned by the context)."""
        if self._world is None or self._world.closed:
            handle = ctypes.c_void_p()
            check(lib.dist_comm_world(self._handle, ctypes.byref(handle)))
            self._world = Comm(handle, self, owned=False)
        return self._world
