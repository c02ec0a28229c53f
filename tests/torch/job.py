"""What every rank of a torch suite job shares: its command line, the store, one
process group per backend in turn, and saving what the tests compare.

A job runs each backend named in --backends as the default process group, one
after the other in the same processes (same seeds, same data), through one
FileStore (no ports to pick) under a prefix per backend.
"""
import argparse
import contextlib
import gc
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist

TIMEOUT = timedelta(seconds=90)


def parse(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world-size", type=int, required=True)
    parser.add_argument("--store", required=True, help="the FileStore's file")
    parser.add_argument("--out", required=True, help="where the weights go")
    parser.add_argument("--backends", required=True, help="comma-separated, run in this order")
    return parser.parse_args()


def run(description, configs, run_on, new_model, train_alone):
    """A job's main: with deterministic kernels, each backend of --backends in
    turn is the default process group while run_on(backend, args) trains every
    configuration on it; then rank 0 saves each configuration's initial weights
    (new_model(config)) and those of train_alone(model, config, world_size),
    the reference.

    run_on is a function so that what it built is gone when it returns, before
    its group is destroyed: a model keeps its group alive (DDP's reducer,
    FSDP's mesh), and a group freed only when the interpreter shuts down ends
    its threads there, where gloo's abort the process (std::terminate)
    dropping their last tensors."""
    args = parse(description)
    with deterministic():
        store = dist.FileStore(args.store, args.world_size)
        for index, name in enumerate(args.backends.split(",")):
            if name == "distribute":
                import distribute.torch  # noqa: F401  (registers the backend)
            dist.init_process_group(name, store=dist.PrefixStore(f"{index}-{name}", store), rank=args.rank,
                                    world_size=args.world_size, timeout=TIMEOUT)
            try:
                run_on(name, args)
            finally:
                gc.collect()  # anything run_on left in a cycle, before the group goes
                dist.destroy_process_group()
        if args.rank == 0:
            for config in configs:
                model = new_model(config)
                save(args, f"initial-{config}", model.state_dict())
                train_alone(model, config, args.world_size)
                save(args, f"reference-{config}", model.state_dict())


def save(args, tag, weights):
    """Saves {name: tensor} as OUT/TAG-rankR.pt."""
    torch.save({k: v.detach().clone() for k, v in weights.items()}, Path(args.out) / f"{tag}-rank{args.rank}.pt")


def load(out_dir, tag, rank):
    return torch.load(Path(out_dir) / f"{tag}-rank{rank}.pt")


def batch(seed, rank, step, rows, features, classes):
    """Rank RANK's data for STEP: the same on every run and backend."""
    generator = torch.Generator().manual_seed(seed * 1_000_003 + rank * 1009 + step)
    inputs = torch.randn(rows, features, generator=generator)
    labels = torch.randint(0, classes, (rows,), generator=generator)
    return inputs, labels


def mlp(sizes, seed):
    """A ReLU MLP with weights from SEED (the same on every rank)."""
    torch.manual_seed(seed)
    layers = []
    for i, (fan_in, fan_out) in enumerate(zip(sizes, sizes[1:])):
        layers.append(torch.nn.Linear(fan_in, fan_out))
        if i < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


@contextlib.contextmanager
def deterministic():
    """One thread, deterministic kernels: the same sums in every run."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(False)
        torch.set_num_threads(threads)
