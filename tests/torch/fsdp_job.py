"""One rank of the FSDP2 job (tests/torch/test_fsdp.py): every configuration
below, on every backend of --backends, a few SGD steps each with
torch.distributed.fsdp.fully_shard per layer and at the root; saves the full
(gathered) final weights as OUT/<backend>-<config>-rankR.pt. Rank 0 also trains
each configuration without communication on all ranks' data (FSDP's gradient is
the mean of the ranks' gradients) and saves it as reference-<config>-rank0.pt,
and the initial weights as initial-<config>-rank0.pt.

The layer sizes (33, 20, 7 rows) do not divide by 2 or 3: shards are uneven and
padded, as FSDP2 does for real models.
"""
import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor

import job

SIZES, ROWS, SEED, LR, STEPS = [16, 33, 20, 7], 6, 11, 0.1, 3

# name -> fully_shard's reshard_after_forward
CONFIGS = {"reshard": True, "no_reshard": False}


def loss_of(model, step, rank):
    inputs, labels = job.batch(SEED, rank, step, ROWS, SIZES[0], SIZES[-1])
    return torch.nn.functional.cross_entropy(model(inputs), labels)


def shard(model, world_size, reshard_after_forward):
    mesh = init_device_mesh("cpu", (world_size,))
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer, mesh=mesh, reshard_after_forward=reshard_after_forward)
    fully_shard(model, mesh=mesh, reshard_after_forward=reshard_after_forward)
    weight = model[0].weight
    if not isinstance(weight, DTensor) or weight.to_local().numel() >= weight.numel():
        raise SystemExit("fully_shard did not shard the first layer's weight")
    return model


def train(model, rank, world_size, distributed):
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    for step in range(STEPS):
        optimizer.zero_grad(set_to_none=True)
        if distributed:
            loss_of(model, step, rank).backward()
        else:
            for source in range(world_size):
                (loss_of(model, step, source) / world_size).backward()
        optimizer.step()


def run_on(backend, args):
    """Every configuration on the default group; its models die on return."""
    for config, reshard_after_forward in CONFIGS.items():
        model = shard(job.mlp(SIZES, SEED), args.world_size, reshard_after_forward)
        train(model, args.rank, args.world_size, distributed=True)
        full = {name: value.full_tensor() for name, value in model.state_dict().items()}
        job.save(args, f"{backend}-{config}", full)


if __name__ == "__main__":
    job.run(__doc__, CONFIGS, run_on, lambda _config: job.mlp(SIZES, SEED),
            lambda model, _config, world_size: train(model, 0, world_size, distributed=False))
