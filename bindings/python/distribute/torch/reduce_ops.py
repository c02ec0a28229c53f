"""torch's ReduceOp as the library's reductions.

The library reduces SUM, PROD, MIN, MAX and MEAN (float16 and bfloat16 in
float32; integer MEAN truncates). PREMUL_SUM multiplies each rank's input by its
factor first (in the tensor's dtype), then sums. bool tensors travel as 0/1
bytes: SUM and MAX are a logical or (MAX), PRODUCT and MIN a logical and (MIN),
as NCCL does; AVG and PREMUL_SUM have no meaning for them. BAND, BOR and BXOR
have no counterpart in the library.
"""
import torch
import torch.distributed as dist

_Op = dist.ReduceOp.RedOpType
_LIBRARY = {_Op.SUM: "sum", _Op.PRODUCT: "prod", _Op.MIN: "min", _Op.MAX: "max", _Op.AVG: "mean",
            _Op.PREMUL_SUM: "sum"}
_BOOL = {_Op.SUM: "max", _Op.MAX: "max", _Op.PRODUCT: "min", _Op.MIN: "min"}


class Reduction:
    """How one torch reduction runs: the library's op, and the factor each input
    is multiplied by first (PREMUL_SUM), or None."""

    def __init__(self, reduce_op, dtype):
        kind = reduce_op.op if isinstance(reduce_op, dist.ReduceOp) else reduce_op
        self.factor = None
        if dtype == torch.bool:
            if kind not in _BOOL:
                raise ValueError(f"the distribute backend cannot reduce bool tensors with {kind} "
                                 "(SUM/MAX: logical or; PRODUCT/MIN: logical and)")
            self.op = _BOOL[kind]
            return
        if kind not in _LIBRARY:
            raise ValueError(f"the distribute backend does not support {kind} "
                             "(it supports SUM, AVG, PRODUCT, MIN, MAX and PREMUL_SUM)")
        if kind == _Op.PREMUL_SUM:
            if not dtype.is_floating_point:
                raise ValueError(f"PREMUL_SUM needs a floating-point tensor, got {dtype}")
            self.factor = reduce_op.factor
        self.op = _LIBRARY[kind]

    def premultiplied(self, tensor, in_place):
        """The tensor to send: multiplied by the factor (in place when allowed,
        else into a copy); the tensor itself when there is no factor."""
        if self.factor is None:
            return tensor
        with torch.no_grad():  # the collective's data, never part of a graph
            return tensor.detach().mul_(self.factor) if in_place else tensor.detach() * self.factor
