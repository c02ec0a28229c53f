"""libdistribute from Python: clusters, contexts, communicators and collectives
over numpy arrays, strategies, distributed variables and optimizers, through the
library's stable C ABI (ctypes, no compiled code).

    import numpy as np, distribute
    with distribute.Cluster.resolve() as cluster, distribute.Context(cluster) as ctx:
        grad = np.ones(1024, np.float32)
        ctx.world.all_reduce(grad, "sum")
"""
import ctypes

from . import constants
from ._native import lib, take_string, text
from .cluster import Cluster, resolver_name
from .comm import Comm, CommStat, Request
from .context import Context
from .dtypes import NUMPY_TO_DIST, dist_dtype
from .errors import DistError, DistTimeoutError, InvalidArgumentError, PeerError, UnsupportedError, check
from .input import InputContext
from .optimizer import Optimizer
from .server import Server, checkpoint_restore, checkpoint_save
from .strategy import ReplicaContext, Strategy
from .variable import Variable

__all__ = ["Cluster", "Comm", "CommStat", "Context", "DistError", "DistTimeoutError", "InputContext", "InvalidArgumentError",
           "Optimizer", "PeerError", "ReplicaContext", "Request", "Server", "Strategy", "UnsupportedError", "Variable", "NUMPY_TO_DIST", "build_features", "build_info", "checkpoint_restore", "checkpoint_save", "constants",
           "dist_dtype", "last_error", "resolver_name", "status_string", "version", "version_string"]


def version():
    """DIST_VERSION_HEX of the loaded library."""
    return lib.dist_version()


def version_string():
    return text(lib.dist_version_string())


# The loaded library's version (include/c_api.h's; pip's metadata reads the same).
__version__ = version_string()


def build_features():
    """The names of the optional components built in: subset of {"ucx", "cuda", "nccl", "hwloc"}."""
    bits = lib.dist_build_features()
    names = {constants.FEATURE_UCX: "ucx", constants.FEATURE_CUDA: "cuda", constants.FEATURE_NCCL: "nccl",
             constants.FEATURE_HWLOC: "hwloc"}
    return {name for bit, name in names.items() if bits & bit}


def build_info():
    """The build report as a JSON string."""
    out = ctypes.c_void_p()
    check(lib.dist_build_info(ctypes.byref(out)))
    return take_string(out)


def status_string(status):
    return text(lib.dist_status_string(status))


def last_error():
    """dist_last_error() of this thread (the errors raised already carry it)."""
    return text(lib.dist_last_error())
