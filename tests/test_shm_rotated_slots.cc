// Calls of one small step rotate where their slots start (ShmGroup::
// rotate_slots), with the ranks as threads of this process mapping one real
// segment: the places a call takes (in turn, distinct, inside the slot, none
// below the minimum or beyond the window), and many calls in a row of every
// collective that rotates, each with data of its own, so that a rank reading
// another call's place (the one before, or one a full turn ago) fails against
// the references computed here: 2 and 3 ranks, sizes at and around the
// minimum, odd counts, uneven reduce-scatter blocks, all-to-all in place, a
// reduce to a root that moves.
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

constexpr size_t kSlotBytes = 2 << 20;  // the default for 2 ranks
// More calls than a turn has places (kShmStepBytes / 4 KiB = 64).
constexpr int kCalls = 70;

dist::CallSignature signature_of(dist::CollectiveKind kind, size_t count, int root) {
  dist::CallSignature signature;
  signature.kind = kind;
  signature.dtype = DType::F64;
  signature.op = ReduceOp::SUM;
  signature.root = root;
  signature.count = count;
  return signature;
}

// Where this rank's slot starts for a call that puts `bytes` in it, relative
// to where an unrotated call's does.
ptrdiff_t place_of(dist::ShmGroup& group, uint64_t seq, size_t bytes) {
  group.begin(signature_of(dist::CollectiveKind::kAllGather, 1, -1), seq, std::chrono::seconds(1));
  const unsigned char* unrotated = group.my_slot();
  group.rotate_slots(bytes);
  return group.my_slot() - unrotated;
}

void test_places_of_a_turn(void** state) {
  (void)state;
  struct Case {
    size_t slot_bytes, bytes, places, stride;
  };
  const std::vector<Case> cases = {
      {kSlotBytes, dist::kShmRotationMinBytes - 1, 1, 0},
      {kSlotBytes, dist::kShmRotationMinBytes, 64, 4096},
      {kSlotBytes, 4096, 64, 4096},
      {kSlotBytes, 8000, 32, 8192},
      {kSlotBytes, 8193, 21, 12288},
      {kSlotBytes, dist::kShmStepBytes / 2, 2, dist::kShmStepBytes / 2},
      {kSlotBytes, dist::kShmStepBytes / 2 + 1, 1, 0},
      // More than a step: several steps, no rotation.
      {kSlotBytes, dist::kShmStepBytes, 1, 0},
      {kSlotBytes, 2 * dist::kShmStepBytes, 1, 0},
      // A slot smaller than a step (the step is the slot): the turn fits in it.
      {16384, 4096, 4, 4096},
      {16384, 16384, 1, 0},
  };
  for (const Case& c : cases) {
    fail_on_errors(run_ranks("places", 2, c.slot_bytes, [&](dist::ShmGroup& group, int) {
      for (uint64_t call = 0; call < 3 * c.places + 1; ++call) {
        const ptrdiff_t place = place_of(group, call + 1, c.bytes);
        const ptrdiff_t want = static_cast<ptrdiff_t>((call % c.places) * c.stride);
        if (place != want || static_cast<size_t>(place) + c.bytes > std::max(c.slot_bytes, c.bytes)) {
          throw std::runtime_error("slot of " + std::to_string(c.slot_bytes) + " bytes, call " +
                                   std::to_string(call) + " of " + std::to_string(c.bytes) + " bytes: at " +
                                   std::to_string(place) + ", expected " + std::to_string(want));
        }
      }
    }));
  }
}

// Element i of rank r's input in call k: distinct across calls, so a stale
// place reads wrong values.
double value(int rank, size_t i, int call) {
  return static_cast<double>((i * 7 + static_cast<size_t>(rank) * 131 + static_cast<size_t>(call) * 1009) % 4093);
}

void expect(const char* what, size_t count, int call, size_t i, double got, double want) {
  if (got != want) {
    throw std::runtime_error(std::string(what) + " of " + std::to_string(count) + " doubles, call " +
                             std::to_string(call) + ": [" + std::to_string(i) + "] = " + std::to_string(got) +
                             ", expected " + std::to_string(want));
  }
}

void run_calls_in_a_row(int n, size_t count) {
  fail_on_errors(run_ranks("rotated", n, kSlotBytes, [&](dist::ShmGroup& group, int r) {
    const auto timeout = std::chrono::seconds(30);
    const size_t un = static_cast<size_t>(n);
    uint64_t seq = 0;
    for (int k = 0; k < kCalls; ++k) {
      std::vector<double> input(count);
      for (size_t i = 0; i < count; ++i) input[i] = value(r, i, k);

      std::vector<double> gathered(count * un, -1);
      group.begin(signature_of(dist::CollectiveKind::kAllGather, count, -1), ++seq, timeout);
      dist::shm_allgather(group, input.data(), gathered.data(), count, DType::F64, false);
      for (size_t i = 0; i < gathered.size(); ++i) {
        expect("all-gather", count, k, i, gathered[i], value(static_cast<int>(i / count), i % count, k));
      }

      // Block b of rank r's all-to-all input goes to rank b; element j of it
      // is value(r, b * count + j, k). Out of place on even calls, in place
      // on odd ones.
      std::vector<double> blocks(count * un), exchanged(count * un, -1);
      for (size_t i = 0; i < blocks.size(); ++i) blocks[i] = value(r, i, k);
      double* out = k % 2 == 0 ? exchanged.data() : blocks.data();
      group.begin(signature_of(dist::CollectiveKind::kAllToAll, count, -1), ++seq, timeout);
      dist::shm_alltoall(group, blocks.data(), out, count, DType::F64, false);
      for (size_t i = 0; i < count * un; ++i) {
        const int from = static_cast<int>(i / count);
        expect("all-to-all", count, k, i, out[i], value(from, static_cast<size_t>(r) * count + i % count, k));
      }

      // Uneven blocks: count * n - 1 elements over n ranks.
      const size_t total = count * un - 1;
      const dist::BlockLayout layout(total, n);
      std::vector<double> whole(total);
      for (size_t i = 0; i < total; ++i) whole[i] = value(r, i, k);
      std::vector<double> reduced(layout.size(r), -1);
      group.begin(signature_of(dist::CollectiveKind::kReduceScatter, total, -1), ++seq, timeout);
      dist::shm_reduce_scatter(group, whole.data(), reduced.data(), layout, DType::F64, ReduceOp::SUM);
      for (size_t i = 0; i < reduced.size(); ++i) {
        double sum = 0;
        for (int q = 0; q < n; ++q) sum += value(q, layout.offset(r) + i, k);
        expect("reduce-scatter", count, k, i, reduced[i], sum);
      }

      const int root = k % n;
      std::vector<double> buffer = input;
      group.begin(signature_of(dist::CollectiveKind::kBroadcast, count, root), ++seq, timeout);
      dist::shm_broadcast(group, buffer.data(), count, DType::F64, root);
      for (size_t i = 0; i < count; ++i) expect("broadcast", count, k, i, buffer[i], value(root, i, k));

      std::vector<double> sums(count, -1);
      group.begin(signature_of(dist::CollectiveKind::kAllReduce, count, -1), ++seq, timeout);
      dist::shm_allreduce_direct(group, input.data(), sums.data(), count, DType::F64, ReduceOp::SUM);
      for (size_t i = 0; i < count; ++i) {
        double sum = 0;
        for (int q = 0; q < n; ++q) sum += value(q, i, k);
        expect("all-reduce", count, k, i, sums[i], sum);
      }

      // To a root that moves; the others pass no result.
      const int reduce_root = (k + 1) % n;
      std::vector<double> reduced_at_root(count, -1);
      group.begin(signature_of(dist::CollectiveKind::kReduce, count, reduce_root), ++seq, timeout);
      dist::shm_reduce(group, input.data(), r == reduce_root ? reduced_at_root.data() : nullptr, count, DType::F64,
                       ReduceOp::SUM, reduce_root);
      for (size_t i = 0; i < count && r == reduce_root; ++i) {
        double sum = 0;
        for (int q = 0; q < n; ++q) sum += value(q, i, k);
        expect("reduce", count, k, i, reduced_at_root[i], sum);
      }
    }
  }));
}

void test_many_calls_in_a_row(void** state) {
  (void)state;
  // Doubles: below the minimum, at it, odd, beyond a page, near a step's
  // share, and beyond a step (several steps, which stay put).
  const std::vector<size_t> counts = {255, 256, 257, 1001, 1031, 4096, 16383, 40000};
  for (int n = 2; n <= 3; ++n) {
    for (size_t count : counts) run_calls_in_a_row(n, count);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_places_of_a_turn),
      cmocka_unit_test(test_many_calls_in_a_row),
  };
  return cmocka_run_group_tests_name("shm_rotated_slots", tests, nullptr, nullptr);
}
