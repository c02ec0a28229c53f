"""Contexts built through an exchange written in Python (Context.from_exchange):
two contexts in this process, ranks 0 and 1 on two threads, whose all-gather is
a barrier and shared slots, then a real all-reduce between them; exchanges that
fail, answer wrongly or never answer; bad arguments."""
import threading
import time

import numpy as np
import pytest

import distribute

TOKEN = "python-exchange-test-token"


class SharedSlots:
    """An all-gather between threads: each rank puts its bytes in its slot and
    waits at the barrier; then every slot is read, and a second barrier keeps a
    fast rank's next gather from overwriting a slot before the others read it."""

    def __init__(self, size):
        self.slots = [None] * size
        self.calls = [0] * size
        self.barrier = threading.Barrier(size, timeout=60)

    def for_rank(self, rank):
        def all_gather(data):
            self.calls[rank] += 1
            self.slots[rank] = data
            self.barrier.wait()
            everyone = list(self.slots)
            self.barrier.wait()
            return everyone
        return all_gather


def on_threads(size, body):
    """body(rank) on one thread per rank: [("ok", value) or ("error", exception)] by rank."""
    outcomes = [None] * size

    def main(rank):
        try:
            outcomes[rank] = ("ok", body(rank))
        except BaseException as error:  # noqa: B902 -- the test inspects it
            outcomes[rank] = ("error", error)

    threads = [threading.Thread(target=main, args=(rank,)) for rank in range(size)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=150)
    assert not any(thread.is_alive() for thread in threads), "a rank did not return"
    return outcomes


def test_two_ranks_join_through_a_python_all_gather_and_all_reduce():
    exchange = SharedSlots(2)
    inputs = [np.arange(4099, dtype=np.float64) * (rank + 1) - 7 * rank for rank in range(2)]
    reference = inputs[0] + inputs[1]

    def rank_main(rank):
        with distribute.Context.from_exchange(rank, 2, exchange.for_rank(rank), token=TOKEN,
                                              connect_timeout_ms=60000) as context:
            assert (context.rank, context.size) == (rank, 2)
            data = inputs[rank].copy()
            context.world.all_reduce(data, "sum")
            counts = np.array([rank + 1], np.int32)
            context.world.all_reduce(counts, "max")
            return data, int(counts[0])

    for kind, value in on_threads(2, rank_main):
        assert kind == "ok", value
        data, count = value
        np.testing.assert_array_equal(data, reference)
        assert count == 2
    assert exchange.calls[0] == exchange.calls[1] >= 1


def test_one_rank_joins_alone():
    gathered = []

    def all_gather(data):
        gathered.append(data)
        return [data]

    with distribute.Context.from_exchange(0, 1, all_gather, token=TOKEN) as context:
        assert (context.rank, context.size) == (0, 1)
        data = np.array([1.5, -2.0], np.float32)
        context.world.all_reduce(data, "sum")
        np.testing.assert_array_equal(data, [1.5, -2.0])


def test_an_exchange_that_raises_fails_the_join_with_its_error_as_the_cause():
    raised = [RuntimeError(f"store unreachable from rank {rank}") for rank in range(2)]

    def rank_main(rank):
        def all_gather(data):
            raise raised[rank]
        return distribute.Context.from_exchange(rank, 2, all_gather, token=TOKEN, connect_timeout_ms=60000)

    start = time.monotonic()
    outcomes = on_threads(2, rank_main)
    assert time.monotonic() - start < 30, "a failed exchange must not wait for the connect deadline"
    for rank, (kind, error) in enumerate(outcomes):
        assert kind == "error", error
        assert isinstance(error, distribute.DistError) and error.status < 0
        assert error.__cause__ is raised[rank]
        assert "exchange" in error.message.lower(), error.message
        assert f"store unreachable from rank {rank}" in error.message


def test_an_answer_of_the_wrong_shape_fails_the_join():
    for answer, expected in (([b"x"], "1 items for 2 ranks"), (None, "NoneType"),
                             (lambda data: [data, data + b"!"], "expected")):
        def all_gather(data, answer=answer):
            return answer(data) if callable(answer) else answer
        with pytest.raises(distribute.DistError) as caught:
            distribute.Context.from_exchange(0, 2, all_gather, token=TOKEN, connect_timeout_ms=30000)
        assert isinstance(caught.value.__cause__, (ValueError, TypeError))
        assert expected in caught.value.message, caught.value.message


def test_an_exchange_that_never_answers_ends_at_the_connect_deadline():
    release = threading.Event()

    def all_gather(data):
        release.wait(60)
        return [data, data]

    start = time.monotonic()
    try:
        with pytest.raises(distribute.DistTimeoutError):
            distribute.Context.from_exchange(0, 2, all_gather, token=TOKEN, connect_timeout_ms=1000)
        assert time.monotonic() - start < 1 + 10
    finally:
        release.set()  # its late answer is dropped


@pytest.mark.parametrize("rank, size, field", [(2, 2, "rank"), (-1, 2, "rank"), (0, 0, "size")])
def test_ranks_out_of_range_are_refused_by_the_library(rank, size, field):
    with pytest.raises(distribute.InvalidArgumentError) as caught:
        distribute.Context.from_exchange(rank, size, lambda data: [data] * max(size, 1), token=TOKEN)
    assert field in caught.value.message


def test_arguments_python_cannot_pass_are_refused_before_the_library():
    with pytest.raises(distribute.InvalidArgumentError, match="callable"):
        distribute.Context.from_exchange(0, 1, None)
    with pytest.raises(distribute.InvalidArgumentError, match="32 bits"):
        distribute.Context.from_exchange(2**32, 1, lambda data: [data])
    with pytest.raises(distribute.InvalidArgumentError, match="int"):
        distribute.Context.from_exchange("0", 1, lambda data: [data])


class PolledSlots:
    """A nonblocking all-gather (start/test, as over torch's Store): start puts
    this rank's bytes in round r's slot, test answers once every slot of the
    round is filled; free counts the rounds the library released."""

    def __init__(self, size):
        self.rounds = {}
        self.lock = threading.Lock()
        self.tests = [0] * size
        self.freed = [0] * size

    def for_rank(self, rank):
        slots = self
        calls = [0]

        class Exchange:
            def start(self, data):
                with slots.lock:
                    round_slots = slots.rounds.setdefault(calls[0], [None] * len(slots.tests))
                    round_slots[rank] = data
                calls[0] += 1
                return calls[0] - 1

            def test(self, round_index):
                slots.tests[rank] += 1
                with slots.lock:
                    parts = list(slots.rounds[round_index])
                return None if any(part is None for part in parts) else parts

            def free(self, round_index):
                slots.freed[rank] += 1

        return Exchange()


def test_two_ranks_join_through_a_nonblocking_exchange_polled_on_the_joining_thread():
    exchange = PolledSlots(2)

    def rank_main(rank):
        with distribute.Context.from_exchange(rank, 2, exchange.for_rank(rank), token=TOKEN,
                                              connect_timeout_ms=60000) as context:
            data = np.array([rank + 1.5, -rank], np.float32)
            context.world.all_reduce(data, "sum")
            return data

    for kind, value in on_threads(2, rank_main):
        assert kind == "ok", value
        np.testing.assert_array_equal(value, [4.0, -1.0])
    assert exchange.freed == [len(exchange.rounds)] * 2
    assert min(exchange.tests) >= len(exchange.rounds)


def test_a_nonblocking_exchange_whose_test_raises_fails_the_join_with_its_error():
    raised = ValueError("the store lost key oob/0")

    class Failing:
        def start(self, data):
            return 1

        def test(self, handle):
            raise raised

    with pytest.raises(distribute.DistError) as caught:
        distribute.Context.from_exchange(0, 2, Failing(), token=TOKEN, connect_timeout_ms=30000)
    assert caught.value.__cause__ is raised
    assert "the store lost key oob/0" in caught.value.message
