// Timelines (include/c_api.h, "Timelines"): the files real runs write on 2 and
// 3 ranks, across ranks posing as two hosts, from a strategy's training and
// from a parameter-server client, checked against the calls the runs made;
// `dist-info timeline merge` on those runs and on files made here with known
// clock offsets (and one left unclosed, as a rank that died leaves it); bad
// options and bad files. Every process started is reaped by PID
// (multiprocess/launch.h); every file made is removed.
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "multiprocess/launch.h"
}

#include <distribute/c_api.h>
#include <nlohmann/json.hpp>

#include "base/timeline.h"

using Json = nlohmann::json;

namespace {

const char kToken[] = "timeline-test-token-0123456789";

// A directory of its own per test, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/dist-timeline-XXXXXX";
    if (mkdtemp(pattern) == nullptr) fail_msg("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    if (DIR* dir = opendir(path_.c_str())) {
      while (dirent* entry = readdir(dir)) {
        if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) {
          std::remove((path_ + "/" + entry->d_name).c_str());
        }
      }
      closedir(dir);
    }
    rmdir(path_.c_str());
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail_msg("cannot read %s", path.c_str());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Json read_json(const std::string& path) {
  Json parsed = Json::parse(read_text(path), nullptr, false);
  if (parsed.is_discarded()) fail_msg("%s is not valid JSON", path.c_str());
  return parsed;
}

const char* env_or_fail(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) fail_msg("%s is not set (run through ctest)", name);
  return value;
}

// Runs n ranks of `program args...` with extra environment; every rank must succeed.
void run_ranks(int n, const char* program, const std::vector<const char*>& args,
               const std::vector<std::vector<std::string>>& env_per_rank) {
  struct launch launch;
  launch_prepare(&launch, n);
  for (int r = 0; r < n; ++r) {
    std::vector<const char*> argv{program};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back(nullptr);
    std::vector<const char*> env;
    for (const std::string& entry : env_per_rank[static_cast<size_t>(r)]) env.push_back(entry.c_str());
    env.push_back(nullptr);
    launch_rank(&launch, r, kToken, env.data(), argv.data());
  }
  if (launch_wait(&launch, 180) != 0) fail_msg("%s did not finish in time", program);
  for (int r = 0; r < n; ++r) {
    if (launch.exit_codes[r] != 0) fail_msg("rank %d exited %d:\n%s", r, launch.exit_codes[r], launch_output(&launch, r));
  }
}

// dist-info with `args`; returns its exit code and fills `output` (stdout and stderr).
int run_dist_info(const std::string& args, std::string* output) {
  const std::string command = std::string(env_or_fail("DIST_INFO")) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) fail_msg("popen failed");
  char buffer[4096];
  output->clear();
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output->append(buffer, got);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const Json& metadata(const Json& events, const char* name) {
  for (const Json& e : events) {
    if (e.value("ph", "") == "M" && e.value("name", "") == name) return e;
  }
  fail_msg("no metadata event '%s'", name);
  static const Json none;
  return none;
}

// Lane id -> name, from the thread_name metadata.
std::map<int, std::string> lanes_of(const Json& events) {
  std::map<int, std::string> lanes;
  for (const Json& e : events) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name") lanes[e["tid"].get<int>()] = e["args"]["name"];
  }
  return lanes;
}

std::vector<Json> spans(const Json& events, const char* category) {
  std::vector<Json> out;
  for (const Json& e : events) {
    if (e.value("ph", "") == "X" && e.value("cat", "") == category) out.push_back(e);
  }
  return out;
}

// One rank's trace of the collective worker's "timeline" scenario on n ranks.
void check_collective_trace(const Json& events, int rank, int n, const char* path) {
  assert_true(events.is_array());
  const Json& identity = metadata(events, "libdistribute");
  assert_int_equal(identity["args"]["rank"].get<int>(), rank);
  assert_int_equal(identity["args"]["size"].get<int>(), n);
  assert_string_equal(identity["args"]["task"].get<std::string>().c_str(), ("worker:" + std::to_string(rank)).c_str());
  assert_int_equal(metadata(events, "process_name")["pid"].get<int>(), rank);
  const std::map<int, std::string> lanes = lanes_of(events);
  const std::vector<Json> calls = spans(events, "collective");
  std::map<std::string, int> kinds;
  std::vector<int64_t> seqs;
  for (const Json& call : calls) {
    const Json& args = call["args"];
    assert_string_equal(lanes.at(call["tid"].get<int>()).c_str(), "comm 0");
    assert_int_equal(call["pid"].get<int>(), rank);
    assert_int_equal(args["comm"].get<int>(), 0);
    assert_string_equal(args["path"].get<std::string>().c_str(), path);
    assert_true(!args["algorithm"].get<std::string>().empty());
    assert_false(args.contains("status"));
    const std::string kind = call["name"];
    kinds[kind]++;
    seqs.push_back(args["seq"].get<int64_t>());
    const int64_t bytes = args["bytes"].get<int64_t>();
    if (kind == "all_reduce") {
      assert_string_equal(args["dtype"].get<std::string>().c_str(), "f32");
      assert_true(bytes == 4000 || bytes == 16 << 20);
    } else if (kind == "broadcast") {
      assert_string_equal(args["dtype"].get<std::string>().c_str(), "i32");
      assert_int_equal(bytes, 40);
    } else {
      assert_string_equal(kind.c_str(), "barrier");
      assert_int_equal(bytes, 0);
    }
    // The phases add up to the call.
    const int64_t phases =
        args["waiting_ns"].get<int64_t>() + args["reducing_ns"].get<int64_t>() + args["moving_ns"].get<int64_t>();
    const double dur_ns = call["dur"].get<double>() * 1000.0;
    if (std::fabs(static_cast<double>(phases) - dur_ns) > 2.0) {
      fail_msg("%s #%lld: phases %lld ns, span %.0f ns", kind.c_str(), static_cast<long long>(args["seq"].get<int64_t>()),
               static_cast<long long>(phases), dur_ns);
    }
  }
  assert_int_equal(kinds["all_reduce"], 5);
  assert_int_equal(kinds["broadcast"], 2);
  assert_int_equal(kinds["barrier"], 1);
  assert_int_equal(calls.size(), 8);
  for (size_t i = 1; i < seqs.size(); ++i) assert_true(seqs[i] == seqs[i - 1] + 1);
  // Every phase lies inside a call of its seq, on the same lane.
  std::map<int64_t, const Json*> by_seq;
  for (const Json& call : calls) by_seq[call["args"]["seq"].get<int64_t>()] = &call;
  bool reduced = false;
  for (const Json& phase : spans(events, "phase")) {
    const std::string name = phase["name"];
    assert_true(name == "waiting for peers" || name == "reducing");
    reduced |= name == "reducing";
    const Json& call = *by_seq.at(phase["args"]["seq"].get<int64_t>());
    assert_int_equal(phase["tid"].get<int>(), call["tid"].get<int>());
    const double start = phase["ts"].get<double>(), end = start + phase["dur"].get<double>();
    const double call_start = call["ts"].get<double>(), call_end = call_start + call["dur"].get<double>();
    if (start < call_start - 0.002 || end > call_end + 0.002) {
      fail_msg("%s [%.3f, %.3f] outside its call [%.3f, %.3f]", name.c_str(), start, end, call_start, call_end);
    }
  }
  // The 16 MiB all-reduce reduces in pieces of 16 KiB or more somewhere.
  int64_t reducing = 0;
  for (const Json& call : calls) reducing += call["args"]["reducing_ns"].get<int64_t>();
  assert_true(reduced && reducing > 0);
}

std::vector<std::vector<std::string>> same_env(int n, const std::vector<std::string>& env) {
  return std::vector<std::vector<std::string>>(static_cast<size_t>(n), env);
}

// ---- real runs -------------------------------------------------------------------

void test_collectives_on_2_and_3_ranks(void**) {
  for (int n = 2; n <= 3; ++n) {
    TempDir dir;
    const std::string prefix = dir / "trace";
    run_ranks(n, env_or_fail("DIST_COLLECTIVE_WORKER"), {"timeline"}, same_env(n, {"DIST_TIMELINE=" + prefix}));
    // One host: shared memory, unless the suite runs with it off.
    const char* shm = std::getenv("DIST_SHM");
    const char* path = shm != nullptr && std::strcmp(shm, "0") == 0 ? "point_to_point" : "shared_memory";
    size_t events = 0;
    for (int r = 0; r < n; ++r) {
      const Json trace = read_json(prefix + "." + std::to_string(r) + ".json");
      check_collective_trace(trace, r, n, path);
      events += trace.size();
    }
    std::string output;
    assert_int_equal(run_dist_info("timeline merge " + prefix, &output), 0);
    const Json merged = read_json(prefix + ".json");
    assert_int_equal(merged.size(), events + 1);
    const Json& alignment = metadata(merged, "libdistribute merge")["args"]["ranks"];
    assert_int_equal(alignment.size(), static_cast<size_t>(n));
    for (const Json& rank : alignment) {
      assert_string_equal(rank["aligned_by"].get<std::string>().c_str(), "same host");
      assert_true(rank["offset_us"].get<double>() == 0.0);
    }
    if (output.find(std::to_string(n) + " ranks on 1 host") == std::string::npos) fail_msg("merge said:\n%s", output.c_str());
  }
}

// Ranks posing as two hosts (DIST_HOST_ID_FOR_TESTS): point to point, and the
// merge aligns the second host by the collectives both ran. Their clocks are
// in truth one, so the offset found is only the ends' spread (bounded loosely:
// the check is that the collectives were matched, not how fast the machine is).
void test_two_hosts_aligned_by_collectives(void**) {
  TempDir dir;
  const std::string prefix = dir / "trace";
  run_ranks(2, env_or_fail("DIST_COLLECTIVE_WORKER"), {"timeline"},
            {{"DIST_TIMELINE=" + prefix, "DIST_HOST_ID_FOR_TESTS=host-a"},
             {"DIST_TIMELINE=" + prefix, "DIST_HOST_ID_FOR_TESTS=host-b"}});
  for (int r = 0; r < 2; ++r) check_collective_trace(read_json(prefix + "." + std::to_string(r) + ".json"), r, 2, "point_to_point");
  std::string output;
  assert_int_equal(run_dist_info("timeline merge " + prefix + " --output " + (dir / "merged.json"), &output), 0);
  const Json merged = read_json(dir / "merged.json");
  const Json& alignment = metadata(merged, "libdistribute merge")["args"]["ranks"];
  assert_string_equal(alignment[0]["aligned_by"].get<std::string>().c_str(), "same host");
  assert_string_equal(alignment[1]["aligned_by"].get<std::string>().c_str(), "collectives (8)");
  assert_true(std::fabs(alignment[1]["offset_us"].get<double>()) < 1e6);
}

// A strategy's training: replica functions, apply_gradients and its buckets.
void test_strategy_training(void**) {
  TempDir dir;
  const std::string prefix = dir / "trace";
  run_ranks(2, env_or_fail("DIST_STRATEGY_WORKER"), {"train"}, same_env(2, {"DIST_TIMELINE=" + prefix}));
  for (int r = 0; r < 2; ++r) {
    const Json trace = read_json(prefix + "." + std::to_string(r) + ".json");
    const std::map<int, std::string> lanes = lanes_of(trace);
    std::set<std::string> replica_lanes;
    for (const Json& span : spans(trace, "replica")) {
      assert_string_equal(span["name"].get<std::string>().c_str(), "replica fn");
      const std::string lane = lanes.at(span["tid"].get<int>());
      assert_string_equal(lane.c_str(), ("replica " + std::to_string(span["args"]["replica"].get<int>())).c_str());
      replica_lanes.insert(lane);
    }
    // Two local replicas per worker: ids 2r and 2r+1.
    assert_int_equal(replica_lanes.size(), 2);
    assert_true(replica_lanes.count("replica " + std::to_string(2 * r)) == 1);
    int steps = 0, buckets = 0;
    for (const Json& span : spans(trace, "apply_gradients")) {
      const std::string lane = lanes.at(span["tid"].get<int>());
      if (span["name"] == "apply_gradients") {
        assert_string_equal(lane.c_str(), "apply_gradients");
        assert_int_equal(span["args"]["replicas"].get<int>(), 2);
        steps++;
      } else {
        assert_string_equal(span["name"].get<std::string>().c_str(), "bucket");
        assert_string_equal(lane.c_str(), "buckets");
        assert_true(span["args"]["bytes"].get<int64_t>() > 0 && span["args"]["segments"].get<int64_t>() > 0);
        buckets++;
      }
    }
    // 300 steps, a bucket (or more) each: the ring communication packs them.
    assert_int_equal(steps, 300);
    assert_true(buckets >= steps);
    // The strategy's own communicator (split from the world) carries them.
    bool own_comm = false;
    for (const Json& call : spans(trace, "collective")) own_comm |= call["args"]["comm"].get<int>() != 0;
    assert_true(own_comm);
  }
}

// A parameter-server client without a context: "<prefix>.pid<PID>.json".
void test_parameter_server_requests(void**) {
  TempDir dir;
  const std::string prefix = dir / "trace";
  setenv("DIST_CLUSTER_TOKEN", kToken, 1);
  dist_server_options_t server_options = DIST_SERVER_OPTIONS_INIT;
  server_options.field_mask = DIST_SERVER_OPT_ADDRESS;
  server_options.address = "127.0.0.1:0";
  dist_server_t* server = nullptr;
  assert_int_equal(dist_server_start(nullptr, &server_options, &server), DIST_OK);
  const char* address = nullptr;
  assert_int_equal(dist_server_address(server, &address), DIST_OK);
  const std::string json = std::string("{\"cluster\": {\"ps\": [\"") + address +
                           "\"], \"worker\": [\"127.0.0.1:1\"]}, \"task\": {\"type\": \"worker\", \"index\": 0}}";
  dist_cluster_t* cluster = nullptr;
  assert_int_equal(dist_cluster_from_json(json.c_str(), &cluster), DIST_OK);
  setenv("DIST_TIMELINE", prefix.c_str(), 1);
  dist_strategy_options_t options = DIST_STRATEGY_OPTIONS_INIT;
  options.field_mask = DIST_STRATEGY_OPT_KIND | DIST_STRATEGY_OPT_CLUSTER;
  options.kind = DIST_STRATEGY_PARAMETER_SERVER;
  options.cluster = cluster;
  dist_strategy_t* strategy = nullptr;
  const dist_status_t created = dist_strategy_create(nullptr, &options, &strategy);
  unsetenv("DIST_TIMELINE");
  assert_int_equal(created, DIST_OK);
  const int64_t shape[1] = {1000};
  dist_variable_options_t variable_options = DIST_VARIABLE_OPTIONS_INIT;
  variable_options.field_mask = DIST_VARIABLE_OPT_SHAPE | DIST_VARIABLE_OPT_NAME;
  variable_options.name = "w";
  variable_options.shape = shape;
  variable_options.rank = 1;
  dist_variable_t* variable = nullptr;
  assert_int_equal(dist_variable_create(strategy, &variable_options, &variable), DIST_OK);
  std::vector<float> values(1000, 1.5f);
  dist_buffer_t buffer{};
  buffer.data = values.data();
  buffer.count = values.size();
  buffer.dtype = DIST_DTYPE_F32;
  assert_int_equal(dist_variable_assign_add(variable, nullptr, &buffer), DIST_OK);
  assert_int_equal(dist_variable_read(variable, nullptr, &buffer), DIST_OK);
  assert_true(values[999] == 1.5f);
  dist_variable_destroy(variable);
  dist_strategy_destroy(strategy);
  dist_cluster_destroy(cluster);
  assert_int_equal(dist_server_stop(server), DIST_OK);
  assert_int_equal(dist_server_join(server, 10000), DIST_OK);
  dist_server_destroy(server);

  const Json trace = read_json(prefix + ".pid" + std::to_string(getpid()) + ".json");
  const std::map<int, std::string> lanes = lanes_of(trace);
  std::map<std::string, Json> by_name;
  for (const Json& span : spans(trace, "ps")) {
    assert_string_equal(lanes.at(span["tid"].get<int>()).c_str(), "ps client");
    assert_string_equal(span["args"]["detail"].get<std::string>().c_str(), "ps:0");
    assert_int_equal(span["args"]["server"].get<int>(), 0);
    by_name[span["name"]] = span;
  }
  for (const char* op : {"create", "assign_add", "read"}) {
    if (by_name.count(op) == 0) fail_msg("no '%s' request on the timeline:\n%s", op, trace.dump(1).c_str());
  }
  assert_int_equal(by_name["assign_add"]["args"]["bytes_sent"].get<int64_t>(), 4000);
  assert_int_equal(by_name["read"]["args"]["bytes_received"].get<int64_t>(), 4000);
}

// ---- the option and the merge, on known input ---------------------------------------

void test_context_option(void**) {
  dist_cluster_t* alone = nullptr;
  assert_int_equal(dist_cluster_from_json("{}", &alone), DIST_OK);
  dist_context_options_t options = DIST_CONTEXT_OPTIONS_INIT;
  options.field_mask = DIST_CONTEXT_OPT_TIMELINE;
  options.timeline = "";
  dist_context_t* context = nullptr;
  assert_int_equal(dist_context_create(alone, &options, &context), DIST_ERR_INVALID_ARGUMENT);
  assert_non_null(std::strstr(dist_last_error(), "timeline is empty"));
  options.timeline = nullptr;
  assert_int_equal(dist_context_create(alone, &options, &context), DIST_ERR_INVALID_ARGUMENT);
  assert_non_null(std::strstr(dist_last_error(), "timeline"));
  options.timeline = "/nonexistent-dist-timeline-dir/trace";
  assert_int_equal(dist_context_create(alone, &options, &context), DIST_ERR_INVALID_ARGUMENT);
  assert_non_null(std::strstr(dist_last_error(), "/nonexistent-dist-timeline-dir/trace.0.json"));
  assert_null(context);

  TempDir dir;
  const std::string prefix = dir / "one";
  options.timeline = prefix.c_str();
  assert_int_equal(dist_context_create(alone, &options, &context), DIST_OK);
  dist_comm_t* world = nullptr;
  assert_int_equal(dist_comm_world(context, &world), DIST_OK);
  double x[3] = {1, 2, 3};
  dist_buffer_t b{};
  b.data = x;
  b.count = 3;
  b.dtype = DIST_DTYPE_F64;
  assert_int_equal(dist_all_reduce(world, nullptr, &b, DIST_OP_SUM, nullptr), DIST_OK);
  // A timeline times the calls (dist_comm_stats).
  dist_comm_stat_t stat{};
  uint64_t count = 0;
  assert_int_equal(dist_comm_stats(world, &stat, 1, &count), DIST_OK);
  assert_int_equal(count, 1);
  assert_int_equal(stat.timed_calls, 1);
  dist_context_destroy(context);
  dist_cluster_destroy(alone);
  const std::string text = read_text(prefix + ".0.json");
  assert_true(text.rfind("[\n", 0) == 0 && text.size() > 3 && text.substr(text.size() - 3) == "\n]\n");
  const Json trace = read_json(prefix + ".0.json");
  const std::vector<Json> calls = spans(trace, "collective");
  assert_int_equal(calls.size(), 1);
  assert_string_equal(calls[0]["args"]["path"].get<std::string>().c_str(), "self");
  assert_int_equal(calls[0]["args"]["bytes"].get<int64_t>(), 24);
}

// A file as a rank writes it, with collectives on comm 0 ending at `ends_us`.
std::string synthetic(int rank, const std::string& host, int64_t steady_ns, int64_t system_ns,
                      const std::vector<double>& ends_us, bool closed) {
  Json events = Json::array();
  events.push_back({{"name", "libdistribute"}, {"ph", "M"}, {"pid", rank}, {"tid", 0},
                    {"args", {{"rank", rank}, {"size", 3}, {"task", "worker:" + std::to_string(rank)}, {"host_id", host},
                              {"os_pid", 1}, {"steady_ns", steady_ns}, {"system_ns", system_ns}}}});
  for (size_t i = 0; i < ends_us.size(); ++i) {
    events.push_back({{"name", "all_reduce"}, {"cat", "collective"}, {"ph", "X"}, {"pid", rank}, {"tid", 1},
                      {"ts", ends_us[i] - 10.0}, {"dur", 10.0},
                      {"args", {{"comm", 0}, {"seq", static_cast<int>(i)}, {"bytes", 8}}}});
  }
  std::string text = events.dump(1);
  if (!closed) {
    // As a killed rank leaves it: whole events, no closing bracket.
    text = text.substr(0, text.rfind(']'));
  }
  return text;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

void test_merge_known_offsets(void**) {
  TempDir dir;
  // Rank 1's host reads its steady clock 5 s ahead of rank 0's; one of its
  // ends is off by 300 us (a late wake-up), which the median ignores.
  // Rank 2 shares no collective: its wall clock says its steady clock is 7 s behind.
  const std::vector<double> ends0 = {1000, 2000, 3000, 4000, 5000};
  std::vector<double> ends1;
  for (double e : ends0) ends1.push_back(e + 5e6);
  ends1[3] += 300;
  write_text(dir / "t.0.json", synthetic(0, "host-a", 10000000000, 20000000000, ends0, true));
  write_text(dir / "t.1.json", synthetic(1, "host-b", 15000000000, 20000000000, ends1, true));
  write_text(dir / "t.2.json", synthetic(2, "host-c", 3000000000, 20000000000, {}, false));
  write_text(dir / "t.notes.json", "not a rank's timeline: the merge skips names that are not ranks");
  std::string output;
  assert_int_equal(run_dist_info("timeline merge " + (dir / "t"), &output), 0);
  const Json merged = read_json(dir / "t.json");
  const Json& alignment = metadata(merged, "libdistribute merge")["args"]["ranks"];
  assert_int_equal(alignment.size(), 3);
  assert_string_equal(alignment[1]["aligned_by"].get<std::string>().c_str(), "collectives (5)");
  assert_true(alignment[1]["offset_us"].get<double>() == -5e6);
  assert_string_equal(alignment[2]["aligned_by"].get<std::string>().c_str(), "wall clock");
  assert_true(alignment[2]["offset_us"].get<double>() == 7e6);
  // Rank 1's spans now end where rank 0's do (but the late one).
  int matched = 0;
  for (const Json& e : merged) {
    if (e.value("ph", "") != "X" || e["pid"].get<int>() != 1) continue;
    const double end = e["ts"].get<double>() + e["dur"].get<double>();
    matched += end == ends0[static_cast<size_t>(e["args"]["seq"].get<int>())];
  }
  assert_int_equal(matched, 4);
}

void test_merge_bad_input(void**) {
  TempDir dir;
  std::string output;
  assert_int_not_equal(run_dist_info("timeline merge " + (dir / "none"), &output), 0);
  if (output.find("no files") == std::string::npos || output.find(dir / "none.*.json") == std::string::npos) {
    fail_msg("no files: %s", output.c_str());
  }
  write_text(dir / "x.0.json", "{\"not\": \"an array\"}");
  assert_int_not_equal(run_dist_info("timeline merge " + (dir / "x"), &output), 0);
  if (output.find("is not a timeline") == std::string::npos) fail_msg("an object: %s", output.c_str());
  write_text(dir / "y.0.json", "[{\"name\": \"something\", \"ph\": \"X\", \"ts\": 1}]");
  assert_int_not_equal(run_dist_info("timeline merge " + (dir / "y"), &output), 0);
  if (output.find("no libdistribute metadata") == std::string::npos) fail_msg("no metadata: %s", output.c_str());
  assert_int_not_equal(run_dist_info("timeline merge " + (dir / "y.0.json") + " " + (dir / "x.0.json"), &output), 0);
  if (output.find("--output is needed") == std::string::npos) fail_msg("files without --output: %s", output.c_str());
  assert_int_not_equal(run_dist_info("timeline merge --frobnicate " + (dir / "y"), &output), 0);
  if (output.find("unknown flag") == std::string::npos) fail_msg("a bad flag: %s", output.c_str());
  assert_int_not_equal(run_dist_info("timeline split", &output), 0);
  if (output.find("unknown subcommand") == std::string::npos) fail_msg("a bad subcommand: %s", output.c_str());
}


// The bytes of a known recording's event `i`: equal in runs of 64, so that
// collectives come the same as the one before (a record of no changes).
int64_t known_bytes(int i) { return int64_t{1} << (i / 64 % 40); }

// The events a known recording must show, each as its seq says: what the
// spool held. `count` of them, none twice.
void check_known_events(const Json& trace, int count) {
  const std::vector<Json> events = spans(trace, "collective");
  assert_int_equal(events.size(), count);
  std::set<int64_t> seen;
  for (const Json& e : events) {
    const int64_t i = e["args"]["seq"].get<int64_t>();
    assert_in_range(i, 0, count);
    assert_true(seen.insert(i).second);
    const int64_t start_ns = 5000000000LL + (i % 2 == 0 ? i * 1500LL : -i * 700LL);
    assert_string_equal(e["name"].get<std::string>().c_str(), i % 3 == 0 ? "broadcast" : "all_reduce");
    assert_int_equal(std::llround(e["ts"].get<double>() * 1000), start_ns);
    assert_int_equal(std::llround(e["dur"].get<double>() * 1000), 250 + i);
    assert_int_equal(e["tid"].get<int>(), 1);
    assert_int_equal(e["args"]["seq"].get<int64_t>(), i);
    assert_int_equal(e["args"]["bytes"].get<int64_t>(), known_bytes(i));
    assert_string_equal(e["args"]["dtype"].get<std::string>().c_str(), i % 2 == 0 ? "f32" : "bf16");
    if (i % 4 == 1) {  // recorded as a TimelineCollective
      const Json& args = e["args"];
      assert_int_equal(args.size(), i % 96 == 1 ? 10 : 9);
      assert_int_equal(args["comm"].get<int>(), 3);
      assert_string_equal(args["path"].get<std::string>().c_str(), "shm");
      assert_string_equal(args["algorithm"].get<std::string>().c_str(), i % 64 == 1 ? "" : "shm_direct");
      assert_int_equal(args["waiting_ns"].get<int64_t>(), i);
      assert_int_equal(args["reducing_ns"].get<int64_t>(), int64_t{3} << (i % 50));
      assert_int_equal(args["moving_ns"].get<int64_t>(), -i);
      if (i % 96 == 1) assert_string_equal(args["status"].get<std::string>().c_str(), "TIMEOUT");
      continue;
    }
    assert_int_equal(e["args"]["offset"].get<int64_t>(), -i);
    if (i % 1000 == 7) {
      assert_string_equal(e["args"]["detail"].get<std::string>().c_str(), "a \"quoted\"\nline");
    } else {
      assert_false(e["args"].contains("detail"));
    }
  }
}

// A rank that dies leaves its spool (base/timeline_spool.h), not its trace:
// dist-info converts it, whole or cut inside a record, and merge reads it in
// the trace's place. Both kinds of record: general events and collectives.
void test_spool_left_by_a_dead_rank(void**) {
  TempDir dir;
  constexpr int kEvents = 5000;  // more than one batch for the writer thread
  const std::string path = dir / "t.0.json";
  std::string spooled;
  {
    dist::TimelineOwner owner;
    owner.task = "worker:0";
    owner.host_id = "host-a";
    dist::Timeline timeline(path, owner);
    const uint32_t lane = timeline.lane("comm 0");
    for (int i = 0; i < kEvents; ++i) {
      if (i % 4 == 1) {
        dist::TimelineCollective c;
        c.kind = i % 3 == 0 ? "broadcast" : "all_reduce";
        c.dtype = i % 2 == 0 ? "f32" : "bf16";
        c.path = "shm";
        c.algorithm = i % 64 == 1 ? nullptr : "shm_direct";
        c.status = i % 96 == 1 ? "TIMEOUT" : nullptr;
        c.start_ns = 5000000000LL + (i % 2 == 0 ? i * 1500LL : -i * 700LL);
        c.duration_ns = 250 + i;
        c.lane = lane;
        c.comm = 3;
        c.seq = static_cast<uint64_t>(i);
        c.bytes = static_cast<uint64_t>(known_bytes(i));
        c.waiting_ns = i;
        c.reducing_ns = int64_t{3} << (i % 50);
        c.moving_ns = -i;
        timeline.record(c);
        continue;
      }
      dist::TimelineEvent e;
      e.name = i % 3 == 0 ? "broadcast" : "all_reduce";
      e.category = "collective";
      e.start_ns = 5000000000LL + (i % 2 == 0 ? i * 1500LL : -i * 700LL);
      e.duration_ns = 250 + i;
      e.lane = lane;
      e.add("seq", i).add("bytes", known_bytes(i)).add("offset", -i).add("dtype", i % 2 == 0 ? "f32" : "bf16");
      if (i % 1000 == 7) e.detail = "a \"quoted\"\nline";
      timeline.record(e);
    }
    timeline.flush();
    // What a rank killed now would leave.
    spooled = read_text(dist::timeline_spool_path(path));
  }
  // Closed: the trace, and no spool.
  struct stat st{};
  assert_int_not_equal(stat(dist::timeline_spool_path(path).c_str(), &st), 0);
  check_known_events(read_json(path), kEvents);

  write_text(dir / "dead.0.json.spool", spooled);
  std::string output;
  assert_int_equal(run_dist_info("timeline convert " + (dir / "dead.0.json.spool"), &output), 0);
  check_known_events(read_json(dir / "dead.0.json"), kEvents);
  assert_true(read_text(dir / "dead.0.json") == read_text(path));

  // Cut inside the last event: the events before it.
  write_text(dir / "cut.spool", spooled.substr(0, spooled.size() - 3));
  assert_int_equal(run_dist_info("timeline convert " + (dir / "cut.spool") + " --output " + (dir / "cut.json"), &output), 0);
  if (output.find("ends inside a record") == std::string::npos) fail_msg("a cut spool: %s", output.c_str());
  check_known_events(read_json(dir / "cut.json"), kEvents - 1);

  // Merge takes a rank's spool where its trace is missing.
  write_text(dir / "gone.0.json.spool", spooled);
  assert_int_equal(run_dist_info("timeline merge " + (dir / "gone"), &output), 0);
  const Json merged = read_json(dir / "gone.json");
  check_known_events(merged, kEvents);

  // Not a spool, or a damaged one: an error naming the file.
  write_text(dir / "text.spool", "[\n]\n");
  assert_int_not_equal(run_dist_info("timeline convert " + (dir / "text.spool"), &output), 0);
  if (output.find("is not a libdistribute timeline spool") == std::string::npos || output.find(dir / "text.spool") == std::string::npos) {
    fail_msg("not a spool: %s", output.c_str());
  }
  // A spool of another layout: which, and what to do.
  write_text(dir / "old.spool", spooled.substr(0, 7) + "1" + spooled.substr(8));
  assert_int_not_equal(run_dist_info("timeline convert " + (dir / "old.spool"), &output), 0);
  if (output.find("has layout 1; this build reads layout 2") == std::string::npos) fail_msg("another layout: %s", output.c_str());
  std::string damaged = spooled.substr(0, 12);
  damaged += '\x7f';
  write_text(dir / "bad.spool", damaged + spooled.substr(12));
  assert_int_not_equal(run_dist_info("timeline convert " + (dir / "bad.spool"), &output), 0);
  if (output.find("unknown type 127") == std::string::npos) fail_msg("a damaged spool: %s", output.c_str());
  assert_int_not_equal(run_dist_info("timeline convert " + (dir / "bad"), &output), 0);
  if (output.find("--output is needed") == std::string::npos) fail_msg("no .spool, no --output: %s", output.c_str());
}
}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_context_option),
      cmocka_unit_test(test_merge_known_offsets),
      cmocka_unit_test(test_merge_bad_input),
      cmocka_unit_test(test_spool_left_by_a_dead_rank),
      cmocka_unit_test(test_collectives_on_2_and_3_ranks),
      cmocka_unit_test(test_two_hosts_aligned_by_collectives),
      cmocka_unit_test(test_strategy_training),
      cmocka_unit_test(test_parameter_server_requests),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
