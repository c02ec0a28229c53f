// Single-copy all-gather and all-to-all, and the broadcast (streamed or not)
// (collectives/shm/single_copy.h, read_from_peers.cc) and the all-reduce that
// writes into the peers' results (allreduce_split_write.cc), with the ranks
// as threads of this process: the probe that decides whether processes can
// reach each other's memory; the collectives, in and out of place, at sizes
// below, at and above their bounds, by both paths, against references
// computed here; and a peer whose memory cannot be read or written, which
// must fail every rank's call, naming who could not reach whom.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/shm/algorithms.h"
#include "collectives/shm/run_shm.h"
#include "collectives/shm/single_copy.h"
#include "internal_test_support.h"
#include "shm_ranks.h"

namespace {

using dist::DType;

constexpr size_t kSlotBytes = 64 * 1024;

// A pid no process has: a child's, once it has exited and been reaped.
pid_t pid_of_a_reaped_child() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  assert_true(child > 0);
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  return child;
}

void test_probe(void** state) {
  (void)state;
  const dist::SingleCopyProbe mine = dist::single_copy_probe();
  assert_int_equal(mine.pid, static_cast<uint64_t>(getpid()));
  assert_true(mine.value != 0);
  // The same value at the same address every time.
  const dist::SingleCopyProbe again = dist::single_copy_probe();
  assert_true(again.address == mine.address && again.value == mine.value);
  assert_true(dist::single_copy_reaches(mine));

  dist::SingleCopyProbe wrong_value = mine;
  wrong_value.value ^= 1;
  assert_false(dist::single_copy_reaches(wrong_value));
  dist::SingleCopyProbe gone = mine;
  gone.pid = static_cast<uint64_t>(pid_of_a_reaped_child());
  assert_false(dist::single_copy_reaches(gone));
  assert_false(dist::single_copy_reaches(dist::SingleCopyProbe{}));  // a rank that does not want the path
  // The probe writes the value back unchanged.
  assert_true(dist::single_copy_probe().value == mine.value);
  // Memory that can be read but not written does not pass.
  static const uint64_t read_only = 0x5eed5eed5eed5eedull;
  const dist::SingleCopyProbe unwritable{static_cast<uint64_t>(getpid()), reinterpret_cast<uintptr_t>(&read_only),
                                         read_only};
  assert_false(dist::single_copy_reaches(unwritable));

  // Reads that fail say why.
  uint64_t into = 0;
  assert_int_equal(dist::read_process_memory(getpid(), nullptr, &into, sizeof into), EFAULT);
  assert_int_equal(dist::read_process_memory(static_cast<pid_t>(gone.pid), &mine, &into, sizeof into), ESRCH);
  // A read of nothing succeeds without touching anything.
  assert_int_equal(dist::read_process_memory(getpid(), nullptr, nullptr, 0), 0);
}

// Rank r's byte i of its send buffer (all-to-all: byte i of the whole
// buffer, block b bound for rank b).
unsigned char byte_of(int rank, size_t i) { return static_cast<unsigned char>((i * 131 + rank * 29 + i / 977) % 251); }

dist::CallSignature signature_of(dist::CollectiveKind kind, size_t count, DType dtype, int root = -1) {
  dist::CallSignature signature;
  signature.kind = kind;
  signature.dtype = dtype;
  signature.count = count;
  signature.root = root;
  return signature;
}

// Every rank runs both collectives, out of place and in place, for each
// count, and checks every byte it received.
void run_block_moves(int n, bool single_copy, DType dtype, const std::vector<size_t>& counts) {
  const std::vector<pid_t> pids = single_copy ? std::vector<pid_t>(static_cast<size_t>(n), getpid())
                                              : std::vector<pid_t>();
  const std::string purpose = std::string("moves-") + (single_copy ? "single" : "slots");
  fail_on_errors(run_ranks(
      purpose, n, kSlotBytes,
      [&](dist::ShmGroup& group, int r) {
        if (group.single_copy() != single_copy) throw std::runtime_error("the group's path is not the one asked for");
        const size_t element = dist::size_of(dtype);
        uint64_t seq = 0;
        auto begin = [&](dist::CollectiveKind kind, size_t count) {
          group.begin(signature_of(kind, count, dtype), ++seq, std::chrono::seconds(30));
        };
        auto expect = [&](const std::string& what, size_t count, const std::vector<unsigned char>& got,
                          auto want) {
          for (size_t i = 0; i < got.size(); ++i) {
            if (got[i] != want(i)) {
              throw std::runtime_error(what + " of " + std::to_string(count) + " elements, " + std::to_string(n) +
                                       " ranks: byte " + std::to_string(i) + " is " + std::to_string(got[i]) +
                                       ", expected " + std::to_string(want(i)));
            }
          }
        };
        for (size_t count : counts) {
          const size_t block = count * element;
          const size_t all = block * static_cast<size_t>(n);
          // All-gather: block q of the result is rank q's input.
          auto gathered = [&](size_t i) { return byte_of(static_cast<int>(i / block), i % block); };
          std::vector<unsigned char> input(block), out(all, 0xEE);
          for (size_t i = 0; i < block; ++i) input[i] = byte_of(r, i);
          begin(dist::CollectiveKind::kAllGather, count);
          dist::run_shm_algorithm(group, {signature_of(dist::CollectiveKind::kAllGather, count, dtype), input.data(), out.data()});
          expect("all-gather", count, out, gathered);
          std::vector<unsigned char> in_place(all, 0xEE);
          std::copy(input.begin(), input.end(), in_place.begin() + static_cast<std::ptrdiff_t>(r * block));
          begin(dist::CollectiveKind::kAllGather, count);
          dist::run_shm_algorithm(group, {signature_of(dist::CollectiveKind::kAllGather, count, dtype),
                                          in_place.data() + static_cast<size_t>(r) * block, in_place.data()});
          expect("in-place all-gather", count, in_place, gathered);

          // All-to-all: block q of rank r's result is block r of rank q's input.
          auto exchanged = [&](size_t i) {
            return byte_of(static_cast<int>(i / block), static_cast<size_t>(r) * block + i % block);
          };
          std::vector<unsigned char> send(all), received(all, 0xEE);
          for (size_t i = 0; i < all; ++i) send[i] = byte_of(r, i);
          begin(dist::CollectiveKind::kAllToAll, count);
          dist::run_shm_algorithm(group, {signature_of(dist::CollectiveKind::kAllToAll, count, dtype), send.data(), received.data()});
          expect("all-to-all", count, received, exchanged);
          begin(dist::CollectiveKind::kAllToAll, count);
          dist::run_shm_algorithm(group, {signature_of(dist::CollectiveKind::kAllToAll, count, dtype), send.data(), send.data()});
          expect("in-place all-to-all", count, send, exchanged);

          // Broadcast from the last rank: everyone ends with its input.
          const int root = n - 1;
          std::vector<unsigned char> buffer(block, 0xEE);
          if (r == root) buffer = input;
          group.begin(signature_of(dist::CollectiveKind::kBroadcast, count, dtype, root), ++seq,
                      std::chrono::seconds(30));
          dist::run_shm_algorithm(group, {signature_of(dist::CollectiveKind::kBroadcast, count, dtype, root), nullptr, buffer.data()});
          expect("broadcast", count, buffer, [&](size_t i) { return byte_of(root, i); });
        }
      },
      pids));
}

void test_blocks_by_both_paths(void** state) {
  (void)state;
  // f64: below, at and above the lower bounds (32 KiB a block; a streamed
  // broadcast's 64 KiB), a prime count, more than a slot, and around a
  // streamed broadcast's upper bound (2 MiB); i8: odd byte counts around the
  // lower bounds.
  const std::vector<size_t> doubles = {0, 1, 4095, 4096, 4097, 8191, 8192, 8193, 100003, 262144, 262145};
  const std::vector<size_t> bytes = {32767, 32768, 32771, 65535, 65536, 65539, 70001};
  for (int n = 2; n <= 3; ++n) {
    for (bool single_copy : {true, false}) {
      run_block_moves(n, single_copy, DType::F64, doubles);
      run_block_moves(n, single_copy, DType::I8, bytes);
    }
  }
}

// The split all-reduce, in and out of place, by both paths: on a group with
// single copies, from 256 KiB to its upper bounds, each rank writes its
// reduced slices into the others' results. Sizes on both sides of the lower
// bound and of the out-of-place upper bounds (those in place, 16 and 64 MiB,
// only from below), several steps of a 64 KiB slot, against references.
void run_all_reduce_writes(int n, bool single_copy) {
  const std::vector<pid_t> pids = single_copy ? std::vector<pid_t>(static_cast<size_t>(n), getpid())
                                              : std::vector<pid_t>();
  // Doubles: 256 KiB less one element, 256 KiB, a prime count, and around
  // 4 MiB and 16 MiB.
  const std::vector<size_t> counts = {32767, 32768, 100003, 524288, 524289, 2097152, 2097153};
  const std::string purpose = std::string("writes-") + (single_copy ? "single" : "slots");
  fail_on_errors(run_ranks(
      purpose, n, kSlotBytes,
      [&](dist::ShmGroup& group, int r) {
        uint64_t seq = 0;
        auto value = [](int rank, size_t i) { return static_cast<double>((i * 7 + static_cast<size_t>(rank) * 3) % 23); };
        const bool shared = group.shares_cores();
        for (size_t count : counts) {
          const size_t bytes = count * sizeof(double);
          for (bool in_place : {false, true}) {
            const size_t most = in_place ? (shared ? dist::kSplitWriteMaxBytesInPlaceSharedCores
                                                   : dist::kSplitWriteMaxBytesInPlace)
                                         : (shared ? dist::kSplitWriteMaxBytesSharedCores : dist::kSplitWriteMaxBytes);
            const bool writes = single_copy && bytes >= dist::kSplitWriteMinBytes && bytes <= most;
            if (dist::takes_split_write(dist::shm_selection(group, bytes, in_place)) != writes) {
              throw std::runtime_error("takes_split_write(" + std::to_string(bytes) + ", in place " +
                                       std::to_string(in_place) + ") is not " + std::to_string(writes));
            }
            for (dist::ReduceOp op : {dist::ReduceOp::SUM, dist::ReduceOp::MEAN, dist::ReduceOp::MAX}) {
              std::vector<double> input(count), out(count, -1);
              for (size_t i = 0; i < count; ++i) input[i] = value(r, i);
              if (in_place) out = input;
              dist::CallSignature signature = signature_of(dist::CollectiveKind::kAllReduce, count, DType::F64);
              signature.op = op;
              group.begin(signature, ++seq, std::chrono::seconds(30));
              dist::run_shm_algorithm(group, {signature, in_place ? out.data() : input.data(), out.data()});
              for (size_t i = 0; i < count; ++i) {
                double want = op == dist::ReduceOp::MAX ? value(0, i) : 0;
                for (int q = 0; q < n; ++q) {
                  want = op == dist::ReduceOp::MAX ? std::max(want, value(q, i)) : want + value(q, i);
                }
                if (op == dist::ReduceOp::MEAN) want /= n;
                if (out[i] != want) {
                  throw std::runtime_error(std::string(in_place ? "in-place " : "") + "all-reduce (op " +
                                           std::to_string(static_cast<int>(op)) + ") of " + std::to_string(count) +
                                           " doubles, " + std::to_string(n) + " ranks: [" + std::to_string(i) +
                                           "] = " + std::to_string(out[i]) + ", expected " + std::to_string(want));
                }
              }
            }
          }
        }
      },
      pids));
}

void test_all_reduce_writes_by_both_paths(void** state) {
  (void)state;
  for (int n = 2; n <= 3; ++n) {
    for (bool single_copy : {true, false}) run_all_reduce_writes(n, single_copy);
  }
}

// Runs `call(group, rank)`, one collective of `kind` over `count` doubles,
// on two ranks of which the second's process is gone, and expects both calls
// to fail with kPeerFailed and a message containing `message`: rank 0's copy
// fails, and rank 1 must not return as if all went well.
template <typename Call>
void expect_both_ranks_fail(const char* purpose, dist::CollectiveKind kind, size_t count, const std::string& message,
                            Call call) {
  const std::vector<pid_t> pids = {getpid(), pid_of_a_reaped_child()};
  std::vector<dist::Status> statuses(2, dist::Status::kOk);
  const std::vector<std::string> errors = run_ranks(
      purpose, 2, kSlotBytes,
      [&](dist::ShmGroup& group, int r) {
        group.begin(signature_of(kind, count, DType::F64), 1, std::chrono::seconds(30));
        try {
          call(group, r);
        } catch (const dist::Error& e) {
          statuses[static_cast<size_t>(r)] = e.status();
          throw;
        }
      },
      pids);
  for (size_t r = 0; r < 2; ++r) {
    if (errors[r].find(message) == std::string::npos) {
      fail_msg("%s, rank %zu: \"%s\" does not say \"%s\"", purpose, r, errors[r].c_str(), message.c_str());
    }
    assert_int_equal(static_cast<int>(statuses[r]), static_cast<int>(dist::Status::kPeerFailed));
  }
}

void test_unreachable_peer_fails_every_rank(void** state) {
  (void)state;
  const size_t blocks = 4096;  // 32 KiB of doubles a block: the single-copy all-gather
  expect_both_ranks_fail("unreadable", dist::CollectiveKind::kAllGather, blocks, "rank 0 could not read rank 1's buffer",
                         [&](dist::ShmGroup& group, int r) {
                           std::vector<double> input(blocks, r), out(2 * blocks);
                           dist::run_shm_algorithm(group, {signature_of(dist::CollectiveKind::kAllGather, blocks, DType::F64),
                                                           input.data(), out.data()});
                         });
  const size_t count = 65536;  // 512 KiB of doubles: the writing split all-reduce
  expect_both_ranks_fail("unwritable", dist::CollectiveKind::kAllReduce, count,
                         "rank 0 could not write to rank 1's buffer", [&](dist::ShmGroup& group, int r) {
                           std::vector<double> input(count, r), out(count);
                           dist::run_shm_algorithm(group, {signature_of(dist::CollectiveKind::kAllReduce, count, DType::F64),
                                                           input.data(), out.data()});
                         });
  // The single-copy broadcast (32 KiB and more, a core for each rank) from
  // either rank: from rank 0 it writes into the gone rank 1's buffer, from
  // rank 1 rank 0 reads from it; both fail either way.
  if (dist::ShmGroup::usable_cores() < 2) {
    print_message("skipping the single-copy broadcast's cases: fewer usable cores than 2 ranks\n");
    return;
  }
  for (int root = 0; root < 2; ++root) {
    expect_both_ranks_fail(root == 0 ? "unwritable broadcast" : "unreadable broadcast",
                           dist::CollectiveKind::kBroadcast, blocks, "rank 0 could not read from or write to rank 1's buffer",
                           [&](dist::ShmGroup& group, int) {
                             std::vector<double> buffer(blocks, 1.0);
                             dist::run_shm_algorithm(
                                 group, {signature_of(dist::CollectiveKind::kBroadcast, blocks, DType::F64, root), nullptr,
                                         buffer.data()});
                           });
  }
}

// A rank that left the group after a failed call (ShmGroup::withdraw) is
// not copied to or from any more: the copies say so instead of touching its
// buffer, and the call's end names it as a peer failure on every rank.
void test_withdrawn_peer_is_left_alone(void** state) {
  (void)state;
  const std::vector<pid_t> pids(2, getpid());
  std::vector<double> buffer(4096, 7.0);
  std::vector<double> local(4096, 3.0);
  // Rank 1 withdraws (twice: the second returns at once), then rank 0 tries both ways.
  std::vector<int> results;
  fail_on_errors(run_ranks(
      "withdrawn-copies", 2, kSlotBytes,
      [&](dist::ShmGroup& group, int r) {
        group.begin(signature_of(dist::CollectiveKind::kBarrier, 0, DType::F64), 1, std::chrono::seconds(30));
        if (r == 1) {
          group.withdraw();
          group.withdraw();
        }
        group.arrive_and_wait();  // rank 1 announces after it withdrew
        group.next_step();
        if (r == 0) {
          results.push_back(group.read_from(1, buffer.data(), local.data(), buffer.size() * sizeof(double)));
          results.push_back(group.write_to(1, buffer.data(), local.data(), buffer.size() * sizeof(double)));
        }
      },
      pids));
  assert_int_equal(results.size(), 2);
  assert_int_equal(results[0], dist::kPeerWithdrew);
  assert_int_equal(results[1], dist::kPeerWithdrew);
  for (double v : buffer) assert_true(v == 7.0);  // not written
  for (double v : local) assert_true(v == 3.0);   // nothing read into it

  // A call's end names the withdrawn peer, on both ranks, as a peer failure.
  std::vector<dist::Status> statuses(2, dist::Status::kOk);
  const std::vector<std::string> errors = run_ranks(
      "withdrawn-end", 2, kSlotBytes,
      [&](dist::ShmGroup& group, int r) {
        group.begin(signature_of(dist::CollectiveKind::kAllGather, 4096, DType::F64), 1, std::chrono::seconds(30));
        dist::SingleCopyOutcome outcome;
        if (r == 0) {
          outcome.error = dist::kPeerWithdrew;
          outcome.peer = 1;
        }
        try {
          dist::end_single_copies(group, outcome, "read");
        } catch (const dist::Error& e) {
          statuses[static_cast<size_t>(r)] = e.status();
          throw;
        }
      },
      pids);
  for (size_t r = 0; r < 2; ++r) {
    if (errors[r].find("rank 0 could not read rank 1's buffer: rank 1 left the call after it failed there") ==
        std::string::npos) {
      fail_msg("rank %zu: \"%s\"", r, errors[r].c_str());
    }
    assert_int_equal(static_cast<int>(statuses[r]), static_cast<int>(dist::Status::kPeerFailed));
  }
}

// withdraw() returns only once no copy of a peer's is under way: rank 0
// writes into rank 1's buffer over and over while rank 1 withdraws; once
// withdraw() has returned, rank 1 fills its buffer with its own value, and
// no write of rank 0's may land there after that.
void test_withdraw_waits_for_copies_under_way(void** state) {
  (void)state;
  const std::vector<pid_t> pids(2, getpid());
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<unsigned char> theirs(256 * 1024, 0);
    std::vector<unsigned char> from(theirs.size(), 0xAB);
    std::atomic<bool> withdrawn{false};
    std::atomic<int> copies_done{0};
    fail_on_errors(run_ranks(
        "withdraw-race", 2, kSlotBytes,
        [&](dist::ShmGroup& group, int r) {
          if (r == 0) {
            // Copies until one is refused (or far more than it takes rank 1 to withdraw).
            for (int k = 0; k < 200000; ++k) {
              const int error = group.write_to(1, theirs.data(), from.data(), from.size());
              if (error == dist::kPeerWithdrew) return;
              if (error != 0) throw std::runtime_error("write_to: " + std::to_string(error));
              copies_done.fetch_add(1);
            }
            throw std::runtime_error("rank 1 withdrew, yet every copy went on");
          }
          while (copies_done.load() < 1 + trial % 5) {
          }
          group.withdraw();
          withdrawn = true;
          std::fill(theirs.begin(), theirs.end(), 0x11);
        },
        pids));
    assert_true(withdrawn.load());
    for (size_t i = 0; i < theirs.size(); ++i) {
      if (theirs[i] != 0x11) fail_msg("trial %d: byte %zu was written after withdraw() returned", trial, i);
    }
  }
}

void test_process_ended(void** state) {
  (void)state;
  assert_false(dist::process_ended(getpid()));
  assert_true(dist::process_ended(pid_of_a_reaped_child()));
  // A zombie (exited, not yet reaped) copies nothing either.
  const pid_t child = fork();
  if (child == 0) _exit(0);
  assert_true(child > 0);
  for (int k = 0; k < 1000 && !dist::process_ended(child); ++k) usleep(1000);
  assert_true(dist::process_ended(child));
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_probe),
      cmocka_unit_test(test_blocks_by_both_paths),
      cmocka_unit_test(test_all_reduce_writes_by_both_paths),
      cmocka_unit_test(test_unreachable_peer_fails_every_rank),
      cmocka_unit_test(test_withdrawn_peer_is_left_alone),
      cmocka_unit_test(test_withdraw_waits_for_copies_under_way),
      cmocka_unit_test(test_process_ended),
  };
  return cmocka_run_group_tests_name("shm_single_copy", tests, NULL, NULL);
}
