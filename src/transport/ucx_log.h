// UCX's own messages go through the library's log (base/log.h), never straight
// to stderr. While any UcxLogRoute lives, a UCX log handler is pushed that
// formats each message and hands it to log_message with source "ucx"; the last
// one to go pops it. UCX keeps deciding which messages exist (UCX_LOG_LEVEL);
// the library's level decides which are printed: UCX's fatal errors as
// errors, its errors and warnings as info (DIST_LOG_LEVEL=info shows them),
// the rest as debug. UCX's errors and warnings are about its transports and
// come where the library already reports the failure to the caller as a
// status with a message: an endpoint's flush that meets a peer which closed
// first at the end of an orderly run, requests dropped after a peer was lost.
// A user who sets UCX_LOG_LEVEL gets every message UCX passes, as asked.
#pragma once

namespace dist {

class UcxLogRoute {
 public:
  UcxLogRoute();
  ~UcxLogRoute();
  UcxLogRoute(const UcxLogRoute&) = delete;
  UcxLogRoute& operator=(const UcxLogRoute&) = delete;
};

}  // namespace dist
