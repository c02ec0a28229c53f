"""Optimizers: dist_optimizer_t as Optimizer (Keras SGD, momentum, Adam and Adagrad)."""
import ctypes

from . import constants as C
from ._native import OptimizerOptions, lib, set_fields
from .errors import check
from .handle import HandleOwner

KINDS = {"sgd": C.OPTIMIZER_SGD, "momentum": C.OPTIMIZER_MOMENTUM, "adam": C.OPTIMIZER_ADAM,
         "adagrad": C.OPTIMIZER_ADAGRAD}


def optimizer_options(kind="sgd", *, learning_rate=None, momentum=None, nesterov=None, beta_1=None, beta_2=None,
                      epsilon=None, initial_accumulator_value=None):
    """dist_optimizer_options_t: kind "sgd", "momentum", "adam" or "adagrad" (or an
    OPTIMIZER_* value) and its hyperparameters; None keeps the library's default."""
    return set_fields(OptimizerOptions(), (
        (C.OPTIMIZER_OPT_KIND, "kind", KINDS[kind] if isinstance(kind, str) else kind),
        (C.OPTIMIZER_OPT_LEARNING_RATE, "learning_rate", learning_rate),
        (C.OPTIMIZER_OPT_MOMENTUM, "momentum", momentum),
        (C.OPTIMIZER_OPT_NESTEROV, "nesterov", None if nesterov is None else int(nesterov)),
        (C.OPTIMIZER_OPT_BETA_1, "beta_1", beta_1),
        (C.OPTIMIZER_OPT_BETA_2, "beta_2", beta_2),
        (C.OPTIMIZER_OPT_EPSILON, "epsilon", epsilon),
        (C.OPTIMIZER_OPT_INITIAL_ACCUMULATOR_VALUE, "initial_accumulator_value", initial_accumulator_value)))


class Optimizer(HandleOwner):
    """Holds the slots (momentum, Adagrad accumulators, Adam moments) of the variables it updates and its
    step count; Strategy.apply_gradients uses it. One thread at a time."""

    def __init__(self, kind="sgd", **hyperparameters):
        """kind and hyperparameters (learning_rate, momentum, nesterov, beta_1, beta_2,
        epsilon, initial_accumulator_value) as for optimizer_options."""
        self._handle = None
        options = optimizer_options(kind, **hyperparameters)
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
