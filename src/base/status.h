// Status codes and the exception that carries one through the C++ core.
// The C ABI (src/c_api) turns a dist::Error into a dist_status_t and a message.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace dist {

// Values are the ABI's DIST_* codes; src/c_api/errors.cc checks they agree.
enum class Status : int32_t {
  kOk = 0,
  kInvalidArgument = -1,
  kUnsupported = -2,
  kNoMemory = -100,
  kSystem = -101,
  kPeerFailed = -200,
  kTimeout = -201,
  kMismatch = -202,
  kAuth = -203,
  kUnavailable = -204,
  kAborted = -205,
  kInternal = -300,
};

class Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  Status status() const { return status_; }

 private:
  Status status_;
};

[[noreturn]] inline void fail(Status status, const std::string& message) {
  throw Error(status, message);
}

[[noreturn]] inline void fail_invalid(const std::string& message) {
  throw Error(Status::kInvalidArgument, message);
}

// The C ABI's name of a status: "DIST_OK", "DIST_ERR_TIMEOUT", ...; null
// for a value that is none of them.
const char* status_name(Status status);

// Quotes a value for an error message: 'value'.
inline std::string quoted(const std::string& value) { return "'" + value + "'"; }

}  // namespace dist
