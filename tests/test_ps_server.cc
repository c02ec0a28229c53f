// Parameter servers over loopback (src/ps/server, src/ps/client,
// src/variables/on_servers/variable_shards): every operation through the
// network against references, exact sums of concurrent integer updates from
// several clients, synchronous rounds, hostile peers (no token, garbage frames, lying sizes,
// half-sent updates), and a server restarted at the same address restoring its
// shards from the latest checkpoint while the client reconnects.
//
// One file past 500 lines: the cases share the in-process server fixture and
// the hostile-peer socket helpers.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "internal_test_support.h"
#include "ps/checkpoint_coordinator.h"
#include "ps/client.h"
#include "ps/protocol.h"
#include "ps/request_handler.h"
#include "ps/spec_codec.h"
#include "ps/server.h"
#include "ps/variable_id.h"
#include "transport/handshake.h"
#include "transport/rpc_frame.h"
#include "transport/rpc_ucx_lane.h"
#include "variables/on_servers/placement.h"
#include "variables/on_servers/variable_shards.h"

namespace {

using dist::DType;
using dist::OptimizerConfig;
using dist::OptimizerKind;
using dist::Status;
using namespace dist::ps;

const char kToken[] = "test-cluster-token";

std::unique_ptr<Server> start_server(const std::string& address = "127.0.0.1:0", const std::string& root = "") {
  ServerOptions options;
  options.address = address;
  options.token = kToken;
  options.checkpoint_root = root;
  return std::make_unique<Server>(options);
}

ClientOptions client_options(const std::vector<Server*>& servers, int64_t worker = -1) {
  ClientOptions options;
  for (size_t i = 0; i < servers.size(); ++i) {
    options.servers.push_back({"ps:" + std::to_string(i), servers[i]->bound_address()});
  }
  options.token = kToken;
  options.worker_id = worker;
  options.timeouts.connect = std::chrono::milliseconds(500);
  options.timeouts.call = std::chrono::milliseconds(20000);
  return options;
}

// Without a kind: no optimizer.
VariableSpec spec_of(const char* name, DType dtype, std::vector<int64_t> shape,
                     std::optional<OptimizerKind> kind = std::nullopt) {
  VariableSpec spec;
  spec.name = name;
  spec.dtype = dtype;
  spec.shape = std::move(shape);
  spec.rows = spec.total_rows();
  if (kind) spec.optimizer = OptimizerConfig{*kind};
  return spec;
}

dist::VariablePlacement place(int servers, const VariableSpec& spec, int shards) {
  dist::Placer placer(servers, dist::PlacementPolicy::kRoundRobin);
  dist::PartitionerOptions partitioner;
  partitioner.kind = dist::PartitionerKind::kFixedShards;
  partitioner.num_shards = shards;
  return placer.place(spec.name, spec.total_rows(), spec.row_bytes(), partitioner);
}

template <typename Call>
void expect_status(const char* what, Status status, const std::string& needle, Call call) {
  try {
    call();
  } catch (const dist::Error& e) {
    if (e.status() != status) fail_msg("%s: status %d, expected %d (%s)", what, (int)e.status(), (int)status, e.what());
    if (std::string(e.what()).find(needle) == std::string::npos) {
      fail_msg("%s: message \"%s\" lacks \"%s\"", what, e.what(), needle.c_str());
    }
    return;
  }
  fail_msg("%s: succeeded", what);
}

void test_dense_and_sparse_ops_over_two_servers(void** state) {
  (void)state;
  auto a = start_server(), b = start_server();
  PsClient client(client_options({a.get(), b.get()}));
  // 7 rows x 2 f64 in 3 shards on servers 0, 1, 0; SGD with lr 0.5.
  VariableSpec spec = spec_of("w", DType::F64, {7, 2}, OptimizerKind::kSgd);
  spec.optimizer->learning_rate = 0.5;
  dist::VariableShards w(client, spec, place(2, spec, 3));
  std::vector<double> init(14), got(14), ref(14);
  for (int i = 0; i < 14; ++i) init[i] = ref[i] = i * 1.5;
  w.create(init.data());
  w.read(got.data());
  assert_true(got == ref);
  assert_int_equal(a->store().size(), 2);
  assert_int_equal(b->store().size(), 1);

  std::vector<double> delta(14);
  for (int i = 0; i < 14; ++i) delta[i] = 0.25 * (i % 3);
  w.assign_add(delta.data());
  w.assign_sub(delta.data());
  w.assign_sub(delta.data());
  for (int i = 0; i < 14; ++i) ref[i] -= delta[i];
  w.apply_gradient(delta.data());
  for (int i = 0; i < 14; ++i) ref[i] -= 0.5 * delta[i];
  w.read(got.data());
  for (int i = 0; i < 14; ++i) assert_true(got[i] == ref[i]);

  // Sparse: rows 6, 0, 3 span every shard; duplicates add up.
  const int64_t rows[4] = {6, 0, 3, 6};
  std::vector<double> picked(8);
  w.read_rows(rows, 4, picked.data());
  for (int k = 0; k < 4; ++k) {
    assert_true(picked[k * 2] == ref[rows[k] * 2]);
    assert_true(picked[k * 2 + 1] == ref[rows[k] * 2 + 1]);
  }
  const double add[8] = {1, 1, 2, 2, 3, 3, 4, 4};
  w.add_rows(rows, 4, add);
  for (int k = 0; k < 4; ++k) {
    ref[rows[k] * 2] += add[k * 2];
    ref[rows[k] * 2 + 1] += add[k * 2 + 1];
  }
  w.apply_rows(rows, 4, add);
  for (int k = 0; k < 4; ++k) {
    ref[rows[k] * 2] -= 0.5 * add[k * 2];
    ref[rows[k] * 2 + 1] -= 0.5 * add[k * 2 + 1];
  }
  w.read(got.data());
  for (int i = 0; i < 14; ++i) {
    if (got[i] != ref[i]) fail_msg("element %d: %g, expected %g", i, got[i], ref[i]);
  }
  const int64_t out_of_range[1] = {7};
  expect_invalid("row 7", "row 7 is outside", [&] { w.read_rows(out_of_range, 1, picked.data()); });

  // Server-side errors come back with the server's name.
  expect_status("unknown id", Status::kInvalidArgument, "parameter server ps:1", [&] {
    std::vector<double> buffer(2);
    client.wait(client.assign(1, 12345, buffer.data(), 16));
  });
  // The refused request's payload was skipped: the same connection goes on.
  w.read(got.data());
  for (int i = 0; i < 14; ++i) assert_true(got[i] == ref[i]);

  auto listing = client.list(1);
  client.wait(listing);
  std::string json(listing->response().begin(), listing->response().end());
  assert_true(json.find("\"name\":\"w\"") != std::string::npos);
}

void test_concurrent_integer_adds_sum_exactly(void** state) {
  (void)state;
  auto a = start_server(), b = start_server();
  VariableSpec spec = spec_of("counter", DType::I64, {1000});
  const dist::VariablePlacement placement = place(2, spec, 2);
  {
    PsClient creator(client_options({a.get(), b.get()}));
    dist::VariableShards v(creator, spec, placement);
    v.create(nullptr);
  }
  const int kClients = 4, kAdds = 150;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      try {
        PsClient client(client_options({a.get(), b.get()}, c));
        dist::VariableShards v(client, spec, placement);
        v.create(nullptr);  // exists: left as it is
        std::vector<int64_t> ones(1000);
        for (int i = 0; i < 1000; ++i) ones[i] = 1 + c;
        for (int k = 0; k < kAdds; ++k) v.assign_add(ones.data());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "client %d: %s\n", c, e.what());
        ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  assert_int_equal(failures.load(), 0);
  PsClient reader(client_options({a.get(), b.get()}));
  dist::VariableShards v(reader, spec, placement);
  std::vector<int64_t> got(1000);
  v.read(got.data());
  const int64_t expect = kAdds * (1 + 2 + 3 + 4);
  for (int i = 0; i < 1000; ++i) assert_int_equal(got[i], expect);
  assert_int_equal(v.versions()[0], kAdds * kClients);
}

void test_synchronous_rounds(void** state) {
  (void)state;
  auto server = start_server();
  VariableSpec spec = spec_of("sync", DType::F32, {4}, OptimizerKind::kSgd);
  spec.optimizer->learning_rate = 1.0;
  spec.sync.replicas_to_aggregate = 2;
  const dist::VariablePlacement placement = place(1, spec, 1);
  std::vector<std::vector<float>> seen(2);
  std::vector<std::thread> workers;
  std::atomic<int> failures{0};
  for (int worker = 0; worker < 2; ++worker) {
    workers.emplace_back([&, worker] {
      try {
        PsClient client(client_options({server.get()}, worker));
        dist::VariableShards v(client, spec, placement);
        v.create(nullptr);
        std::vector<float> w(4), g(4);
        for (int step = 0; step < 5; ++step) {
          v.read(w.data(), (uint64_t)step, 10000);  // the round before this one is complete
          for (int i = 0; i < 4; ++i) g[i] = (float)(worker + 1);
          v.apply_gradient(g.data());
        }
        v.read(w.data(), 5, 10000);
        seen[worker] = w;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "worker %d: %s\n", worker, e.what());
        ++failures;
      }
    });
  }
  for (auto& t : workers) t.join();
  assert_int_equal(failures.load(), 0);
  // Five rounds of the mean gradient (1 + 2) / 2 = 1.5 with lr 1.
  for (int worker = 0; worker < 2; ++worker) {
    for (float x : seen[worker]) assert_true(x == -7.5f);
  }
}

// A raw authenticated connection, for sending what no client would.
dist::Socket raw_connection(const Server& server, const std::string& token) {
  dist::HostPort address = dist::split_address(server.bound_address());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  dist::Socket socket = dist::try_connect(address, deadline);
  assert_true(socket.valid());
  dist::authenticate_as_connector(socket.fd(), token, deadline, "test");
  return socket;
}

dist::RpcHeader exchange(int fd, const dist::RpcHeader& request, const void* payload, size_t bytes,
                         std::string* error) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  dist::write_frame(fd, request, payload, bytes, deadline, "test");
  dist::RpcHeader response;
  dist::read_all(fd, &response, sizeof response, deadline, "test");
  error->resize(response.payload_bytes);
  dist::read_all(fd, error->data(), error->size(), deadline, "test");
  return response;
}

bool closed_by_server(int fd) {
  char byte;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  try {
    dist::read_all(fd, &byte, 1, deadline, "test");
  } catch (const dist::Error& e) {
    return e.status() == Status::kPeerFailed;
  }
  return false;
}

void test_hostile_peers(void** state) {
  (void)state;
  auto server = start_server();
  PsClient client(client_options({server.get()}));
  VariableSpec spec = spec_of("guarded", DType::I32, {1024});
  const uint64_t id = variable_shard_id("guarded", 0);
  std::vector<int32_t> init(1024, 5);
  client.wait(client.create(0, id, spec, init.data()));

  // A client with another token is refused.
  ClientOptions wrong = client_options({server.get()});
  wrong.token = "not-the-token";
  PsClient intruder(wrong);
  std::vector<int32_t> junk(1024, 99);
  expect_status("wrong token", Status::kAuth, "cluster token", [&] { intruder.assign(0, id, junk.data(), 4096); });

  std::string error;
  {  // Garbage header: an error reply, then the connection is dropped.
    dist::Socket s = raw_connection(*server, kToken);
    dist::RpcHeader garbage;
    garbage.magic = 0xdeadbeef;
    dist::RpcHeader reply = exchange(s.fd(), garbage, nullptr, 0, &error);
    assert_int_equal(reply.code, (int)Status::kInvalidArgument);
    assert_true(error.find("wrong magic") != std::string::npos);
    assert_true(closed_by_server(s.fd()));
  }
  {  // A payload size the operation cannot have is refused before it is read.
    dist::Socket s = raw_connection(*server, kToken);
    dist::RpcHeader lie;
    lie.magic = dist::kRpcRequestMagic;
    lie.code = (int32_t)Op::kAssign;
    lie.args[0] = id;
    lie.payload_bytes = uint64_t{1} << 40;
    dist::RpcHeader reply = exchange(s.fd(), lie, nullptr, 0, &error);
    assert_int_equal(reply.code, (int)Status::kInvalidArgument);
    assert_true(error.find("expected 4096") != std::string::npos);
    assert_true(closed_by_server(s.fd()));
  }
  {  // Unknown operation; rows beyond the limit.
    dist::Socket s = raw_connection(*server, kToken);
    dist::RpcHeader unknown;
    unknown.magic = dist::kRpcRequestMagic;
    unknown.code = 999;
    assert_int_equal(exchange(s.fd(), unknown, nullptr, 0, &error).code, (int)Status::kInvalidArgument);
    assert_true(error.find("unknown operation 999") != std::string::npos);
  }
  {  // Half an update, then the worker "dies": nothing is applied.
    dist::Socket s = raw_connection(*server, kToken);
    dist::RpcHeader half;
    half.magic = dist::kRpcRequestMagic;
    half.code = (int32_t)Op::kAssignAdd;
    half.args[0] = id;
    half.payload_bytes = 4096;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    dist::write_all(s.fd(), &half, sizeof half, deadline, "test");
    dist::write_all(s.fd(), junk.data(), 2048, deadline, "test");
  }
  {  // A create whose spec is garbage.
    dist::Socket s = raw_connection(*server, kToken);
    dist::RpcHeader create;
    create.magic = dist::kRpcRequestMagic;
    create.code = (int32_t)Op::kCreate;
    create.args[0] = 77;
    const uint8_t garbage[12] = {200, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
    dist::RpcHeader reply = exchange(s.fd(), create, garbage, sizeof garbage, &error);
    assert_int_equal(reply.code, (int)Status::kInvalidArgument);
    assert_true(error.find("truncated") != std::string::npos);
  }
  // The variable is untouched and the server still serves.
  std::vector<int32_t> got(1024);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (server->requests_served() < 2 && std::chrono::steady_clock::now() < deadline) {
  }
  client.wait(client.read(0, id, got.data(), 4096));
  for (int32_t x : got) assert_int_equal(x, 5);
}

// The UCX lane under hostile or failing peers: a lane frame or a lane payload
// without a lane, an oversized address, a set-up out of turn, a lane payload
// longer than its header says, and a worker that leaves in the middle of one.
// None of them changes the variable; the server keeps serving.
// closed_by_server for a peer that sends on a lane: the lane must progress
// for the server to see the payload at all (a rendezvous moves only when
// the sender drives it), so it is driven while the test waits.
bool closed_by_server_driving(int fd, dist::RpcUcxLane& lane) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < until) {
    lane.progress();
    pollfd ready{fd, POLLIN, 0};
    if (poll(&ready, 1, 1) > 0 && closed_by_server(fd)) return true;
  }
  return false;
}

// An assign_add of `bytes` to `variable` whose payload is announced on the lane.
dist::RpcHeader lane_assign_add(uint64_t call, uint64_t variable, uint64_t bytes) {
  dist::RpcHeader request;
  request.magic = dist::kRpcRequestLaneMagic;
  request.code = (int32_t)Op::kAssignAdd;
  request.id = call;
  request.args[0] = variable;
  request.payload_bytes = bytes;
  return request;
}

void test_hostile_lane_peers(void** state) {
  (void)state;
  auto server = start_server();
  PsClient client(client_options({server.get()}));
  const int64_t n = 64 * 1024;  // 256 KiB of i32: a lane payload
  VariableSpec spec = spec_of("lane-guarded", DType::I32, {n});
  const uint64_t id = variable_shard_id("lane-guarded", 0);
  std::vector<int32_t> init(n, 5), junk(2 * n, 99);
  client.wait(client.create(0, id, spec, init.data()));
  const uint64_t bytes = n * 4;
  auto deadline = [] { return std::chrono::steady_clock::now() + std::chrono::seconds(5); };
  std::string error;
  {  // A payload announced on a lane this connection never set up.
    dist::Socket s = raw_connection(*server, kToken);
    dist::RpcHeader request;
    request.magic = dist::kRpcRequestLaneMagic;
    request.code = (int32_t)Op::kAssign;
    request.args[0] = id;
    request.payload_bytes = bytes;
    assert_int_equal(exchange(s.fd(), request, nullptr, 0, &error).code, (int)Status::kInvalidArgument);
    assert_true(error.find("lane this connection has not set up") != std::string::npos);
    assert_true(closed_by_server(s.fd()));
  }
  {  // A confirmation before any offer is refused; an oversized address ends the connection.
    dist::Socket s = raw_connection(*server, kToken);
    dist::RpcHeader confirm;
    confirm.magic = dist::kRpcLaneMagic;
    confirm.code = dist::kLaneConfirm;
    assert_int_equal(exchange(s.fd(), confirm, nullptr, 0, &error).code, (int)Status::kInvalidArgument);
    assert_true(error.find("out of turn") != std::string::npos);
    dist::RpcHeader offer;
    offer.magic = dist::kRpcLaneMagic;
    offer.code = dist::kLaneOffer;
    offer.payload_bytes = dist::kMaxLaneAddressBytes + 1;
    dist::write_all(s.fd(), &offer, sizeof offer, deadline(), "test");
    assert_true(closed_by_server(s.fd()));
  }
  {  // A real lane carrying more than the header announces: the connection ends.
    dist::Socket s = raw_connection(*server, kToken);
    std::unique_ptr<dist::RpcUcxLane> lane = dist::offer_lane(s.fd(), "test", deadline());
    assert_non_null(lane.get());
    const dist::RpcHeader request = lane_assign_add(7, id, bytes);
    dist::RpcLaneTransfer part;
    lane->post_send(part, dist::rpc_lane_tag(7, dist::LaneDirection::kRequest, 0), junk.data(), 2 * bytes);
    dist::write_all(s.fd(), &request, sizeof request, deadline(), "test");
    assert_true(closed_by_server_driving(s.fd(), *lane));
    lane->abandon();
    lane->cancel(part);
  }
  {  // Half a lane payload, then the worker leaves.
    dist::Socket s = raw_connection(*server, kToken);
    std::unique_ptr<dist::RpcUcxLane> lane = dist::offer_lane(s.fd(), "test", deadline());
    assert_non_null(lane.get());
    const dist::RpcHeader request = lane_assign_add(8, id, bytes);
    dist::RpcLaneTransfer part;
    lane->post_send(part, dist::rpc_lane_tag(8, dist::LaneDirection::kRequest, 0), junk.data(), bytes / 2);
    dist::write_all(s.fd(), &request, sizeof request, deadline(), "test");
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    while (std::chrono::steady_clock::now() < until) lane->progress();
    lane->abandon();
    lane->cancel(part);
  }
  // Untouched, and served over a lane as before.
  std::vector<int32_t> got(n);
  client.wait(client.read(0, id, got.data(), bytes));
  for (int32_t x : got) assert_int_equal(x, 5);
  assert_true(client.has_lane(0));
}

void test_restart_restores_latest_checkpoint(void** state) {
  (void)state;
  char pattern[] = "/tmp/dist-ps-test-XXXXXX";
  const std::string root = mkdtemp(pattern);
  auto a = start_server("127.0.0.1:0", root);
  auto b = start_server("127.0.0.1:0", root);
  const std::string address_b = b->bound_address();
  PsClient client(client_options({a.get(), b.get()}));
  VariableSpec spec = spec_of("model", DType::I64, {6});
  dist::VariableShards v(client, spec, place(2, spec, 2));
  std::vector<int64_t> values = {1, 2, 3, 4, 5, 6}, got(6);
  v.create(values.data());
  const std::string saved = save_checkpoint(client, root, 10);
  assert_true(saved.find("ckpt-10") != std::string::npos);
  std::vector<int64_t> ten(6, 10);
  v.assign_add(ten.data());  // after the checkpoint: server 1 loses this part

  b.reset();  // ps:1 dies
  expect_status("dead server", Status::kPeerFailed, "parameter server ps:1", [&] { v.read(got.data()); });
  expect_status("still down", Status::kUnavailable, "ps:1", [&] { v.read(got.data()); });

  b = start_server(address_b, root);  // back at the same address
  v.read(got.data());                 // reconnects; the shard is re-created from the checkpoint
  const int64_t expect[6] = {11, 12, 13, 4, 5, 6};
  for (int i = 0; i < 6; ++i) assert_int_equal(got[i], expect[i]);
  v.assign_add(ten.data());  // and training continues
  v.read(got.data());
  assert_int_equal(got[5], 16);

  // Restoring everything goes back to step 10 on both servers.
  restore_checkpoint(client, root);
  v.read(got.data());
  for (int i = 0; i < 6; ++i) assert_int_equal(got[i], values[i]);

  // Re-shard: three servers, three shards, restored from the two-server checkpoint.
  auto c = start_server("127.0.0.1:0", root), d = start_server("127.0.0.1:0", root), e = start_server("127.0.0.1:0", root);
  PsClient three(client_options({c.get(), d.get(), e.get()}));
  dist::VariableShards resharded(three, spec, place(3, spec, 3));
  resharded.create(nullptr);
  resharded.read(got.data());
  for (int i = 0; i < 6; ++i) assert_int_equal(got[i], values[i]);

  // A stop request ends a server.
  three.wait(three.stop(2));
  assert_true(e->join(std::chrono::milliseconds(5000)));
  std::system(("rm -rf '" + root + "'").c_str());
}

// The protocol's optimizer numbers (create requests, checkpoint shard
// files) stay as they were: 0 none, 1 sgd, 2 momentum, 3 adagrad, 4 adam.
void test_spec_optimizer_numbers(void** state) {
  (void)state;
  const std::pair<std::optional<OptimizerKind>, int32_t> numbers[] = {{std::nullopt, 0},
                                                                      {OptimizerKind::kSgd, 1},
                                                                      {OptimizerKind::kMomentum, 2},
                                                                      {OptimizerKind::kAdagrad, 3},
                                                                      {OptimizerKind::kAdam, 4}};
  for (const auto& [kind, number] : numbers) {
    const VariableSpec spec = spec_of("w", DType::F32, {2}, kind);
    ByteWriter prefix;  // what precedes the number
    prefix.put_string(spec.name);
    prefix.put(static_cast<int32_t>(spec.dtype));
    prefix.put(uint32_t{1});
    prefix.put(int64_t{2});
    prefix.put(spec.row_offset);
    prefix.put(spec.rows);
    ByteWriter encoded;
    encode_spec(spec, encoded);
    uint8_t* at = encoded.bytes().data() + prefix.bytes().size();
    int32_t wire = -1;
    std::memcpy(&wire, at, sizeof wire);
    assert_int_equal(wire, number);
    ByteReader reader(encoded.bytes().data(), encoded.bytes().size(), "spec");
    const VariableSpec decoded = decode_spec(reader);
    assert_int_equal(decoded.optimizer.has_value(), kind.has_value());
    if (kind) assert_int_equal(static_cast<int>(decoded.optimizer->kind), static_cast<int>(*kind));
    const int32_t beyond = 5;
    std::memcpy(at, &beyond, sizeof beyond);
    ByteReader bad(encoded.bytes().data(), encoded.bytes().size(), "spec");
    expect_invalid("optimizer 5", "optimizer 5 is not one of 0 none", [&] { decode_spec(bad); });
  }
}

// Random bytes in every operation's payload, and random corruptions of a valid
// create: always an error reply (or a valid create), never a crash.
void test_handler_survives_garbage(void** state) {
  (void)state;
  ShardStore store;
  std::atomic<bool> stopping{false};
  RequestHandler handler(store, stopping, nullptr, nullptr);
  const uint64_t id = 5;
  const int32_t init[4] = {1, 2, 3, 4};
  store.create(id, spec_of("v", DType::I32, {4}), init);
  ByteWriter valid;
  {
    ByteWriter spec;
    encode_spec(spec_of("g", DType::F32, {3, 2}, OptimizerKind::kAdam), spec);
    valid.put(static_cast<uint32_t>(spec.bytes().size()));
    valid.append(spec.bytes().data(), spec.bytes().size());
    valid.put(static_cast<uint8_t>(0));
  }
  unsigned seed = 12345;
  std::vector<uint8_t> scratch;
  int errors = 0;
  for (int round = 0; round < 3000; ++round) {
    dist::RpcHeader request;
    request.magic = dist::kRpcRequestMagic;
    request.code = 1 + (int32_t)(rand_r(&seed) % 15);
    request.args[0] = rand_r(&seed) % 2 ? id : rand_r(&seed);
    request.args[1] = rand_r(&seed) % 4 ? rand_r(&seed) % 8 : (uint64_t)rand_r(&seed) << 20;
    request.args[2] = rand_r(&seed) % 3;
    std::vector<uint8_t> payload;
    if (request.code == (int32_t)Op::kCreate && round % 2) {
      payload = valid.bytes();
      payload[(size_t)rand_r(&seed) % payload.size()] ^= (uint8_t)(1 + rand_r(&seed) % 255);
      request.args[0] = 1000 + (uint64_t)round;
    } else {
      payload.resize((size_t)(rand_r(&seed) % 64));
      for (uint8_t& b : payload) b = (uint8_t)rand_r(&seed);
    }
    if (request.code == (int32_t)Op::kStop || request.code == (int32_t)Op::kSave ||
        request.code == (int32_t)Op::kRestore || request.code == (int32_t)Op::kDelete) {
      continue;  // control operations with side effects outside the store
    }
    request.payload_bytes = payload.size();
    try {
      if (handler.expected_payload(request) != payload.size()) fail_msg("expected_payload disagrees with the claim");
    } catch (const dist::Error&) {
      ++errors;
      continue;  // refused before the payload would be read
    }
    Reply reply = handler.handle(request, payload.data(), scratch);
    if (reply.status != Status::kOk) ++errors;
  }
  assert_true(errors > 2000);
  // The variable was only ever changed by well-formed requests of its own size.
  assert_true(store.find(id)->spec().bytes() == 16);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dense_and_sparse_ops_over_two_servers),
      cmocka_unit_test(test_concurrent_integer_adds_sum_exactly),
      cmocka_unit_test(test_synchronous_rounds),
      cmocka_unit_test(test_hostile_peers),
      cmocka_unit_test(test_hostile_lane_peers),
      cmocka_unit_test(test_restart_restores_latest_checkpoint),
      cmocka_unit_test(test_handler_survives_garbage),
      cmocka_unit_test(test_spec_optimizer_numbers),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
