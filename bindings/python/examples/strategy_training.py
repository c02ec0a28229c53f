"""Data-parallel training with a MULTI_WORKER_MIRRORED strategy: every worker runs
two replicas (logical CPU devices); each replica computes a gradient from its own
data, and apply_gradients mean-all-reduces the gradients over all replicas of all
workers and applies them with SGD to every copy of the mirrored weights.

    dist-run -n 2 -- python3 bindings/python/examples/strategy_training.py

Each rank prints the SHA-256 of its weights' bytes: identical on every rank (the
test compares them), and the weights match the closed-form result.
"""
import hashlib
import sys

import numpy as np

import distribute

STEPS, SIZE, LEARNING_RATE, LOCAL_REPLICAS = 5, 4096, 0.5, 2


def replica_target(replica_id):
    """Replica `replica_id`'s data: what it alone would fit the weights to."""
    return ((replica_id + 1) * (np.arange(SIZE) % 10)).astype(np.float32)


def gradient(replica, weights):
    """d/dw of |w - target|^2 / 2 on this replica's data (its own thread)."""
    return weights.read(replica) - replica_target(replica.replica_id)


def expected_weights(replicas):
    """The same steps on the mean target, computed without communication."""
    mean_target = np.mean([replica_target(r).astype(np.float64) for r in range(replicas)], axis=0)
    weights = np.zeros(SIZE)
    for _ in range(STEPS):
        weights -= LEARNING_RATE * (weights - mean_target)
    return weights


def main():
    with distribute.Cluster.resolve() as cluster, distribute.Context(cluster) as context, \
            distribute.Strategy(context, "multi_worker_mirrored", num_cpu_devices=LOCAL_REPLICAS) as strategy, \
            distribute.Optimizer("sgd", learning_rate=LEARNING_RATE) as sgd:
        weights = strategy.variable(np.zeros(SIZE, np.float32), name="weights")
        for _ in range(STEPS):
            per_replica = strategy.run(gradient, args=(weights,))
            strategy.apply_gradients([weights], [[g] for g in per_replica], sgd)
        value = weights.read()
        copies_equal = all(np.array_equal(weights.read_copy(i), value) for i in range(weights.num_copies))
        correct = np.allclose(value, expected_weights(strategy.num_replicas_in_sync), rtol=1e-5, atol=1e-5)
        index, workers = strategy.worker_index
        print(f"rank {index} of {workers}: {strategy.num_replicas_in_sync} replicas in sync, "
              f"{sgd.iterations} steps, weights sha256 {hashlib.sha256(value.tobytes()).hexdigest()}; "
              f"{'local copies identical' if copies_equal else 'local copies DIFFER'}, "
              f"{'correct' if correct else 'WRONG'}")
        return 0 if copies_equal and correct else 1


if __name__ == "__main__":
    sys.exit(main())
