"""Point to point (Comm.send/recv, Request.source), the uneven all-to-all
(Comm.all_to_all_v) and completion callbacks (Request.on_complete) between
contexts of this process (ranks on threads, joined as in test_exchange.py);
references computed here with numpy."""
import threading

import numpy as np
import pytest

import distribute
from distribute import constants
from test_exchange import TOKEN, SharedSlots, on_threads


def run_ranks(size, body):
    """body(rank, world) on `size` contexts of this process; the values by rank (raising the first error)."""
    exchange = SharedSlots(size)

    def rank_main(rank):
        with distribute.Context.from_exchange(rank, size, exchange.for_rank(rank), token=TOKEN,
                                              connect_timeout_ms=60000) as context:
            context.world.configure(timeout_ms=20000)
            return body(rank, context.world)

    values = []
    for kind, value in on_threads(size, rank_main):
        if kind == "error":
            raise value
        values.append(value)
    return values


def test_send_and_recv_match_by_peer_and_tag():
    def body(rank, world):
        if rank == 0:
            world.send(np.arange(6, dtype=np.float64), peer=1, tag=9)
            world.send(np.full(3, 7, np.int32), peer=1, tag=2)
            request = world.send(np.array([0x3F80, 0x4000], np.uint16), 1, 4, dtype=constants.DTYPE_BF16,
                                 wait=False)
            request.wait()
            return None
        second = np.zeros(3, np.int32)
        first = np.zeros(6, np.float64)
        world.recv(second, peer=0, tag=2)  # the tag-9 message is older, but another tag
        request = world.recv(first, peer=0, tag=9, wait=False)
        assert request.wait() is first and request.source == 0
        bf16 = np.zeros(2, np.uint16)
        world.recv(bf16, 0, 4, dtype=constants.DTYPE_BF16)
        return first, second, bf16

    _, (first, second, bf16) = run_ranks(2, body)
    np.testing.assert_array_equal(first, np.arange(6.0))
    np.testing.assert_array_equal(second, [7, 7, 7])
    np.testing.assert_array_equal(bf16, [0x3F80, 0x4000])


def test_recv_from_any_source_says_which_rank_sent():
    def body(rank, world):
        if rank != 0:
            world.send(np.full(4, rank * 11, np.int64), peer=0, tag=1)
            return None
        seen = {}
        for _ in range(2):
            out = np.zeros(4, np.int64)
            request = world.recv(out, tag=1, wait=False)  # peer defaults to ANY_SOURCE
            request.wait()
            seen[request.source] = out
        return seen

    seen = run_ranks(3, body)[0]
    assert sorted(seen) == [1, 2]
    for source, out in seen.items():
        np.testing.assert_array_equal(out, np.full(4, source * 11))


def test_all_to_all_v_uneven_with_and_without_offsets():
    size = 3

    def count(i, j):  # elements rank i sends to rank j (zero for some pairs)
        return (2 * i + j) % 4

    def block(i, j):
        return np.arange(count(i, j), dtype=np.float32) + 100 * i + 10 * j

    def body(rank, world):
        send_counts = [count(rank, j) for j in range(size)]
        recv_counts = [count(i, rank) for i in range(size)]
        packed = np.concatenate([block(rank, j) for j in range(size)])
        out = np.full(sum(recv_counts), -1, np.float32)
        world.all_to_all_v(packed, send_counts, out, recv_counts)
        # The same blocks, sent in reverse order from a padded buffer, received with gaps.
        send_offsets = list(np.cumsum([0] + send_counts[::-1][:-1])[::-1] + 1)
        padded = np.zeros(sum(send_counts) + 1, np.float32)
        for j in range(size):
            padded[send_offsets[j]:send_offsets[j] + send_counts[j]] = block(rank, j)
        recv_offsets = [2 * sum(recv_counts[:i]) for i in range(size)]
        spread = np.full(2 * sum(recv_counts), -1, np.float32)
        request = world.all_to_all_v(padded, send_counts, spread, recv_counts, send_offsets=send_offsets,
                                     recv_offsets=recv_offsets, wait=False)
        request.wait()
        return out, spread

    for rank, (out, spread) in enumerate(run_ranks(size, body)):
        np.testing.assert_array_equal(out, np.concatenate([block(i, rank) for i in range(size)]))
        for i in range(size):
            start = 2 * sum(count(k, rank) for k in range(i))
            np.testing.assert_array_equal(spread[start:start + count(i, rank)], block(i, rank))


def test_on_complete_runs_once_with_the_outcome():
    def body(rank, world):
        outcomes, ran = [], threading.Event()

        def callback(error):
            outcomes.append(error)
            ran.set()

        data = np.full(1000, rank + 1.0)
        request = world.all_reduce(data, wait=False)
        request.on_complete(callback)
        assert ran.wait(30)
        request.wait()
        with pytest.raises(distribute.InvalidArgumentError):
            request.on_complete(callback)  # one callback per request

        # A receive that disagrees with its send on count: the callback gets the mismatch.
        failed = threading.Event()
        errors = []
        if rank == 0:
            world.send(np.zeros(5, np.float32), peer=1, tag=3)
        else:
            request = world.recv(np.zeros(4, np.float32), peer=0, tag=3, wait=False)
            request.on_complete(lambda error: (errors.append(error), failed.set()))
            assert failed.wait(30)
            with pytest.raises(distribute.PeerError):
                request.wait()
        # On a request already complete, the callback runs at once, on this thread.
        done = world.barrier(wait=False)
        done.wait()
        here = []
        done.on_complete(lambda error: here.append((error, threading.current_thread())))
        assert here == [(None, threading.current_thread())]
        return outcomes, errors, data

    for rank, (outcomes, errors, data) in enumerate(run_ranks(2, body)):
        assert outcomes == [None]
        np.testing.assert_array_equal(data, np.full(1000, 3.0))
        if rank == 1:
            assert len(errors) == 1 and errors[0].status == constants.ERR_MISMATCH, errors
            assert "5" in errors[0].message and "4" in errors[0].message, errors[0].message


def test_bad_point_to_point_arguments(context):
    world = context.world
    with pytest.raises(distribute.InvalidArgumentError):
        world.send(np.zeros(2), peer=0)  # to oneself
    with pytest.raises(distribute.InvalidArgumentError):
        world.recv(np.zeros(2), peer=3)
    with pytest.raises(distribute.InvalidArgumentError):
        world.send(np.zeros(2), peer=0, tag=-1)
    with pytest.raises(ValueError, match="one per rank"):
        world.all_to_all_v(np.zeros(2), [1, 1], np.zeros(2), [2])
    with pytest.raises(ValueError, match="negative"):
        world.all_to_all_v(np.zeros(2), [-1], np.zeros(2), [2])
    out = np.zeros(3)
    world.all_to_all_v(np.arange(3.0), [3], out, [3])
    np.testing.assert_array_equal(out, [0.0, 1.0, 2.0])
