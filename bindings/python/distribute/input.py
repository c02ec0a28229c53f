"""Input sharding: dist_input_context_t as InputContext (tf.distribute.InputContext)."""
import ctypes

import numpy as np

from ._native import lib
from .errors import check
from .handle import HandleOwner


class InputContext(HandleOwner):
    """How many input pipelines read data (one per worker), which one this is, and
    how a global batch divides among the replicas in sync. Immutable: any thread.
    Made directly or by Strategy.input_context()."""

    def __init__(self, handle):
        self._handle = handle

    @classmethod
    def create(cls, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
        out = ctypes.c_void_p()
        check(lib.dist_input_context_create(num_input_pipelines, input_pipeline_id, num_replicas_in_sync,
                                            ctypes.byref(out)))
        return cls(out)

    def close(self):
        handle, self._handle = self._handle, None
        if handle is not None:
            lib.dist_input_context_destroy(handle)


    @property
    def num_input_pipelines(self):
        return self._query(lib.dist_input_context_num_input_pipelines)

    @property
    def input_pipeline_id(self):
        return self._query(lib.dist_input_context_input_pipeline_id)

    @property
    def num_replicas_in_sync(self):
        return self._query(lib.dist_input_context_num_replicas_in_sync)

    def get_per_replica_batch_size(self, global_batch_size):
        """global_batch_size / num_replicas_in_sync; InvalidArgumentError when it does not divide."""
        return self._query(lib.dist_input_context_per_replica_batch_size, global_batch_size, ctype=ctypes.c_int64)

    def shard_files(self, num_files):
        """The indices (increasing, an int64 array) of the files this pipeline reads:
        file i belongs to pipeline i % num_input_pipelines."""
        count = ctypes.c_int64()
        capacity = max(0, -(-num_files // max(self.num_input_pipelines, 1)))
        indices = np.empty(capacity, np.int64)
        check(lib.dist_input_context_shard_files(self._handle, num_files,
                                                 indices.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                                                 capacity, ctypes.byref(count)))
        return indices[:count.value]

    def shard_range(self, total):
        """This pipeline's contiguous part of range(total), as a range (empty when
        total is smaller than the number of pipelines and this one gets nothing)."""
        begin, count = ctypes.c_int64(), ctypes.c_int64()
        check(lib.dist_input_context_shard_range(self._handle, total, ctypes.byref(begin), ctypes.byref(count)))
        return range(begin.value, begin.value + count.value)
