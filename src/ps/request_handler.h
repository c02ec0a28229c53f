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
#include "ps/protocol.h"
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
  // One request as an operation's handler sees it.
  struct Call {
    const RpcHeader& header;
    const uint8_t* payload;
    std::vector<uint8_t>& scratch;
    std::vector<uint8_t>* staging;
  };
  // One row of the operation table (request_handler.cc): an Op's name, how its
  // payload size is checked, and the member function that runs it. Adding an
  // operation is one row there and one handler here.
  struct Operation;
  // The row of `code`, or null for a code that names no operation.
  static const Operation* find_operation(int32_t code);
  // The same; throws invalid-argument for a code that names no operation.
  static const Operation& operation_of(int32_t code);
  friend const char* op_name(int32_t op);

  Reply create(const Call& call);
  Reply read(const Call& call);
  Reply assign(const Call& call);
  Reply assign_add(const Call& call);
  Reply assign_sub(const Call& call);
  Reply apply_gradient(const Call& call);
  Reply read_rows(const Call& call);
  Reply add_rows(const Call& call);
  Reply apply_rows(const Call& call);
  // add_rows and apply_rows: args[1] row indices, then as many rows of values.
  using RowUpdate = uint64_t (ShardVariable::*)(const int64_t* rows, size_t count, const void* values);
  Reply update_rows(const Call& call, RowUpdate update);
  Reply list(const Call& call);
  Reply save(const Call& call);
  Reply restore(const Call& call);
  Reply stop(const Call& call);
  Reply erase(const Call& call);

  ShardStore& store_;
  const std::atomic<bool>& stopping_;
  std::function<void()> on_stop_;
  Log log_;
};

// An error reply carrying `message`.
Reply error_reply(Status status, const std::string& message);

}  // namespace dist::ps
