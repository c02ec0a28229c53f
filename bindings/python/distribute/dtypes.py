"""numpy arrays as dist_buffer_t: which numpy dtype is which DIST_DTYPE.

bfloat16 has no numpy dtype: pass a uint16 array with dtype=DTYPE_BF16.
"""
import ctypes

import numpy as np

from . import constants as C
from ._native import Buffer

NUMPY_TO_DIST = {
    np.dtype(np.int8): C.DTYPE_I8,
    np.dtype(np.uint8): C.DTYPE_U8,
    np.dtype(np.int32): C.DTYPE_I32,
    np.dtype(np.uint32): C.DTYPE_U32,
    np.dtype(np.int64): C.DTYPE_I64,
    np.dtype(np.uint64): C.DTYPE_U64,
    np.dtype(np.float16): C.DTYPE_F16,
    np.dtype(np.float32): C.DTYPE_F32,
    np.dtype(np.float64): C.DTYPE_F64,
}

ITEMSIZE = {C.DTYPE_I8: 1, C.DTYPE_U8: 1, C.DTYPE_I32: 4, C.DTYPE_U32: 4, C.DTYPE_I64: 8,
            C.DTYPE_U64: 8, C.DTYPE_F16: 2, C.DTYPE_BF16: 2, C.DTYPE_F32: 4, C.DTYPE_F64: 8}


# The numpy dtype an array of each DIST_DTYPE has (bfloat16: its uint16 bits).
DIST_TO_NUMPY = {value: key for key, value in NUMPY_TO_DIST.items()}
DIST_TO_NUMPY[C.DTYPE_BF16] = np.dtype(np.uint16)


def as_dist(dtype):
    """A DIST_DTYPE value from a DIST_DTYPE value or anything numpy.dtype() takes."""
    if isinstance(dtype, int):
        if dtype not in DIST_TO_NUMPY:
            raise TypeError(f"{dtype} is not a DIST_DTYPE value")
        return dtype
    try:
        return NUMPY_TO_DIST[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"numpy dtype {np.dtype(dtype)} has no libdistribute dtype") from None


def as_numpy(dtype):
    """The numpy dtype of a DIST_DTYPE value."""
    return DIST_TO_NUMPY[dtype]


def dist_dtype(array, dtype=None):
    """The DIST_DTYPE of `array`, or `dtype` when given (it must have the same item size)."""
    if dtype is None:
        try:
            return NUMPY_TO_DIST[array.dtype]  # a byte-swapped dtype is not a key
        except KeyError:
            raise TypeError(f"numpy dtype {array.dtype} has no libdistribute dtype") from None
    if ITEMSIZE.get(dtype) != array.dtype.itemsize:
        raise TypeError(f"dtype {dtype} does not fit the {array.dtype.itemsize}-byte items of the array")
    return dtype


def describe(array, writable, dtype=None, count=None):
    """A dist_buffer_t over `array`'s memory (no copy). The caller keeps `array`
    alive for as long as the C side may use the descriptor."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected a numpy array, got {type(array).__name__}")
    if not array.flags.c_contiguous:
        raise ValueError("the array must be C-contiguous (use numpy.ascontiguousarray)")
    if writable and not array.flags.writeable:
        raise ValueError("the output array is read-only")
    return Buffer(ctypes.c_void_p(array.ctypes.data), array.size if count is None else count,
                  dist_dtype(array, dtype), C.MEMORY_HOST, None)
