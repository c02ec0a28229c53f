"""Run by test_backend_launch.py under torchrun (python -m torch.distributed.run
--standalone --nproc_per_node 2): joins "distribute" through torchrun's own
rendezvous (env://), checks an all_reduce and an all_gather against values
computed here, and prints one line per rank."""
import torch
import torch.distributed as dist

import distribute.torch  # noqa: F401 -- registers "distribute"

dist.init_process_group("distribute")
rank, size = dist.get_rank(), dist.get_world_size()
tensor = torch.arange(6, dtype=torch.float32) + rank
dist.all_reduce(tensor)
expected = sum(torch.arange(6, dtype=torch.float32) + r for r in range(size))
gathered = [torch.empty(1, dtype=torch.int64) for _ in range(size)]
dist.all_gather(gathered, torch.tensor([rank * 10]))
ok = torch.equal(tensor, expected) and [int(g) for g in gathered] == [r * 10 for r in range(size)]
print(f"distribute torchrun rank {rank} of {size}: {'OK' if ok else 'WRONG'}", flush=True)
dist.destroy_process_group()
