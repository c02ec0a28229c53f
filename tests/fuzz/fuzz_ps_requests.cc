// Fuzzes the parameter server's request handling: what a server does with the
// frames a peer sends it. The input is a stream of frames as they arrive on a
// connection: a 48-byte RpcHeader, then the payload the handler asks for
// (expected_payload). They run in order against one ShardStore, as the server
// loop runs them (src/ps/server.cc), so a create can be followed by reads,
// assigns, gradients and sparse rows of the variable it made.
//
// Any frame must give a reply or a dist::Error from expected_payload; a crash,
// a sanitizer report, another exception or a reply that breaks the checks
// below is a finding. Left out, so that a run has no effects outside itself
// and stays within memory: save and restore (they touch the filesystem at a
// path the input names), and variables of more than kMaxFuzzShardBytes.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "base/status.h"
#include "ps/byte_codec.h"
#include "ps/protocol.h"
#include "ps/request_handler.h"
#include "ps/shard_store.h"
#include "ps/spec_codec.h"
#include "transport/rpc_frame.h"

namespace {

using dist::ps::Op;

constexpr size_t kMaxFuzzShardBytes = 64 * 1024;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "finding: %s\n", what.c_str());
  std::abort();
}

// Whether a create request asks for a variable small enough to fuzz with.
// Undecodable ones go on to the handler, which must refuse them itself.
bool small_enough(const uint8_t* payload, size_t bytes) {
  try {
    dist::ps::ByteReader in(payload, bytes, "fuzz create");
    const uint32_t spec_bytes = in.get<uint32_t>("spec length");
    dist::ps::ByteReader spec_in(in.take(spec_bytes, "spec"), spec_bytes, "fuzz spec");
    return dist::ps::decode_spec(spec_in).bytes() <= kMaxFuzzShardBytes;
  } catch (const dist::Error&) {
    return true;
  }
}

void check_reply(const dist::RpcHeader& request, const dist::ps::Reply& reply, const std::vector<uint8_t>& scratch) {
  const std::string op = dist::ps::op_name(request.code);
  if (reply.status != dist::Status::kOk && reply.payload.empty()) finding(op + ": an error reply without a message");
  if (reply.view != nullptr) {
    const bool in_scratch = reply.view >= scratch.data() && reply.view_bytes <= scratch.size() &&
                            static_cast<size_t>(reply.view - scratch.data()) <= scratch.size() - reply.view_bytes;
    const bool in_shared = reply.shared && reply.view == reply.shared->data() && reply.view_bytes <= reply.shared->size();
    if (!in_scratch && !in_shared) finding(op + ": the reply views bytes outside its buffers");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dist::ps::ShardStore store;
  std::atomic<bool> stopping{false};
  dist::ps::RequestHandler handler(store, stopping, [] {}, [](const std::string&) {});
  std::vector<uint8_t> payload;  // reused between frames, as a connection's is
  std::vector<uint8_t> scratch;
  size_t at = 0;
  while (size - at >= sizeof(dist::RpcHeader)) {
    dist::RpcHeader request;
    std::memcpy(&request, data + at, sizeof request);
    at += sizeof request;
    if (request.code == static_cast<int32_t>(Op::kSave) || request.code == static_cast<int32_t>(Op::kRestore)) continue;
    // A synchronous read waits for its version; the fuzzer must not.
    if (request.code == static_cast<int32_t>(Op::kRead)) request.args[2] = 0;
    uint64_t bytes = 0;
    try {
      bytes = handler.expected_payload(request);
    } catch (const dist::Error&) {
      continue;  // the server answers with an error and drains or drops
    } catch (const std::exception& e) {
      finding(std::string("expected_payload threw a non-dist exception: ") + e.what());
    }
    if (bytes > size - at) break;  // a payload that never arrives is never applied
    if (payload.size() < bytes) payload.resize(static_cast<size_t>(bytes));
    if (bytes > 0) std::memcpy(payload.data(), data + at, static_cast<size_t>(bytes));
    at += static_cast<size_t>(bytes);
    if (request.code == static_cast<int32_t>(Op::kCreate) && !small_enough(payload.data(), bytes)) continue;
    try {
      const dist::ps::Reply reply = handler.handle(request, payload.data(), scratch, &payload);
      check_reply(request, reply, scratch);
    } catch (const std::exception& e) {
      finding(std::string("handle threw instead of replying: ") + e.what());
    }
  }
  return 0;
}
