"""Joining through the Store torch hands a backend: the cluster token and the
out-of-band all-gather of dist_context_create_oob.

The Store torch gives each group's backend is already prefixed with the group's
name (and the device), so the keys below are unique per group; rounds number
the all-gathers of one join. Keys are deleted once every rank has read them.
"""
import os
import secrets

_TOKEN_KEY = "distribute/token"
_FROM_ENVIRONMENT = b"environment"
_GENERATED = b"generated:"


def _read_by_all(store, keys, size, counter):
    """Called by each rank once it has read `keys`: the last one deletes them.
    Stores without delete_key (or add) keep them."""
    try:
        if store.add(counter, 1) == size:
            for key in (*keys, counter):
                store.delete_key(key)
    except (RuntimeError, NotImplementedError):  # a store that cannot delete keeps its keys
        pass


def token_in_environment():
    return bool(os.environ.get("DIST_CLUSTER_TOKEN") or os.environ.get("DIST_CLUSTER_TOKEN_FILE"))


def agree_on_token(store, rank, size):
    """The cluster token of this group's context: None when this process's
    environment gives one (DIST_CLUSTER_TOKEN or DIST_CLUSTER_TOKEN_FILE, which
    the library then reads), else a 256-bit token rank 0 generated and passed
    through the Store. Every rank must be in the same case; rank 0 says which
    through the Store, so that a rank in the other case fails here, saying so,
    rather than at authentication."""
    from_environment = token_in_environment()
    if rank == 0:
        value = _FROM_ENVIRONMENT if from_environment else _GENERATED + secrets.token_hex(32).encode()
        store.set(_TOKEN_KEY, value)
    else:
        value = bytes(store.get(_TOKEN_KEY))  # waits for rank 0, up to the store's timeout
    _read_by_all(store, [_TOKEN_KEY], size, _TOKEN_KEY + "/read")
    if value == _FROM_ENVIRONMENT:
        if not from_environment:
            raise RuntimeError(f"distribute: rank 0 takes the cluster token from DIST_CLUSTER_TOKEN or "
                               f"DIST_CLUSTER_TOKEN_FILE, but rank {rank} has neither set")
        return None
    if not value.startswith(_GENERATED):
        raise RuntimeError(f"distribute: the Store's key {_TOKEN_KEY!r} holds no token this backend wrote")
    if from_environment:
        raise RuntimeError(f"distribute: rank {rank} has DIST_CLUSTER_TOKEN or DIST_CLUSTER_TOKEN_FILE set, "
                           "but rank 0 has neither (it generated a token): set it on every rank or on none")
    return value[len(_GENERATED):].decode()


class StoreExchange:
    """A nonblocking all-gather over a torch Store, as Context.from_exchange polls
    it: start() sets this rank's bytes under the round's key; test() answers
    None until Store.check finds every rank's key of the round, then all of them."""

    def __init__(self, store, rank, size, prefix="distribute/oob"):
        self._store, self._rank, self._size, self._prefix = store, rank, size, prefix
        self._rounds = 0

    def _keys(self, round_index):
        return [f"{self._prefix}/{round_index}/{r}" for r in range(self._size)]

    def start(self, data):
        round_index, self._rounds = self._rounds, self._rounds + 1
        self._store.set(self._keys(round_index)[self._rank], data)
        return round_index

    def test(self, round_index):
        keys = self._keys(round_index)
        if not self._store.check(keys):
            return None
        parts = [bytes(part) for part in self._store.multi_get(keys)]
        _read_by_all(self._store, keys, self._size, f"{self._prefix}/{round_index}/read")
        return parts
