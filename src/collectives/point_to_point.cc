#include "collectives/point_to_point.h"

#include <string>

#include "base/status.h"

namespace dist {

void check_message(const Communicator& comm, bool is_receive, const MessageSpec& spec) {
  const bool any = is_receive && spec.peer == MessageSpec::kAnySource;
  if (!any && (spec.peer < 0 || spec.peer >= comm.size())) {
    fail_invalid("peer " + std::to_string(spec.peer) + " is out of range for a communicator of " +
                 std::to_string(comm.size()) + " ranks" +
                 (is_receive ? " (DIST_ANY_SOURCE receives from any rank)" : ""));
  }
  if (spec.peer == comm.rank()) {
    fail_invalid("peer " + std::to_string(spec.peer) + " is this rank itself; a rank " +
                 (is_receive ? "receives from" : "sends to") + " other ranks only");
  }
  if (any && comm.size() == 1) fail_invalid("peer DIST_ANY_SOURCE: a communicator of one rank has no other rank");
  if (spec.tag < 0) fail_invalid("tag " + std::to_string(spec.tag) + " is negative (tags are 0 .. DIST_TAG_MAX)");
  if (spec.count > 0 && spec.data == nullptr) {
    fail_invalid("buffer data is NULL for a count of " + std::to_string(spec.count));
  }
}

std::shared_ptr<Operation> post_message(Communicator& comm, bool is_receive, const MessageSpec& spec, bool blocking) {
  check_message(comm, is_receive, spec);
  MessagePort* port = comm.messages();
  if (port == nullptr) fail(Status::kInternal, "a communicator of several ranks has no message port");
  auto op = std::make_shared<Operation>(is_receive);
  const Deadline deadline = comm.deadline();
  // The port holds the operation until it has reported to it.
  port->post(is_receive, spec, deadline, !blocking,
             [op](Status status, const std::string& message, int source) { op->complete(status, message, source); });
  if (blocking) port->drive_until([&op] { return op->done(); });
  return op;
}

}  // namespace dist
