"""What each rank of the backend's tests puts in, and what it must get back,
computed here with plain torch ops in float64/int64 (never through a backend)."""
import torch

DTYPES = [torch.int8, torch.uint8, torch.int32, torch.uint32, torch.int64, torch.uint64, torch.float16,
          torch.bfloat16, torch.float32, torch.float64, torch.bool]
FLOATS = {torch.float16, torch.bfloat16, torch.float32, torch.float64}
# Tolerances where the backend's arithmetic (float32 for f16/bf16) and the
# reference's (float64) may round differently; exact elsewhere.
TOLERANCE = {torch.float16: 1e-3, torch.bfloat16: 8e-3, torch.float32: 1e-6, torch.float64: 1e-12}


def rank_input(rank, count, dtype, salt=0):
    """Small values (0..3) that differ by rank, element and salt: products of 3
    ranks stay exact in int8."""
    values = (torch.arange(count, dtype=torch.int64) * (rank + 2) + 3 * rank + salt) % 4
    if dtype == torch.bool:
        return values >= 2
    return values.to(dtype)


def wide(tensor):
    """float64 (floats) or int64 (integers, bool) copy, for references and comparison."""
    if tensor.dtype in FLOATS:
        return tensor.to(torch.float64)
    return tensor.to(torch.int64)


def reduced(inputs, op, size, factor=None):
    """The reduction of the ranks' inputs (all of one dtype) as that dtype."""
    dtype = inputs[0].dtype
    stacked = torch.stack([wide(t) for t in inputs])
    if dtype == torch.bool:
        result = {"sum": stacked.amax(0), "max": stacked.amax(0), "product": stacked.amin(0),
                  "min": stacked.amin(0)}[op]
        return result.to(torch.bool)
    if op == "sum":
        result = stacked.sum(0)
    elif op == "product":
        result = stacked.prod(0)
    elif op == "min":
        result = stacked.amin(0)
    elif op == "max":
        result = stacked.amax(0)
    elif op == "avg":
        total = stacked.sum(0)
        result = total / size if dtype in FLOATS else torch.div(total, size, rounding_mode="trunc")
    elif op == "premul_sum":
        result = (stacked * factor).sum(0)
    else:
        raise ValueError(op)
    return result.to(dtype)


def same(actual, expected):
    """True when actual equals expected: exactly, or within the dtype's tolerance."""
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return False
    if actual.dtype in FLOATS:
        return torch.allclose(wide(actual), wide(expected), rtol=TOLERANCE[actual.dtype], atol=0)
    return torch.equal(wide(actual), wide(expected))
