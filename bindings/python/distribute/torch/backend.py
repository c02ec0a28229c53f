"""The torch.distributed backend "distribute": a c10d Backend written in Python
over the binding's Context and Comm (ctypes; no torch C++ extension, so no tie
to one torch build).

Every call is issued on the group's communicator under a lock (the library
wants one thread at a time per communicator; DDP's comm hooks issue from the
dispatch thread while the user's thread issues too). A synchronous call
(opts.asyncOp False) runs blocking in the calling thread; an asynchronous one
returns a Work completed through the library's completion callback (work.py).
Contiguous tensors are handed to the library as they are; others are staged in
contiguous copies, copied out when the call completed.
"""
import datetime
import threading
import weakref

import torch
import torch.distributed as dist

from .. import constants as C
from ..context import Context
from ..errors import DistError
from .reduce_ops import Reduction
from .rendezvous import StoreExchange, agree_on_token
from .tensors import Staged, as_array, check, flat_empty, same_dtype, source_array
from .work import Work

NAME = "distribute"
_live = weakref.WeakSet()  # backends to close at exit, before the interpreter's teardown


def _milliseconds(timeout):
    if isinstance(timeout, datetime.timedelta):
        return max(1, int(timeout.total_seconds() * 1000))
    return max(1, int(float(timeout) * 1000))


def close_all():
    """Shuts every live backend down (atexit), as destroy_process_group would: no
    library thread may call into an interpreter that is shutting down."""
    for backend in list(_live):
        backend.shutdown()


class DistributeBackend(dist._Backend):
    """One process group's backend: a libdistribute context of its own, built
    through the group's Store (dist_context_create_oob), and its world
    communicator, whose deadline is the group's timeout."""

    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        timeout_ms = _milliseconds(timeout)
        self._timeout = timeout if isinstance(timeout, datetime.timedelta) else \
            datetime.timedelta(milliseconds=timeout_ms)
        token = agree_on_token(store, rank, size)
        try:
            self._context = Context.from_exchange(rank, size, StoreExchange(store, rank, size), token=token,
                                                  connect_timeout_ms=timeout_ms, timeout_ms=timeout_ms)
        except DistError as error:
            raise dist.DistBackendError(f"distribute: joining the group of {size} failed (rank {rank}): "
                                        f"{error.status_name}: {error.message}") from error
        self._comm = self._context.world
        self._comm.configure(timeout_ms=timeout_ms)
        self._lock = threading.Lock()
        self._coalesced = None  # the works of a coalescing window, or None
        self._pending = set()  # works not finished yet (shutdown waits for them)
        _live.add(self)

    # -- what torch asks of a backend --

    def getBackendName(self):
        return NAME

    @property
    def options(self):
        return dist._Backend.Options(NAME, timeout=self._timeout)

    @property
    def supports_coalescing(self):
        return True

    def set_timeout(self, timeout):
        self._timeout = timeout
        with self._lock:
            self._open().configure(timeout_ms=_milliseconds(timeout))

    def start_coalescing(self):
        self._coalesced = []

    def end_coalescing(self):
        """One Work for the calls made since start_coalescing (each was issued at
        once, in order: the library needs no grouping to overlap them)."""
        works, self._coalesced = self._coalesced or [], None
        outputs = [tensor for work in works for tensor in work._outputs]
        group = Work("coalesced calls", outputs)
        for work in works:
            group.join(work)
        return group.seal()

    def shutdown(self):
        """destroy_process_group: closes the context once its calls ended. A call
        still pending (a receive no one matches) is aborted first, and with it
        the calls of the peers on this group."""
        pending = getattr(self, "_pending", ())  # empty when joining failed
        self._close("the process group was destroyed with calls pending" if pending else None)

    def abort(self):
        """Fails every pending and later call here and on every peer (ABORTED), then frees everything."""
        self._close("torch.distributed abort")

    def _close(self, abort_reason):
        context = getattr(self, "_context", None)
        if context is None or context.closed:
            return
        try:
            if abort_reason is not None:
                context.abort(abort_reason)
            for work in list(self._pending):  # their requests are freed by the dispatch thread: let it finish
                work.wait_finished()
        finally:
            context.close()
            _live.discard(self)

    # -- issuing --

    def _open(self):
        if self._context.closed:
            raise dist.DistBackendError("distribute: the process group was shut down or aborted")
        return self._comm

    def _issue(self, what, opts, outputs, calls, finishers=(), receive=False):
        """Runs `calls` (functions of (comm, wait) that return the binding's
        Request when wait is False) on the communicator, blocking for a
        synchronous call, and the Work that reports them."""
        blocking = opts is not None and not opts.asyncOp and self._coalesced is None
        work = None if blocking else Work(what, outputs, finishers)
        error = None
        with self._lock:
            comm = self._open()
            try:
                for call in calls:
                    request = call(comm, blocking)
                    if not blocking:
                        work.track(request)
                        if receive:
                            work.source_from(request)
            except DistError as caught:
                error = caught  # wait() and the future raise it
        if blocking:
            return Work.ran(what, outputs, finishers, error)
        if self._coalesced is not None:
            self._coalesced.append(work)
        self._pending.add(work)
        work.on_complete(lambda _error: self._pending.discard(work))
        return work.seal() if error is None else work.fail_now(error)

    # -- collectives --

    def allreduce(self, tensors, opts):
        for tensor in tensors:
            check(tensor)
        staged = [Staged(tensor) for tensor in tensors]
        reductions = [Reduction(opts.reduceOp, tensor.dtype) for tensor in tensors]
        for stage, reduction in zip(staged, reductions):
            reduction.premultiplied(stage.buffer, in_place=True)
        calls = [lambda comm, wait, s=s, r=r: comm.all_reduce(s.array, r.op, dtype=s.dtype, wait=wait)
                 for s, r in zip(staged, reductions)]
        return self._issue("all_reduce", opts, tensors, calls, [s.copy_out for s in staged if s.copied])

    def allreduce_coalesced(self, tensors, opts):
        return self.allreduce(tensors, opts)

    def broadcast(self, tensors, opts):
        for tensor in tensors:
            check(tensor)
        staged = [Staged(tensor) for tensor in tensors]
        calls = [lambda comm, wait, s=s: comm.broadcast(s.array, opts.rootRank, dtype=s.dtype, wait=wait)
                 for s in staged]
        return self._issue("broadcast", opts, tensors, calls, [s.copy_out for s in staged if s.copied])

    def reduce(self, tensors, opts):
        root = opts.rootRank
        calls, finishers = [], []
        for tensor in tensors:
            check(tensor)
            reduction = Reduction(opts.reduceOp, tensor.dtype)
            if self.rank() == root:
                stage = Staged(tensor)
                reduction.premultiplied(stage.buffer, in_place=True)
                finishers += [stage.copy_out] if stage.copied else []
                calls.append(lambda comm, wait, s=stage, r=reduction:
                             comm.reduce(s.array, r.op, root, dtype=s.dtype, wait=wait))
            else:  # sends only: the tensor keeps its values
                array, dtype = as_array(reduction.premultiplied(tensor, in_place=False).contiguous())
                calls.append(lambda comm, wait, a=array, d=dtype, r=reduction:
                             comm.reduce(a, r.op, root, dtype=d, wait=wait))
        return self._issue("reduce", opts, tensors, calls, finishers)

    def _gather_into(self, outputs, tensor, what):
        """A flat receive buffer for `size` blocks of tensor, and the finisher that
        copies block r into outputs[r]."""
        if len(outputs) != self.size():
            raise ValueError(f"{what} needs {self.size()} output tensors, got {len(outputs)}")
        for output in outputs:
            check(output, "an output tensor")
            if output.numel() != tensor.numel() or output.dtype != tensor.dtype:
                raise ValueError(f"{what}: every output must have the input's {tensor.numel()} elements and "
                                 f"dtype {tensor.dtype}, got {output.numel()} of {output.dtype}")
        flat, array = flat_empty(tensor, tensor.numel() * self.size())

        def copy_out():
            for r, output in enumerate(outputs):
                output.copy_(flat[r * tensor.numel():(r + 1) * tensor.numel()].view(output.shape))
        return array, copy_out

    def allgather(self, output_lists, tensors, opts):
        calls, finishers = [], []
        for outputs, tensor in zip(output_lists, tensors):
            check(tensor)
            array, copy_out = self._gather_into(outputs, tensor, "all_gather")
            source, dtype = as_array(tensor.contiguous())
            calls.append(lambda comm, wait, s=source, a=array, d=dtype: comm.all_gather(s, a, dtype=d, wait=wait))
            finishers.append(copy_out)
        return self._issue("all_gather", opts, [t for outputs in output_lists for t in outputs], calls, finishers)

    def allgather_coalesced(self, output_lists, tensors, opts):
        """output_lists[r][i] = rank r's tensors[i]."""
        per_input = [[outputs[i] for outputs in output_lists] for i in range(len(tensors))]
        return self.allgather(per_input, tensors, opts)

    def _check_pair(self, what, output, tensor, whole, block):
        """The tensors of a one-tensor all_gather or reduce_scatter: `whole` (the
        larger) holds `size` blocks as large as `block`."""
        check(output, "the output tensor")
        check(tensor)
        same_dtype([output, tensor], f"{what}'s input and output")
        if whole.numel() != block.numel() * self.size():
            raise ValueError(f"{what}: {self.size()} x {block.numel()} elements expected, got {whole.numel()}")

    def _single_all_gather(self, output, tensor):
        self._check_pair("all_gather_into_tensor", output, tensor, output, tensor)
        out = Staged(output, copy_in=False)
        own_block = out.buffer.data_ptr() + self.rank() * tensor.numel() * tensor.element_size()
        if tensor.is_contiguous() and tensor.data_ptr() == own_block and tensor.numel():
            source, dtype = None, out.dtype  # in place (FSDP2's input is its own block of the output)
        else:
            source, dtype = source_array(tensor, output)
        return (lambda comm, wait: comm.all_gather(source, out.array, dtype=dtype, wait=wait)), out

    def all_gather_single(self, output, tensor, opts):
        call, out = self._single_all_gather(output, tensor)
        return self._issue("all_gather_into_tensor", opts, [output], [call], [out.copy_out] if out.copied else [])

    _allgather_base = all_gather_single

    def all_gather_single_coalesced(self, outputs, tensors, opts):
        pairs = [self._single_all_gather(output, tensor) for output, tensor in zip(outputs, tensors)]
        return self._issue("all_gather_into_tensor_coalesced", opts, outputs, [call for call, _ in pairs],
                           [out.copy_out for _, out in pairs if out.copied])

    def _single_reduce_scatter(self, output, tensor, reduce_op):
        self._check_pair("reduce_scatter_tensor", output, tensor, tensor, output)
        reduction = Reduction(reduce_op, tensor.dtype)
        source, dtype = source_array(reduction.premultiplied(tensor, in_place=False), output)
        out = Staged(output, copy_in=False)
        return (lambda comm, wait: comm.reduce_scatter(source, out.array, reduction.op, dtype=dtype, wait=wait)), out

    def reduce_scatter_single(self, output, tensor, opts):
        call, out = self._single_reduce_scatter(output, tensor, opts.reduceOp)
        return self._issue("reduce_scatter_tensor", opts, [output], [call], [out.copy_out] if out.copied else [])

    _reduce_scatter_base = reduce_scatter_single

    def reduce_scatter_single_coalesced(self, outputs, tensors, opts):
        pairs = [self._single_reduce_scatter(output, tensor, opts.reduceOp) for output, tensor in zip(outputs, tensors)]
        return self._issue("reduce_scatter_tensor_coalesced", opts, outputs, [call for call, _ in pairs],
                           [out.copy_out for _, out in pairs if out.copied])

    def reduce_scatter(self, outputs, input_lists, opts):
        calls, finishers = [], []
        for output, inputs in zip(outputs, input_lists):
            if len(inputs) != self.size():
                raise ValueError(f"reduce_scatter needs {self.size()} input tensors, got {len(inputs)}")
            for tensor in inputs:
                check(tensor)
            same_dtype([output, *inputs], "reduce_scatter's inputs and output")
            if any(tensor.numel() != output.numel() for tensor in inputs):
                raise ValueError(f"reduce_scatter: every input must have the output's {output.numel()} elements")
            flat = torch.cat([tensor.reshape(-1) for tensor in inputs])
            call, out = self._single_reduce_scatter(output, flat, opts.reduceOp)
            calls.append(call)
            finishers += [out.copy_out] if out.copied else []
        return self._issue("reduce_scatter", opts, outputs, calls, finishers)

    def barrier(self, opts):
        return self._issue("barrier", opts, [], [lambda comm, wait: comm.barrier(wait=wait)])

    # -- all-to-all, gather and scatter (dist_all_to_all_v: ordered with the collectives) --

    def _rows(self, tensor, splits, what):
        """Element counts per rank of a split along dim 0 (even when splits is empty)."""
        size = self.size()
        rows = tensor.size(0) if tensor.dim() else 1
        per_row = tensor.numel() // rows if rows else 0
        if not splits:
            if rows % size:
                raise ValueError(f"all_to_all_single: {what} has {rows} rows, not a multiple of {size} ranks")
            splits = [rows // size] * size
        if len(splits) != size or any(split < 0 for split in splits) or sum(splits) != rows:
            raise ValueError(f"all_to_all_single: {what} split sizes {list(splits)} must be {size} "
                             f"non-negative sizes summing to its {rows} rows")
        return [split * per_row for split in splits]

    def all_to_all_single(self, output, tensor, output_split_sizes, input_split_sizes, opts):
        check(output, "the output tensor")
        check(tensor)
        same_dtype([output, tensor], "all_to_all's input and output")
        source, dtype = source_array(tensor, output)
        out = Staged(output, copy_in=False)
        if not output_split_sizes and not input_split_sizes:
            if tensor.numel() != output.numel() or tensor.numel() % self.size():
                raise ValueError(f"all_to_all_single: input and output need the same number of elements, a "
                                 f"multiple of {self.size()}; got {tensor.numel()} and {output.numel()}")
            call = lambda comm, wait: comm.all_to_all(source, out.array, dtype=dtype, wait=wait)  # noqa: E731
        else:
            send_counts = self._rows(tensor, input_split_sizes, "the input")
            recv_counts = self._rows(output, output_split_sizes, "the output")
            call = lambda comm, wait: comm.all_to_all_v(source, send_counts, out.array, recv_counts,  # noqa: E731
                                                        dtype=dtype, wait=wait)
        return self._issue("all_to_all_single", opts, [output], [call], [out.copy_out] if out.copied else [])

    alltoall_base = all_to_all_single

    def _all_to_all_v(self, what, opts, send_tensors, recv_tensors, outputs):
        """send_tensors[j] goes to rank j, recv_tensors[j] comes from rank j (None:
        nothing), through one dist_all_to_all_v of flat copies."""
        dtypes = [t for t in (*send_tensors, *recv_tensors) if t is not None]
        for t in dtypes:
            check(t)
        same_dtype(dtypes, f"{what}'s tensors")
        like = dtypes[0]
        send_counts = [0 if t is None else t.numel() for t in send_tensors]
        recv_counts = [0 if t is None else t.numel() for t in recv_tensors]
        present = [t.reshape(-1) for t in send_tensors if t is not None]
        source, dtype = as_array(torch.cat(present) if present else torch.empty(0, dtype=like.dtype))
        flat, array = flat_empty(like, sum(recv_counts))

        def copy_out():
            offset = 0
            for t, count in zip(recv_tensors, recv_counts):
                if t is not None:
                    t.copy_(flat[offset:offset + count].view(t.shape))
                offset += count
        call = lambda comm, wait: comm.all_to_all_v(source, send_counts, array, recv_counts,  # noqa: E731
                                                    dtype=dtype, wait=wait)
        return self._issue(what, opts, outputs, [call], [copy_out])

    def alltoall(self, outputs, tensors, opts):
        if len(outputs) != self.size() or len(tensors) != self.size():
            raise ValueError(f"all_to_all needs {self.size()} input and output tensors, "
                             f"got {len(tensors)} and {len(outputs)}")
        return self._all_to_all_v("all_to_all", opts, tensors, outputs, outputs)

    def _root_list(self, what, single, lists, root):
        """The `size` tensors the root of a gather or scatter passes (None elsewhere),
        each as large as `single`, this rank's one tensor."""
        if self.rank() != root:
            return None
        size = self.size()
        if len(lists) != 1 or len(lists[0]) != size:
            raise ValueError(f"{what} needs a list of {size} tensors at the root")
        if any(tensor.numel() != single.numel() for tensor in lists[0]):
            raise ValueError(f"{what}: every tensor of the root's list must have {single.numel()} elements")
        return lists[0]

    @staticmethod
    def _single(what, tensors):
        if len(tensors) != 1:
            raise ValueError(f"{what} takes one tensor on each rank, got {len(tensors)}")
        return tensors[0]

    def gather(self, output_lists, tensors, opts):
        root, size = opts.rootRank, self.size()
        tensor = self._single("gather", tensors)
        outputs = self._root_list("gather", tensor, output_lists, root)
        sends = [tensor if r == root else None for r in range(size)]
        return self._all_to_all_v("gather", opts, sends, outputs or [None] * size, outputs or [])

    def scatter(self, outputs, input_lists, opts):
        root, size = opts.rootRank, self.size()
        output = self._single("scatter", outputs)
        inputs = self._root_list("scatter", output, input_lists, root)
        receives = [output if r == root else None for r in range(size)]
        return self._all_to_all_v("scatter", opts, inputs or [None] * size, receives, outputs)

    # -- point to point (apart from the collectives) --

    def send(self, tensors, dst, tag):
        calls = []
        for tensor in tensors:
            check(tensor)
            array, dtype = as_array(tensor.contiguous())
            calls.append(lambda comm, wait, a=array, d=dtype: comm.send(a, dst, tag, dtype=d, wait=wait))
        return self._issue(f"send to rank {dst} (tag {tag})", None, tensors, calls)

    def _receive(self, tensors, src, tag, what):
        staged = []
        for tensor in tensors:
            check(tensor)
            staged.append(Staged(tensor, copy_in=False))
        calls = [lambda comm, wait, s=s: comm.recv(s.array, src, tag, dtype=s.dtype, wait=wait) for s in staged]
        return self._issue(what, None, tensors, calls, [s.copy_out for s in staged if s.copied], receive=True)

    def recv(self, tensors, src, tag):
        return self._receive(tensors, src, tag, f"recv from rank {src} (tag {tag})")

    def recv_anysource(self, tensors, tag):
        return self._receive(tensors, C.ANY_SOURCE, tag, f"recv from any rank (tag {tag})")
