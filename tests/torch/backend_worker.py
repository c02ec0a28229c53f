"""One rank of a backend test scenario (tests/torch/test_backend_*.py start them
through backend_launch.py): argv = scenario rank size store_path report_path.
Each check compares with backend_references; the report lists the checks that
passed and the failures, which the test asserts on."""
import datetime
import json
import os
import sys
import time
import traceback

import torch
import torch.distributed as dist

import distribute.torch  # noqa: F401 -- registers "distribute"
from backend_references import DTYPES, FLOATS, rank_input, reduced, same

SCENARIOS = {}


def scenario(function):
    SCENARIOS[function.__name__] = function
    return function


class Report:
    def __init__(self, rank):
        self.rank = rank
        self.passed = []
        self.failed = []
        self.values = {}

    def check(self, name, condition, detail=""):
        (self.passed if condition else self.failed).append(name if condition else f"{name}: {detail}")

    def expect_error(self, name, function, error_type, *fragments):
        """function() must raise error_type with every fragment in its message."""
        try:
            function()
        except error_type as error:
            message = str(error)
            missing = [f for f in fragments if f not in message]
            self.check(name, not missing, f"{fragments} not all in {message!r}")
            return message
        except Exception as error:  # noqa: BLE001 -- reported
            self.check(name, False, f"raised {type(error).__name__}: {error}")
            return None
        self.check(name, False, "raised nothing")
        return None


def init(rank, size, store_path, timeout=60, backend="distribute"):
    """Through a FileStore at store_path, or torch's TCPStore for a tcp:// URL."""
    if store_path.startswith("tcp://"):
        dist.init_process_group(backend, init_method=store_path, rank=rank, world_size=size,
                                timeout=datetime.timedelta(seconds=timeout))
        return
    store = dist.FileStore(store_path, size)
    dist.init_process_group(backend, store=store, rank=rank, world_size=size,
                            timeout=datetime.timedelta(seconds=timeout))


OPS = {"sum": dist.ReduceOp.SUM, "avg": dist.ReduceOp.AVG, "product": dist.ReduceOp.PRODUCT,
       "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}


def check_all_reduce(report, rank, size, group=None, ranks=None):
    ranks = ranks or list(range(size))
    me = ranks.index(rank)
    for dtype in DTYPES:
        for name, op in OPS.items():
            inputs = [rank_input(r, 37, dtype) for r in ranks]
            if dtype == torch.bool and name == "avg":
                report.expect_error("all_reduce bool avg refused", lambda: dist.all_reduce(
                    inputs[me].clone(), op=op, group=group), ValueError, "bool")
                continue
            tensor = inputs[me].clone()
            dist.all_reduce(tensor, op=op, group=group)
            expected = reduced(inputs, name, len(ranks))
            report.check(f"all_reduce {name} {dtype}", same(tensor, expected), f"{tensor} != {expected}")
        if dtype in FLOATS:
            inputs = [rank_input(r, 37, dtype) for r in ranks]
            tensor = inputs[me].clone()
            dist.all_reduce(tensor, op=dist._make_nccl_premul_sum(2.5), group=group)
            report.check(f"all_reduce premul_sum {dtype}", same(tensor, reduced(inputs, "premul_sum", len(ranks),
                                                                                  2.5)))


@scenario
def collectives(report, rank, size, store_path):
    init(rank, size, store_path)
    report.check("backend name", dist.get_backend() == "distribute", dist.get_backend())
    backend = dist.distributed_c10d._get_default_group()._get_backend(torch.device("cpu"))
    report.values["path"] = backend._comm.path  # how the library carries this group's calls
    check_all_reduce(report, rank, size)

    # Non-contiguous (a column) and empty tensors; the other column stays as it was.
    matrix = torch.stack([rank_input(rank, 50, torch.float32), torch.full((50,), -7.0)], dim=1)
    dist.all_reduce(matrix[:, 0])
    expected = reduced([rank_input(r, 50, torch.float32) for r in range(size)], "sum", size)
    report.check("all_reduce non-contiguous", same(matrix[:, 0].contiguous(), expected) and
                 bool((matrix[:, 1] == -7).all()))
    empty = torch.empty(0)
    dist.all_reduce(empty)
    report.check("all_reduce empty", empty.numel() == 0)
    # Non-contiguous outputs are staged and copied back.
    matrix = torch.full((6, 2), -1.0)
    if rank == 0:
        matrix[:, 0] = torch.arange(6.0)
    dist.broadcast(matrix[:, 0], src=0)
    report.check("broadcast non-contiguous", same(matrix[:, 0].contiguous(), torch.arange(6.0)) and
                 bool((matrix[:, 1] == -1).all()))
    columns = torch.zeros(4, size)
    dist.all_gather(list(columns.t()), torch.full((4,), float(rank)))  # rows of a transposed view
    report.check("all_gather non-contiguous outputs", same(columns, torch.arange(float(size)).repeat(4, 1)))
    gathered = torch.zeros(size * 3, 2)
    dist.all_gather_into_tensor(gathered[:, 1], torch.full((3,), rank + 0.5))
    report.check("all_gather_into_tensor non-contiguous output",
                 same(gathered[:, 1].contiguous(), torch.arange(size).repeat_interleave(3) + 0.5) and
                 bool((gathered[:, 0] == 0).all()))
    objects = [None] * size
    dist.all_gather_object(objects, {"rank": rank, "name": f"r{rank}"})
    report.check("all_gather_object", objects == [{"rank": r, "name": f"r{r}"} for r in range(size)])
    shared = [("from", rank)]
    dist.broadcast_object_list(shared, src=size - 1)
    report.check("broadcast_object_list", shared == [("from", size - 1)])

    for dtype in DTYPES:
        inputs = [rank_input(r, 13, dtype) for r in range(size)]
        root = size - 1
        tensor = inputs[rank].clone()
        dist.broadcast(tensor, src=root)
        report.check(f"broadcast {dtype}", same(tensor, inputs[root]))

        outputs = [torch.empty(13, dtype=dtype) for _ in range(size)]
        dist.all_gather(outputs, inputs[rank])
        report.check(f"all_gather list {dtype}", all(same(o, i) for o, i in zip(outputs, inputs)))

        output = torch.empty(13 * size, dtype=dtype)
        dist.all_gather_into_tensor(output, inputs[rank])
        report.check(f"all_gather_into_tensor {dtype}", same(output, torch.cat(inputs)))

        if dtype != torch.bool:
            lists = [[rank_input(r, 5, dtype, salt=j) for j in range(size)] for r in range(size)]
            out = torch.empty(5, dtype=dtype)
            dist.reduce_scatter(out, lists[rank])
            report.check(f"reduce_scatter list {dtype}", same(out, reduced([lists[r][rank] for r in range(size)],
                                                                           "sum", size)))
            flat = [torch.cat(lists[r]) for r in range(size)]
            out = torch.empty(5, dtype=dtype)
            dist.reduce_scatter_tensor(out, flat[rank], op=dist.ReduceOp.MAX)
            report.check(f"reduce_scatter_tensor max {dtype}",
                         same(out, reduced([lists[r][rank] for r in range(size)], "max", size)))

            tensor = inputs[rank].clone()
            dist.reduce(tensor, dst=0, op=dist.ReduceOp.SUM)
            report.check(f"reduce {dtype}", same(tensor, reduced(inputs, "sum", size) if rank == 0 else inputs[rank]))

        blocks = [rank_input(rank, 3, dtype, salt=j) for j in range(size)]
        output = torch.empty(3 * size, dtype=dtype)
        dist.all_to_all_single(output, torch.cat(blocks))
        report.check(f"all_to_all_single even {dtype}",
                     same(output, torch.cat([rank_input(r, 3, dtype, salt=rank) for r in range(size)])))

    # In place all_gather (FSDP2's input is its own block of the output).
    output = torch.zeros(4 * size)
    output[4 * rank:4 * rank + 4] = rank_input(rank, 4, torch.float32)
    dist.all_gather_into_tensor(output, output[4 * rank:4 * rank + 4])
    report.check("all_gather_into_tensor in place",
                 same(output, torch.cat([rank_input(r, 4, torch.float32) for r in range(size)])))

    # Uneven all_to_all_single: rank i sends (i + j) % 3 + 1 rows of 2 to rank j.
    def rows(i, j):
        return (i + j) % 3 + 1

    def block(i, j):  # what rank i sends to rank j
        return torch.arange(rows(i, j) * 2, dtype=torch.float32).reshape(-1, 2) + 100 * i + 10 * j

    for dtype in (torch.float32, torch.int64, torch.bfloat16):
        send = torch.cat([block(rank, j) for j in range(size)]).to(dtype)
        output = torch.empty(sum(rows(i, rank) for i in range(size)), 2, dtype=dtype)
        dist.all_to_all_single(output, send, output_split_sizes=[rows(i, rank) for i in range(size)],
                               input_split_sizes=[rows(rank, j) for j in range(size)])
        report.check(f"all_to_all_single uneven {dtype}",
                     same(output, torch.cat([block(i, rank) for i in range(size)]).to(dtype)))

    # all_to_all (lists of different sizes).
    inputs = [torch.full((rank + j + 1,), float(10 * rank + j)) for j in range(size)]
    outputs = [torch.empty(i + rank + 1) for i in range(size)]
    dist.all_to_all(outputs, inputs)
    report.check("all_to_all list", all(same(outputs[i], torch.full((i + rank + 1,), float(10 * i + rank)))
                                        for i in range(size)))

    # gather to the last rank, scatter from rank 0.
    root = size - 1
    gathered = [torch.empty(6, dtype=torch.int32) for _ in range(size)] if rank == root else None
    dist.gather(rank_input(rank, 6, torch.int32), gathered, dst=root)
    if rank == root:
        report.check("gather", all(same(g, rank_input(r, 6, torch.int32)) for r, g in enumerate(gathered)))
    out = torch.empty(6, dtype=torch.float64)
    pieces = [rank_input(r, 6, torch.float64, salt=9) for r in range(size)] if rank == 0 else None
    dist.scatter(out, pieces, src=0)
    report.check("scatter", same(out, rank_input(rank, 6, torch.float64, salt=9)))

    # Coalesced forms: all_reduce_coalesced, and FSDP2's coalescing manager (all_gather_single_coalesced,
    # reduce_scatter_single_coalesced).
    tensors = [rank_input(rank, 7, torch.float32), rank_input(rank, 3, torch.float32, salt=1)]
    dist.all_reduce_coalesced(tensors)
    report.check("all_reduce_coalesced", same(tensors[0], reduced([rank_input(r, 7, torch.float32)
                                                                  for r in range(size)], "sum", size)) and
                 same(tensors[1], reduced([rank_input(r, 3, torch.float32, salt=1) for r in range(size)], "sum", size)))
    outputs = [torch.empty(5 * size), torch.empty(2 * size)]
    with dist.distributed_c10d._coalescing_manager():
        dist.all_gather_into_tensor(outputs[0], rank_input(rank, 5, torch.float32))
        dist.all_gather_into_tensor(outputs[1], rank_input(rank, 2, torch.float32, salt=3))
    report.check("all_gather_into_tensor coalesced",
                 same(outputs[0], torch.cat([rank_input(r, 5, torch.float32) for r in range(size)])) and
                 same(outputs[1], torch.cat([rank_input(r, 2, torch.float32, salt=3) for r in range(size)])))
    outputs = [torch.empty(3), torch.empty(1)]
    inputs = [rank_input(rank, 3 * size, torch.float32), rank_input(rank, size, torch.float32, salt=2)]
    with dist.distributed_c10d._coalescing_manager():
        dist.reduce_scatter_tensor(outputs[0], inputs[0], op=dist.ReduceOp.AVG)
        dist.reduce_scatter_tensor(outputs[1], inputs[1], op=dist.ReduceOp.AVG)  # one op for the whole batch
    first = reduced([rank_input(r, 3 * size, torch.float32) for r in range(size)], "avg", size)
    second = reduced([rank_input(r, size, torch.float32, salt=2) for r in range(size)], "avg", size)
    report.check("reduce_scatter_tensor coalesced", same(outputs[0], first[3 * rank:3 * rank + 3]) and
                 same(outputs[1], second[rank:rank + 1]))

    dist.barrier()
    report.check("barrier", True)

    # Refused with a clear error, before anything is sent.
    report.expect_error("int16 refused", lambda: dist.all_reduce(torch.ones(3, dtype=torch.int16)), TypeError,
                        "int16", "distribute")
    report.expect_error("BAND refused", lambda: dist.all_reduce(torch.ones(3, dtype=torch.int32),
                                                                op=dist.ReduceOp.BAND), ValueError, "BAND")
    check_asynchronous(report, rank, size)
    dist.destroy_process_group()


def check_asynchronous(report, rank, size):
    """async_op=True: Work.wait and get_future (completed by the library's callback)."""
    inputs = [rank_input(r, 1000, torch.float32) for r in range(size)]
    expected = reduced(inputs, "sum", size)
    tensors = [inputs[rank].clone() * (k + 1) for k in range(8)]
    works = [dist.all_reduce(t, async_op=True) for t in tensors]
    report.check("wait returns True", all(work.wait() is True for work in works))
    report.check("async all_reduce", all(same(t, expected * (k + 1)) for k, t in enumerate(tensors)))

    tensor = inputs[rank].clone()
    future = dist.all_reduce(tensor, async_op=True).get_future()
    chained = future.then(lambda f: f.value()[0] * 2)
    report.check("future value", same(future.wait()[0], expected))
    report.check("future then", same(chained.wait(), expected * 2))

    # A future callback that issues (and waits for) another collective: it runs on the dispatch thread.
    second = inputs[rank].clone()

    def follow_up(f):
        dist.all_reduce(second)
        return f.value()[0] + second

    result = dist.all_reduce(inputs[rank].clone(), async_op=True).get_future().then(follow_up).wait()
    report.check("collective from a future callback", same(result, expected * 2))

    output = torch.empty(1000 * size)
    work = dist.all_gather_into_tensor(output, inputs[rank], async_op=True)
    report.check("async all_gather future", same(work.get_future().wait()[0], torch.cat(inputs)))
    report.check("wait with a timeout", work.wait(datetime.timedelta(seconds=30)) is True)


def point_to_point(report, rank, size, store_path):
    """send/recv with tags, irecv from any source, batch_isend_irecv."""
    init(rank, size, store_path)
    if rank == 0:
        late = torch.empty(4)
        early = torch.empty(4)
        late_work = dist.irecv(late, src=1, tag=7)
        dist.recv(early, src=1, tag=3)  # matched by tag, not by order
        late_work.wait()
        report.check("recv by tag", same(early, torch.full((4,), 3.0)) and same(late, torch.full((4,), 7.0)))
        # From any source: torch 2.15's dist.recv(src=None) cannot name the sender for a Python
        # backend (its C++ Work wrapper does not forward sourceRank()), so irecv and read it off the data.
        sources = set()
        for _ in range(size - 1):
            anywhere = torch.empty(2, dtype=torch.int64)
            dist.irecv(anywhere, tag=11).wait()
            source = int(anywhere[0])
            sources.add(source)
            report.check(f"recv any source from {source}", same(anywhere, torch.full((2,), source, dtype=torch.int64)))
        report.check("recv any source saw every rank", sources == set(range(1, size)), str(sources))
    else:
        if rank == 1:
            dist.send(torch.full((4,), 7.0), dst=0, tag=7)
            dist.send(torch.full((4,), 3.0), dst=0, tag=3)
        dist.send(torch.full((2,), rank, dtype=torch.int64), dst=0, tag=11)
    # A ring with batch_isend_irecv.
    right, left = (rank + 1) % size, (rank - 1) % size
    received = torch.empty(3, dtype=torch.bfloat16)
    ops = [dist.P2POp(dist.isend, rank_input(rank, 3, torch.bfloat16), right),
           dist.P2POp(dist.irecv, received, left)]
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    report.check("batch_isend_irecv ring", same(received, rank_input(left, 3, torch.bfloat16)))
    dist.barrier()
    dist.destroy_process_group()


@scenario
def groups_and_point_to_point(report, rank, size, store_path):
    groups(report, rank, size, store_path)
    point_to_point(report, rank, size, store_path + ".p2p")  # a second default group, after destroy


def groups(report, rank, size, store_path):
    """new_group: each group its own context through its prefixed Store."""
    init(rank, size, store_path)
    pair = dist.new_group([0, 2])
    alone = dist.new_group([1])
    everyone = dist.new_group()
    if rank in (0, 2):
        report.check("group rank", dist.get_rank(pair) == [0, 2].index(rank))
        check_all_reduce(report, rank, size, group=pair, ranks=[0, 2])
        output = torch.empty(2 * 6, dtype=torch.int64)
        dist.all_gather_into_tensor(output, rank_input(rank, 6, torch.int64), group=pair)
        report.check("group all_gather", same(output, torch.cat([rank_input(r, 6, torch.int64) for r in (0, 2)])))
        if rank == 0:
            dist.send(torch.arange(5.0), group=pair, group_dst=1)
        else:
            received = torch.empty(5)
            dist.recv(received, group=pair, group_src=0)
            report.check("group send/recv", same(received, torch.arange(5.0)))
    else:
        tensor = torch.ones(3)
        dist.all_reduce(tensor, group=alone)
        report.check("group of one", same(tensor, torch.ones(3)))
    tensor = rank_input(rank, 9, torch.float32)
    dist.all_reduce(tensor, group=everyone, op=dist.ReduceOp.MAX)
    report.check("group of everyone", same(tensor, reduced([rank_input(r, 9, torch.float32) for r in range(size)],
                                                          "max", size)))
    dist.barrier()
    dist.destroy_process_group()


@scenario
def failures(report, rank, size, store_path):
    """The library's timeout and mismatch errors as DistBackendError, from wait()
    and from the future; abort of a pending call."""
    init(rank, size, store_path)
    slow = dist.new_group(timeout=datetime.timedelta(seconds=2))
    mismatched = dist.new_group()
    mismatched_async = dist.new_group()
    aborted = dist.new_group()
    late = dist.new_group()
    destroyed = dist.new_group()
    if rank == 0:  # the other ranks never call on `slow`
        started = time.monotonic()
        message = report.expect_error("timeout", lambda: dist.all_reduce(torch.ones(4), group=slow),
                                      dist.DistBackendError, "DIST_ERR_TIMEOUT", "all_reduce")
        report.values["timeout_seconds"] = time.monotonic() - started
        report.values["timeout_message"] = message
        report.check("timeout within the deadline", time.monotonic() - started < 2 + 10)
    message = report.expect_error("mismatch", lambda: dist.all_reduce(torch.ones(4 + rank), group=mismatched),
                                  dist.DistBackendError, "DIST_ERR_MISMATCH")
    report.values["mismatch_message"] = message
    future = dist.all_gather_into_tensor(torch.empty(size * (4 + rank)), torch.ones(4 + rank),
                                         group=mismatched_async, async_op=True).get_future()
    # torch hands a Python backend's future on as its C++ object: the error's type becomes RuntimeError.
    report.expect_error("mismatch through the future", future.wait, RuntimeError, "DistBackendError",
                        "DIST_ERR_MISMATCH", "all_gather")
    # The world is unaffected.
    tensor = torch.ones(2)
    dist.all_reduce(tensor)
    report.check("world still works", same(tensor, torch.full((2,), float(size))))
    # Work.wait(timeout) that runs out raises and leaves the call running; it completes once the others call.
    if rank == 0:
        tensor = torch.ones(5)
        work = dist.all_reduce(tensor, group=late, async_op=True)
        report.expect_error("wait runs out", lambda: work.wait(datetime.timedelta(milliseconds=300)),
                            dist.DistBackendError, "Work.wait timed out", "still running")
        dist.barrier()
        report.check("completes after a wait ran out", work.wait() is True and same(tensor, torch.full((5,), 2.0)))
    else:
        dist.barrier()  # only once rank 0's wait ran out
        dist.all_reduce(torch.ones(5), group=late)
    # A pending call the others never make ends when its group is aborted.
    if rank == 0:
        work = dist.all_reduce(torch.empty(3), group=aborted, async_op=True)
        dist.distributed_c10d._abort_process_group(aborted)
        report.expect_error("abort fails the pending call", work.wait, dist.DistBackendError, "DIST_ERR_ABORTED")
    # destroy_process_group with a receive no one matches: the group is aborted, the receive fails.
    if rank == 0:
        work = dist.irecv(torch.empty(3), src=1, group=destroyed)
        dist.destroy_process_group(destroyed)
        report.expect_error("destroy fails a pending receive", work.wait, dist.DistBackendError, "DIST_ERR_ABORTED",
                            "recv from rank 1")
        dist.barrier()
    else:
        dist.barrier()
        dist.destroy_process_group(destroyed)
    dist.barrier()
    dist.destroy_process_group()


@scenario
def killed_peer(report, rank, size, store_path):
    """The last rank dies (SIGKILL) after a first all_reduce; the others fail within the timeout."""
    init(rank, size, store_path, timeout=20)
    tensor = torch.ones(8)
    dist.all_reduce(tensor)
    report.check("before the kill", same(tensor, torch.full((8,), float(size))))
    if rank == size - 1:
        os.kill(os.getpid(), 9)
    time.sleep(0.5)
    started = time.monotonic()
    message = report.expect_error("dead peer", lambda: [dist.all_reduce(torch.ones(1 << 16)) for _ in range(1000)],
                                  dist.DistBackendError, "distribute: all_reduce failed")
    report.values["dead_peer_seconds"] = time.monotonic() - started
    report.values["dead_peer_message"] = message
    report.check("within the timeout", time.monotonic() - started < 20 + 10)


@scenario
def backend_strings(report, rank, size, store_path):
    """A backend per device ("cpu:distribute,cuda:<GPU backend>") for CPU tensors; destroy, then a
    second group in the same process. DIST_TEST_CUDA_BACKEND names the GPU backend: nccl needs a GPU."""
    cuda = os.environ.get("DIST_TEST_CUDA_BACKEND", "gloo")
    init(rank, size, store_path, backend=f"cpu:distribute,cuda:{cuda}")
    tensor = rank_input(rank, 11, torch.float64)
    dist.all_reduce(tensor)
    report.check(f"cpu:distribute,cuda:{cuda}", same(tensor, reduced([rank_input(r, 11, torch.float64)
                                                                  for r in range(size)], "sum", size)))
    dist.destroy_process_group()
    init(rank, size, store_path + ".again", backend="cpu:distribute")
    tensor = torch.full((3,), float(rank))
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    report.check("again after destroy", same(tensor, torch.full((3,), float(size - 1))))
    dist.destroy_process_group()
    live = list(distribute.torch.backend._live)
    report.check("destroy closes every context", not live and all(b._context.closed for b in live))


@scenario
def cuda_to_nccl(report, rank, size, store_path):
    """"cpu:distribute,cuda:nccl" on a machine with a GPU per rank: CPU tensors go
    to distribute, CUDA ones to NCCL, in the same group and alternating, blocking
    and async; NCCL refuses two ranks on one GPU, so `size` is at most the GPUs."""
    torch.cuda.set_device(rank % torch.cuda.device_count())
    init(rank, size, store_path, backend="cpu:distribute,cuda:nccl")
    group = dist.group.WORLD
    report.check("CPU tensors to distribute",
                 isinstance(group._get_backend(torch.device("cpu")), distribute.torch.backend.DistributeBackend))
    report.check("CUDA tensors to NCCL", group._get_backend(torch.device("cuda")).name() == "nccl")
    for dtype in (torch.float32, torch.float16, torch.int64):
        inputs = [rank_input(r, 1000, dtype) for r in range(size)]
        expected = reduced(inputs, "sum", size)
        on_host = inputs[rank].clone()
        on_device = inputs[rank].cuda()
        work = dist.all_reduce(on_device, async_op=True)
        dist.all_reduce(on_host)
        work.wait()
        report.check(f"all_reduce {dtype} on the host", same(on_host, expected), f"{on_host} != {expected}")
        report.check(f"all_reduce {dtype} on the GPU", same(on_device.cpu(), expected), f"{on_device} != {expected}")
    on_device = torch.full((17,), float(rank + 1), device="cuda")
    dist.broadcast(on_device, src=size - 1)
    report.check("broadcast on the GPU", same(on_device.cpu(), torch.full((17,), float(size))),
                 f"{on_device} != {float(size)} everywhere")
    gathered = [torch.empty(3, dtype=torch.int64) for _ in range(size)]
    dist.all_gather(gathered, torch.full((3,), rank, dtype=torch.int64))
    report.check("all_gather on the host", all(same(g, torch.full((3,), r, dtype=torch.int64))
                                                for r, g in enumerate(gathered)), f"{gathered}")
    dist.destroy_process_group()


def main():
    name, rank, size, store_path, report_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], \
        sys.argv[5]
    report = Report(rank)
    started = time.monotonic()
    try:
        SCENARIOS[name](report, rank, size, store_path)
    except Exception:  # noqa: BLE001 -- the report says what failed
        report.failed.append("uncaught: " + traceback.format_exc())
    report.values["seconds"] = time.monotonic() - started
    with open(report_path, "w") as f:
        json.dump({"passed": report.passed, "failed": report.failed, "values": report.values}, f)
    sys.stdout.flush()
    os._exit(0)  # the report is written; skip teardown that a failed peer could hold up


if __name__ == "__main__":
    main()
