"""What the classes over a C handle share: `with`, garbage collection and close()
(each class's own close() releases its handle), and reading an out-parameter."""
import ctypes

from .errors import check


def query(handle, function, *args, ctype=ctypes.c_int32):
    """function(handle, *args, &out) -> out, raising on a failed status."""
    out = ctype()
    check(function(handle, *args, ctypes.byref(out)))
    return out.value


class HandleOwner:
    """A subclass keeps its C handle in `_handle` (None once closed) and defines close()."""

    _handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    @property
    def closed(self):
        return self._handle is None

    def _query(self, function, *args, ctype=ctypes.c_int32):
        return query(self._handle, function, *args, ctype=ctype)
