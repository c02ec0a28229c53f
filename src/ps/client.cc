#include "ps/client.h"

#include <algorithm>
#include <cstring>

#include "base/json.h"
#include "base/timeline.h"
#include "ps/protocol.h"
#include "ps/spec_codec.h"

namespace dist::ps {
namespace {

constexpr size_t kAnyResponse = SIZE_MAX;
constexpr size_t kControlResponse = 1 << 20;

}  // namespace

PsClient::PsClient(ClientOptions options) : options_(std::move(options)) {
  if (options_.servers.empty()) fail_invalid("parameter-server client: no servers given");
  if (options_.token.empty()) fail_invalid("parameter-server client: no cluster token");
  created_.resize(options_.servers.size());
  for (size_t i = 0; i < options_.servers.size(); ++i) {
    const ServerAddress& server = options_.servers[i];
    auto connection = std::make_unique<RpcConnection>(
        "parameter server " + server.name + " (" + server.address + ")", server.address, options_.token,
        options_.timeouts);
    const int index = static_cast<int>(i);
    connection->set_on_connect([this, index](RpcConnection& c) { replay_creates(index, c); });
    connections_.push_back(std::move(connection));
  }
}

PsClient::~PsClient() = default;

const ServerAddress& PsClient::server(int index) const {
  check_server(index);
  return options_.servers[static_cast<size_t>(index)];
}

void PsClient::check_server(int server) const {
  if (server < 0 || server >= num_servers()) {
    fail_invalid("server index " + std::to_string(server) + " is out of range (" + std::to_string(num_servers()) +
                 " servers)");
  }
}

void PsClient::replay_creates(int server, RpcConnection& connection) {
  if (connection.connections_made() <= 1) return;
  // A reconnection: the server may be a restarted one that lost its shards.
  for (const auto& [id, remembered] : created_[static_cast<size_t>(server)]) {
    ByteWriter payload;
    ByteWriter spec;
    encode_spec(remembered.spec, spec);
    payload.put(static_cast<uint32_t>(spec.bytes().size()));
    payload.append(spec.bytes().data(), spec.bytes().size());
    payload.put(static_cast<uint8_t>(remembered.initial ? 1 : 0));
    auto call = std::make_shared<RpcCall>();
    call->request.code = static_cast<int32_t>(Op::kCreate);
    call->request.args[0] = id;
    // The call keeps its payload alive through a shared buffer.
    auto bytes = std::make_shared<std::vector<uint8_t>>(std::move(payload.bytes()));
    call->payload[0] = bytes->data();
    call->payload_bytes[0] = bytes->size();
    if (remembered.initial) {
      call->payload[1] = remembered.initial->data();
      call->payload_bytes[1] = remembered.initial->size();
    }
    call->response_capacity = kControlResponse;
    connection.submit(call);
    replays_.push_back(Replay{call, bytes, remembered.initial});
  }
}

void PsClient::connect(int server) {
  check_server(server);
  std::lock_guard<std::recursive_mutex> guard(mutex_);
  connections_[static_cast<size_t>(server)]->ensure_connected();
}

bool PsClient::has_lane(int server) {
  check_server(server);
  std::lock_guard<std::recursive_mutex> guard(mutex_);
  return connections_[static_cast<size_t>(server)]->has_lane();
}

uint64_t PsClient::lane_payloads(int server) {
  check_server(server);
  std::lock_guard<std::recursive_mutex> guard(mutex_);
  return connections_[static_cast<size_t>(server)]->lane_payloads();
}

PsRequestPtr PsClient::submit(int server, int32_t op, uint64_t id, uint64_t arg1, uint64_t arg2, const void* payload0,
                              size_t bytes0, const void* payload1, size_t bytes1, void* response_into,
                              size_t response_bytes, bool exact_response) {
  check_server(server);
  auto call = std::make_shared<RpcCall>();
  call->request.code = op;
  call->request.args[0] = id;
  call->request.args[1] = arg1;
  call->request.args[2] = arg2;
  call->payload[0] = payload0;
  call->payload_bytes[0] = bytes0;
  call->payload[1] = payload1;
  call->payload_bytes[1] = bytes1;
  call->response_into = response_into;
  call->response_capacity = response_bytes;
  PsRequestPtr request(new PsRequest(server, call, exact_response ? response_bytes : kAnyResponse));
  if (options_.timeline != nullptr) request->sent_ns_ = timeline_now_ns();
  std::lock_guard<std::recursive_mutex> guard(mutex_);
  connections_[static_cast<size_t>(server)]->submit(call);
  return request;
}

PsRequestPtr PsClient::submit_owned(int server, int32_t op, uint64_t id, std::vector<uint8_t> payload,
                                    size_t response_capacity) {
  check_server(server);
  auto call = std::make_shared<RpcCall>();
  call->request.code = op;
  call->request.args[0] = id;
  call->response_capacity = response_capacity;
  PsRequestPtr request(new PsRequest(server, call, kAnyResponse));
  if (options_.timeline != nullptr) request->sent_ns_ = timeline_now_ns();
  request->owned_payload_ = std::move(payload);
  call->payload[0] = request->owned_payload_.data();
  call->payload_bytes[0] = request->owned_payload_.size();
  std::lock_guard<std::recursive_mutex> guard(mutex_);
  connections_[static_cast<size_t>(server)]->submit(call);
  return request;
}

PsRequestPtr PsClient::create(int server, uint64_t id, const VariableSpec& spec, const void* initial) {
  check_server(server);
  validate(spec);
  ByteWriter payload;
  ByteWriter encoded;
  encode_spec(spec, encoded);
  payload.put(static_cast<uint32_t>(encoded.bytes().size()));
  payload.append(encoded.bytes().data(), encoded.bytes().size());
  payload.put(static_cast<uint8_t>(initial != nullptr ? 1 : 0));
  Remembered remembered{spec, nullptr};
  if (initial != nullptr) {
    const uint8_t* p = static_cast<const uint8_t*>(initial);
    remembered.initial = std::make_shared<std::vector<uint8_t>>(p, p + spec.bytes());
    payload.append(initial, spec.bytes());
  }
  {
    std::lock_guard<std::recursive_mutex> guard(mutex_);
    created_[static_cast<size_t>(server)][id] = std::move(remembered);
  }
  return submit_owned(server, static_cast<int32_t>(Op::kCreate), id, std::move(payload.bytes()), kControlResponse);
}

PsRequestPtr PsClient::read(int server, uint64_t id, void* out, size_t bytes, uint64_t min_version, uint64_t wait_ms) {
  return submit(server, static_cast<int32_t>(Op::kRead), id, min_version, wait_ms, nullptr, 0, nullptr, 0, out, bytes,
                true);
}

PsRequestPtr PsClient::assign(int server, uint64_t id, const void* values, size_t bytes) {
  return submit(server, static_cast<int32_t>(Op::kAssign), id, 0, 0, values, bytes, nullptr, 0, nullptr, 0, false);
}

PsRequestPtr PsClient::assign_add(int server, uint64_t id, const void* values, size_t bytes) {
  return submit(server, static_cast<int32_t>(Op::kAssignAdd), id, 0, 0, values, bytes, nullptr, 0, nullptr, 0, false);
}

PsRequestPtr PsClient::assign_sub(int server, uint64_t id, const void* values, size_t bytes) {
  return submit(server, static_cast<int32_t>(Op::kAssignSub), id, 0, 0, values, bytes, nullptr, 0, nullptr, 0, false);
}

PsRequestPtr PsClient::apply_gradient(int server, uint64_t id, const void* gradient, size_t bytes, uint64_t step) {
  return submit(server, static_cast<int32_t>(Op::kApplyGradient), id, static_cast<uint64_t>(options_.worker_id), step,
                gradient, bytes, nullptr, 0, nullptr, 0, false);
}

PsRequestPtr PsClient::read_rows(int server, uint64_t id, const int64_t* rows, size_t count, size_t row_bytes,
                                 void* out) {
  return submit(server, static_cast<int32_t>(Op::kReadRows), id, count, 0, rows, count * 8, nullptr, 0, out,
                count * row_bytes, true);
}

PsRequestPtr PsClient::add_rows(int server, uint64_t id, const int64_t* rows, size_t count, size_t row_bytes,
                                const void* values) {
  return submit(server, static_cast<int32_t>(Op::kAddRows), id, count, 0, rows, count * 8, values, count * row_bytes,
                nullptr, 0, false);
}

PsRequestPtr PsClient::apply_rows(int server, uint64_t id, const int64_t* rows, size_t count, size_t row_bytes,
                                  const void* gradients) {
  return submit(server, static_cast<int32_t>(Op::kApplyRows), id, count, 0, rows, count * 8, gradients,
                count * row_bytes, nullptr, 0, false);
}

PsRequestPtr PsClient::list(int server) {
  return submit_owned(server, static_cast<int32_t>(Op::kList), 0, {}, kControlResponse * 64);
}

PsRequestPtr PsClient::save(int server, const std::string& directory, int32_t index, int32_t count) {
  std::string text = Json{{"directory", directory}, {"index", index}, {"count", count}}.dump();
  return submit_owned(server, static_cast<int32_t>(Op::kSave), 0, std::vector<uint8_t>(text.begin(), text.end()),
                      kControlResponse);
}

PsRequestPtr PsClient::restore(int server, const std::string& directory) {
  std::string text = Json{{"directory", directory}}.dump();
  return submit_owned(server, static_cast<int32_t>(Op::kRestore), 0, std::vector<uint8_t>(text.begin(), text.end()),
                      kControlResponse);
}

PsRequestPtr PsClient::stop(int server) {
  return submit_owned(server, static_cast<int32_t>(Op::kStop), 0, {}, kControlResponse);
}

void PsClient::wait(const std::vector<PsRequestPtr>& requests) {
  std::lock_guard<std::recursive_mutex> guard(mutex_);
  std::vector<std::pair<RpcConnection*, RpcCall*>> calls;
  for (const PsRequestPtr& request : requests) {
    if (!request) fail_invalid("wait: a request is null");
    calls.emplace_back(connections_[static_cast<size_t>(request->server_)].get(), request->call_.get());
  }
  RpcConnection::wait_all(calls, std::chrono::steady_clock::now() + options_.timeouts.call);
  replays_.erase(std::remove_if(replays_.begin(), replays_.end(), [](const Replay& r) { return r.call->done; }),
                 replays_.end());
  for (const PsRequestPtr& request : requests) {
    RpcCall& call = *request->call_;
    if (call.status == Status::kOk && request->expected_response_ != kAnyResponse &&
        call.response_bytes != request->expected_response_) {
      call.status = Status::kPeerFailed;
      call.error = connections_[static_cast<size_t>(request->server_)]->peer() + " answered with " +
                   std::to_string(call.response_bytes) + " bytes, expected " +
                   std::to_string(request->expected_response_);
    }
  }
  if (options_.timeline != nullptr) record(requests);
  for (const PsRequestPtr& request : requests) request->call_->check();
}

void PsClient::record(const std::vector<PsRequestPtr>& requests) {
  Timeline& timeline = *options_.timeline;
  if (lane_ == 0) lane_ = timeline.lane("ps client");
  const int64_t now = timeline_now_ns();
  for (const PsRequestPtr& request : requests) {
    if (request->recorded_) continue;
    request->recorded_ = true;
    const RpcCall& call = *request->call_;
    TimelineEvent event;
    event.name = op_name(call.request.code);
    event.category = "ps";
    event.start_ns = request->sent_ns_;
    event.duration_ns = now - request->sent_ns_;
    event.lane = lane_;
    event.add("server", request->server_)
        .add("shard", static_cast<int64_t>(call.request.args[0]))
        .add("bytes_sent", static_cast<int64_t>(call.payload_bytes[0] + call.payload_bytes[1]))
        .add("bytes_received", static_cast<int64_t>(call.response_bytes));
    // Text outlives the client only as a copy: the server's name, and why it failed.
    event.detail = options_.servers[static_cast<size_t>(request->server_)].name;
    if (call.status != Status::kOk) event.detail += ": " + call.error;
    timeline.record(event);
  }
}

}  // namespace dist::ps
