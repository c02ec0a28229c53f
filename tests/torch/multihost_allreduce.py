"""One rank of test_torch_multihost (multihost.sh), started by torchrun on its
emulated host: init_process_group on the backend under test through torchrun's
own rendezvous, then all_reduce (SUM, MAX, AVG) of float32 and int64 tensors of
several sizes, each checked against the value computed here from every rank's
input; prints one line per rank when all hold.
"""
import argparse
import socket
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--backend", default="distribute")
args = parser.parse_args()
if "distribute" in args.backend:
    import distribute.torch  # noqa: F401  (registers the "distribute" backend)

dist.init_process_group(args.backend, timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()


def contribution(source, count, dtype):
    return (torch.arange(count, dtype=torch.float64) % 97 + 10 * source - 3).to(dtype)


checked = 0
for count in (1, 1000, 1 << 20):  # 4 B to 4 MiB of float32
    for dtype in (torch.float32, torch.int64):
        everyone = torch.stack([contribution(s, count, dtype) for s in range(world)])
        for op, expected in ((dist.ReduceOp.SUM, everyone.sum(0)), (dist.ReduceOp.MAX, everyone.max(0).values)):
            tensor = contribution(rank, count, dtype)
            dist.all_reduce(tensor, op=op)
            if not torch.equal(tensor, expected.to(dtype)):
                sys.exit(f"rank {rank}: all_reduce {op} of {count} {dtype} differs from the expected value")
            checked += 1
tensor = contribution(rank, 1000, torch.float32)
dist.all_reduce(tensor, op=dist.ReduceOp.AVG)
torch.testing.assert_close(tensor, torch.stack([contribution(s, 1000, torch.float32) for s in range(world)]).mean(0))
dist.barrier()
print(f"rank {rank} of {world} on {socket.gethostname()}: {checked + 1} all_reduce results as expected", flush=True)
dist.destroy_process_group()
