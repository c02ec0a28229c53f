"""torch tensors as the binding's buffers: which torch dtype is which DIST_DTYPE,
zero-copy numpy views of contiguous CPU tensors, and staging copies for the
others (copied in before a call, out after it completed)."""
import torch

from .. import constants as C

# bool travels as uint8 (0/1); its reductions are chosen in reduce_ops.
DIST_DTYPES = {
    torch.int8: C.DTYPE_I8,
    torch.uint8: C.DTYPE_U8,
    torch.bool: C.DTYPE_U8,
    torch.int32: C.DTYPE_I32,
    torch.uint32: C.DTYPE_U32,
    torch.int64: C.DTYPE_I64,
    torch.uint64: C.DTYPE_U64,
    torch.float16: C.DTYPE_F16,
    torch.bfloat16: C.DTYPE_BF16,
    torch.float32: C.DTYPE_F32,
    torch.float64: C.DTYPE_F64,
}
# The dtypes numpy lacks, as same-sized ones it has (the library is told the real one).
_NUMPY_VIEWS = {torch.bool: torch.uint8, torch.bfloat16: torch.int16}


def dist_dtype(tensor):
    try:
        return DIST_DTYPES[tensor.dtype]
    except KeyError:
        names = ", ".join(str(dtype).replace("torch.", "") for dtype in DIST_DTYPES)
        raise TypeError(f"the distribute backend does not support dtype {tensor.dtype} (it supports {names})") \
            from None


def check(tensor, what="tensor"):
    """Refuses what the backend cannot carry, before anything is sent."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"the distribute backend expects a torch.Tensor as {what}, got {type(tensor).__name__}")
    if tensor.device.type != "cpu":
        raise ValueError(f"the distribute backend carries CPU tensors only; {what} is on {tensor.device} "
                         "(use a backend string such as \"cpu:distribute,cuda:nccl\")")
    if tensor.is_sparse or tensor.layout != torch.strided:
        raise ValueError(f"the distribute backend carries dense (strided) tensors only; {what} is {tensor.layout}")
    dist_dtype(tensor)
    return tensor


def same_dtype(tensors, what):
    dtypes = {tensor.dtype for tensor in tensors}
    if len(dtypes) > 1:
        raise TypeError(f"the distribute backend needs one dtype across {what}, got {sorted(map(str, dtypes))}")


def as_array(tensor):
    """A numpy view of a contiguous CPU tensor (no copy; it keeps the tensor alive)
    and the DIST_DTYPE the library must read it as."""
    dtype = dist_dtype(tensor)
    view = tensor.detach()
    if view.dtype in _NUMPY_VIEWS:
        view = view.view(_NUMPY_VIEWS[view.dtype])
    return view.reshape(-1).numpy(), dtype


class Staged:
    """A tensor as the library sees it: itself when contiguous (zero copy), else a
    contiguous copy (`copy_in`: holding the tensor's values) that copy_out()
    writes back once the call completed."""

    def __init__(self, tensor, copy_in=True):
        self.tensor = tensor
        if tensor.is_contiguous():
            self.buffer = tensor
        elif copy_in:
            self.buffer = tensor.contiguous()
        else:
            self.buffer = torch.empty(tensor.shape, dtype=tensor.dtype)
        self.array, self.dtype = as_array(self.buffer)

    @property
    def copied(self):
        return self.buffer is not self.tensor

    def copy_out(self):
        if self.copied:
            self.tensor.copy_(self.buffer)


def flat_empty(like, count):
    """A contiguous 1-D tensor of `count` elements of `like`'s dtype, and its array."""
    flat = torch.empty(count, dtype=like.dtype)
    return flat, as_array(flat)[0]


def source_array(tensor, output):
    """The array of an input the library only reads, beside `output`: the tensor's
    own memory when contiguous and apart from output's, else a copy (the library's
    send and receive buffers must not overlap)."""
    if tensor.is_contiguous() and tensor.numel() and output.numel() and \
            tensor.untyped_storage().data_ptr() == output.untyped_storage().data_ptr():
        return as_array(tensor.clone())
    return as_array(tensor.contiguous())
