"""One rank of the DDP job (tests/torch/test_ddp.py): every configuration below,
on every backend of --backends, a few SGD steps each; saves the final weights
as OUT/<backend>-<config>-rankR.pt. Rank 0 also trains each configuration
without communication on all ranks' data (the gradient DDP must produce is the
mean of the ranks' gradients) and saves it as reference-<config>-rank0.pt (and the initial weights as
initial-<config>-rank0.pt).
"""
import torch
from torch.nn.parallel import DistributedDataParallel

import job

FEATURES, HIDDEN, CLASSES, ROWS, SEED, LR = 16, 64, 10, 8, 7, 0.1


class Net(torch.nn.Module):
    """Three layers, and (find_unused_parameters) a branch used on odd steps only."""

    def __init__(self, branch):
        super().__init__()
        self.body = job.mlp([FEATURES, HIDDEN, HIDDEN, CLASSES], SEED)
        self.branch = torch.nn.Linear(FEATURES, CLASSES) if branch else None

    def forward(self, x, use_branch=False):
        out = self.body(x)
        return out + self.branch(x) if use_branch else out


# name -> (DDP keyword arguments, steps, micro-batches per step, branch on odd steps)
CONFIGS = {
    # ~6k parameters in 4 KiB buckets: several buckets, gradients living in them.
    "buckets": (dict(bucket_cap_mb=4 / 1024, gradient_as_bucket_view=True), 4, 1, False),
    "unused": (dict(find_unused_parameters=True), 4, 1, True),
    # Two micro-batches under no_sync, the third synchronises the sum.
    "no_sync": (dict(bucket_cap_mb=16 / 1024), 3, 3, False),
}


def loss_of(model, step, micro, rank, use_branch):
    inputs, labels = job.batch(SEED, rank, step * 16 + micro, ROWS, FEATURES, CLASSES)
    return torch.nn.functional.cross_entropy(model(inputs, use_branch), labels)


def train(model, config, rank, world_size, distributed):
    """The configuration's steps; without DDP, gradients are summed over all
    ranks' data and divided by the world size (what DDP's all-reduce gives)."""
    _, steps, micro_batches, branch = CONFIGS[config]
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    for step in range(steps):
        use_branch = branch and step % 2 == 1
        optimizer.zero_grad(set_to_none=True)
        if distributed:
            for micro in range(micro_batches - 1):
                with model.no_sync():
                    loss_of(model, step, micro, rank, use_branch).backward()
            loss_of(model, step, micro_batches - 1, rank, use_branch).backward()
        else:
            for source in range(world_size):
                for micro in range(micro_batches):
                    (loss_of(model, step, micro, source, use_branch) / world_size).backward()
        optimizer.step()


def bucket_count(model):
    return int(model._get_ddp_logging_data().get("num_buckets_reduced", 0))


def run_on(backend, args):
    """Every configuration on the default group; its models die on return."""
    for config, (options, *_) in CONFIGS.items():
        model = DistributedDataParallel(Net(CONFIGS[config][3]), **options)
        train(model, config, args.rank, args.world_size, distributed=True)
        if config == "buckets" and bucket_count(model) < 2:
            raise SystemExit(f"expected several buckets, DDP made {bucket_count(model)}")
        job.save(args, f"{backend}-{config}", model.module.state_dict())


if __name__ == "__main__":
    job.run(__doc__, CONFIGS, run_on, lambda config: Net(CONFIGS[config][3]),
            lambda model, config, world_size: train(model, config, 0, world_size, distributed=False))
