"""The flight recorder (dist_context_dump) on a one-rank context."""
import numpy as np
import pytest

import distribute


def test_dump_after_two_all_reduces_and_a_barrier(context):
    world = context.world
    # A deterministic float sum runs as an all_to_all and an all_gather, which the
    # recorder lists instead; pin the default order whatever DIST_DETERMINISTIC says.
    world.configure(deterministic=False)
    data = np.arange(1, 6, dtype=np.float32)
    world.all_reduce(data.copy(), "sum")
    world.all_reduce(data.copy(), "max")
    world.barrier()
    dump = context.dump()
    assert isinstance(dump, dict)
    assert (dump["rank"], dump["size"]) == (0, 1)
    assert dump["lost_peers"] == []
    [comm] = dump["communicators"]
    assert (comm["id"], comm["path"], comm["rank"], comm["size"]) == (0, "self", 0, 1)
    assert comm["calls_started"] == comm["calls_finished"] == 3
    calls = comm["calls"]
    assert [c["seq"] for c in calls] == [0, 1, 2]
    first, last = calls[0], calls[-1]
    assert (first["kind"], first["count"], first["dtype"], first["op"]) == ("all_reduce", 5, "f32", "sum")
    assert (first["state"], first["status"]) == ("done", "DIST_OK")
    assert (last["kind"], last["state"]) == ("barrier", "done")


def test_dump_of_a_closed_context_is_refused():
    with distribute.Cluster.from_json("{}") as cluster:
        context = distribute.Context(cluster)
        context.close()
        with pytest.raises(distribute.InvalidArgumentError) as caught:
            context.dump()
    assert "context" in caught.value.message
