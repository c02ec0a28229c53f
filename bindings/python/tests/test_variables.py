"""Distributed variables and optimizers: round trips for several dtypes, mirrored
and on-read updates, apply_gradients against the SGD and momentum formulas, and
lifetimes (variables outlive their strategy, contexts close what they hold)."""
import gc

import numpy as np
import pytest

import distribute
from distribute import constants as C


@pytest.fixture
def mirrored():
    with distribute.Strategy(kind="mirrored", num_cpu_devices=2) as strategy:
        yield strategy


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.float16])
def test_read_assign_round_trip(mirrored, dtype):
    initial = np.arange(6).reshape(2, 3).astype(dtype)
    with mirrored.variable(initial, name=f"v_{np.dtype(dtype).name}") as variable:
        assert variable.dtype == np.dtype(dtype)
        assert variable.shape == (2, 3) and variable.size == 6
        assert variable.name == f"v_{np.dtype(dtype).name}"
        np.testing.assert_array_equal(variable.read(), initial)
        new = (np.arange(6)[::-1] + 1).reshape(2, 3).astype(dtype)
        variable.assign(new)
        for copy in range(variable.num_copies):
            np.testing.assert_array_equal(variable.read_copy(copy), new)
        variable.assign_add(np.ones((2, 3), dtype))
        variable.assign_sub(np.full((2, 3), 2, dtype))
        np.testing.assert_array_equal(variable.read(), new - 1)
        out = np.empty((2, 3), dtype)
        assert variable.read(out=out) is out


def test_bfloat16_is_uint16_bits(mirrored):
    bits = np.array([0x3F80, 0x4000], np.uint16)  # 1.0 and 2.0
    with mirrored.variable(bits, dtype=C.DTYPE_BF16) as variable:
        assert variable.dist_dtype == C.DTYPE_BF16
        np.testing.assert_array_equal(variable.read(), bits)


def test_defaults_and_resolved_synchronization(mirrored):
    with mirrored.variable() as variable:
        assert variable.name == "Variable" and variable.shape == () and variable.dtype == np.float32
        assert variable.synchronization == "on_write" and variable.aggregation == "none"
        assert variable.read() == 0
        assert variable.num_copies == 2


def test_bad_variable_options_are_errors(mirrored):
    with pytest.raises(distribute.InvalidArgumentError):
        mirrored.variable(np.zeros(2), synchronization="none")  # refused off ONE_DEVICE
    with pytest.raises(ValueError):
        mirrored.variable(np.zeros(4), shape=(3,))
    with pytest.raises(distribute.InvalidArgumentError):
        mirrored.variable(shape=[1] * (C.MAX_RANK + 1))
    with mirrored.variable(np.zeros(3, np.float32)) as variable:
        with pytest.raises(distribute.InvalidArgumentError):
            variable.read_copy(2)
        with pytest.raises(distribute.InvalidArgumentError):
            variable.read(out=np.empty(4, np.float32))


def test_replica_assign_aggregates_mean(mirrored):
    with mirrored.variable(np.zeros(4), aggregation="mean") as variable:
        def fn(replica):
            variable.assign(np.full(4, 2.0 + 4 * replica.replica_id), replica=replica)
            return variable.read(replica)

        for value in mirrored.run(fn):
            np.testing.assert_array_equal(value, np.full(4, 4.0))
        np.testing.assert_array_equal(variable.read_copy(1), np.full(4, 4.0))


def test_on_read_variable_sums_on_read(mirrored):
    with mirrored.variable(np.zeros(2, np.int64), synchronization="on_read", aggregation="sum") as metric:
        mirrored.run(lambda replica: metric.assign_add(np.full(2, replica.replica_id + 1), replica=replica))
        np.testing.assert_array_equal(metric.read(), [3, 3])
        np.testing.assert_array_equal(metric.read_copy(0), [1, 1])


def test_stale_replica_context_does_not_become_cross_replica(mirrored):
    with mirrored.variable(np.zeros(2)) as variable:
        stale = mirrored.run(lambda replica: replica)[0]
        with pytest.raises(ValueError, match="no longer valid"):
            variable.assign(np.ones(2), replica=stale)


def test_apply_gradients_sgd_and_momentum(mirrored):
    with mirrored.variable(np.array([1.0, 2.0, 3.0])) as weights, \
            distribute.Optimizer("sgd", learning_rate=0.5) as sgd:
        grads = mirrored.run(lambda replica: np.full(3, float(replica.replica_id + 1)))  # mean 1.5
        mirrored.apply_gradients([weights], [[g] for g in grads], sgd)
        np.testing.assert_allclose(weights.read(), [1.0 - 0.75, 2.0 - 0.75, 3.0 - 0.75])
        assert sgd.iterations == 1
    with mirrored.variable(np.zeros(2, np.float32)) as weights, \
            distribute.Optimizer("momentum", learning_rate=0.1, momentum=0.5) as momentum:
        expected, velocity = np.zeros(2), np.zeros(2)
        for _ in range(3):
            mirrored.apply_gradients([weights], [[np.ones(2, np.float32)], [np.full(2, 3, np.float32)]], momentum)
            velocity = 0.5 * velocity - 0.1 * 2.0
            expected += velocity
        np.testing.assert_allclose(weights.read(), expected, rtol=1e-6)
        assert momentum.iterations == 3


def test_apply_gradients_refuses_integers_and_bad_optimizers(mirrored):
    with pytest.raises(distribute.InvalidArgumentError):
        distribute.Optimizer("adam", learning_rate=-1.0)
    with mirrored.variable(np.zeros(2, np.int32)) as counts, distribute.Optimizer() as sgd:
        with pytest.raises(distribute.InvalidArgumentError):
            mirrored.apply_gradients([counts], [[np.ones(2, np.int32)], [np.ones(2, np.int32)]], sgd)


def test_variable_outlives_its_strategy():
    strategy = distribute.Strategy(kind="mirrored", num_cpu_devices=2)
    variable = strategy.variable(np.arange(3.0))
    strategy.close()
    variable.assign_add(np.ones(3))
    np.testing.assert_array_equal(variable.read(), [1.0, 2.0, 3.0])
    variable.close()
    variable.close()
    with pytest.raises(distribute.InvalidArgumentError):
        variable.read(out=np.empty(3))


def test_closing_the_context_closes_strategies_and_variables_first():
    with distribute.Cluster.from_json("{}") as cluster:
        context = distribute.Context(cluster)
        strategy = distribute.Strategy(context, "multi_worker_mirrored", num_cpu_devices=2)
        variable = strategy.variable(np.ones(4, np.float32))
        context.close()
        assert strategy.closed and variable.closed
        with pytest.raises(ValueError, match="context is closed"):
            distribute.Strategy(context, "multi_worker_mirrored")
        # Dropped in the reverse order too: the garbage collector must not crash.
        context = distribute.Context(cluster)
        strategy = distribute.Strategy(context, "multi_worker_mirrored", num_cpu_devices=2)
        variable = strategy.variable(np.ones(4, np.float32))
        del context, strategy, variable
        gc.collect()
