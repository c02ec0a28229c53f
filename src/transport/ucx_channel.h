// Channel over UCX tagged messages. A message is one iov send of a small wire
// header plus the payload, received straight into the caller's buffer (no
// staging copy). Tags name the communicator and the sending rank; order between
// a pair is UCX's, and the header carries the call's words and sequence
// number, which the receiver checks. The class lives in ucx_channel.cc, so that
// only the transport's own sources see UCX's headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/channel.h"
#include "transport/failure_flag.h"

namespace dist {

class UcxWorker;

// A channel between the members of one communicator over `worker`'s endpoints.
// members[r] is the context rank of communicator rank r; names[r] its task.
// `describe_call` names calls in mismatch and timeout messages.
std::unique_ptr<Channel> make_ucx_channel(UcxWorker& worker, uint32_t comm_id, std::vector<int> members,
                                          std::vector<std::string> names, int rank,
                                          std::shared_ptr<FailureFlag> failure, DescribeCall describe_call);

}  // namespace dist
