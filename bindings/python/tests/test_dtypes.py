"""Every numpy dtype libdistribute knows maps to its DIST_DTYPE; others are refused."""
import numpy as np
import pytest

import distribute
from distribute import constants as C
from distribute.dtypes import describe

EXPECTED = {np.int8: C.DTYPE_I8, np.uint8: C.DTYPE_U8, np.int32: C.DTYPE_I32, np.uint32: C.DTYPE_U32,
            np.int64: C.DTYPE_I64, np.uint64: C.DTYPE_U64, np.float16: C.DTYPE_F16,
            np.float32: C.DTYPE_F32, np.float64: C.DTYPE_F64}


@pytest.mark.parametrize("numpy_type,dist_type", EXPECTED.items())
def test_mapping(numpy_type, dist_type):
    array = np.arange(6, dtype=numpy_type)
    assert distribute.dist_dtype(array) == dist_type
    buffer = describe(array, True)
    assert buffer.data == array.ctypes.data  # zero copy
    assert (buffer.count, buffer.dtype) == (6, dist_type)


@pytest.mark.parametrize("numpy_type", EXPECTED)
def test_every_dtype_reduces(context, numpy_type):
    array = np.arange(1, 7, dtype=numpy_type)
    out = np.zeros_like(array)
    context.world.all_reduce(array, "prod", out=out)
    assert np.array_equal(out, array)  # one rank: the product is the value itself


def test_bfloat16_through_uint16(context):
    bits = np.array([0x3F80, 0x4000], dtype=np.uint16)  # 1.0 and 2.0 in bfloat16
    assert describe(bits, True, C.DTYPE_BF16).dtype == C.DTYPE_BF16
    context.world.all_reduce(bits, "sum", dtype=C.DTYPE_BF16)
    assert list(bits) == [0x3F80, 0x4000]


@pytest.mark.parametrize("numpy_type", [np.int16, np.complex64, np.bool_, ">f4"])
def test_unsupported_dtypes_are_refused(numpy_type):
    with pytest.raises(TypeError):
        describe(np.zeros(2, dtype=numpy_type), True)


def test_override_must_fit_the_item_size():
    with pytest.raises(TypeError):
        describe(np.zeros(2, np.float32), True, C.DTYPE_F64)


def test_non_contiguous_and_read_only_arrays_are_refused():
    with pytest.raises(ValueError):
        describe(np.zeros(8, np.float32)[::2], True)
    frozen = np.zeros(2, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError):
        describe(frozen, True)
    with pytest.raises(TypeError):
        describe([1.0, 2.0], True)
