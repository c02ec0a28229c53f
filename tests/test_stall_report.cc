// The words of a stall report (collectives/stall_report.h) for members in
// every place they can be: in an earlier call, between calls, before their
// first call, silent, at the call; and task names compressed into ranges.
#include <string>
#include <vector>

#include "collectives/signature.h"
#include "collectives/stall_report.h"
#include "internal_test_support.h"

namespace {

using dist::MemberProgress;

MemberProgress in_call(uint64_t seq, dist::CollectiveKind kind) {
  return {true, seq + 1, seq, static_cast<int32_t>(kind)};
}
MemberProgress between(uint64_t done) { return {true, done + 1, done + 1, 0}; }

void expect(const std::string& got, const char* expected) {
  if (got != expected) fail_msg("got      '%s'\nexpected '%s'", got.c_str(), expected);
}

void test_names_the_late(void**) {
  const std::vector<std::string> four = {"worker:0", "worker:1", "worker:2", "worker:3"};
  const auto at = in_call(1042, dist::CollectiveKind::kAllReduce);
  expect(dist::describe_behind(four, {at, at, at, in_call(1041, dist::CollectiveKind::kBroadcast)}, 1042, 0),
         "worker:3 is at broadcast #1041 on comm 0 while worker:0-2 wait at #1042");
  expect(dist::describe_behind(four, {at, between(1041), at, between(1041)}, 1042, 7),
         "worker:1, worker:3 are between calls (done with #1041) on comm 7 while worker:0, worker:2 wait at #1042");
  expect(dist::describe_behind(four, {at, MemberProgress{}, MemberProgress{true, 0, 0, -1}, at}, 1042, 0),
         "worker:1 did not answer; worker:2 is before its first call on comm 0 while worker:0, worker:3 wait at #1042");
  // Everyone at the call: the holdup is not a late member.
  expect(dist::describe_behind(four, {at, at, at, at}, 1042, 0), "");
}

void test_compresses_task_names(void**) {
  expect(dist::compress_task_names({"worker:0", "worker:1", "worker:2", "chief:0", "worker:4", "worker:5"}),
         "worker:0-2, chief:0, worker:4, worker:5");
  expect(dist::compress_task_names({"a", "worker:x", "worker:1"}), "a, worker:x, worker:1");
  expect(dist::compress_task_names({}), "");
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_names_the_late),
      cmocka_unit_test(test_compresses_task_names),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
