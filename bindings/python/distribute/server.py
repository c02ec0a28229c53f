"""Parameter servers: dist_server_t as Server, and checkpoints of the servers of a cluster."""
import ctypes
import json

from . import constants as C
from ._native import LOG_FN, CheckpointOptions, ServerOptions, encode, lib, set_fields, take_string, text
from .errors import check
from .handle import HandleOwner


class Server(HandleOwner):
    """The standard parameter server, serving from background threads of this process
    (tf.distribute's ps tasks). stop() and join() may be called from any thread;
    close() (or leaving a `with` block, or garbage collection) stops, joins and frees it.

    `log`, when given, is called with each log line (a str) from the server's threads,
    possibly concurrently; an exception it raises is printed by ctypes and dropped,
    since no call of this thread is waiting for it.
    """

    def __init__(self, cluster=None, *, address=None, token=None, token_file=None, checkpoint_dir=None,
                 io_timeout_ms=None, log=None):
        self._handle = None
        self._log = None
        options = set_fields(ServerOptions(), ((C.SERVER_OPT_ADDRESS, "address", encode(address)),
                                               (C.SERVER_OPT_TOKEN, "token", encode(token)),
                                               (C.SERVER_OPT_TOKEN_FILE, "token_file", encode(token_file)),
                                               (C.SERVER_OPT_CHECKPOINT_DIR, "checkpoint_dir", encode(checkpoint_dir)),
                                               (C.SERVER_OPT_IO_TIMEOUT_MS, "io_timeout_ms", io_timeout_ms)))
        if log is not None:
            # Kept alive as long as the server: its threads may call it until destroy returns.
            self._log = LOG_FN(lambda message, _user_data: log(text(message)))
            options.field_mask |= C.SERVER_OPT_LOG
            options.log = self._log
        handle = ctypes.c_void_p()
        check(lib.dist_server_start(None if cluster is None else cluster._live_handle(), ctypes.byref(options),
                                    ctypes.byref(handle)))
        self._handle = handle

    def close(self):
        """Stops, joins and frees the server (dist_server_destroy)."""
        handle, self._handle = self._handle, None
        if handle is not None:
            lib.dist_server_destroy(handle)
        self._log = None

    @property
    def address(self):
        """The "host:port" actually listened at."""
        return text(self._query(lib.dist_server_address, ctype=ctypes.c_char_p))

    def describe(self):
        """What the server holds, as a dict decoded from the C JSON: address, stopping,
        requests, and variables (a list of dicts: id, name, dtype, shape, row_offset,
        rows, bytes, optimizer, version)."""
        out = ctypes.c_void_p()
        check(lib.dist_server_describe(self._handle, ctypes.byref(out)))
        return json.loads(take_string(out))

    def join(self, timeout_ms=-1):
        """Waits until the server has stopped; raises DistTimeoutError if it still serves
        after timeout_ms (< 0: no bound)."""
        check(lib.dist_server_join(self._handle, timeout_ms))

    def stop(self):
        """Asks the server to stop (returns at once; join() waits for it)."""
        check(lib.dist_server_stop(self._handle))


def _checkpoint_options(token, token_file, timeout_ms):
    return set_fields(CheckpointOptions(), ((C.CHECKPOINT_OPT_TOKEN, "token", encode(token)),
                                            (C.CHECKPOINT_OPT_TOKEN_FILE, "token_file", encode(token_file)),
                                            (C.CHECKPOINT_OPT_TIMEOUT_MS, "timeout_ms", timeout_ms)))


def checkpoint_save(cluster, root, step, *, token=None, token_file=None, timeout_ms=None):
    """Saves every ps task's shards of `cluster` as checkpoint `step` under `root`;
    returns the checkpoint directory ("<root>/ckpt-<step>")."""
    options = _checkpoint_options(token, token_file, timeout_ms)
    out = ctypes.c_void_p()
    check(lib.dist_checkpoint_save(cluster._live_handle(), encode(root), step, ctypes.byref(options),
                                   ctypes.byref(out)))
    return take_string(out)


def checkpoint_restore(cluster, directory, *, token=None, token_file=None, timeout_ms=None):
    """Restores every ps task of `cluster` from `directory` (a root, whose LATEST is
    used, or one ckpt-<step> directory); returns the checkpoint directory used."""
    options = _checkpoint_options(token, token_file, timeout_ms)
    out = ctypes.c_void_p()
    check(lib.dist_checkpoint_restore(cluster._live_handle(), encode(directory), ctypes.byref(options),
                                      ctypes.byref(out)))
    return take_string(out)
