"""The backend's join through a Store, in this process: StoreExchange (the
nonblocking all-gather of dist_context_create_oob) and the cluster token's
agreement, on a torch HashStore shared by simulated ranks."""
import sys

import pytest

from backend_launch import BINDING

sys.path.insert(0, BINDING)  # this checkout's binding, as the ranks of the other tests use
pytest.importorskip("torch", reason="torch is not installed: the distribute backend's tests need it")

import torch.distributed as dist  # noqa: E402

from distribute.torch import rendezvous  # noqa: E402
from distribute.torch.rendezvous import StoreExchange, agree_on_token  # noqa: E402


def test_store_exchange_answers_once_every_rank_set_its_bytes_and_then_deletes_the_keys():
    store = dist.HashStore()
    ranks = [StoreExchange(store, rank, 3) for rank in range(3)]
    for round_index in range(2):
        handles = [ranks[0].start(b"zero%d" % round_index), ranks[1].start(b"one-%d" % round_index)]
        assert ranks[0].test(handles[0]) is None and ranks[1].test(handles[1]) is None  # rank 2 has not set
        handles.append(ranks[2].start(b"two-%d" % round_index))
        expected = [b"zero%d" % round_index, b"one-%d" % round_index, b"two-%d" % round_index]
        assert handles == [round_index] * 3
        for rank in range(3):
            assert ranks[rank].test(handles[rank]) == expected
        assert store.num_keys() == 0, "the last reader deletes the round's keys"


def test_the_token_is_generated_by_rank_0_and_shared_through_the_store(monkeypatch):
    monkeypatch.setattr(rendezvous, "token_in_environment", lambda: False)
    store = dist.HashStore()
    tokens = [agree_on_token(store, rank, 2) for rank in range(2)]
    assert tokens[0] == tokens[1] and len(tokens[0]) == 64 and int(tokens[0], 16) >= 0
    assert store.num_keys() == 0
    assert agree_on_token(store, 0, 1) != tokens[0]  # fresh each time


def test_a_token_from_the_environment_never_enters_the_store(monkeypatch):
    monkeypatch.setattr(rendezvous, "token_in_environment", lambda: True)
    store = dist.HashStore()
    assert agree_on_token(store, 0, 2) is None  # the library reads DIST_CLUSTER_TOKEN(_FILE)
    assert bytes(store.get("distribute/token")) == b"environment"
    assert agree_on_token(store, 1, 2) is None


@pytest.mark.parametrize("rank0_has_one", [True, False])
def test_ranks_that_disagree_on_where_the_token_comes_from_fail_saying_so(monkeypatch, rank0_has_one):
    store = dist.HashStore()
    monkeypatch.setattr(rendezvous, "token_in_environment", lambda: rank0_has_one)
    agree_on_token(store, 0, 2)
    monkeypatch.setattr(rendezvous, "token_in_environment", lambda: not rank0_has_one)
    with pytest.raises(RuntimeError, match="DIST_CLUSTER_TOKEN") as caught:
        agree_on_token(store, 1, 2)
    assert ("rank 1 has neither" in str(caught.value)) == rank0_has_one
