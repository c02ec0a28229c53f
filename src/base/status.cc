#include "base/status.h"

namespace dist {

const char* status_name(Status status) {
  switch (status) {
    case Status::kOk: return "DIST_OK";
    case Status::kInvalidArgument: return "DIST_ERR_INVALID_ARGUMENT";
    case Status::kUnsupported: return "DIST_ERR_UNSUPPORTED";
    case Status::kNoMemory: return "DIST_ERR_NO_MEMORY";
    case Status::kSystem: return "DIST_ERR_SYSTEM";
    case Status::kPeerFailed: return "DIST_ERR_PEER_FAILED";
    case Status::kTimeout: return "DIST_ERR_TIMEOUT";
    case Status::kMismatch: return "DIST_ERR_MISMATCH";
    case Status::kAuth: return "DIST_ERR_AUTH";
    case Status::kUnavailable: return "DIST_ERR_UNAVAILABLE";
    case Status::kAborted: return "DIST_ERR_ABORTED";
    case Status::kInternal: return "DIST_ERR_INTERNAL";
  }
  return nullptr;
}

}  // namespace dist
