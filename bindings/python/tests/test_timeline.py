"""The context's timeline option (dist_context_options_t.timeline) on a one-rank context."""
import json

import numpy as np
import pytest

import distribute


def test_timeline_records_the_collectives(tmp_path):
    prefix = tmp_path / "run"
    data = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)
    with distribute.Cluster.from_json("{}") as cluster, distribute.Context(cluster, timeline=prefix) as context:
        context.world.all_reduce(data)
        context.world.barrier()
    # Closing the context closed the array: the file is whole JSON now.
    events = json.loads((tmp_path / "run.0.json").read_text())
    assert isinstance(events, list)
    metadata = [e for e in events if e.get("name") == "libdistribute"]
    assert len(metadata) == 1 and metadata[0]["ph"] == "M" and metadata[0]["args"]["rank"] == 0
    calls = [e for e in events if e.get("name") == "all_reduce"]
    assert len(calls) == 1
    call = calls[0]
    assert (call["cat"], call["ph"]) == ("collective", "X")
    assert call["args"]["bytes"] == data.size * 4
    assert call["args"]["path"] == "self"
    assert call["args"]["dtype"] == "f32"
    assert any(e.get("name") == "barrier" and e.get("cat") == "collective" for e in events)


def test_timeline_as_a_str_prefix(tmp_path):
    with distribute.Cluster.from_json("{}") as cluster, \
            distribute.Context(cluster, timeline=str(tmp_path / "str")) as context:
        context.world.barrier()
    assert isinstance(json.loads((tmp_path / "str.0.json").read_text()), list)


def test_empty_timeline_is_refused():
    with distribute.Cluster.from_json("{}") as cluster:
        with pytest.raises(distribute.InvalidArgumentError) as caught:
            distribute.Context(cluster, timeline="")
    assert "timeline is empty" in caught.value.message


def test_timeline_in_a_missing_directory_names_the_file(tmp_path):
    prefix = tmp_path / "missing" / "run"
    with distribute.Cluster.from_json("{}") as cluster:
        with pytest.raises(distribute.InvalidArgumentError) as caught:
            distribute.Context(cluster, timeline=prefix)
    assert f"cannot create '{prefix}.0.json'" in caught.value.message
