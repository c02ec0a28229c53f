// Turns one request frame into one reply against a ShardStore. It knows nothing
// of sockets: the server loop reads a header, asks expected_payload() how many
// payload bytes that request may carry (refusing a lie before reading it),
// reads exactly those bytes, and only then calls handle(). A request whose
// payload never fully arrives is therefore never applied.
//
// Thread rules: handle() may run concurrently for different connections.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "ps/shard_store.h"
#include "transport/rpc_frame.h"

namespace dist::ps {

struct Reply {
  Status status = Status::kOk;
  uint64_t args[3] = {0, 0, 0};
  std::vector<uint8_t> payload;  // text: the error message or a JSON answer
  // Values read from a shard: `view` bytes at the start of the connection's
  // scratch buffer (reused between requests, so a pull allocates nothing), or
  // of `shared`.
  const uint8_t* view = nullptr;
  size_t view_bytes = 0;
  // A dense read's values, shared with the shard (no copy): what `view` shows then.
  std::shared_ptr<const std::vector<uint8_t>> shared;

  const uint8_t* data() const { return view ? view : payload.data(); }
  size_t size() const { return view ? view_bytes : payload.size(); }
};

class RequestHandler {
 public:
  using Log = std::function<void(const std::string&)>;
  // `stopping` cuts synchronous waits short; `on_stop` runs for kStop.
  RequestHandler(ShardStore& store, const std::atomic<bool>& stopping, std::function<void()> on_stop, Log log);

  // The exact payload size the request must carry; throws invalid-argument
  // for an unknown operation or id, or a size the operation cannot have.
  uint64_t expected_payload(const RpcHeader& request) const;

  // Runs the request; every failure becomes an error reply. Values read are
  // placed in `scratch` (grown as needed, never shrunk), which the reply views.
  // When `staging` is the buffer that holds the payload, an assign of exactly
  // its size exchanges it with the shard's values instead of copying them.
  Reply handle(const RpcHeader& request, const uint8_t* payload, std::vector<uint8_t>& scratch,
               std::vector<uint8_t>* staging = nullptr);

 private:
  Reply run(const RpcHeader& request, const uint8_t* payload, std::vector<uint8_t>& scratch,
            std::vector<uint8_t>* staging);

  ShardStore& store_;
  const std::atomic<bool>& stopping_;
  std::function<void()> on_stop_;
  Log log_;
};

// An error reply carrying `message`.
Reply error_reply(Status status, const std::string& message);

}  // namespace dist::ps
