// A communicator's point-to-point sends and receives (dist_send, dist_recv):
// checked, then posted to its message port, apart from its collectives (they
// take no place in its call queue). Each message gets an Operation, like a
// collective's, that completes with the outcome and, for a receive, its source.
#pragma once

#include <memory>

#include "collectives/communicator.h"
#include "collectives/operation.h"
#include "transport/message_port.h"

namespace dist {

// Throws invalid-argument, naming the argument, for a peer out of range or
// this rank itself (kAnySource only for a receive), a negative tag, or
// data missing for a non-empty count.
void check_message(const Communicator& comm, bool is_receive, const MessageSpec& spec);

// Checks and posts the message with the communicator's deadline. `blocking`:
// the calling thread drives it to its end before returning; otherwise the
// port's own thread does. The operation holds the outcome either way.
std::shared_ptr<Operation> post_message(Communicator& comm, bool is_receive, const MessageSpec& spec, bool blocking);

}  // namespace dist
