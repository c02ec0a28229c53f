"""Strategies, replica contexts, merge calls and input contexts in one process
(a MIRRORED strategy of two logical CPU replicas runs two real replica threads)."""
import threading

import numpy as np
import pytest

import distribute
from distribute import constants as C


class ReplicaFailure(Exception):
    pass


@pytest.fixture
def mirrored():
    with distribute.Strategy(kind="mirrored", num_cpu_devices=2) as strategy:
        yield strategy


def test_bad_option_raises_invalid_argument_with_the_c_message():
    with pytest.raises(distribute.InvalidArgumentError) as caught:
        distribute.Strategy(kind="mirrored", num_cpu_devices=2, timeout_seconds=-1.0)
    error = caught.value
    assert error.status == C.ERR_INVALID_ARGUMENT
    assert error.status_name == "DIST_ERR_INVALID_ARGUMENT"
    assert "timeout_seconds" in error.message
    assert error.message in str(error)


def test_bad_kind_and_device_count_are_errors():
    with pytest.raises(distribute.InvalidArgumentError) as caught:
        distribute.Strategy(kind=42)
    assert "42" in caught.value.message
    with pytest.raises(distribute.InvalidArgumentError):
        distribute.Strategy(kind="one_device", num_cpu_devices=2)


def test_properties_of_a_local_mirrored_strategy(mirrored):
    assert mirrored.kind == "mirrored"
    assert mirrored.num_replicas_in_sync == 2
    assert mirrored.num_local_replicas == 2
    assert len(mirrored.devices) == 2 and mirrored.devices[0] != mirrored.devices[1]
    assert all("CPU" in d for d in mirrored.devices)
    assert mirrored.cluster is None
    assert mirrored.task_type is None and mirrored.task_id == -1
    assert mirrored.worker_index == (0, 1)


def test_strategy_over_a_context_borrows_its_cluster(context):
    with distribute.Strategy(context, "multi_worker_mirrored", num_cpu_devices=2) as strategy:
        assert strategy.num_replicas_in_sync == 2
        cluster = strategy.cluster
        assert cluster is not None and cluster.jobs == []
        cluster.close()  # borrowed: only detached
        assert strategy.cluster.jobs == []


def test_cross_device_ops_on_cpu_replicas():
    assert [distribute.strategy.CROSS_DEVICE_OPS[n] for n in
            ("auto", "nccl_all_reduce", "hierarchical_copy", "reduction_to_one_device")] == [0, 1, 2, 3]
    # AUTO resolves to REDUCTION_TO_ONE_DEVICE on CPU replicas, for every kind.
    for kind, devices in (("one_device", None), ("mirrored", 2), ("central_storage", 2)):
        with distribute.Strategy(kind=kind, num_cpu_devices=devices) as strategy:
            assert strategy.cross_device_ops == "reduction_to_one_device", kind
    for ops in ("auto", C.CROSS_DEVICE_OPS_AUTO, "reduction_to_one_device"):
        with distribute.Strategy(kind="mirrored", num_cpu_devices=2, cross_device_ops=ops) as strategy:
            assert strategy.cross_device_ops == "reduction_to_one_device"
    for device in ("CPU:0", "/cpu:0", "/device:CPU:0"):
        with distribute.Strategy(kind="mirrored", num_cpu_devices=2, cross_device_ops="reduction_to_one_device",
                                 reduce_to_device=device) as strategy:
            assert strategy.cross_device_ops == "reduction_to_one_device"
            values = [np.array([1.5, -2.0], np.float32), np.array([0.5, 4.0], np.float32)]
            np.testing.assert_array_equal(strategy.reduce("sum", values), [2.0, 2.0])


def test_cross_device_ops_of_multi_worker_mirrored(context):
    with distribute.Strategy(context, "multi_worker_mirrored", num_cpu_devices=2,
                             cross_device_ops="reduction_to_one_device", reduce_to_device="CPU:0") as strategy:
        assert strategy.cross_device_ops == "reduction_to_one_device"
    with pytest.raises(distribute.InvalidArgumentError) as caught:
        distribute.Strategy(context, "multi_worker_mirrored", num_cpu_devices=2, cross_device_ops="nccl_all_reduce")
    assert "combines GPU replicas, and this strategy's replicas are CPU devices" in caught.value.message


def invalid_strategy(**options):
    with pytest.raises(distribute.InvalidArgumentError) as caught:
        distribute.Strategy(**options)
    assert caught.value.status == C.ERR_INVALID_ARGUMENT
    assert caught.value.message == distribute.last_error()
    return caught.value.message


def test_cross_device_ops_and_reduce_to_device_refused():
    for ops in ("nccl_all_reduce", "hierarchical_copy"):
        message = invalid_strategy(kind="mirrored", num_cpu_devices=2, cross_device_ops=ops)
        assert "combines GPU replicas, and this strategy's replicas are CPU devices" in message
    message = invalid_strategy(kind="mirrored", num_cpu_devices=2, cross_device_ops=7)
    assert "cross_device_ops 7 is not one of" in message
    for kind, devices in (("one_device", None), ("central_storage", 2)):
        message = invalid_strategy(kind=kind, num_cpu_devices=devices, cross_device_ops="reduction_to_one_device")
        assert "is for MIRRORED and MULTI_WORKER_MIRRORED" in message
    with distribute.Cluster.from_json('{"cluster": {"ps": ["127.0.0.1:1"]}}') as cluster:
        message = invalid_strategy(kind="parameter_server", cluster=cluster, token="t", cross_device_ops="auto")
        assert "is for MIRRORED and MULTI_WORKER_MIRRORED" in message
    message = invalid_strategy(kind="mirrored", num_cpu_devices=2, cross_device_ops="reduction_to_one_device",
                               reduce_to_device="GPU:0")
    assert '"GPU:0" names a GPU' in message
    for ops in (None, "auto"):
        message = invalid_strategy(kind="mirrored", num_cpu_devices=2, cross_device_ops=ops, reduce_to_device="CPU:0")
        assert "reduce_to_device" in message and "REDUCTION_TO_ONE_DEVICE" in message
    with pytest.raises(KeyError):
        distribute.Strategy(kind="mirrored", num_cpu_devices=2, cross_device_ops="ring")


NUM_PACKS_REFUSED = ("num_packs is for cross_device_ops NcclAllReduce and HierarchicalCopyAllReduce, "
                     "and this strategy's are ReductionToOneDevice")


def test_num_packs_refused_on_cpu_replicas():
    # CPU replicas always reduce to one device: num_packs (NCCL / hierarchical copy only)
    # is refused whatever its value, the cross-device ops given or chosen by AUTO.
    for num_packs in (1, 4, 64):
        message = invalid_strategy(kind="mirrored", num_cpu_devices=2, num_packs=num_packs)
        assert NUM_PACKS_REFUSED in message
    for ops in ("auto", "reduction_to_one_device"):
        message = invalid_strategy(kind="mirrored", num_cpu_devices=2, cross_device_ops=ops, num_packs=2)
        assert NUM_PACKS_REFUSED in message
    for kind, devices in (("one_device", None), ("central_storage", 2)):
        message = invalid_strategy(kind=kind, num_cpu_devices=devices, num_packs=2)
        assert NUM_PACKS_REFUSED in message


def test_num_packs_refused_by_multi_worker_mirrored_on_cpu_replicas(context):
    with pytest.raises(distribute.InvalidArgumentError) as caught:
        distribute.Strategy(context, "multi_worker_mirrored", num_cpu_devices=2, num_packs=2)
    assert caught.value.status == C.ERR_INVALID_ARGUMENT
    assert NUM_PACKS_REFUSED in caught.value.message


def test_nccl_communication_on_cpu_replicas_is_unsupported():
    with pytest.raises(distribute.DistError) as caught:
        distribute.Strategy(kind="mirrored", num_cpu_devices=2, communication="nccl")
    assert caught.value.status == C.ERR_UNSUPPORTED
    assert "NCCL" in caught.value.message


def test_cpu_replicas_have_no_cuda_device_or_stream(mirrored):
    assert mirrored.run(lambda replica: (replica.device, replica.stream)) == [(-1, None), (-1, None)]
    with distribute.Strategy() as one:
        assert one.run(lambda replica: (replica.device, replica.stream)) == [(-1, None)]


def test_run_calls_fn_once_per_replica_on_distinct_threads(mirrored):
    main = threading.get_ident()

    def fn(replica, offset):
        return (replica.replica_id + offset, replica.local_index, replica.num_replicas_in_sync,
                replica.strategy is mirrored, threading.get_ident())

    results = mirrored.run(fn, args=(10,))
    assert [r[:4] for r in results] == [(10, 0, 2, True), (11, 1, 2, True)]
    threads = {r[4] for r in results}
    assert len(threads) == 2 and main not in threads


def test_replica_all_reduce_and_local_results(mirrored):
    def fn(replica):
        data = np.full(5, replica.replica_id + 1, np.float64)
        replica.all_reduce(data, "sum")
        replica.set_result(data * replica.local_index)

    mirrored.run(fn)
    first, second = mirrored.local_results()
    np.testing.assert_array_equal(first, np.zeros(5))
    np.testing.assert_array_equal(second, np.full(5, 3.0))


def test_exception_in_one_replica_surfaces_from_run(mirrored):
    def fn(replica):
        if replica.local_index == 1:
            raise ReplicaFailure("replica 1 gave up")
        replica.all_reduce(np.ones(4, np.float32))  # released with ABORTED when replica 1 fails

    with pytest.raises(ReplicaFailure, match="replica 1 gave up"):
        mirrored.run(fn)
    # The strategy is still usable afterwards.
    assert mirrored.run(lambda replica: replica.local_index) == [0, 1]


def test_library_error_in_a_replica_keeps_its_status(mirrored):
    def fn(replica):
        replica.all_reduce(np.ones(3 + replica.local_index, np.float32))  # counts differ: both fail

    with pytest.raises(distribute.DistError) as caught:
        mirrored.run(fn)
    assert caught.value.status < 0 and caught.value.message


def test_run_is_not_reentrant(mirrored):
    def fn(replica):
        mirrored.run(lambda r: None)

    with pytest.raises(distribute.InvalidArgumentError, match="already running"):
        mirrored.run(fn)


def test_merge_call_sees_every_value_and_returns_to_every_replica(mirrored):
    seen = []

    def merge(strategy, values):
        seen.append(threading.get_ident())
        assert strategy is mirrored
        return sum(values) * 10

    def fn(replica):
        return replica.merge_call(merge, replica.local_index + 1)

    assert mirrored.run(fn) == [30, 30]
    assert len(seen) == 1


def test_exception_in_merge_fn_surfaces_from_run(mirrored):
    def merge(strategy, values):
        raise ReplicaFailure(f"merge of {values}")

    with pytest.raises(ReplicaFailure, match=r"merge of \[0, 1\]"):
        mirrored.run(lambda replica: replica.merge_call(merge, replica.local_index))


def test_reduce_over_replicas(mirrored):
    values = [np.array([1.0, 2.0], np.float32), np.array([3.0, 6.0], np.float32)]
    np.testing.assert_array_equal(mirrored.reduce("sum", values), [4.0, 8.0])
    np.testing.assert_array_equal(mirrored.reduce("mean", values), [2.0, 4.0])
    rows = [np.arange(6, dtype=np.float64).reshape(3, 2), np.ones((1, 2))]
    np.testing.assert_array_equal(mirrored.reduce("mean", rows, axis=0), [7 / 4, 10 / 4])


def test_reduce_inside_a_replica_is_refused(mirrored):
    def fn(replica):
        mirrored.reduce("sum", [np.ones(2), np.ones(2)])

    with pytest.raises(distribute.InvalidArgumentError):
        mirrored.run(fn)


def test_split_batch_returns_views(mirrored):
    batch = np.arange(15, dtype=np.int32).reshape(5, 3)
    first, second = mirrored.split_batch(batch)
    np.testing.assert_array_equal(first, batch[:3])
    np.testing.assert_array_equal(second, batch[3:])
    assert np.shares_memory(first, batch) and np.shares_memory(second, batch)


def test_batch_all_reduce_in_place(mirrored):
    per_replica = [[np.full(3, 1.0), np.full(1000, 2, np.int64)],
                   [np.full(3, 5.0), np.full(1000, 4, np.int64)]]
    mirrored.batch_all_reduce("sum", per_replica)
    for tensors in per_replica:
        np.testing.assert_array_equal(tensors[0], np.full(3, 6.0))
        np.testing.assert_array_equal(tensors[1], np.full(1000, 6))
    with pytest.raises(ValueError):
        mirrored.batch_all_reduce("sum", [[np.ones(2)]])


def test_input_contexts():
    with distribute.InputContext.create(3, 1, 6) as inputs:
        assert (inputs.num_input_pipelines, inputs.input_pipeline_id, inputs.num_replicas_in_sync) == (3, 1, 6)
        assert inputs.get_per_replica_batch_size(24) == 4
        with pytest.raises(distribute.InvalidArgumentError):
            inputs.get_per_replica_batch_size(25)
        np.testing.assert_array_equal(inputs.shard_files(8), [1, 4, 7])
        with pytest.raises(distribute.InvalidArgumentError):
            inputs.shard_files(1)
        assert inputs.shard_range(10) == range(4, 7)
        assert inputs.shard_range(1) == range(1, 1)
    with pytest.raises(distribute.InvalidArgumentError):
        distribute.InputContext.create(2, 2, 1)


def test_strategy_input_context(mirrored):
    with mirrored.input_context() as inputs:
        assert (inputs.num_input_pipelines, inputs.input_pipeline_id, inputs.num_replicas_in_sync) == (1, 0, 2)


def test_closed_handles_raise_the_library_error(mirrored):
    contexts = mirrored.run(lambda replica: replica)
    with pytest.raises(distribute.InvalidArgumentError):
        contexts[0].replica_id  # valid only during its call
    with pytest.raises(distribute.InvalidArgumentError):
        contexts[0].device
    with pytest.raises(distribute.InvalidArgumentError):
        contexts[0].stream
    strategy = distribute.Strategy()
    strategy.close()
    strategy.close()
    with pytest.raises(distribute.InvalidArgumentError):
        strategy.num_replicas_in_sync
