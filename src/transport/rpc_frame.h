// The frames of request/response connections (transport/rpc_connection.h):
// a fixed 48-byte header, then `payload_bytes` of payload. What `code` and
// `args` mean is the business of the protocol on top (src/ps/protocol.h);
// this layer only moves frames and checks their framing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "transport/socket.h"

namespace dist {

inline constexpr uint32_t kRpcRequestMagic = 0x31515044;   // "DPQ1"
inline constexpr uint32_t kRpcResponseMagic = 0x31525044;  // "DPR1"

struct RpcHeader {
  uint32_t magic = 0;
  int32_t code = 0;  // request: the operation; response: a dist::Status value
  uint64_t id = 0;   // chosen by the requester, echoed by the response
  uint64_t args[3] = {0, 0, 0};
  uint64_t payload_bytes = 0;
};
static_assert(sizeof(RpcHeader) == 48, "RpcHeader is a wire format");

// Writes header and payload with as few system calls as the socket allows;
// the errors of write_all (transport/socket.h).
void write_frame(int fd, const RpcHeader& header, const void* payload, size_t bytes, SteadyTime deadline,
                 const std::string& peer);

}  // namespace dist
