"""Trains a classifier of handwritten digits with DistributedDataParallel on
libdistribute's torch.distributed backend.

    torchrun --standalone --nproc_per_node 2 examples/torch/ddp_digits.py

The data are scikit-learn's digits (1797 images of 8x8 pixels, 10 classes) as
Debian's python3-sklearn ships them (digits.csv.gz), read directly with numpy:
scikit-learn itself is not imported, so the torch environment needs neither it
nor Debian's numpy (--data names another copy of the file). The images are
split once (seeded) into 1438 for training and 359 for testing; every rank
trains on its own part of the training set, DDP averages the gradients through
the backend, and after each epoch the ranks add up their loss and their test
counts through the backend too. Rank 0 prints loss and test accuracy per epoch;
--min-accuracy makes the run fail when the last epoch ends below it.

Needs `import distribute.torch` to work (PYTHONPATH=bindings/python and the
library, see bindings/python/README.md); --backend gloo runs the same on gloo.
"""
import argparse
import gc
import gzip
import sys

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

DEBIAN_DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"


def parse():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="distribute", help="torch.distributed backend (default distribute)")
    parser.add_argument("--data", default=DEBIAN_DIGITS, help="digits.csv.gz (64 pixels and the label per row)")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch", type=int, default=32, help="images per rank and step")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--min-accuracy", type=float, default=0.0, help="fail below this final test accuracy")
    return parser.parse_args()


def load_digits(path):
    """(pixels scaled to [0, 1], labels), as numpy arrays."""
    with gzip.open(path, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    return table[:, :-1] / 16.0, table[:, -1].astype(np.int64)


def split(pixels, labels, test_fraction=0.2, seed=0):
    order = np.random.default_rng(seed).permutation(len(labels))
    test = order[: int(len(labels) * test_fraction)]
    train = order[len(test):]
    return (pixels[train], labels[train]), (pixels[test], labels[test])


def model_for_digits():
    torch.manual_seed(0)  # the same start on every rank (DDP also broadcasts it)
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 10))


def train_epoch(model, optimizer, pixels, labels, batch, epoch, rank):
    """One pass over this rank's images in a fresh order; returns (sum of the
    losses, images)."""
    order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(epoch * 1000 + rank))
    total, seen = 0.0, 0
    for start in range(0, len(order) - batch + 1, batch):  # whole batches: the same step count on every rank
        index = order[start:start + batch]
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(pixels[index]), labels[index])
        loss.backward()
        optimizer.step()
        total += loss.item() * len(index)
        seen += len(index)
    return total, seen


def main():
    args = parse()
    if "distribute" in args.backend:
        import distribute.torch  # noqa: F401  (registers the "distribute" backend)
    dist.init_process_group(args.backend)  # torchrun's environment: RANK, WORLD_SIZE, MASTER_ADDR/PORT
    rank, world = dist.get_rank(), dist.get_world_size()
    (train_x, train_y), (test_x, test_y) = split(*load_digits(args.data))
    counts = f"{len(train_y)} training images, {len(test_y)} test images"
    # Each rank trains on every world-th image of the training set.
    mine = slice(rank, None, world)
    train_x, train_y = torch.from_numpy(train_x[mine]), torch.from_numpy(train_y[mine])
    test_x, test_y = torch.from_numpy(test_x[mine]), torch.from_numpy(test_y[mine])

    model = DistributedDataParallel(model_for_digits())
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    if rank == 0:
        print(f"{world} ranks on backend {dist.get_backend()}: {counts}", flush=True)
    accuracy = 0.0
    for epoch in range(1, args.epochs + 1):
        model.train()
        loss_sum, seen = train_epoch(model, optimizer, train_x, train_y, args.batch, epoch, rank)
        model.eval()
        with torch.no_grad():
            correct = (model(test_x).argmax(dim=1) == test_y).sum().item()
        totals = torch.tensor([loss_sum, seen, correct, len(test_y)], dtype=torch.float64)
        dist.all_reduce(totals)  # every rank's share of the loss and of the test set
        accuracy = totals[2].item() / totals[3].item()
        if rank == 0:
            print(f"epoch {epoch:3d}  loss {totals[0].item() / totals[1].item():.4f}  "
                  f"test accuracy {accuracy:.4f}", flush=True)
    # The model holds the group: free it first, or gloo's threads let go of it
    # only while the interpreter shuts down, which aborts the process.
    del model, optimizer
    gc.collect()
    dist.destroy_process_group()
    if accuracy < args.min_accuracy:
        if rank == 0:
            print(f"final test accuracy {accuracy:.4f} is below {args.min_accuracy}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
