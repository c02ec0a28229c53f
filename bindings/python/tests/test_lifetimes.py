"""Handles close once, in the right order, and a closed handle is an error, not a crash."""
import gc

import numpy as np
import pytest

import distribute


def test_close_twice_is_a_no_op():
    cluster = distribute.Cluster.from_json("{}")
    cluster.close()
    cluster.close()
    assert cluster.closed


def test_use_after_close_raises_the_library_error():
    cluster = distribute.Cluster.from_json('{"cluster": {"worker": ["a:1"]}}')
    cluster.close()
    with pytest.raises(distribute.InvalidArgumentError) as caught:
        cluster.num_tasks("worker")
    assert "NULL" in caught.value.message or "null" in caught.value.message


def test_closing_the_context_closes_its_communicators_first():
    cluster = distribute.Cluster.from_json("{}")
    context = distribute.Context(cluster)
    world = context.world
    child = world.split(0)
    assert child.size == 1
    context.close()
    assert child.closed and world.closed
    child.close()  # after its context: still a no-op
    context.close()
    with pytest.raises(distribute.DistError):
        child.all_reduce(np.ones(3, np.float32))
    cluster.close()


def test_negative_color_gives_no_communicator(context):
    assert context.world.split(-1) is None


def test_world_survives_its_python_object(context):
    world = context.world
    del world
    gc.collect()
    data = np.arange(4, dtype=np.int32)
    context.world.all_reduce(data)
    assert list(data) == [0, 1, 2, 3]


def test_request_close_waits_and_keeps_arrays_alive(context):
    data = np.arange(1000, dtype=np.float64)
    request = context.world.all_reduce(data, "max", wait=False)
    del data
    gc.collect()
    result = request.wait()
    assert result[999] == 999.0
    request.close()
    request.close()


def test_garbage_collection_releases_everything():
    for _ in range(200):
        cluster = distribute.Cluster.from_json("{}")
        context = distribute.Context(cluster)
        context.world.split(1)
        del cluster, context
    gc.collect()


def test_abort_fails_later_calls(context):
    context.abort("test says stop")
    with pytest.raises(distribute.PeerError) as caught:
        context.world.barrier()
    assert caught.value.status == distribute.constants.ERR_ABORTED


def test_a_garbage_cycle_is_finalized_in_dependency_order():
    # The cyclic collector runs finalizers in any order: whichever runs first must
    # close the request, then the communicator, then the context.
    for _ in range(20):
        cluster = distribute.Cluster.from_json("{}")
        context = distribute.Context(cluster)
        child = context.world.split(0)
        request = child.all_reduce(np.ones(4, np.float32), wait=False)
        cycle = {"context": context, "child": child, "request": request}
        cycle["self"] = cycle
        del context, child, request, cycle
        gc.collect()
        cluster.close()
