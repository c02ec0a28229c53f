// The all-reduce that reads the peers' inputs and writes their results
// (allreduce_read_write.cc) shares its chunks by claiming them
// (ShmGroup::claim_chunk), with the ranks as threads of this process mapping
// one real segment: what a claim returns within a call and afresh in the
// next, and the all-reduce with every rank's thread on one core, so that a
// rank that has done its own slice while a peer is off the core does the
// peer's chunks; its results, in and out of place, for counts below, at and
// above a chunk, uneven over the ranks, against references computed here.
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/shm/algorithms.h"
#include "collectives/shm/group.h"
#include "collectives/shm/segment.h"
#include "internal_test_support.h"
#include "shm_ranks.h"

namespace {

using dist::DType;
using dist::ReduceOp;

constexpr size_t kSlotBytes = 64 * 1024;
constexpr size_t kChunkDoubles = dist::kShmStepBytes / sizeof(double);

dist::CallSignature all_reduce_of(size_t count, ReduceOp op) {
  dist::CallSignature signature;
  signature.kind = dist::CollectiveKind::kAllReduce;
  signature.dtype = DType::F64;
  signature.op = op;
  signature.root = -1;
  signature.count = count;
  return signature;
}

void expect_claim(dist::ShmGroup& group, int owner, size_t chunks, size_t want, const char* what) {
  const size_t got = group.claim_chunk(owner, chunks);
  if (got != want) {
    throw std::runtime_error(std::string(what) + ": rank " + std::to_string(group.rank()) + " claimed chunk " +
                             std::to_string(got) + " of rank " + std::to_string(owner) + "'s " +
                             std::to_string(chunks) + ", expected " + std::to_string(want));
  }
}

// Call 1: rank 0 takes all 5 chunks of rank 1's part, then finds none left;
// after a step, so does rank 1, which takes all 3 of rank 0's. Call 2 starts
// afresh: every part's chunks are there again, from 0. A part of no chunks
// has none to give.
void test_claims_within_a_call_and_afresh(void** state) {
  (void)state;
  std::vector<uint64_t> taken_over(2);
  fail_on_errors(run_ranks("claims", 2, kSlotBytes, [&](dist::ShmGroup& group, int r) {
    group.begin(all_reduce_of(8, ReduceOp::SUM), 1, std::chrono::seconds(30));
    if (r == 0) {
      for (size_t c = 0; c < 5; ++c) expect_claim(group, 1, 5, c, "call 1");
      expect_claim(group, 1, 5, 5, "call 1, all taken");
    }
    group.arrive_and_wait();
    group.next_step();
    if (r == 1) {
      expect_claim(group, 1, 5, 5, "call 1, taken by rank 0");
      for (size_t c = 0; c < 3; ++c) expect_claim(group, 0, 3, c, "call 1");
      expect_claim(group, 0, 3, 3, "call 1, all taken");
      expect_claim(group, 0, 0, 0, "a part of no chunks");
    }
    group.arrive_and_wait();  // as the all-reduce's last step: no one claims ahead
    group.next_step();
    group.begin(all_reduce_of(8, ReduceOp::SUM), 2, std::chrono::seconds(30));
    expect_claim(group, r, 2, 0, "call 2");
    expect_claim(group, r, 2, 1, "call 2");
    expect_claim(group, r, 2, 2, "call 2, all taken");
    group.arrive_and_wait();
    group.next_step();
    taken_over[static_cast<size_t>(r)] = group.chunks_taken_over();
  }));
  assert_int_equal(taken_over[0], 5);
  assert_int_equal(taken_over[1], 3);
}

// The calling thread onto the first CPU of those it may use (a rank's
// thread: it throws rather than assert).
void onto_one_cpu() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed) != 0) {
    throw std::runtime_error("pthread_getaffinity_np failed");
  }
  int first = 0;
  while (first < CPU_SETSIZE && !CPU_ISSET(first, &allowed)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) {
    throw std::runtime_error("pthread_setaffinity_np to CPU " + std::to_string(first) + " failed");
  }
}

// Rank `rank`'s input of call `seq` at element i: small integers, so that
// sums and maxima are exact and every call's differ from the last's.
double input_of(int rank, uint64_t seq, size_t i) {
  return static_cast<double>((i * 5 + static_cast<size_t>(rank) * 11) % 29 + seq % 3);
}

// One all-reduce of `count` doubles checked against the reference.
void all_reduce_and_check(dist::ShmGroup& group, uint64_t seq, size_t count, ReduceOp op, bool in_place) {
  const int n = group.size();
  const int r = group.rank();
  std::vector<double> input(count), out(count, -1);
  for (size_t i = 0; i < count; ++i) input[i] = input_of(r, seq, i);
  if (in_place) out = input;
  group.begin(all_reduce_of(count, op), seq, std::chrono::seconds(60));
  dist::shm_allreduce_read_write(group, in_place ? out.data() : input.data(), out.data(), count, DType::F64, op);
  for (size_t i = 0; i < count; ++i) {
    double want = input_of(0, seq, i);
    for (int q = 1; q < n; ++q) {
      want = op == ReduceOp::MAX ? std::max(want, input_of(q, seq, i)) : want + input_of(q, seq, i);
    }
    if (op == ReduceOp::MEAN) want /= n;
    if (out[i] != want) {
      throw std::runtime_error(std::string(in_place ? "in place, " : "") + std::to_string(n) + " ranks, " +
                               std::to_string(count) + " doubles, op " + std::to_string(static_cast<int>(op)) +
                               ", call " + std::to_string(seq) + ": [" + std::to_string(i) + "] = " +
                               std::to_string(out[i]) + ", expected " + std::to_string(want));
    }
  }
}

// Every rank's thread on one CPU: a rank runs while the others wait for the
// core, so the one that finishes its slice first finds the others' chunks
// unclaimed and does them. The results must not depend on who did which
// chunk; and over the large calls some rank must have done another's.
void test_all_reduce_with_ranks_off_their_core(void** state) {
  (void)state;
  const std::vector<size_t> counts = {0, 1, 2, 3, kChunkDoubles - 1, kChunkDoubles, kChunkDoubles + 1,
                                      3 * kChunkDoubles + 7, 1000003};
  for (int n = 2; n <= 3; ++n) {
    std::vector<double> taken_over(static_cast<size_t>(n));  // by all ranks, as each rank learns it
    fail_on_errors(run_ranks(
        "claimed", n, kSlotBytes,
        [&](dist::ShmGroup& group, int r) {
          onto_one_cpu();
          uint64_t seq = 0;
          for (size_t count : counts) {
            for (bool in_place : {false, true}) {
              for (ReduceOp op : {ReduceOp::SUM, ReduceOp::MEAN, ReduceOp::MAX}) {
                all_reduce_and_check(group, ++seq, count, op, in_place);
              }
            }
          }
          // The chunks all ranks took over so far, summed by the all-reduce
          // itself; more large calls while none (the first rank on the core
          // almost always takes some over in the first large call).
          double& total = taken_over[static_cast<size_t>(r)];
          for (int extra = 0;; ++extra) {
            const double mine = static_cast<double>(group.chunks_taken_over());
            group.begin(all_reduce_of(1, ReduceOp::SUM), ++seq, std::chrono::seconds(60));
            dist::shm_allreduce_read_write(group, &mine, &total, 1, DType::F64, ReduceOp::SUM);
            if (total > 0 || extra == 20) break;
            all_reduce_and_check(group, ++seq, 4 * n * kChunkDoubles + 3, ReduceOp::SUM, true);
          }
        },
        std::vector<pid_t>(static_cast<size_t>(n), getpid())));
    if (taken_over[0] == 0) fail_msg("%d ranks on one core: no rank ever did another's chunks", n);
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_claims_within_a_call_and_afresh),
      cmocka_unit_test(test_all_reduce_with_ranks_off_their_core),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
