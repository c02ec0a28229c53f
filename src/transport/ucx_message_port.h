// MessagePort over UCX tagged messages. Tags keep the point-to-point
// messages apart from the collectives' (ucx_channel.cc: comm id << 40 |
// sender << 16 | 0 or 1, bits 1..15 always clear): bit 1 is set in every
// point-to-point tag, which reads
//   comm id (15 bits) << 49 | sender's context rank (16 bits) << 33 |
//   user tag (31 bits) << 2 | 1 << 1 | payload bit
// so UCX matches (communicator, sender, tag) itself, in send order, and a
// receive from any source masks the sender out. A message is a header
// (dtype, count, tag, sender) with the data inline up to 16 KiB; a larger
// message's data follows on the payload tag (payload bit set), received
// straight into the caller's buffer once its header matched. Communicators
// whose id or members do not fit the fields fail every call with
// Status::kUnsupported. The class lives in ucx_message_port.cc, so that only
// the transport's own sources see UCX's headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/failure_flag.h"
#include "transport/message_port.h"

namespace dist {

class UcxWorker;

// members[r] is the context rank of communicator rank r; names[r] its task.
std::unique_ptr<MessagePort> make_ucx_message_port(UcxWorker& worker, uint32_t comm_id, std::vector<int> members,
                                                   std::vector<std::string> names, int rank,
                                                   std::shared_ptr<FailureFlag> failure);

}  // namespace dist
