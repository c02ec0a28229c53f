"""Data-parallel training in miniature: every rank computes a gradient from its own
data, all-reduces it to the mean, and applies it to its copy of the weights. The
copies must stay bit-identical on every rank and match the closed-form result.

    dist-run -n 2 -- python3 bindings/python/examples/allreduce.py

(examples/strategy_training.py does the same with a strategy, a mirrored variable
and apply_gradients.)
"""
import sys

import numpy as np

import distribute

STEPS, SIZE, LEARNING_RATE = 5, 4096, np.float32(0.5)


def local_target(rank):
    """This rank's data: what it alone would fit the weights to."""
    return ((rank + 1) * (np.arange(SIZE) % 10)).astype(np.float32)


def train(world):
    weights = np.zeros(SIZE, np.float32)
    for _ in range(STEPS):
        gradient = weights - local_target(world.rank)  # d/dw of |w - target|^2 / 2
        world.all_reduce(gradient, "mean")
        weights -= LEARNING_RATE * gradient
    return weights


def expected_weights(size):
    """The same steps on the mean target, computed without communication."""
    mean_target = np.mean([local_target(r).astype(np.float64) for r in range(size)], axis=0)
    weights = np.zeros(SIZE)
    for _ in range(STEPS):
        weights -= float(LEARNING_RATE) * (weights - mean_target)
    return weights


def main():
    with distribute.Cluster.resolve() as cluster, distribute.Context(cluster) as context:
        world = context.world
        weights = train(world)
        everyone = world.all_gather(weights, np.empty(world.size * SIZE, np.float32))
        identical = all(np.array_equal(block, weights) for block in everyone.reshape(world.size, SIZE))
        correct = np.allclose(weights, expected_weights(world.size), rtol=1e-5, atol=1e-5)
        print(f"rank {world.rank} of {world.size}: {STEPS} steps, weights[7] = {weights[7]:.4f}; "
              f"{'identical on all ranks' if identical else 'DIFFERENT across ranks'}, "
              f"{'correct' if correct else 'WRONG'}")
        return 0 if identical and correct else 1


if __name__ == "__main__":
    sys.exit(main())
