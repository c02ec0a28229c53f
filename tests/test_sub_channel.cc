// SubChannel (collectives/hierarchical/sub_channel.h): views of one channel
// restricted to some of its ranks, as the hierarchical path's rails use them.
// Two rails of four in-process ranks all-reduce at once over views of one
// channel, one of them with its ranks in another order than the parent's; a
// call that disagrees on one rail fails the whole channel with kMismatch;
// views that name ranks they cannot have are refused. Each rank is a thread;
// every wait has a deadline of a few seconds.
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "collectives/algorithm_table.h"
#include "collectives/hierarchical/sub_channel.h"
#include "collectives/run_collective.h"
#include "support/inproc_channel.h"

#include "internal_test_support.h"

namespace {

using dist::Channel;
using dist::CollectiveCall;
using dist::CollectiveKind;
using dist::InProcessGroup;
using dist::RankOutcome;
using dist::Status;
using dist::SubChannel;

// Rail 0 is parent ranks {0, 2}; rail 1 is {3, 1}: its view rank 0 is parent rank 3.
std::vector<int> rail_of(int rank) { return rank % 2 == 0 ? std::vector<int>{0, 2} : std::vector<int>{3, 1}; }

// Every rank all-reduces `count` floats (parent rank + 1 + i) on its rail,
// with `count_of(rank)` as the count it believes in.
std::vector<RankOutcome> all_reduce_on_rails(InProcessGroup& group, const char* forced,
                                         const std::function<uint64_t(int)>& count_of,
                                         std::vector<std::vector<float>>& results) {
  const dist::ForcedAllReduce resolved = dist::forced_point_to_point(forced);
  const dist::AlgorithmOptions options;
  results.assign(4, {});
  return run_ranks(group, [&](int rank, Channel& channel) {
    SubChannel rail(channel, rail_of(rank));
    const uint64_t count = count_of(rank);
    std::vector<float> data(count);
    for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>(rank + 1) + static_cast<float>(i);
    CollectiveCall call;
    call.signature.kind = CollectiveKind::kAllReduce;
    call.signature.dtype = dist::DType::F32;
    call.signature.op = dist::ReduceOp::SUM;
    call.signature.count = count;
    call.send = data.data();
    call.recv = data.data();
    rail.begin(dist::call_words(call.signature), 7, std::chrono::steady_clock::now() + std::chrono::seconds(5));
    try {
      dist::run_collective(rail, call, options, resolved);
    } catch (...) {
      rail.end();
      throw;
    }
    rail.end();
    results[static_cast<size_t>(rank)] = data;
  });
}

void test_rails_at_once(void**) {
  for (const char* forced : {"ring", "recursive_doubling", ""}) {
    InProcessGroup group(4);
    std::vector<std::vector<float>> results;
    const auto outcomes = all_reduce_on_rails(group, forced, [](int) { return uint64_t{1001}; }, results);
    for (int rank = 0; rank < 4; ++rank) {
      const RankOutcome& outcome = outcomes[static_cast<size_t>(rank)];
      if (outcome.status != Status::kOk) fail_msg("rank %d: %s", rank, outcome.message.c_str());
      float members = 0;
      for (int member : rail_of(rank)) members += static_cast<float>(member + 1);
      for (size_t i = 0; i < 1001; ++i) {
        const float expected = members + 2.0f * static_cast<float>(i);
        if (results[static_cast<size_t>(rank)][i] != expected) {
          fail_msg("%s: rank %d [%zu] = %g, expected %g", forced, rank, i, results[static_cast<size_t>(rank)][i],
                   expected);
        }
      }
    }
  }
}

// A disagreement on one rail is caught by the headers and fails every rank
// of the channel, the other rail's too.
void test_mismatch_on_a_rail(void**) {
  InProcessGroup group(4);
  std::vector<std::vector<float>> results;
  const auto outcomes =
      all_reduce_on_rails(group, "ring", [](int rank) { return rank == 2 ? uint64_t{12} : uint64_t{64}; }, results);
  for (int rank = 0; rank < 4; ++rank) {
    const RankOutcome& outcome = outcomes[static_cast<size_t>(rank)];
    if (outcome.status != Status::kMismatch) {
      fail_msg("rank %d ended with %d: %s", rank, static_cast<int>(outcome.status), outcome.message.c_str());
    }
  }
}

void expect_internal(const char* needle, const std::function<void()>& call) {
  expect_error(Status::kInternal, "a bad view", needle, call);
}

void test_bad_views(void**) {
  InProcessGroup group(3);
  Channel& channel = group.channel(0);
  expect_internal("does not hold its own rank", [&] { SubChannel view(channel, {1, 2}); });
  expect_internal("names rank 7 of 3", [&] { SubChannel view(channel, {0, 7}); });
  expect_internal("names rank -1 of 3", [&] { SubChannel view(channel, {-1, 0}); });
  SubChannel view(channel, {2, 0});
  assert_int_equal(view.rank(), 1);
  assert_int_equal(view.size(), 2);
  char byte = 0;
  expect_internal("has no rank 2", [&] { view.send(2, &byte, 1); });
  expect_internal("has no rank -1", [&] { view.recv(-1, &byte, 1); });
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rails_at_once),
      cmocka_unit_test(test_mismatch_on_a_rail),
      cmocka_unit_test(test_bad_views),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
