"""torch.distributed on libdistribute: importing this module registers the
backend "distribute" for CPU tensors.

    import torch.distributed as dist
    import distribute.torch  # noqa: F401 -- registers "distribute"
    dist.init_process_group("distribute")          # or "cpu:distribute,cuda:nccl"

Each process group (the default one and every new_group) gets a libdistribute
context of its own, joined through the group's Store (dist_context_create_oob);
the group's timeout is its collectives' deadline. `import distribute` alone
never imports torch.
"""
import atexit

import torch.distributed as dist

from .backend import NAME, DistributeBackend, close_all
from .rendezvous import StoreExchange, agree_on_token
from .work import Work

__all__ = ["NAME", "DistributeBackend", "StoreExchange", "Work", "agree_on_token"]


def _create(store, rank, size, timeout):
    return DistributeBackend(store, rank, size, timeout)


dist.Backend.register_backend(NAME, _create, devices=["cpu"])
atexit.register(close_all)
