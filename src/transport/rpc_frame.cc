#include "transport/rpc_frame.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>

#include "base/status.h"

namespace dist {

void write_frame(int fd, const RpcHeader& header, const void* payload, size_t bytes, SteadyTime deadline,
                 const std::string& peer) {
  iovec pieces[2] = {{const_cast<RpcHeader*>(&header), sizeof header}, {const_cast<void*>(payload), bytes}};
  size_t first = 0;
  while (first < 2) {
    msghdr message{};
    message.msg_iov = pieces + first;
    message.msg_iovlen = 2 - first;
    ssize_t n = ::sendmsg(fd, &message, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        fail(Status::kPeerFailed, peer + ": connection broken (" + std::strerror(errno) + ")");
      }
      if (std::chrono::steady_clock::now() >= deadline) fail(Status::kTimeout, peer + ": timed out sending");
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 100);
      continue;
    }
    size_t sent = static_cast<size_t>(n);
    while (first < 2 && sent >= pieces[first].iov_len) {
      sent -= pieces[first].iov_len;
      ++first;
    }
    if (first < 2) {
      pieces[first].iov_base = static_cast<char*>(pieces[first].iov_base) + sent;
      pieces[first].iov_len -= sent;
    }
  }
}

}  // namespace dist
