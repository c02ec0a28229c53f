"""Every collective of the binding on a real multi-process communicator, each result
checked against a reference this rank computes alone (run by tests/test_multiprocess.py):

    dist-run -n 3 -- python3 bindings/python/examples/every_collective.py
"""
import sys

import numpy as np

import distribute


def check(world):
    r, n = world.rank, world.size
    failures = []

    def expect(name, got, want):
        if not np.array_equal(got, want):
            failures.append(f"{name}: got {got}, want {want}")

    expect("all_reduce", world.all_reduce(np.full(4, r + 1, np.int32)), np.full(4, n * (n + 1) // 2, np.int32))
    root = n - 1
    out = np.zeros(3, np.float32) if r == root else None
    got = world.reduce(np.full(3, float(r), np.float32), "max", root=root, out=out)
    if r == root:
        expect("reduce", got, np.full(3, n - 1, np.float32))
    expect("broadcast", world.broadcast(np.full(2, float(r), np.float64), root=root), np.full(2, float(root)))
    expect("all_gather", world.all_gather(np.array([10 * r, 10 * r + 1], np.int64), np.zeros(2 * n, np.int64)),
           np.array([v for k in range(n) for v in (10 * k, 10 * k + 1)]))
    inputs = np.arange(2 * n, dtype=np.int32) + r  # block j = [2j + r, 2j + 1 + r]
    block = sum(np.arange(2 * n, dtype=np.int32) + k for k in range(n))[2 * r:2 * r + 2]
    expect("reduce_scatter", world.reduce_scatter(inputs, np.zeros(2, np.int32)), block)
    expect("reduce_scatter in place", world.reduce_scatter(inputs.copy())[:2], block)
    expect("all_to_all", world.all_to_all(np.array([100 * r + j for j in range(n)], np.uint32)),
           np.array([100 * i + r for i in range(n)], np.uint32))
    with world.split(0, key=-r) as reversed_world:
        if reversed_world.rank != n - 1 - r:
            failures.append(f"split: rank {reversed_world.rank}, want {n - 1 - r}")
    with world.all_reduce(np.ones(5, np.float16), "sum", wait=False) as request:
        expect("non-blocking all_reduce", request.wait(), np.full(5, n, np.float16))
    world.barrier()
    failures += check_path(world)
    failures += check_hosts(world)
    return failures


def check_hosts(world):
    """Every rank runs on this host: it is its own host communicator, in the same order."""
    failures = []
    got = (world.local_rank, world.local_size, world.num_hosts)
    if got != (world.rank, world.size, 1):
        failures.append(f"local_rank, local_size, num_hosts: got {got}, want {(world.rank, world.size, 1)}")
    n = world.size
    with world.split_host() as host:
        summed = host.all_reduce(np.full(3, world.rank + 1, np.int64))
        got = (host.rank, host.size, host.path, host.num_hosts)
        if got != (world.rank, n, "shared_memory", 1) or not np.array_equal(summed, np.full(3, n * (n + 1) // 2)):
            failures.append(f"split_host: got {got} and all_reduce {summed}")
    return failures


def check_path(world):
    """Ranks launched on one host share memory: the path and the algorithms show it."""
    failures = []
    got = (world.path, world.algorithm("all_reduce", 8), world.algorithm("all_reduce", 64 << 20),
           world.algorithm("broadcast", 8))
    want = ("shared_memory", "shm_direct", "shm_split", "shm")
    if got != want:
        failures.append(f"path and algorithms: got {got}, want {want}")
    world.configure(allreduce="ring")  # point to point, even on shared memory
    ring = world.algorithm("all_reduce", 8)
    summed = world.all_reduce(np.full(3, world.rank + 1, np.int64))
    world.configure(allreduce="shared_memory")
    forced = world.algorithm("all_reduce", 8)
    n = world.size
    if (ring, forced) != ("ring", "shm_direct") or not np.array_equal(summed, np.full(3, n * (n + 1) // 2)):
        failures.append(f"configure: ring gave {ring} and {summed}, shared_memory gave {forced}")
    return failures


def main():
    with distribute.Cluster.resolve() as cluster, distribute.Context(cluster) as context:
        failures = check(context.world)
        for failure in failures:
            print(f"rank {context.rank}: {failure}")
        print(f"rank {context.rank}: {'all collectives correct' if not failures else 'FAILED'}")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
