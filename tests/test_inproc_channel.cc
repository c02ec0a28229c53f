// InProcessGroup (support/inproc_channel.h): message order per pair,
// zero-byte messages, sends that complete before their receive is posted,
// direct delivery, signature and size checks, the end-of-call agreement,
// deadlock detection, abort and deadlines. Each rank is a thread; every wait
// has a deadline of a few seconds, so a bug fails instead of hanging.
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "collectives/signature.h"
#include "support/inproc_channel.h"
#include "transport/channel.h"

// Last: cmocka defines a fail() macro that would clash with dist::fail. Its
// 1.1 header declares its C functions without extern "C" for C++.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using dist::CallSignature;
using dist::Channel;
using dist::CollectiveKind;
using dist::DType;
using dist::InProcessGroup;
using dist::RankOutcome;
using dist::ReduceOp;
using dist::Status;
using dist::TransferId;
using Clock = std::chrono::steady_clock;

const auto kDeadline = std::chrono::seconds(5);

CallSignature all_reduce_of(uint64_t count) {
  CallSignature signature;
  signature.kind = CollectiveKind::kAllReduce;
  signature.dtype = DType::F32;
  signature.op = ReduceOp::SUM;
  signature.count = count;
  return signature;
}

// Assertions for rank threads (cmocka's must run on the main thread): the
// failure travels back as the rank's outcome.
void check(bool condition, const std::string& what) {
  if (!condition) throw dist::Error(Status::kInternal, "check failed: " + what);
}

void begin_call(Channel& channel, const CallSignature& signature, uint64_t seq,
                std::chrono::milliseconds timeout = kDeadline) {
  channel.begin(dist::call_words(signature), seq, Clock::now() + timeout);
}

void expect_ok(const std::vector<RankOutcome>& outcomes) {
  for (size_t rank = 0; rank < outcomes.size(); ++rank) {
    if (outcomes[rank].status != Status::kOk) {
      fail_msg("rank %zu failed with %d: %s", rank, static_cast<int>(outcomes[rank].status),
               outcomes[rank].message.c_str());
    }
  }
}

// Every rank failed with `status`, and each message contains every needle.
void expect_all_failed(const std::vector<RankOutcome>& outcomes, Status status, const std::vector<std::string>& needles) {
  for (size_t rank = 0; rank < outcomes.size(); ++rank) {
    const RankOutcome& outcome = outcomes[rank];
    if (outcome.status != status) {
      fail_msg("rank %zu ended with status %d, expected %d (message: %s)", rank, static_cast<int>(outcome.status),
               static_cast<int>(status), outcome.message.c_str());
    }
    for (const std::string& needle : needles) {
      if (outcome.message.find(needle) == std::string::npos) {
        fail_msg("rank %zu: message \"%s\" does not contain \"%s\"", rank, outcome.message.c_str(), needle.c_str());
      }
    }
  }
}

// ---- Tests ------------------------------------------------------------------------

// The k-th send from a to b lands in the k-th receive b posts from a, whatever
// the timing, while other pairs interleave.
void test_order_per_pair(void**) {
  constexpr int kMessages = 200;
  InProcessGroup group(3);
  std::vector<std::vector<int32_t>> got(3, std::vector<int32_t>(2 * kMessages, -1));
  expect_ok(run_ranks(group, [&](int rank, Channel& channel) {
    begin_call(channel, all_reduce_of(1), 0);
    std::vector<TransferId> ids;
    std::vector<int32_t> values(kMessages);
    const int peer_a = (rank + 1) % 3;
    const int peer_b = (rank + 2) % 3;
    for (int i = 0; i < kMessages; ++i) {
      values[i] = rank * 1000 + i;
      // Alternate the order of posting so some receives come first, some sends.
      if (i % 3 == 0) ids.push_back(channel.recv(peer_a, &got[rank][i], sizeof(int32_t)));
      ids.push_back(channel.send(peer_a, &values[i], sizeof(int32_t)));
      ids.push_back(channel.send(peer_b, &values[i], sizeof(int32_t)));
      if (i % 3 != 0) ids.push_back(channel.recv(peer_a, &got[rank][i], sizeof(int32_t)));
      ids.push_back(channel.recv(peer_b, &got[rank][kMessages + i], sizeof(int32_t)));
      if (i % 7 == 0) std::this_thread::yield();
    }
    for (TransferId id : ids) channel.wait(id);
    channel.end();
  }));
  for (int rank = 0; rank < 3; ++rank) {
    for (int i = 0; i < kMessages; ++i) {
      assert_int_equal(got[rank][i], ((rank + 1) % 3) * 1000 + i);
      assert_int_equal(got[rank][kMessages + i], ((rank + 2) % 3) * 1000 + i);
    }
  }
}

// Zero-byte messages (null buffers) complete and keep their place in the order.
void test_zero_byte_messages(void**) {
  InProcessGroup group(2);
  int32_t got = 0;
  expect_ok(run_ranks(group, [&](int rank, Channel& channel) {
    begin_call(channel, all_reduce_of(0), 7);
    if (rank == 0) {
      const int32_t value = 42;
      TransferId a = channel.send(1, nullptr, 0);
      TransferId b = channel.send(1, &value, sizeof value);
      TransferId c = channel.send(1, nullptr, 0);
      channel.wait_all({a, b, c});
    } else {
      TransferId a = channel.recv(0, nullptr, 0);
      TransferId b = channel.recv(0, &got, sizeof got);
      TransferId c = channel.recv(0, nullptr, 0);
      channel.wait_all({a, b, c});
    }
    channel.end();
  }));
  assert_int_equal(got, 42);
}

// A send completes before its receive is posted: the sender may reuse its
// buffer, and the receiver still gets what was sent. Two ranks that both send
// and wait before receiving do not deadlock.
void test_send_completes_before_receive(void**) {
  InProcessGroup group(2);
  std::atomic<bool> sent{false};
  std::vector<int64_t> got(2, 0);
  expect_ok(run_ranks(group, [&](int rank, Channel& channel) {
    begin_call(channel, all_reduce_of(1), 0);
    int64_t value = 100 + rank;
    channel.wait(channel.send(1 - rank, &value, sizeof value));
    value = -1;  // reused after the send completed
    if (rank == 0) sent = true;
    while (rank == 1 && !sent) std::this_thread::yield();
    channel.wait(channel.recv(1 - rank, &got[rank], sizeof(int64_t)));
    channel.end();
  }));
  assert_int_equal(got[0], 101);
  assert_int_equal(got[1], 100);
}

// A receive posted first is filled directly by the send; test() reports
// progress without blocking.
void test_receive_posted_first(void**) {
  InProcessGroup group(2);
  std::atomic<bool> posted{false};
  std::vector<unsigned char> got(1 << 20, 0);
  expect_ok(run_ranks(group, [&](int rank, Channel& channel) {
    begin_call(channel, all_reduce_of(1), 0);
    if (rank == 1) {
      TransferId id = channel.recv(0, got.data(), got.size());
      check(!channel.test(id), "a receive completed before anything was sent");
      posted = true;
      while (!channel.test(id)) std::this_thread::yield();
    } else {
      std::vector<unsigned char> data(1 << 20);
      for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 13 + 1);
      while (!posted) std::this_thread::yield();
      TransferId id = channel.send(1, data.data(), data.size());
      // The receive was waiting: delivery happened inside send().
      check(channel.test(id), "the send did not complete at once");
    }
    channel.end();
  }));
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != static_cast<unsigned char>(i * 13 + 1)) fail_msg("byte %zu differs", i);
  }
}

// A message shorter than the receive is fine; longer is a mismatch that fails
// both ranks with a message naming the sizes.
void test_truncation_is_mismatch(void**) {
  InProcessGroup group(2);
  expect_ok(run_ranks(group, [&](int rank, Channel& channel) {
    begin_call(channel, all_reduce_of(4), 0);
    int32_t data[4] = {1, 2, 3, 4};
    if (rank == 0) channel.wait(channel.send(1, data, 2 * sizeof(int32_t)));
    if (rank == 1) channel.wait(channel.recv(0, data, sizeof data));
    channel.end();
  }));

  InProcessGroup failing(2);
  const auto outcomes = run_ranks(failing, [&](int rank, Channel& channel) {
    begin_call(channel, all_reduce_of(4), 3);
    int32_t data[4] = {1, 2, 3, 4};
    if (rank == 0) channel.wait(channel.send(1, data, sizeof data));
    if (rank == 1) channel.wait(channel.recv(0, data, 2 * sizeof(int32_t)));
    channel.end();
  });
  expect_all_failed(outcomes, Status::kMismatch,
                    {"rank 0 sent 16 bytes to rank 1", "at most 8 bytes", "all_reduce(f32, sum, count=4) (call 3)"});
}

// Messages carry the sender's call: a receive in a different call fails every
// rank with both calls named.
void test_signature_mismatch(void**) {
  InProcessGroup group(2);
  const auto outcomes = run_ranks(group, [&](int rank, Channel& channel) {
    begin_call(channel, all_reduce_of(rank == 1 ? 10 : 20), 3);
    float data[20] = {};
    TransferId r = channel.recv(1 - rank, data, sizeof data);
    TransferId s = channel.send(1 - rank, data, (rank == 1 ? 10 : 20) * sizeof(float));
    channel.wait(r);
    channel.wait(s);
    channel.end();
  });
  expect_all_failed(outcomes, Status::kMismatch,
                    {"called all_reduce(f32, sum, count=10)", "called all_reduce(f32, sum, count=20)", "(call 3)"});
}

// Ranks at different sequence numbers mismatch too, each call named with its number.
void test_sequence_mismatch(void**) {
  InProcessGroup group(2);
  const auto outcomes = run_ranks(group, [&](int rank, Channel& channel) {
    begin_call(channel, all_reduce_of(1), rank == 0 ? 4 : 5);
    float value = 1;
    float got = 0;
    channel.send_recv(1 - rank, &value, sizeof value, 1 - rank, &got, sizeof got);
    channel.end();
  });
  expect_all_failed(outcomes, Status::kMismatch, {"(call 4)", "(call 5)"});
}

// Ranks that exchange no message at all still fail at end() when their calls
// differ, and a message nobody received fails the call.
void test_end_checks_agreement(void**) {
  InProcessGroup group(3);
  CallSignature broadcast;
  broadcast.kind = CollectiveKind::kBroadcast;
  broadcast.dtype = DType::I32;
  broadcast.root = 0;
  broadcast.count = 5;
  auto outcomes = run_ranks(group, [&](int rank, Channel& channel) {
    CallSignature mine = broadcast;
    if (rank == 2) mine.root = 1;
    begin_call(channel, mine, 0);
    channel.end();
  });
  expect_all_failed(outcomes, Status::kMismatch,
                    {"broadcast(i32, root=1, count=5)", "broadcast(i32, root=0, count=5)", "rank 2 called"});

  InProcessGroup leftover(2);
  outcomes = run_ranks(leftover, [&](int rank, Channel& channel) {
    begin_call(channel, all_reduce_of(1), 9);
    const int32_t value = 1;
    if (rank == 0) channel.wait(channel.send(1, &value, sizeof value));
    channel.end();
  });
  expect_all_failed(outcomes, Status::kMismatch, {"rank 0 sent 4 bytes to rank 1", "never received", "(call 9)"});

  // Agreeing calls with all messages received pass, repeatedly.
  InProcessGroup agreeing(4);
  expect_ok(run_ranks(agreeing, [&](int rank, Channel& channel) {
    for (uint64_t seq = 0; seq < 50; ++seq) {
      begin_call(channel, all_reduce_of(seq), seq);
      int32_t value = rank;
      int32_t got = -1;
      channel.send_recv((rank + 1) % 4, &value, sizeof value, (rank + 3) % 4, &got, sizeof got);
      check(got == (rank + 3) % 4, "wrong value " + std::to_string(got));
      channel.end();
    }
  }));
}

// When every rank waits for a message nobody will send, the group fails at
// once (long before the deadline): kInternal naming who waits for whom when
// the calls agree, kMismatch when they differ.
void test_deadlock_detected(void**) {
  InProcessGroup group(2);
  const auto start = Clock::now();
  auto outcomes = run_ranks(group, [&](int rank, Channel& channel) {
    begin_call(channel, all_reduce_of(1), 2);
    int32_t got = 0;
    channel.wait(channel.recv(1 - rank, &got, sizeof got));
    channel.end();
  });
  expect_all_failed(outcomes, Status::kInternal,
                    {"deadlocked", "rank 0 waits for 4 bytes from rank 1", "rank 1 waits for 4 bytes from rank 0"});
  assert_true(Clock::now() - start < std::chrono::seconds(2));

  InProcessGroup roots(2);
  outcomes = run_ranks(roots, [&](int rank, Channel& channel) {
    CallSignature reduce;
    reduce.kind = CollectiveKind::kReduce;
    reduce.dtype = DType::I32;
    reduce.root = rank;  // each rank believes it is the root and waits for the other
    reduce.count = 1;
    begin_call(channel, reduce, 0);
    int32_t got = 0;
    channel.wait(channel.recv(1 - rank, &got, sizeof got));
    channel.end();
  });
  expect_all_failed(outcomes, Status::kMismatch,
                    {"rank 1 called reduce(i32, sum, root=1, count=1)", "rank 0 called reduce(i32, sum, root=0, count=1)"});
}

// abort() wakes every waiter with the given status and message; later calls
// fail the same way.
void test_abort_wakes_everyone(void**) {
  for (Status status : {Status::kAborted, Status::kPeerFailed}) {
    InProcessGroup group(4);
    std::atomic<int> waiting{0};
    std::atomic<bool> cleanup_threw{false};
    std::thread aborter([&] {
      while (waiting < 3) std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      group.abort(status, "rank 3 (task worker:3) stopped answering");
    });
    const auto outcomes = run_ranks(group, [&](int rank, Channel& channel) {
      int32_t got = 0;
      if (rank == 3) {
        // Stays out of the call (a dead peer) until the group has failed.
        while (group.failure() == Status::kOk) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        begin_call(channel, all_reduce_of(1), 0);
        return;
      }
      begin_call(channel, all_reduce_of(1), 0);
      TransferId id = channel.recv(3, &got, sizeof got);
      ++waiting;
      try {
        channel.wait(id);
      } catch (const dist::Error&) {
        // Ending the failed call from the error path only cleans up.
        try {
          channel.end();
        } catch (const dist::Error&) {
          cleanup_threw = true;
        }
        throw;
      }
    });
    aborter.join();
    assert_false(cleanup_threw.load());
    expect_all_failed(outcomes, status, {"rank 3 (task worker:3) stopped answering"});
    assert_int_equal(static_cast<int>(group.failure()), static_cast<int>(status));

    // Every later operation fails too.
    const auto later = run_ranks(group, [&](int, Channel& channel) { begin_call(channel, all_reduce_of(1), 1); });
    expect_all_failed(later, status, {"stopped answering"});
  }
}

// A wait past the call's deadline fails with kTimeout naming the peer and what
// was awaited, and fails the group for everyone.
void test_deadline(void**) {
  InProcessGroup group(2);
  const auto start = Clock::now();
  // Rank 1 never enters the call, so nothing looks like a deadlock: only the
  // deadline can end rank 0's wait.
  const auto outcomes = run_ranks(group, [&](int rank, Channel& channel) {
    if (rank == 1) return;
    begin_call(channel, all_reduce_of(3), 11, std::chrono::milliseconds(200));
    float got[3];
    channel.wait(channel.recv(1, got, sizeof got));
  });
  const auto elapsed = Clock::now() - start;
  assert_int_equal(static_cast<int>(outcomes[0].status), static_cast<int>(Status::kTimeout));
  for (const char* needle : {"rank 0 timed out", "all_reduce(f32, sum, count=3) (call 11)", "12 bytes from rank 1"}) {
    if (outcomes[0].message.find(needle) == std::string::npos) {
      fail_msg("\"%s\" does not contain \"%s\"", outcomes[0].message.c_str(), needle);
    }
  }
  assert_true(elapsed >= std::chrono::milliseconds(200));
  assert_true(elapsed < std::chrono::seconds(3));
  assert_int_equal(static_cast<int>(group.failure()), static_cast<int>(Status::kTimeout));

  // end() honours the deadline as well, naming the ranks that never arrived.
  InProcessGroup ending(3);
  const auto end_outcomes = run_ranks(ending, [&](int rank, Channel& channel) {
    if (rank == 2) return;
    begin_call(channel, all_reduce_of(1), 0, std::chrono::milliseconds(100));
    channel.end();
  });
  assert_int_equal(static_cast<int>(end_outcomes[0].status), static_cast<int>(Status::kTimeout));
  assert_true(end_outcomes[0].message.find("waiting for rank(s) 2") != std::string::npos);
}

// Misuse is reported as an internal error: ending with a transfer not waited
// for, waiting for an unknown id, a peer out of range, calls nested.
void test_misuse(void**) {
  InProcessGroup unwaited(2);
  auto outcomes = run_ranks(unwaited, [&](int rank, Channel& channel) {
    begin_call(channel, all_reduce_of(1), 0);
    int32_t value = 0;
    if (rank == 0) channel.send(1, &value, sizeof value);
    if (rank == 1) channel.wait(channel.recv(0, &value, sizeof value));
    channel.end();
  });
  expect_all_failed(outcomes, Status::kInternal, {"without waiting for its send to rank 1"});

  InProcessGroup group(2);
  Channel& channel = group.channel(0);
  begin_call(channel, all_reduce_of(1), 0);
  auto expect_internal = [](const std::function<void()>& action, const char* needle) {
    try {
      action();
    } catch (const dist::Error& error) {
      assert_int_equal(static_cast<int>(error.status()), static_cast<int>(Status::kInternal));
      if (std::string(error.what()).find(needle) == std::string::npos) {
        fail_msg("\"%s\" does not contain \"%s\"", error.what(), needle);
      }
      return;
    }
    fail_msg("no error; expected one containing \"%s\"", needle);
  };
  expect_internal([&] { channel.wait(12); }, "never posted");
  expect_internal([&] { channel.send(2, nullptr, 0); }, "to rank 2 of a group of 2");
  expect_internal([&] { begin_call(channel, all_reduce_of(1), 1); }, "before ending");
  try {
    group.channel(2);
    fail_msg("channel(2) of a group of 2 did not throw");
  } catch (const dist::Error& error) {
    assert_int_equal(static_cast<int>(error.status()), static_cast<int>(Status::kInvalidArgument));
  }
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(test_order_per_pair),
      cmocka_unit_test(test_zero_byte_messages),
      cmocka_unit_test(test_send_completes_before_receive),
      cmocka_unit_test(test_receive_posted_first),
      cmocka_unit_test(test_truncation_is_mismatch),
      cmocka_unit_test(test_signature_mismatch),
      cmocka_unit_test(test_sequence_mismatch),
      cmocka_unit_test(test_end_checks_agreement),
      cmocka_unit_test(test_deadlock_detected),
      cmocka_unit_test(test_abort_wakes_everyone),
      cmocka_unit_test(test_deadline),
      cmocka_unit_test(test_misuse),
  };
  return cmocka_run_group_tests_name("inproc_channel", tests, nullptr, nullptr);
}
