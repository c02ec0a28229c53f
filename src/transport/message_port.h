// MessagePort: a communicator's point-to-point messages (dist_send,
// dist_recv), apart from its collectives. The transport owns this interface
// and implements it (ucx_message_port.h); the communicator only posts to it.
//
// Rules every implementation keeps:
//  - A receive matches the oldest unmatched send from its peer (any peer for
//    kAnySource) with its tag; messages with one (peer, tag) match in the
//    order they were sent. They never match, wait for or hold up the
//    communicator's collective messages.
//  - Sender and receiver must agree on dtype and count; otherwise the receive
//    fails with Status::kMismatch naming both sides (the send completes).
//  - Every message ends by its deadline (Status::kTimeout), and as soon as
//    the communicator's failure flag is set: with Status::kAborted after an
//    abort, Status::kPeerFailed otherwise (a member died, the communicator
//    failed).
//  - `done` runs exactly once per message, with no lock held, on the thread
//    that progressed it to its end (a caller in drive_until, or the port's own
//    thread for background messages).
//  - Buffers must stay valid and untouched until `done` has run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/dtype.h"
#include "base/status.h"
#include "transport/channel.h"

namespace dist {

struct MessageSpec {
  static constexpr int kAnySource = -1;
  int peer = kAnySource;  // communicator rank; kAnySource for a receive from anyone
  int32_t tag = 0;        // 0 .. 2^31 - 1
  void* data = nullptr;   // read by a send, written by a receive
  uint64_t count = 0;
  DType dtype = DType::U8;
};

// The outcome of one message; `source` is the communicator rank a receive
// came from (-1 when unknown, and for sends).
using MessageDone = std::function<void(Status status, const std::string& message, int source)>;

class MessagePort {
 public:
  virtual ~MessagePort() = default;

  // Posts a send or a receive. `background`: the port's own thread drives it
  // to its end; otherwise the caller must drive it (drive_until).
  virtual void post(bool is_receive, const MessageSpec& spec, Deadline deadline, bool background,
                    MessageDone done) = 0;

  // Drives every message of the port on the calling thread until `finished`
  // returns true (checked after each turn; it must become true by the
  // deadline of a message this thread waits for).
  virtual void drive_until(const std::function<bool()>& finished) = 0;
};

}  // namespace dist
