"""torch.distributed: the "distribute" backend beside gloo in the same processes.

Run by bench/torch/compare under torchrun (one process per rank). Both process
groups live in the same job (the default group is gloo, a second group runs on
the backend under test), and every round measures both, one after the other,
for each size (the order alternating between rounds), then the DDP step.

- all_reduce, float32 SUM, in place, sizes --sizes (bytes per rank). Method
  (as bench/peers/peer_measure.h): the result is checked once against the sum
  computed here; one call after a barrier sizes a warm-up (about a tenth of the
  budget) whose calls, timed together, give the estimate that sizes a batch
  (small messages are timed as batches of calls, divided); 5 to 15 samples,
  each a barrier then the batch; the MAX over ranks of each sample, the MEDIAN
  over samples.
- DDP step: forward, backward (DDP's bucketed all_reduce overlapping it) and
  SGD on an MLP of 8,393,728 parameters (1024-2048-2048-1024), 32 rows per rank;
  one model per backend from the same weights, stepped alternately on the same
  data; their weights must stay bitwise equal on 2 ranks (checked at the end).
  Between them, in the same interleaving, the same model without DDP (impl
  "compute"), which tells how much time each backend adds to the step, and a
  DDP model on a backend that moves nothing (impl "null", null_backend.py):
  DDP's own cost with communication that takes no time, the step no backend
  can beat under DDP. Also in the interleaving, for each backend, its
  all-reduces of the DDP model's buckets alone (variant "ddp_buckets"): issued
  asynchronously in bucket order, then waited for, as DDP does, on tensors of
  the buckets' sizes; null's step plus that is the step a backend would take
  if its all-reduces cost what they cost alone and overlapped nothing.

Rank 0 writes the CSV (impl,variant,nprocs,bytes,iters,median_us,algbw_GBps,
busbw_GBps), each row the round with the best median (as bench/compare does).
"""
import argparse
import gc
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import null_backend

DDP_SIZES = [1024, 2048, 2048, 1024]
COMPUTE = "compute"  # the DDP step's model without DDP
NULL = null_backend.NAME  # the DDP step on a backend that moves nothing
DDP_ROWS = 32


def parse():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="distribute", help="the backend compared with gloo")
    parser.add_argument("--sizes", default="4096,16384,65536,262144,1048576,4194304,16777216,67108864")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--budget", type=float, default=0.3, help="seconds per size, backend and round")
    parser.add_argument("--ddp-steps", type=int, default=8, help="timed DDP steps per backend and round")
    parser.add_argument("--suffix", default="", help="appended to every variant (\"@2x1\" across hosts)")
    parser.add_argument("--out", required=True)
    return parser.parse_args()


def slowest(group_gloo, seconds):
    """The largest of every rank's value (through gloo, outside any timing)."""
    value = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(value, op=dist.ReduceOp.MAX, group=group_gloo)
    return value.item()


def check_all_reduce(group, count, rank, world):
    """One all_reduce of small integers, exact in float32, against its sum."""
    position = torch.arange(count, dtype=torch.float32) % 251
    tensor = position + rank * 7
    dist.all_reduce(tensor, group=group)
    expected = position * world + 7 * world * (world - 1) // 2
    if not torch.equal(tensor, expected):
        bad = (tensor != expected).nonzero()[0].item()
        raise SystemExit(f"all_reduce of {count} floats: element {bad} is {tensor[bad].item()}, "
                         f"expected {expected[bad].item()}")


def measure(call, barrier, group_gloo, budget):
    """(calls per sample, samples, median of the slowest rank's per-call time)."""
    def timed(calls):
        barrier()
        start = time.perf_counter()
        for _ in range(calls):
            call()
        return max(slowest(group_gloo, time.perf_counter() - start) / calls, 1e-7)

    # One call after a barrier carries the ranks' skew; a warm-up of about a
    # tenth of the budget, timed together, gives the per-call estimate.
    first = timed(1)
    estimate = timed(max(1, min(1000, int(0.1 * budget / first))))
    batch = max(1, min(1000, int(0.02 * budget / estimate)))
    samples = max(5, min(15, int(budget / (batch * estimate))))
    if samples * batch * estimate > 4 * budget:
        samples = 3
    return batch, samples, statistics.median(timed(batch) for _ in range(samples))


def row(impl, variant, world, nbytes, iters, seconds, factor):
    algbw = nbytes / seconds / 1e9
    return f"{impl},{variant},{world},{nbytes},{iters},{seconds * 1e6:.2f},{algbw:.4f},{algbw * factor:.4f}"


def best_rows(rows):
    """Per (impl, variant, nprocs, bytes), the row of the least median, in first-seen order."""
    best = {}
    for line in rows:
        fields = line.split(",")
        key = tuple(fields[:4])
        if key not in best or float(fields[5]) < float(best[key].split(",")[5]):
            best[key] = line
    return list(best.values())


def all_reduce_rows(groups, sizes, world, rank, budget, suffix, round_index):
    barrier = lambda: dist.barrier(group=groups["gloo"])  # noqa: E731
    factor = 2 * (world - 1) / world
    rows = []
    for nbytes in sizes:
        order = list(groups) if round_index % 2 == 0 else list(reversed(groups))
        for impl in order:
            group = groups[impl]
            check_all_reduce(group, nbytes // 4, rank, world)
            tensor = torch.zeros(nbytes // 4, dtype=torch.float32)
            batch, samples, seconds = measure(lambda: dist.all_reduce(tensor, group=group), barrier,
                                              groups["gloo"], budget)
            rows.append(row(impl, f"allreduce/torch{suffix}", world, nbytes, batch * samples, seconds, factor))
    return rows


def mlp():
    torch.manual_seed(0)
    layers = []
    for fan_in, fan_out in zip(DDP_SIZES, DDP_SIZES[1:]):
        layers += [torch.nn.Linear(fan_in, fan_out), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1])


class DdpBench:
    """One DDP model and optimizer per backend, from the same weights."""

    def __init__(self, groups, null_group, rank):
        self.models = {impl: DistributedDataParallel(mlp(), process_group=group) for impl, group in groups.items()}
        self.models[NULL] = DistributedDataParallel(mlp(), process_group=null_group)  # DDP's own cost
        self.models[COMPUTE] = mlp()  # no DDP: the time each backend adds
        self.optimizers = {impl: torch.optim.SGD(m.parameters(), lr=1e-3) for impl, m in self.models.items()}
        self.parameters = sum(p.numel() for p in mlp().parameters())
        generator = torch.Generator().manual_seed(rank)
        self.inputs = torch.randn(DDP_ROWS, DDP_SIZES[0], generator=generator)
        self.targets = torch.randn(DDP_ROWS, DDP_SIZES[-1], generator=generator)

    def step(self, impl):
        model, optimizer = self.models[impl], self.optimizers[impl]
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.mse_loss(model(self.inputs), self.targets).backward()
        optimizer.step()

    def buckets(self, impl):
        """Tensors the size of DDP's gradient buckets for `impl`'s model, in the
        order DDP all-reduces them (after its first steps rebuilt them)."""
        grads = self.models[impl].reducer._get_zeros_like_grad_buckets()  # noqa: SLF001 -- sizes only
        return [torch.ones_like(bucket.buffer()) for bucket in grads]

    def rows(self, groups, world, steps, suffix, round_index):
        barrier = lambda: dist.barrier(group=groups["gloo"])  # noqa: E731
        def all_reduce_buckets(group, tensors):
            for work in [dist.all_reduce(t, group=group, async_op=True) for t in tensors]:
                work.wait()

        def fill(tensors):
            # As DDP's copies into its buckets leave them: just written (a
            # buffer untouched since the last step's all-reduce took 1-2 ms
            # longer to all-reduce here at 24 MiB).
            for tensor in tensors:
                tensor.fill_(1.0)
        runs = [(impl, "ddp_step", None, lambda impl=impl: self.step(impl)) for impl in [*groups, NULL, COMPUTE]]
        for impl, group in groups.items():
            tensors = self.buckets(impl)
            runs.append((impl, "ddp_buckets", lambda tensors=tensors: fill(tensors),
                         lambda group=group, tensors=tensors: all_reduce_buckets(group, tensors)))
        order = runs if round_index % 2 == 0 else list(reversed(runs))
        rows = []
        samples = {(impl, kind): [] for impl, kind, _, _ in runs}
        for _ in range(steps):  # interleaved step by step: both see the same machine
            for impl, kind, prepare, run in order:
                if prepare is not None:
                    prepare()
                barrier()
                start = time.perf_counter()
                run()
                samples[(impl, kind)].append(slowest(groups["gloo"], time.perf_counter() - start))
        nbytes = self.parameters * 4
        for impl, kind, _, _ in order:
            rows.append(row(impl, f"{kind}/mlp8.4M{suffix}", world, nbytes, steps,
                            statistics.median(samples[(impl, kind)]), 2 * (world - 1) / world))
        return rows

    def check_same_weights(self, groups, world):
        """Both models took the same steps: on 2 ranks their weights are equal."""
        first, second = (list(self.models[impl].module.parameters()) for impl in groups)
        worst = max((a - b).abs().max().item() for a, b in zip(first, second))
        if world == 2 and worst != 0:
            raise SystemExit(f"DDP: the backends' weights differ after the same steps (max |diff| {worst})")
        return worst


def main():
    args = parse()
    if "distribute" in args.backend:
        import distribute.torch  # noqa: F401  (registers the "distribute" backend)
    null_backend.register()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    # --backend gloo (a second gloo group) checks the harness itself.
    name = args.backend if args.backend != "gloo" else "gloo-second-group"
    groups = {"gloo": dist.group.WORLD, name: dist.new_group(backend=args.backend)}
    sizes = [int(s) for s in args.sizes.split(",")]
    ddp = DdpBench(groups, dist.new_group(backend=NULL), rank)
    rows = []
    for round_index in range(args.rounds):
        rows += all_reduce_rows(groups, sizes, world, rank, args.budget, args.suffix, round_index)
        for impl in [*groups, NULL]:  # warm-up: DDP's first steps rebuild its buckets
            ddp.step(impl)
        rows += ddp.rows(groups, world, args.ddp_steps, args.suffix, round_index)
        if rank == 0:
            print(f"round {round_index + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    worst = ddp.check_same_weights(groups, world)
    if rank == 0:
        with open(args.out, "w") as f:
            f.write("impl,variant,nprocs,bytes,iters,median_us,algbw_GBps,busbw_GBps\n")
            f.write("\n".join(best_rows(rows)) + "\n")
        print(f"DDP weights, {name} vs gloo: max |diff| {worst}", file=sys.stderr)
    # The models hold the groups: free them first, or gloo's threads let go of
    # them only while the interpreter shuts down, which aborts the process.
    del ddp
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
