"""The PARAMETER_SERVER strategy against parameter servers started in this process:
variables placed and sharded over them, dense and sparse updates checked against
numpy references, the server-side optimizers, checkpoints of real variables, and
errors mapped with the C message."""
import json
import os

import numpy as np
import pytest

import distribute
from distribute import constants as C

TOKEN = "python-ps-strategy-token"


@pytest.fixture
def servers():
    """Two in-process servers and a worker's cluster whose "ps" job holds them."""
    with distribute.Server(address="127.0.0.1:0", token=TOKEN) as a, \
            distribute.Server(address="127.0.0.1:0", token=TOKEN) as b:
        spec = {"cluster": {"ps": [a.address, b.address], "worker": ["127.0.0.1:1"]},
                "task": {"type": "worker", "index": 0}}
        with distribute.Cluster.from_json(json.dumps(spec)) as cluster:
            yield (a, b), cluster


@pytest.fixture
def strategy(servers):
    _, cluster = servers
    with distribute.Strategy(kind="parameter_server", cluster=cluster, token=TOKEN) as s:
        yield s


def test_strategy_queries(servers, strategy):
    _, cluster = servers
    assert strategy.kind == "parameter_server"
    assert strategy.num_replicas_in_sync == 1 and strategy.num_local_replicas == 1
    assert strategy.cluster.jobs == cluster.jobs


def test_dense_updates_and_placement(servers, strategy):
    (a, b), _ = servers
    initial = np.arange(12, dtype=np.float32).reshape(4, 3)
    with strategy.variable(initial, name="dense", optimizer={"kind": "sgd", "learning_rate": 0.5},
                           num_shards=2) as w:
        assert w.num_copies == 0
        assert w.shards == [(0, 0, 2), (1, 2, 2)]  # round robin, two rows each
        np.testing.assert_array_equal(w.read(), initial)
        gradient = np.full((4, 3), 2.0, np.float32)
        gradient[1] = -4.0
        w.apply_gradient(gradient)
        expected = initial - np.float32(0.5) * gradient
        np.testing.assert_array_equal(w.read(), expected)
        w.assign_add(np.ones((4, 3), np.float32))
        np.testing.assert_array_equal(w.read(), expected + 1)
        held = [v["name"] for server in (a, b) for v in server.describe()["variables"]]
        assert held.count("dense") == 2  # one shard on each server


def test_sparse_rows(strategy):
    table = np.arange(20, dtype=np.float64).reshape(5, 4)
    with strategy.variable(table, name="embedding", optimizer={"kind": "sgd", "learning_rate": 0.25},
                           max_shard_bytes=2 * 4 * 8) as embedding:
        assert len(embedding.shards) == 3 and sum(rows for _, _, rows in embedding.shards) == 5
        np.testing.assert_array_equal(embedding.read_rows([4, 0, 4]), table[[4, 0, 4]])
        reference = table.copy()
        values = np.arange(8, dtype=np.float64).reshape(2, 4) + 1
        embedding.add_rows([1, 1], values)  # a row listed twice gets both
        reference[1] += values[0] + values[1]
        gradients = np.full((2, 4), 4.0)
        embedding.apply_rows([3, 0], gradients)
        reference[[3, 0]] -= 0.25 * gradients
        np.testing.assert_array_equal(embedding.read(), reference)
        out = np.empty((1, 4))
        assert embedding.read_rows([2], out=out) is out
        np.testing.assert_array_equal(out[0], reference[2])
        with pytest.raises(distribute.InvalidArgumentError) as outside:
            embedding.read_rows([5])
        assert "5" in outside.value.message


def test_adam_on_the_servers_matches_the_formula(strategy):
    lr, beta_1, beta_2, epsilon = 0.1, 0.9, 0.999, 1e-7
    with strategy.variable(np.ones(3), name="adam", optimizer={"kind": "adam", "learning_rate": lr}) as v:
        value, m, s = np.ones(3), np.zeros(3), np.zeros(3)
        for step, g in enumerate((np.array([1.0, -2.0, 0.5]), np.array([0.5, 0.5, -1.0])), start=1):
            v.apply_gradient(g)
            m = beta_1 * m + (1 - beta_1) * g
            s = beta_2 * s + (1 - beta_2) * g * g
            corrected = lr * np.sqrt(1 - beta_2 ** step) / (1 - beta_1 ** step)
            value = value - corrected * m / (np.sqrt(s) + epsilon)
        np.testing.assert_allclose(v.read(), value, rtol=1e-12, atol=1e-12)


def test_replica_context_updates(strategy):
    with strategy.variable(np.zeros(4, np.int64), name="counter") as counter:
        strategy.run(lambda replica: counter.assign_add(np.arange(4, dtype=np.int64), replica))
        strategy.run(lambda replica: counter.assign_add(np.arange(4, dtype=np.int64), replica))
        np.testing.assert_array_equal(counter.read(), 2 * np.arange(4))


def test_errors(servers, strategy):
    _, cluster = servers
    with strategy.variable(np.zeros(2, np.float32), name="plain") as plain:
        with pytest.raises(distribute.DistError) as no_optimizer:
            plain.apply_gradient(np.ones(2, np.float32))
        assert "plain" in no_optimizer.value.message
    with pytest.raises(distribute.InvalidArgumentError) as two:
        strategy.variable(np.zeros((4, 2)), name="both", num_shards=2, max_shard_bytes=16)
    assert "give one partitioner" in two.value.message
    with pytest.raises(distribute.InvalidArgumentError) as misplaced:
        distribute.Strategy(kind="mirrored", cluster=cluster)
    assert "PARAMETER_SERVER" in misplaced.value.message
    with pytest.raises(distribute.InvalidArgumentError) as no_cluster:
        distribute.Strategy(kind="parameter_server", token=TOKEN)
    assert "'ps' job" in no_cluster.value.message
    with distribute.Strategy(kind="one_device") as local, local.variable(np.zeros(2), name="local") as v:
        assert v.shards == []
        with pytest.raises(distribute.InvalidArgumentError):
            v.apply_gradient(np.ones(2))


def test_checkpoint_of_variables(servers, strategy, tmp_path):
    _, cluster = servers
    root = str(tmp_path)
    with strategy.variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="saved", num_shards=2) as v:
        path = distribute.checkpoint_save(cluster, root, 1, token=TOKEN, timeout_ms=20000)
        v.assign(np.zeros((3, 2), np.float32))
        assert distribute.checkpoint_restore(cluster, root, token=TOKEN, timeout_ms=20000) == path
        np.testing.assert_array_equal(v.read(), np.arange(6, dtype=np.float32).reshape(3, 2))
        assert os.path.isfile(os.path.join(path, "shard-00001-of-00002.ckpt"))


def test_placement_partitioners_and_colocation(servers):
    _, cluster = servers
    with distribute.Strategy(kind="parameter_server", cluster=cluster, token=TOKEN, placement="greedy_bytes") as s:
        big = s.variable(np.zeros((8, 4)), name="big")          # 256 bytes: server 0
        small = s.variable(np.zeros(1), name="small")           # the fewest bytes: server 1
        other = s.variable(np.zeros(1), name="other")           # 8 < 256: server 1 again
        near = s.variable(np.zeros(2), name="near", colocate_with=big)
        assert [v.shards[0][0] for v in (big, small, other, near)] == [0, 1, 1, 0]
        # MinSizePartitioner: 160 bytes / 40 = 4 shards, capped at 3.
        split = s.variable(np.zeros((10, 4), np.float32), name="split", min_shard_bytes=40, max_shards=3)
        assert [rows for _, _, rows in split.shards] == [4, 3, 3]
        for v in (big, small, other, near, split):
            v.close()


def test_adagrad_and_synchronous_gradients(strategy):
    lr, initial_accumulator, epsilon = 0.5, 0.1, 1e-7
    with strategy.variable(np.full(2, 3.0), name="adagrad", optimizer={"kind": "adagrad", "learning_rate": lr}) as v:
        value, accumulator = np.full(2, 3.0), np.full(2, initial_accumulator)
        for g in (np.array([1.0, -2.0]), np.array([0.5, 4.0])):
            v.apply_gradient(g)
            accumulator += g * g
            value -= lr * g / (np.sqrt(accumulator) + epsilon)
        np.testing.assert_allclose(v.read(), value, rtol=1e-12)
    # One worker: each round is complete with its gradient, applied before the next read.
    with strategy.variable(np.zeros(3, np.float32), name="sync", optimizer={"kind": "sgd", "learning_rate": 1.0},
                           sync_gradients=True, replicas_to_aggregate=1) as v:
        v.apply_gradient(np.array([1, 2, 3], np.float32))
        np.testing.assert_array_equal(v.read(), [-1, -2, -3])
