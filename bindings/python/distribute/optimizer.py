"""Optimizers: dist_optimizer_t as Optimizer (Keras SGD, momentum and Adam)."""
import ctypes

from . import constants as C
from ._native import OptimizerOptions, lib
from .errors import check
from .handle import HandleOwner

KINDS = {"sgd": C.OPTIMIZER_SGD, "momentum": C.OPTIMIZER_MOMENTUM, "adam": C.OPTIMIZER_ADAM}


class Optimizer(HandleOwner):
    """Holds the slots (momentum, Adam moments) of the variables it updates and its
    step count; Strategy.apply_gradients uses it. One thread at a time."""

    def __init__(self, kind="sgd", *, learning_rate=None, momentum=None, nesterov=None, beta_1=None,
                 beta_2=None, epsilon=None):
        self._handle = None
        options = OptimizerOptions()
        for bit, name, value in ((C.OPTIMIZER_OPT_KIND, "kind", KINDS[kind] if isinstance(kind, str) else kind),
                                 (C.OPTIMIZER_OPT_LEARNING_RATE, "learning_rate", learning_rate),
                                 (C.OPTIMIZER_OPT_MOMENTUM, "momentum", momentum),
                                 (C.OPTIMIZER_OPT_NESTEROV, "nesterov", None if nesterov is None else int(nesterov)),
                                 (C.OPTIMIZER_OPT_BETA_1, "beta_1", beta_1),
                                 (C.OPTIMIZER_OPT_BETA_2, "beta_2", beta_2),
                                 (C.OPTIMIZER_OPT_EPSILON, "epsilon", epsilon)):
            if value is not None:
                options.field_mask |= bit
                setattr(options, name, value)
        handle = ctypes.c_void_p()
        check(lib.dist_optimizer_create(ctypes.byref(options), ctypes.byref(handle)))
        self._handle = handle

    def close(self):
        handle, self._handle = self._handle, None
        if handle is not None:
            lib.dist_optimizer_destroy(handle)


    @property
    def iterations(self):
        """apply_gradients calls made so far."""
        return self._query(lib.dist_optimizer_iterations, ctype=ctypes.c_int64)
