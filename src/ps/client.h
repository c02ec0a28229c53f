// A worker's connections to the parameter servers, and the requests it sends
// them. Every request is asynchronous: it is sent at once and returns a
// PsRequest; wait() on several requests (to several servers) drives all their
// connections together, so pulls and pushes to every shard are in flight at
// the same time. Requests to one server are answered in order.
//
// Failures name the server: a server that dies fails its requests with
// kPeerFailed ("parameter server ps:1 (127.0.0.1:2223): connection closed
// ..."); while it is down new requests fail with kUnavailable. When it is back
// at the same address the next request reconnects, and first re-creates every
// variable shard this client created there, so a server restarted from a
// checkpoint gets its shards back (restored from the checkpoint, or from the
// initial value when the checkpoint does not hold them).
//
// Thread rules: a PsClient may be used from several threads; its calls are
// serialised by one lock (give threads that must not wait on each other their
// own client). Buffers passed to a request must stay valid until it is done.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ps/variable_spec.h"
#include "transport/rpc_connection.h"

namespace dist {
class Timeline;
}

namespace dist::ps {

struct ServerAddress {
  std::string name;     // "ps:1"
  std::string address;  // "host:port"
};

struct ClientOptions {
  std::vector<ServerAddress> servers;
  std::string token;
  RpcTimeouts timeouts;
  int64_t worker_id = -1;  // identifies this worker's gradients in synchronous rounds
  // Where each request is recorded, from its sending to the wait that saw
  // it done (lane "ps client"); null: nowhere.
  std::shared_ptr<Timeline> timeline;
};

// One request in flight. After wait(): status() and the response arguments.
class PsRequest {
 public:
  bool done() const { return call_->done; }
  Status status() const { return call_->status; }
  const std::string& error() const { return call_->error; }
  // args[0] is the shard's version after the operation for every variable op.
  uint64_t version() const { return call_->args[0]; }
  uint64_t arg(int i) const { return call_->args[i]; }
  // The response payload when it was not written into a caller's buffer.
  const std::vector<uint8_t>& response() const { return call_->response; }
  int server() const { return server_; }

 private:
  friend class PsClient;
  PsRequest(int server, std::shared_ptr<RpcCall> call, size_t expected_response)
      : server_(server), call_(std::move(call)), expected_response_(expected_response) {}
  int server_;
  std::shared_ptr<RpcCall> call_;
  size_t expected_response_;               // exact bytes a successful response must carry (SIZE_MAX: any)
  std::vector<uint8_t> owned_payload_;     // payload built by the client (create, control)
  std::vector<int64_t> owned_rows_;
  int64_t sent_ns_ = 0;                    // while a timeline records
  bool recorded_ = false;                  // its span is on the timeline
};
using PsRequestPtr = std::shared_ptr<PsRequest>;

class PsClient {
 public:
  explicit PsClient(ClientOptions options);
  ~PsClient();

  int num_servers() const { return static_cast<int>(connections_.size()); }
  const ServerAddress& server(int index) const;

  // Connects to `server` now if it is not connected (kUnavailable/kAuth when
  // that fails). Lets a multi-shard operation find a dead server before it
  // sends anything to the others.
  void connect(int server);

  // Creates shard `id` on `server` (initial: spec.bytes() bytes, or null for
  // zeros). An existing shard of the same slice is left as it is.
  PsRequestPtr create(int server, uint64_t id, const VariableSpec& spec, const void* initial);
  // Reads spec.bytes() bytes into out; min_version > 0 waits up to wait_ms on
  // the server for the shard to reach that version (synchronous training).
  PsRequestPtr read(int server, uint64_t id, void* out, size_t bytes, uint64_t min_version = 0, uint64_t wait_ms = 0);
  PsRequestPtr assign(int server, uint64_t id, const void* values, size_t bytes);
  PsRequestPtr assign_add(int server, uint64_t id, const void* values, size_t bytes);
  PsRequestPtr assign_sub(int server, uint64_t id, const void* values, size_t bytes);
  // `step`: the version the gradient was computed from (read by the worker).
  // Response: version(), arg(1) accepted, arg(2) applied.
  PsRequestPtr apply_gradient(int server, uint64_t id, const void* gradient, size_t bytes, uint64_t step);
  // Local row indices; out/values hold count * row_bytes bytes.
  PsRequestPtr read_rows(int server, uint64_t id, const int64_t* rows, size_t count, size_t row_bytes, void* out);
  PsRequestPtr add_rows(int server, uint64_t id, const int64_t* rows, size_t count, size_t row_bytes,
                        const void* values);
  PsRequestPtr apply_rows(int server, uint64_t id, const int64_t* rows, size_t count, size_t row_bytes,
                          const void* gradients);
  // Control: the server's shards as JSON (response()), checkpoint its shards as
  // file `index` of `count` into `directory`, restore from a checkpoint
  // directory, stop the server.
  PsRequestPtr list(int server);
  PsRequestPtr save(int server, const std::string& directory, int32_t index, int32_t count);
  PsRequestPtr restore(int server, const std::string& directory);
  PsRequestPtr stop(int server);

  // Whether the connection to `server` has a UCX lane for large payloads
  // (transport/rpc_ucx_lane.h), and how many payloads travelled on it.
  bool has_lane(int server);
  uint64_t lane_payloads(int server);

  // Waits for every request (all in flight together) until each is done or the
  // call timeout passes; then throws the first failure, if any.
  void wait(const std::vector<PsRequestPtr>& requests);
  void wait(const PsRequestPtr& request) { wait(std::vector<PsRequestPtr>{request}); }

 private:
  struct Remembered {
    VariableSpec spec;
    std::shared_ptr<std::vector<uint8_t>> initial;
  };
  // Puts the requests' spans on the timeline (once each).
  void record(const std::vector<PsRequestPtr>& requests);
  PsRequestPtr submit(int server, int32_t op, uint64_t id, uint64_t arg1, uint64_t arg2, const void* payload0,
                      size_t bytes0, const void* payload1, size_t bytes1, void* response_into,
                      size_t response_bytes, bool exact_response);
  PsRequestPtr submit_owned(int server, int32_t op, uint64_t id, std::vector<uint8_t> payload, size_t response_capacity);
  void check_server(int server) const;
  void replay_creates(int server, RpcConnection& connection);

  // Re-created shards in flight after a reconnection; their buffers live here.
  struct Replay {
    std::shared_ptr<RpcCall> call;
    std::shared_ptr<std::vector<uint8_t>> payload;
    std::shared_ptr<std::vector<uint8_t>> initial;
  };

  ClientOptions options_;
  uint32_t lane_ = 0;  // "ps client" on options_.timeline, once used
  std::vector<std::unique_ptr<RpcConnection>> connections_;
  std::vector<std::map<uint64_t, Remembered>> created_;  // per server
  std::vector<Replay> replays_;
  std::recursive_mutex mutex_;
};

}  // namespace dist::ps
