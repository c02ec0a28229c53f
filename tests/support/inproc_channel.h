// InProcessGroup: n ranks that are threads of one process, each with a Channel
// (transport/channel.h) to the others. Test support, not part of the library:
// the collective suites (test_algorithms, test_inproc_channel) run their ranks
// as threads through it.
//
// Semantics, beyond the Channel rules:
//  - Messages travel through one mailbox per ordered pair of ranks. A send that
//    finds its receive already posted copies straight into it (one copy);
//    otherwise it waits in the mailbox, still pointing at the sender's buffer,
//    and the receive copies from there when it is posted. A sender that
//    waits for (or tests) a send nobody has received yet copies the payload
//    into the mailbox and goes on, so completing a send never depends on the
//    peer: exchange patterns cannot deadlock on buffering.
//  - Every message carries its sender's CallWords and seq; a receive that
//    matches a message from a different call, or a message longer than the
//    receive, fails the whole group with Status::kMismatch naming both sides.
//  - end() returns only when every rank has reached the end of the same call
//    (in-process this costs one wake-up), and then checks that all ranks
//    called the same collective and that no message was left unreceived. So a
//    disagreement fails every rank's call, even a rank (such as a broadcast
//    root) that only sends.
//  - When every rank is inside a call and blocked (waiting for messages that
//    nobody can send any more, or at end()), the group fails at once instead
//    of waiting for the deadline: kMismatch naming two ranks whose calls differ,
//    or naming who waits for whom when the calls agree.
//  - A failure (mismatch, a wait past the deadline given to begin(), or
//    abort()) fails the whole group: every pending and future operation on every
//    rank throws that status and message. Before throwing, a rank waits until
//    no other rank is copying into or out of its buffers. A rank learns of the
//    failure once per call at the latest in end(); after it has, end() only
//    cleans up (callers may end a failed call from their error path).
//
// Waiting uses a mutex and one condition variable per rank; copies run
// outside the lock.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "transport/channel.h"

namespace dist {

class InProcessGroup {
 public:
  explicit InProcessGroup(int size);
  ~InProcessGroup();
  InProcessGroup(const InProcessGroup&) = delete;
  InProcessGroup& operator=(const InProcessGroup&) = delete;

  int size() const;

  // The channel of `rank`; one thread at a time may use it.
  Channel& channel(int rank);

  // Fails the group (kAborted, kPeerFailed, ...): every waiter on every rank
  // wakes and throws `status` with `message`. The first failure wins.
  void abort(Status status, const std::string& message);

  // Status::kOk while the group works; otherwise the failure and its message.
  Status failure() const;
  std::string failure_message() const;

 private:
  struct Shared;
  class RankChannel;
  std::shared_ptr<Shared> shared_;
};

// How one rank's body ended: kOk, or the status and message it threw.
struct RankOutcome {
  Status status = Status::kOk;
  std::string message;
};

// Runs body(rank, channel) on one thread per rank of `group` and returns how
// each ended (an exception other than dist::Error is kInternal, named).
std::vector<RankOutcome> run_ranks(InProcessGroup& group, const std::function<void(int, Channel&)>& body);

}  // namespace dist
