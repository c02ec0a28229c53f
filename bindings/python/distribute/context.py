"""Joining the cluster: dist_context_t as Context."""
import ctypes

from . import constants as C
from ._native import ContextOptions, encode, lib
from .comm import Comm
from .errors import check
from .handle import HandleOwner


class Context(HandleOwner):
    """This process's membership in the cluster (dist_context_create).

    rank, size and abort() may be used from any thread. close() first closes every
    communicator split from it (and their requests), strategy and variable made
    over it, then the context, so the C rule "communicators, strategies and
    variables before their context" holds whatever order Python collects
    objects in.
    """

    def __init__(self, cluster, *, token=None, token_file=None, connect_timeout_ms=None, timeout_ms=None):
        self._handle = None  # so that close() from __del__ is safe when joining fails
        options = ContextOptions()
        for bit, name, value in ((C.CONTEXT_OPT_TOKEN, "token", encode(token)),
                                 (C.CONTEXT_OPT_TOKEN_FILE, "token_file", encode(token_file)),
                                 (C.CONTEXT_OPT_CONNECT_TIMEOUT_MS, "connect_timeout_ms", connect_timeout_ms),
                                 (C.CONTEXT_OPT_TIMEOUT_MS, "timeout_ms", timeout_ms)):
            if value is not None:
                options.field_mask |= bit
                setattr(options, name, value)
        handle = ctypes.c_void_p()
        check(lib.dist_context_create(cluster._live_handle(), ctypes.byref(options), ctypes.byref(handle)))
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

    @property
    def world(self):
        """The communicator of all members (owned by the context)."""
        if self._world is None or self._world.closed:
            handle = ctypes.c_void_p()
            check(lib.dist_comm_world(self._handle, ctypes.byref(handle)))
            self._world = Comm(handle, self, owned=False)
        return self._world
