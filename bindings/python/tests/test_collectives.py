"""Every collective and the request protocol on a single-process context (the
multi-process run is test_multiprocess.py)."""
import numpy as np
import pytest

import distribute


def test_rank_and_size(context):
    assert (context.rank, context.size) == (0, 1)
    assert (context.world.rank, context.world.size) == (0, 1)


def test_each_collective(context):
    world = context.world
    data = np.array([3.0, -1.0, 2.5], np.float32)
    out = np.zeros(3, np.float32)
    assert world.all_reduce(data, "mean", out=out) is out and np.array_equal(out, data)
    assert np.array_equal(world.reduce(data, "min", root=0, out=np.zeros(3, np.float32)), data)
    assert np.array_equal(world.broadcast(data.copy(), root=0), data)
    assert np.array_equal(world.all_gather(data, np.zeros(3, np.float32)), data)
    assert np.array_equal(world.reduce_scatter(data, np.zeros(3, np.float32)), data)
    assert np.array_equal(world.all_to_all(data, np.zeros(3, np.float32)), data)
    inplace = data.copy()
    world.reduce_scatter(inplace)
    assert np.array_equal(inplace, data)
    world.barrier()


def test_requests(context):
    world = context.world
    data = np.arange(10, dtype=np.int64)
    with world.all_reduce(data, "sum", wait=False) as request:
        assert np.array_equal(request.wait(timeout=30), np.arange(10))
        assert request.test()
    with world.barrier(wait=False) as request:
        assert request.wait() is None


def test_wrong_sizes_name_the_problem(context):
    world = context.world
    with pytest.raises(distribute.InvalidArgumentError) as caught:
        world.all_reduce(np.zeros(4, np.float32), out=np.zeros(5, np.float32))
    assert "count" in caught.value.message
    with pytest.raises(distribute.InvalidArgumentError):
        world.all_reduce(np.zeros(4, np.float32), 77)
    with pytest.raises(distribute.InvalidArgumentError):
        world.broadcast(np.zeros(2, np.int32), root=5)


def test_configure(context):
    context.world.configure(timeout_ms=5000, allreduce="ring")
    data = np.ones(64, np.float32)
    context.world.all_reduce(data)
    assert data.sum() == 64
    with pytest.raises(distribute.InvalidArgumentError):
        context.world.configure(allreduce=42)


def test_hosts_of_one_rank(context):
    world = context.world
    assert (world.local_rank, world.local_size, world.num_hosts) == (0, 1, 1)
    with world.split_host() as host:
        assert (host.rank, host.size, host.local_rank, host.local_size, host.num_hosts) == (0, 1, 0, 1, 1)
        assert host.path == "self"
        data = np.array([4, -2, 9], np.int32)
        assert np.array_equal(host.all_reduce(data.copy(), "max"), data)
    assert host.closed and not world.closed
    world.all_reduce(np.ones(2, np.float32))  # the world outlives its host communicator


def test_hosts_of_a_closed_communicator_raise(context):
    host = context.world.split_host()
    host.close()
    for query in ("local_rank", "local_size", "num_hosts"):
        with pytest.raises(distribute.InvalidArgumentError) as caught:
            getattr(host, query)
        assert "comm" in caught.value.message
    with pytest.raises(distribute.InvalidArgumentError) as caught:
        host.split_host()
    assert "comm" in caught.value.message


def test_path_and_algorithm_of_one_rank(context):
    world = context.world
    assert world.path == "self"
    for name in distribute.comm.COLLECTIVES:
        assert world.algorithm(name, 8) == "self"
    assert world.algorithm(distribute.constants.COLLECTIVE_BARRIER, 0) == "self"
    with pytest.raises(distribute.InvalidArgumentError) as caught:
        world.algorithm(8, 8)  # one past DIST_COLLECTIVE_ALL_TO_ALL_V
    assert caught.value.status == distribute.constants.ERR_INVALID_ARGUMENT
    assert "collective 8 is not a DIST_COLLECTIVE_* value" in caught.value.message
    assert caught.value.message == distribute.last_error()
    with pytest.raises(KeyError):
        world.algorithm("gather", 8)
    # One rank shares no segment: the shared-memory all-reduce is refused.
    with pytest.raises(distribute.UnsupportedError) as caught:
        world.configure(allreduce="shared_memory")
    assert "DIST_ALLREDUCE_SHARED_MEMORY" in caught.value.message
    # One rank spans no hosts: the hierarchical all-reduce is refused too.
    with pytest.raises(distribute.UnsupportedError) as caught:
        world.configure(allreduce="hierarchical")
    assert caught.value.status == distribute.constants.ERR_UNSUPPORTED
    assert "DIST_ALLREDUCE_HIERARCHICAL" in caught.value.message


def test_device_path_before_any_call_on_cuda_memory(context):
    assert (distribute.constants.COMM_PATH_NCCL, distribute.constants.COMM_PATH_STAGED) == (4, 5)
    assert (distribute.comm.PATHS[4], distribute.comm.PATHS[5]) == ("nccl", "staged")
    # Nothing is chosen until the first call on CUDA memory (never, without CUDA).
    with pytest.raises(distribute.DistError) as caught:
        context.world.device_path
    assert caught.value.status == distribute.constants.ERR_UNAVAILABLE
    assert "CUDA" in caught.value.message
    assert caught.value.message == distribute.last_error()


def test_stats_count_calls_bytes_and_time(context):
    world = context.world
    world.reset_stats()  # the fixture's context is fresh, but say so
    assert world.stats() == []
    data = np.arange(6, dtype=np.float32)
    for _ in range(3):
        world.all_reduce(data.copy(), "sum")
    world.broadcast(np.zeros(5, np.int64), root=0)
    world.all_to_all_v(np.arange(4, dtype=np.int32), [4], np.zeros(4, np.int32), [4])
    world.barrier()
    rows = {row.collective: row for row in world.stats()}
    assert set(rows) == {"all_reduce", "broadcast", "all_to_all_v", "barrier"}
    for row in rows.values():
        assert isinstance(row, distribute.CommStat)
        assert (row.path, row.algorithm, row.failed) == ("self", "self", 0)
        assert (row.timed_calls, row.time_ns) == (0, 0)  # timing is off by default
    assert (rows["all_reduce"].calls, rows["all_reduce"].bytes) == (3, 3 * 6 * 4)
    assert (rows["broadcast"].calls, rows["broadcast"].bytes) == (1, 5 * 8)
    assert (rows["all_to_all_v"].calls, rows["all_to_all_v"].bytes) == (1, 4 * 4)
    assert (rows["barrier"].calls, rows["barrier"].bytes) == (1, 0)

    world.configure(timing=True)
    world.reset_stats()
    assert world.stats() == []
    for _ in range(4):
        world.all_gather(data, np.zeros(6, np.float32))
    [row] = world.stats()
    assert (row.collective, row.path, row.algorithm) == ("all_gather", "self", "self")
    assert (row.calls, row.bytes, row.failed) == (4, 4 * 6 * 4, 0)
    assert row.timed_calls == row.calls and row.time_ns > 0

    world.configure(timing=False)
    world.reset_stats()
    world.all_reduce(data.copy())
    [row] = world.stats()
    assert (row.calls, row.timed_calls, row.time_ns) == (1, 0, 0)


def test_stats_refuse_bad_timing_and_closed_communicators(context):
    with pytest.raises(distribute.InvalidArgumentError) as caught:
        context.world.configure(timing=2)
    assert caught.value.status == distribute.constants.ERR_INVALID_ARGUMENT
    assert "timing 2 must be 0 or 1" in caught.value.message
    host = context.world.split_host()
    host.close()
    for call in (host.stats, host.reset_stats):
        with pytest.raises(distribute.InvalidArgumentError) as caught:
            call()
        assert "comm" in caught.value.message


def test_stall_warning_and_deterministic_options(context):
    world = context.world
    world.configure(stall_warning_ms=5000, deterministic=1)
    data = np.array([1.5, -2.0, 3.25, 0.5, 8.0], np.float32)
    out = world.all_reduce(data.copy(), "sum")
    # One rank: the sum is the rank's own values, bit for bit, in the fixed order too.
    assert out.dtype == np.float32 and np.array_equal(out, data)
    world.configure(stall_warning_ms=0, deterministic=False)  # 0: no warning; back to the fastest order
    assert np.array_equal(world.all_reduce(data.copy(), "sum"), data)


def test_bad_stall_warning_and_deterministic_are_refused(context):
    with pytest.raises(distribute.InvalidArgumentError) as caught:
        context.world.configure(stall_warning_ms=-1)
    assert caught.value.status == distribute.constants.ERR_INVALID_ARGUMENT
    assert "stall_warning_ms -1 must be 0 (no warning) or positive" in caught.value.message
    with pytest.raises(distribute.InvalidArgumentError) as caught:
        context.world.configure(deterministic=2)  # an int reaches the library as is
    assert caught.value.status == distribute.constants.ERR_INVALID_ARGUMENT
    assert "deterministic 2 must be 0 or 1" in caught.value.message
