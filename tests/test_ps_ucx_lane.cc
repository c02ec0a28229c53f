// The UCX lane of parameter-server connections (transport/rpc_ucx_lane.h):
// large pushes and pulls travel on it and arrive bit for bit, sizes just
// around the threshold take the right path, two-piece payloads (a create with
// its initial value, scatter-adds) arrive whole; DIST_PS_UCX=0, a UCX_TLS
// that leaves the lane no transport, a server that turns the lane off and a
// server whose UCX cannot reach the worker all fall back to TCP; a server killed mid-transfer fails the worker's call with
// PEER_FAILED naming it (nothing hangs), and once restarted at the same
// address the worker reconnects with a new lane.
// Server processes are dist-server, started here and killed by PID.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

// Before cmocka, whose macros clash with <ios>.
#include "multiprocess/child_process.h"
#include "internal_test_support.h"
#include "ps/client.h"
#include "ps/server.h"
#include "ps/variable_id.h"
#include "transport/rpc_ucx_lane.h"

extern "C" {
#include "multiprocess/launch.h"
}

namespace {

using dist::DType;
using dist::Status;
using dist::kRpcLaneThreshold;
using namespace dist::ps;

const char kToken[] = "ucx-lane-test-token";

using child_process::Process;

int kill_leftovers(void** state) {
  (void)state;
  child_process::kill_started();
  unsetenv("DIST_PS_UCX");
  unsetenv("UCX_TLS");
  return 0;
}

VariableSpec bytes_spec(const std::string& name, int64_t n, DType dtype = DType::U8) {
  VariableSpec spec;
  spec.name = name;
  spec.dtype = dtype;
  spec.shape = {n};
  spec.rows = static_cast<uint64_t>(n);
  return spec;
}

std::vector<uint8_t> pattern(size_t n, unsigned seed) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>((i * 131 + seed * 7 + (i >> 11)) & 0xFF);
  return bytes;
}

ClientOptions options_for(const std::string& address) {
  ClientOptions options;
  options.servers = {{"ps:0", address}};
  options.token = kToken;
  options.timeouts.connect = std::chrono::milliseconds(500);
  options.timeouts.call = std::chrono::milliseconds(20000);
  return options;
}

std::unique_ptr<Server> start_server() {
  ServerOptions options;
  options.address = "127.0.0.1:0";
  options.token = kToken;
  return std::make_unique<Server>(options);
}

// assign (push) then read (pull) of `n` bytes, compared bit for bit; then an
// assign_add whose wrapped byte sums are computed here.
void push_pull_round_trip(PsClient& client, uint64_t id, size_t n, unsigned seed) {
  const std::vector<uint8_t> values = pattern(n, seed), delta = pattern(n, seed + 1);
  std::vector<uint8_t> back(n, 0);
  client.wait(client.assign(0, id, values.data(), n));
  client.wait(client.read(0, id, back.data(), n));
  if (back != values) fail_msg("%zu bytes: the pull differs from the push", n);
  client.wait(client.assign_add(0, id, delta.data(), n));
  client.wait(client.read(0, id, back.data(), n));
  for (size_t i = 0; i < n; ++i) {
    if (back[i] != static_cast<uint8_t>(values[i] + delta[i])) fail_msg("%zu bytes: byte %zu is wrong after assign_add", n, i);
  }
}

void test_sizes_around_the_threshold_bit_for_bit(void** state) {
  (void)state;
  auto server = start_server();
  PsClient client(options_for(server->bound_address()));
  client.connect(0);
  assert_true(client.has_lane(0));
  const size_t sizes[] = {1, kRpcLaneThreshold - 1, kRpcLaneThreshold, kRpcLaneThreshold + 1, 3 * 1024 * 1024 + 7,
                          4 * 1024 * 1024};
  unsigned seed = 1;
  for (size_t n : sizes) {
    const uint64_t id = variable_shard_id("v" + std::to_string(n), 0);
    client.wait(client.create(0, id, bytes_spec("v" + std::to_string(n), static_cast<int64_t>(n)), nullptr));
    const uint64_t client_before = client.lane_payloads(0), server_before = server->lane_payloads();
    push_pull_round_trip(client, id, n, seed++);
    // Four payloads (two pushes, two pulls) on the lane from the threshold up, none below.
    const uint64_t expected = n >= kRpcLaneThreshold ? 4 : 0;
    assert_int_equal(client.lane_payloads(0) - client_before, expected);
    assert_int_equal(server->lane_payloads() - server_before, expected);
  }
  assert_true(client.has_lane(0));
}

void test_two_piece_payloads_on_the_lane(void** state) {
  (void)state;
  auto server = start_server();
  PsClient client(options_for(server->bound_address()));
  // A create carrying a 1 MiB + 5 initial value: spec and value in two parts.
  const size_t n = (1 << 20) + 5;
  const std::vector<uint8_t> initial = pattern(n, 9);
  const uint64_t id = variable_shard_id("initial", 0);
  client.wait(client.create(0, id, bytes_spec("initial", static_cast<int64_t>(n)), initial.data()));
  std::vector<uint8_t> back(n);
  client.wait(client.read(0, id, back.data(), n));
  assert_true(back == initial);

  // Scatter-add of 40 rows of 2048 f64 (rows and values: two parts, 640 KiB),
  // duplicates adding up; then a sparse pull of the same rows (on the lane too).
  const int64_t rows = 64, width = 2048;
  VariableSpec table = bytes_spec("table", rows, DType::F64);
  table.shape = {rows, width};
  const uint64_t table_id = variable_shard_id("table", 0);
  client.wait(client.create(0, table_id, table, nullptr));
  std::vector<int64_t> picked(40);
  for (size_t k = 0; k < picked.size(); ++k) picked[k] = static_cast<int64_t>((k * 37) % 23);  // duplicates
  std::vector<double> values(picked.size() * width), reference(rows * width, 0.0);
  for (size_t k = 0; k < picked.size(); ++k) {
    for (int64_t j = 0; j < width; ++j) {
      values[k * width + j] = static_cast<double>((k + 1) * 1000 + j);
      reference[picked[k] * width + j] += values[k * width + j];
    }
  }
  const uint64_t before = server->lane_payloads();
  client.wait(client.add_rows(0, table_id, picked.data(), picked.size(), width * 8, values.data()));
  std::vector<double> got(picked.size() * width);
  client.wait(client.read_rows(0, table_id, picked.data(), picked.size(), width * 8, got.data()));
  assert_int_equal(server->lane_payloads() - before, 2);
  for (size_t k = 0; k < picked.size(); ++k) {
    for (int64_t j = 0; j < width; ++j) assert_true(got[k * width + j] == reference[picked[k] * width + j]);
  }
}

// A client of the server at `address` that gets no lane still moves a shard
// of n bytes created under `name` bit for bit, all of it over TCP. Returns
// the shard's id.
uint64_t round_trip_without_lane(const std::string& address, const char* name, size_t n, unsigned seed) {
  PsClient client(options_for(address));
  client.connect(0);
  assert_false(client.has_lane(0));
  const uint64_t id = variable_shard_id(name, 0);
  client.wait(client.create(0, id, bytes_spec(name, static_cast<int64_t>(n)), nullptr));
  push_pull_round_trip(client, id, n, seed);
  assert_int_equal(client.lane_payloads(0), 0);
  return id;
}

void test_ucx_turned_off_uses_tcp(void** state) {
  (void)state;
  setenv("DIST_PS_UCX", "0", 1);
  auto server = start_server();
  const size_t n = 4 * 1024 * 1024 + 3;
  const uint64_t id = round_trip_without_lane(server->bound_address(), "off", n, 3);
  assert_int_equal(server->lane_payloads(), 0);
  unsetenv("DIST_PS_UCX");

  // A UCX_TLS that leaves the lane no transport it may use (cma never is).
  setenv("UCX_TLS", "cma", 1);
  PsClient refused(options_for(server->bound_address()));
  refused.connect(0);
  assert_false(refused.has_lane(0));
  push_pull_round_trip(refused, id, n, 4);
  assert_int_equal(server->lane_payloads(), 0);
  unsetenv("UCX_TLS");
}

// dist-server at 127.0.0.1:port with extra environment ("NAME=value"),
// once its log says it is serving (bounded).
Process spawn_server(int port, const std::vector<std::string>& env, const char* what) {
  const char* binary = std::getenv("DIST_SERVER");
  if (binary == nullptr) fail_msg("DIST_SERVER is not set (run through ctest)");
  const std::string log = "/tmp/dist-ucx-lane-test-" + std::to_string(getpid()) + "-" + what + ".log";
  unlink(log.c_str());
  Process p = child_process::spawn({binary, "--address", "127.0.0.1:" + std::to_string(port)}, env, log, kToken);
  assert_true(p.pid >= 0);
  if (!child_process::wait_for_output(p, "serving at", 10)) fail_msg("dist-server (%s) did not start", what);
  return p;
}

// Signals the server and reaps it (killed after 10 s); removes its log.
int stop(Process& p, int signal_number) {
  const int status = child_process::finish(p, 10, signal_number);
  unlink(p.log.c_str());
  return status;
}

void test_servers_without_a_usable_lane_fall_back(void** state) {
  (void)state;
  struct launch ports;
  launch_prepare(&ports, 2);
  // One server turns the lane off; the other's UCX only speaks TCP while this
  // worker's only speaks shared memory, so UCX cannot connect them.
  Process off = spawn_server(ports.ports[0], {"DIST_PS_UCX=0"}, "off");
  Process tcp_only = spawn_server(ports.ports[1], {"UCX_TLS=tcp"}, "tcp-only");
  setenv("UCX_TLS", "sm", 1);
  for (int port : {ports.ports[0], ports.ports[1]}) {
    round_trip_without_lane("127.0.0.1:" + std::to_string(port), "fallback", 2 * 1024 * 1024 + 1, 5);
  }
  unsetenv("UCX_TLS");
  assert_int_equal(stop(off, SIGTERM), 0);
  assert_int_equal(stop(tcp_only, SIGTERM), 0);
}

void test_server_killed_mid_transfer_then_restarted(void** state) {
  (void)state;
  struct launch ports;
  launch_prepare(&ports, 1);
  Process server = spawn_server(ports.ports[0], {}, "victim");
  const std::string address = "127.0.0.1:" + std::to_string(ports.ports[0]);
  PsClient client(options_for(address));
  const size_t n = 64 << 20;  // tens of milliseconds per transfer: the kill lands inside one
  const std::vector<uint8_t> initial = pattern(n, 11);
  const uint64_t id = variable_shard_id("big", 0);
  client.wait(client.create(0, id, bytes_spec("big", static_cast<int64_t>(n)), initial.data()));
  assert_true(client.has_lane(0));

  std::vector<uint8_t> back(n);
  std::atomic<bool> killed{false};
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(server.pid, SIGKILL);
    killed = true;
  });
  Status status = Status::kOk;
  std::string message;
  // Pushes and pulls until the kill makes one fail (each bounded by the call timeout).
  for (int i = 0; i < 10000 && status == Status::kOk; ++i) {
    try {
      client.wait(client.assign(0, id, initial.data(), n));
      client.wait(client.read(0, id, back.data(), n));
    } catch (const dist::Error& e) {
      status = e.status();
      message = e.what();
    }
  }
  killer.join();
  assert_true(killed.load());
  if (status != Status::kPeerFailed || message.find("ps:0") == std::string::npos) {
    fail_msg("status %d, message \"%s\"", static_cast<int>(status), message.c_str());
  }
  assert_int_equal(stop(server, SIGKILL), -SIGKILL);

  // Down: a new request cannot connect.
  try {
    client.wait(client.read(0, id, back.data(), n));
    fail_msg("a read from a dead server succeeded");
  } catch (const dist::Error& e) {
    assert_int_equal(static_cast<int>(e.status()), static_cast<int>(Status::kUnavailable));
  }

  // Restarted at the same address: the client reconnects, re-creates the shard
  // from its initial value over a new lane, and reads it back whole.
  Process again = spawn_server(ports.ports[0], {}, "restarted");
  std::fill(back.begin(), back.end(), 0);
  const uint64_t before = client.lane_payloads(0);
  client.wait(client.read(0, id, back.data(), n));
  assert_true(client.has_lane(0));
  assert_true(client.lane_payloads(0) - before >= 2);  // the replayed create and the pull
  assert_true(back == initial);
  push_pull_round_trip(client, id, n, 13);
  assert_int_equal(stop(again, SIGTERM), 0);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_sizes_around_the_threshold_bit_for_bit, kill_leftovers),
      cmocka_unit_test_teardown(test_two_piece_payloads_on_the_lane, kill_leftovers),
      cmocka_unit_test_teardown(test_ucx_turned_off_uses_tcp, kill_leftovers),
      cmocka_unit_test_teardown(test_servers_without_a_usable_lane_fall_back, kill_leftovers),
      cmocka_unit_test_teardown(test_server_killed_mid_transfer_then_restarted, kill_leftovers),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
