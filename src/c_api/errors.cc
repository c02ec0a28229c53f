// dist_status_string and dist_last_error: the error half of the ABI.
#include <string>

#include "c_api/guard.h"

namespace dist {

static_assert(static_cast<int32_t>(Status::kInvalidArgument) == DIST_ERR_INVALID_ARGUMENT);
static_assert(static_cast<int32_t>(Status::kUnsupported) == DIST_ERR_UNSUPPORTED);
static_assert(static_cast<int32_t>(Status::kNoMemory) == DIST_ERR_NO_MEMORY);
static_assert(static_cast<int32_t>(Status::kSystem) == DIST_ERR_SYSTEM);
static_assert(static_cast<int32_t>(Status::kPeerFailed) == DIST_ERR_PEER_FAILED);
static_assert(static_cast<int32_t>(Status::kTimeout) == DIST_ERR_TIMEOUT);
static_assert(static_cast<int32_t>(Status::kMismatch) == DIST_ERR_MISMATCH);
static_assert(static_cast<int32_t>(Status::kAuth) == DIST_ERR_AUTH);
static_assert(static_cast<int32_t>(Status::kUnavailable) == DIST_ERR_UNAVAILABLE);
static_assert(static_cast<int32_t>(Status::kAborted) == DIST_ERR_ABORTED);
static_assert(static_cast<int32_t>(Status::kInternal) == DIST_ERR_INTERNAL);

namespace {
thread_local std::string last_error_message;
}

dist_status_t set_last_error(dist_status_t status, const std::string& message) {
  try {
    last_error_message = message;
  } catch (...) {
    // Out of memory while recording the message: keep the status, drop the text.
  }
  return status;
}

}  // namespace dist

extern "C" {

DIST_EXPORT const char* dist_status_string(dist_status_t status) {
  const char* name = dist::status_name(static_cast<dist::Status>(status));
  return name != nullptr ? name : "DIST_ERR_UNKNOWN";
}

DIST_EXPORT const char* dist_last_error(void) { return dist::last_error_message.c_str(); }

DIST_EXPORT void dist_string_free(char* str) { delete[] str; }

}  // extern "C"
