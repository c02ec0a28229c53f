// The flight recorder (include/c_api.h, "Flight recorder"): dist_context_dump
// of a one-process context checked against the calls made (their kinds,
// counts, states, paths and algorithms, the ring's limit and timed calls'
// times); and a hung job dumped by a signal: three ranks, the
// last held back on purpose, each asked by SIGUSR2 while the others wait,
// whose files show the waiting call in flight and the late rank between
// calls. Every process started is reaped by PID; every file made is removed.
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "multiprocess/launch.h"
}

#include <distribute/c_api.h>
#include <nlohmann/json.hpp>

using Json = nlohmann::json;

namespace {

const char kToken[] = "flight-recorder-test-token-0123";

Json dump_of(dist_context_t* context) {
  char* text = nullptr;
  assert_int_equal(dist_context_dump(context, &text), DIST_OK);
  Json parsed = Json::parse(text, nullptr, false);
  dist_string_free(text);
  if (parsed.is_discarded()) fail_msg("dist_context_dump gave invalid JSON");
  return parsed;
}

dist_context_t* one_process_context() {
  dist_cluster_t* alone = nullptr;
  assert_int_equal(dist_cluster_from_json("{}", &alone), DIST_OK);
  dist_context_t* context = nullptr;
  assert_int_equal(dist_context_create(alone, nullptr, &context), DIST_OK);
  dist_cluster_destroy(alone);
  return context;
}

dist_buffer_t buffer(void* data, uint64_t count, dist_dtype_t dtype) {
  dist_buffer_t b{};
  b.data = data;
  b.count = count;
  b.dtype = dtype;
  return b;
}

void test_dump_of_known_calls(void**) {
  dist_context_t* context = one_process_context();
  dist_comm_t* world = nullptr;
  assert_int_equal(dist_comm_world(context, &world), DIST_OK);
  float values[7] = {1, 2, 3, 4, 5, 6, 7};
  dist_buffer_t seven = buffer(values, 7, DIST_DTYPE_F32);
  assert_int_equal(dist_all_reduce(world, nullptr, &seven, DIST_OP_MAX, nullptr), DIST_OK);
  assert_int_equal(dist_broadcast(world, &seven, 0, nullptr), DIST_OK);
  // Refused by the C ABI's checks before it reaches the communicator: not a call.
  assert_int_equal(dist_broadcast(world, &seven, 5, nullptr), DIST_ERR_INVALID_ARGUMENT);
  assert_int_equal(dist_broadcast(world, &seven, 0, nullptr), DIST_OK);
  assert_int_equal(dist_barrier(world, nullptr), DIST_OK);

  Json dump = dump_of(context);
  assert_int_equal(dump["rank"].get<int>(), 0);
  assert_int_equal(dump["size"].get<int>(), 1);
  assert_string_equal(dump["task"].get<std::string>().c_str(), "worker:0");
  assert_int_equal(dump["pid"].get<int64_t>(), getpid());
  assert_true(dump["lost_peers"].empty());
  assert_int_equal(dump["communicators"].size(), 1);
  const Json& comm = dump["communicators"][0];
  assert_int_equal(comm["id"].get<int>(), 0);
  assert_string_equal(comm["path"].get<std::string>().c_str(), "self");
  assert_false(comm["failed"].get<bool>());
  assert_int_equal(comm["members"].size(), 1);
  const Json& calls = comm["calls"];
  assert_int_equal(calls.size(), 4);
  assert_int_equal(comm["calls_started"].get<uint64_t>(), comm["calls_finished"].get<uint64_t>());
  const char* kinds[] = {"all_reduce", "broadcast", "broadcast", "barrier"};
  const char* states[] = {"done", "done", "done", "done"};
  for (size_t i = 0; i < 4; ++i) {
    const Json& call = calls[i];
    assert_string_equal(call["kind"].get<std::string>().c_str(), kinds[i]);
    assert_string_equal(call["state"].get<std::string>().c_str(), states[i]);
    if (i > 0) assert_int_equal(call["seq"].get<uint64_t>(), calls[i - 1]["seq"].get<uint64_t>() + 1);
    assert_false(call.contains("start_us"));  // untimed
  }
  assert_string_equal(calls[0]["dtype"].get<std::string>().c_str(), "f32");
  assert_int_equal(calls[0]["count"].get<int>(), 7);
  assert_string_equal(calls[0]["op"].get<std::string>().c_str(), "max");
  assert_string_equal(calls[0]["path"].get<std::string>().c_str(), "self");
  assert_string_equal(calls[0]["algorithm"].get<std::string>().c_str(), "self");
  assert_string_equal(calls[0]["status"].get<std::string>().c_str(), "DIST_OK");
  assert_int_equal(calls[1]["root"].get<int>(), 0);
  assert_false(calls[1].contains("op"));
  assert_false(calls[3].contains("root"));

  // Timed calls carry their start and duration; the ring keeps the last 256.
  dist_comm_options_t options = DIST_COMM_OPTIONS_INIT;
  options.field_mask = DIST_COMM_OPT_TIMING;
  options.timing = 1;
  assert_int_equal(dist_comm_configure(world, &options), DIST_OK);
  for (int i = 0; i < 300; ++i) assert_int_equal(dist_all_reduce(world, nullptr, &seven, DIST_OP_SUM, nullptr), DIST_OK);
  dump = dump_of(context);
  const Json& ring = dump["communicators"][0]["calls"];
  assert_int_equal(ring.size(), 256);
  assert_int_equal(ring.back()["seq"].get<uint64_t>(), dump["communicators"][0]["calls_finished"].get<uint64_t>() - 1);
  assert_true(ring.back()["start_us"].get<double>() > 0 && ring.back()["duration_us"].get<double>() >= 0);

  // A split communicator has its own entry.
  dist_comm_t* split = nullptr;
  assert_int_equal(dist_comm_split(world, 0, 0, &split), DIST_OK);
  assert_int_equal(dump_of(context)["communicators"].size(), 2);
  dist_comm_destroy(split);
  assert_int_equal(dump_of(context)["communicators"].size(), 1);

  assert_int_equal(dist_context_dump(context, nullptr), DIST_ERR_INVALID_ARGUMENT);
  char* text = nullptr;
  assert_int_equal(dist_context_dump(nullptr, &text), DIST_ERR_INVALID_ARGUMENT);
  assert_null(text);
  dist_context_destroy(context);
}

void test_bad_signal_name(void**) {
  setenv("DIST_FLIGHT_RECORDER_SIGNAL", "TERM", 1);
  dist_cluster_t* alone = nullptr;
  assert_int_equal(dist_cluster_from_json("{}", &alone), DIST_OK);
  dist_context_t* context = nullptr;
  const dist_status_t status = dist_context_create(alone, nullptr, &context);
  unsetenv("DIST_FLIGHT_RECORDER_SIGNAL");
  dist_cluster_destroy(alone);
  assert_int_equal(status, DIST_ERR_INVALID_ARGUMENT);
  assert_non_null(std::strstr(dist_last_error(), "DIST_FLIGHT_RECORDER_SIGNAL: 'TERM' is not USR1 or USR2"));
}

void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, static_cast<long>(ms % 1000) * 1000000L};
  nanosleep(&t, nullptr);
}

Json read_dump(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  Json parsed = Json::parse(text.str(), nullptr, false);
  if (parsed.is_discarded()) fail_msg("%s is not valid JSON", path.c_str());
  return parsed;
}

// Three ranks of the collective worker's "stall" scenario: the last sleeps 3 s
// before its second call. Once rank 0 warns of the stall, ranks 0 and 2 get
// SIGUSR2 and write their flight recorders.
void test_signal_dumps_a_hung_job(void**) {
  char dir[] = "/tmp/dist-flight-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const char* worker = std::getenv("DIST_COLLECTIVE_WORKER");
  if (worker == nullptr) fail_msg("DIST_COLLECTIVE_WORKER is not set (run through ctest)");
  const std::string dir_entry = std::string("DIST_FLIGHT_RECORDER_DIR=") + dir;
  const char* env[] = {"DIST_FLIGHT_RECORDER_SIGNAL=USR2", dir_entry.c_str(), nullptr};
  const char* args[] = {worker, "stall", nullptr};
  struct launch launch;
  launch_prepare(&launch, 3);
  for (int r = 0; r < 3; ++r) launch_rank(&launch, r, kToken, env, args);
  // Rank 0 warns after 1 s of the 3 s stall: then it waits in the call and
  // rank 2 sleeps between calls.
  bool warned = false;
  for (int i = 0; i < 300 && !warned; ++i) {
    warned = std::strstr(launch_output(&launch, 0), "has waited") != nullptr;
    if (!warned) sleep_ms(50);
  }
  if (warned) {
    kill(launch.pids[0], SIGUSR2);
    kill(launch.pids[2], SIGUSR2);
  }
  const std::string file0 = std::string(dir) + "/dist-flight.0." + std::to_string(launch.pids[0]) + ".json";
  const std::string file2 = std::string(dir) + "/dist-flight.2." + std::to_string(launch.pids[2]) + ".json";
  struct stat st {};
  for (int i = 0; i < 100 && warned && (stat(file0.c_str(), &st) != 0 || stat(file2.c_str(), &st) != 0); ++i) sleep_ms(50);
  const int finished = launch_wait(&launch, 120);
  const std::string output0 = launch_output(&launch, 0);
  const bool written0 = stat(file0.c_str(), &st) == 0, written2 = stat(file2.c_str(), &st) == 0;
  Json dump0, dump2;
  if (written0) dump0 = read_dump(file0);
  if (written2) dump2 = read_dump(file2);
  std::remove(file0.c_str());
  std::remove(file2.c_str());
  rmdir(dir);
  if (!warned) fail_msg("rank 0 never warned of the stall:\n%s", output0.c_str());
  if (finished != 0) fail_msg("the ranks did not finish in time");
  for (int r = 0; r < 3; ++r) {
    if (launch.exit_codes[r] != 0) fail_msg("rank %d exited %d:\n%s", r, launch.exit_codes[r], launch_output(&launch, r));
  }
  if (!written0 || !written2) fail_msg("no dump written (rank 0 %d, rank 2 %d):\n%s", written0, written2, output0.c_str());
  if (output0.find("flight recorder written to " + file0) == std::string::npos) {
    fail_msg("rank 0 did not say where it wrote:\n%s", output0.c_str());
  }
  // Rank 0: in the world's all-reduce, which has not ended.
  const Json& world0 = dump0["communicators"][0];
  assert_int_equal(dump0["rank"].get<int>(), 0);
  assert_int_equal(world0["calls_started"].get<uint64_t>(), world0["calls_finished"].get<uint64_t>() + 1);
  assert_string_equal(world0["calls"].back()["state"].get<std::string>().c_str(), "in flight");
  assert_string_equal(world0["calls"].back()["kind"].get<std::string>().c_str(), "all_reduce");
  // Rank 2: between calls, one call behind.
  const Json& world2 = dump2["communicators"][0];
  assert_int_equal(world2["calls_started"].get<uint64_t>(), world2["calls_finished"].get<uint64_t>());
  assert_int_equal(world2["calls_finished"].get<uint64_t>() + 1, world0["calls_started"].get<uint64_t>());
  assert_string_equal(world2["calls"].back()["state"].get<std::string>().c_str(), "done");
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dump_of_known_calls),
      cmocka_unit_test(test_bad_signal_name),
      cmocka_unit_test(test_signal_dumps_a_hung_job),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
