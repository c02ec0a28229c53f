// Parameter servers as real processes on loopback: dist-server tasks serving
// ps_worker processes (tests/multiprocess/ps_worker.cc). A worker killed in the
// middle of 8 MiB updates stops neither the other worker nor the servers and
// leaves no torn shard; a ps task killed mid-training fails the worker's calls
// with PEER_FAILED/UNAVAILABLE naming it, and once restarted at the same
// address restores its shard of the latest checkpoint while the worker
// reconnects and finishes; `dist-run --ps 2 --ps-server` runs a whole job.
// Every process is started here, bounded in time and killed by PID.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

// Before cmocka, whose macros clash with <ios>.
#include "multiprocess/child_process.h"
#include "internal_test_support.h"
#include "ps/client.h"
#include "ps/variable_id.h"

extern "C" {
#include "multiprocess/launch.h"
}

namespace {

const char kToken[] = "ps-process-test-token";

using child_process::finish;
using child_process::Process;
using child_process::read_text;
using child_process::wait_for_output;

int kill_leftovers(void** state) {
  (void)state;
  child_process::kill_started();
  return 0;
}

std::string tf_config(const std::vector<int>& ps, const std::vector<int>& workers, const char* type, int index) {
  auto list = [](const std::vector<int>& ports) {
    std::string text = "[";
    for (size_t i = 0; i < ports.size(); ++i) text += (i ? ",\"127.0.0.1:" : "\"127.0.0.1:") + std::to_string(ports[i]) + "\"";
    return text + "]";
  };
  return "{\"cluster\": {\"ps\": " + list(ps) + ", \"worker\": " + list(workers) + "}, \"task\": {\"type\": \"" + type +
         "\", \"index\": " + std::to_string(index) + "}}";
}

// args with TF_CONFIG = config and the suite's token.
Process spawn(const std::vector<std::string>& args, const std::string& config, const std::string& log) {
  Process p = child_process::spawn(args, {"TF_CONFIG=" + config}, log, kToken);
  assert_true(p.pid >= 0);
  return p;
}

std::string binary(const char* variable) {
  const char* path = std::getenv(variable);
  if (path == nullptr) fail_msg("%s is not set (run through ctest)", variable);
  return path;
}

std::string log_path(const char* what) { return "/tmp/dist-ps-test-" + std::to_string(getpid()) + "-" + what + ".log"; }

void test_worker_killed_mid_update(void** state) {
  (void)state;
  struct launch ports;
  launch_prepare(&ports, 4);
  const std::vector<int> ps = {ports.ports[0], ports.ports[1]}, workers = {ports.ports[2], ports.ports[3]};
  Process servers[2];
  for (int s = 0; s < 2; ++s) {
    const std::string name = "kill-ps" + std::to_string(s);
    servers[s] = spawn({binary("DIST_SERVER")}, tf_config(ps, workers, "ps", s), log_path(name.c_str()));
    assert_true(wait_for_output(servers[s], "serving at", 10));
  }
  const int64_t elements = 1 << 20;  // 8 MiB: a kill usually lands inside a transfer
  Process victim = spawn({binary("DIST_PS_WORKER"), std::to_string(elements), "0"}, tf_config(ps, workers, "worker", 0),
                         log_path("victim"));
  Process survivor = spawn({binary("DIST_PS_WORKER"), std::to_string(elements), "30"},
                           tf_config(ps, workers, "worker", 1), log_path("survivor"));
  const bool progressed = wait_for_output(victim, "step 5\n", 30);
  const int victim_status = finish(victim, 5, SIGKILL);
  const int survivor_status = finish(survivor, 60);
  if (!progressed || survivor_status != 0) {
    fail_msg("victim progressed %d; survivor exited %d: %s", progressed, survivor_status, read_text(survivor.log).c_str());
  }
  assert_int_equal(victim_status, -SIGKILL);

  // Every shard is whole: all its elements saw the same number of updates.
  dist::ps::ClientOptions options;
  options.servers = {{"ps:0", "127.0.0.1:" + std::to_string(ps[0])}, {"ps:1", "127.0.0.1:" + std::to_string(ps[1])}};
  options.token = kToken;
  dist::ps::PsClient client(options);
  std::vector<int64_t> half(elements / 2);
  int64_t shard_values[2];
  for (int s = 0; s < 2; ++s) {
    // Round robin put shard s on server s.
    client.wait(client.read(s, dist::ps::variable_shard_id("counter", (uint32_t)s), half.data(), half.size() * 8));
    for (int64_t x : half) {
      if (x != half[0]) fail_msg("shard %d is torn: %lld and %lld", s, (long long)half[0], (long long)x);
    }
    shard_values[s] = half[0];
    assert_true(half[0] >= 30 + 5);
  }
  assert_true(std::llabs(shard_values[0] - shard_values[1]) <= 1);
  for (int s = 0; s < 2; ++s) {
    assert_int_equal(finish(servers[s], 10, SIGTERM), 0);
    assert_true(read_text(servers[s].log).find("created counter") != std::string::npos);
    unlink(servers[s].log.c_str());
  }
  unlink(victim.log.c_str());
  unlink(survivor.log.c_str());
}

void test_ps_killed_and_restarted(void** state) {
  (void)state;
  struct launch ports;
  launch_prepare(&ports, 3);
  const std::vector<int> ps = {ports.ports[0], ports.ports[1]}, workers = {ports.ports[2]};
  char pattern[] = "/tmp/dist-ps-ckpt-XXXXXX";
  const std::string root = mkdtemp(pattern);
  const std::vector<std::string> server_args = {binary("DIST_SERVER"), "--checkpoint-dir", root};
  Process servers[2];
  for (int s = 0; s < 2; ++s) {
    const std::string name = "restart-ps" + std::to_string(s);
    servers[s] = spawn(server_args, tf_config(ps, workers, "ps", s), log_path(name.c_str()));
    assert_true(wait_for_output(servers[s], "serving at", 10));
  }
  Process worker = spawn({binary("DIST_PS_WORKER"), "64", "60", root, "10", "40"}, tf_config(ps, workers, "worker", 0),
                         log_path("trainer"));
  assert_true(wait_for_output(worker, "step 25\n", 30));
  assert_int_equal(finish(servers[1], 5, SIGKILL), -SIGKILL);
  // The worker notices, names the server, and keeps retrying while it is down.
  assert_true(wait_for_output(worker, "retrying", 30));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string second_log = log_path("restart-ps1-again");
  servers[1] = spawn(server_args, tf_config(ps, workers, "ps", 1), second_log);
  const int worker_status = finish(worker, 60);
  const std::string out = read_text(worker.log);
  if (worker_status != 0) fail_msg("worker exited %d: %s", worker_status, out.c_str());
  assert_true(out.find("parameter server ps:1") != std::string::npos);
  assert_true(out.find("status -200") != std::string::npos || out.find("status -204") != std::string::npos);
  // Shard 0 never lost an update (a step that failed on ps:1 while in flight
  // was applied on ps:0 and then retried: at least once); shard 1 went back to
  // the checkpoint (>= step 20) and went on.
  long long a = -1, b = -1;
  const size_t at = out.rfind("final ");
  assert_true(at != std::string::npos);
  assert_int_equal(std::sscanf(out.c_str() + at, "final %lld %lld", &a, &b), 2);
  long long in_flight_failures = 0;
  for (size_t p = out.find("status -200"); p != std::string::npos; p = out.find("status -200", p + 1)) ++in_flight_failures;
  assert_true(a >= 60 && a <= 60 + in_flight_failures);
  assert_true(b <= 60 && b >= 20 + (60 - 25));
  assert_true(read_text(second_log).find("restored counter") != std::string::npos);
  for (Process& server : servers) assert_int_equal(finish(server, 10, SIGTERM), 0);
  for (const std::string& path : {servers[0].log, second_log, worker.log, log_path("restart-ps1")}) unlink(path.c_str());
  assert_int_equal(std::system(("rm -rf '" + root + "'").c_str()), 0);
}

void test_dist_run_with_ps_server(void** state) {
  (void)state;
  const std::string log = log_path("dist-run");
  Process run = spawn({binary("DIST_RUN"), "-n", "2", "--ps", "2", "--ps-server", "--timeout", "60", "--",
                       binary("DIST_PS_WORKER"), "1000", "20"},
                      "", log);
  const int status = finish(run, 90);
  const std::string out = read_text(log);
  if (status != 0) fail_msg("dist-run exited %d: %s", status, out.c_str());
  // The worker finishing last sees both workers' 20 steps on both shards.
  assert_true(out.find("final 40 40") != std::string::npos);
  assert_true(out.find("[ps:1] dist-server: ps:1 serving at") != std::string::npos);
  assert_true(out.find("stopping on SIGTERM") != std::string::npos);
  unlink(log.c_str());
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_worker_killed_mid_update, kill_leftovers),
      cmocka_unit_test_teardown(test_ps_killed_and_restarted, kill_leftovers),
      cmocka_unit_test_teardown(test_dist_run_with_ps_server, kill_leftovers),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
