"""A torch.distributed backend that moves nothing: every collective completes
at once and leaves its tensors as they are (wrong results, by design).

compare.py steps a DDP model on it beside gloo and "distribute": what DDP
costs by itself (its hooks, the copies into and out of its buckets, the
scaling, the futures) with communication that takes no time, written in
Python as the backend under test is. That step is the least any backend can
reach under DDP here, so gloo's step over it is the best ratio any backend
could show.
"""
import torch
import torch.distributed as dist

NAME = "null"


class NullBackend(dist._Backend):
    """What DDP calls, each completed before it returns."""

    def __init__(self, store, rank, size, timeout):  # noqa: ARG002 -- torch's creator signature
        super().__init__(rank, size)

    def getBackendName(self):
        return NAME

    @staticmethod
    def _completed(value):
        future = torch.futures.Future()
        future.set_result(value)
        return torch._C._distributed_c10d._create_work_from_future(future)

    def allreduce(self, tensors, opts):
        return self._completed(tensors)

    def broadcast(self, tensors, opts):
        return self._completed(tensors)

    def allgather(self, output_lists, tensors, opts):
        # DDP's start-up shape check reads every rank's "tensor": give it this rank's.
        for outputs, tensor in zip(output_lists, tensors):
            for output in outputs:
                output.copy_(tensor)
        return self._completed(output_lists)

    def barrier(self, opts):
        return self._completed([])


def register():
    dist.Backend.register_backend(NAME, NullBackend, devices=["cpu"])
