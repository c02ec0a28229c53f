#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "base/status.h"
#include "collectives/shm/algorithms.h"
#include "collectives/shm/single_copy.h"

namespace dist {

namespace {

// How long a rank that found a peer's process gone waits for the
// communicator's own report of it (others had it 0.01 s after a kill).
constexpr std::chrono::milliseconds kDeadPeerReportWait{2000};

}  // namespace

void publish_address(ShmGroup& group, const void* buffer) {
  const uint64_t address = reinterpret_cast<uintptr_t>(buffer);
  std::memcpy(group.my_area(sizeof address), &address, sizeof address);
}

uintptr_t published_address(const ShmGroup& group, int rank) {
  uint64_t address = 0;
  std::memcpy(&address, group.area(rank, sizeof address), sizeof address);
  return static_cast<uintptr_t>(address);
}

// Two steps. In the first, each rank publishes where its data starts (in
// its call record) and, once all have, reads what it needs from every peer.
// The second is end_single_copies().
void read_from_peers(ShmGroup& group, const void* published, FunctionRef<PeerRead(int)> read_of,
                     FunctionRef<void()> meanwhile) {
  const int n = group.size();
  const int me = group.rank();
  publish_address(group, published);
  group.arrive();
  meanwhile();
  group.wait_arrived();
  SingleCopyOutcome outcome;
  // Each rank starts with the next one: two ranks do not read the same peer at once.
  for (int k = 1; k < n && outcome.error == 0; ++k) {
    const int peer = (me + k) % n;
    const PeerRead read = read_of(peer);
    if (read.bytes == 0) continue;
    const auto* remote = reinterpret_cast<const void*>(published_address(group, peer) + read.offset);
    outcome.error = group.read_from(peer, remote, read.into, read.bytes);
    if (outcome.error != 0) outcome.peer = peer;
  }
  group.next_step();
  end_single_copies(group, outcome, "read");
}

void end_single_copies(ShmGroup& group, const SingleCopyOutcome& mine, const char* verb) {
  static_assert(sizeof(SingleCopyOutcome) <= kShmInlineBytes, "the outcome rides in the call record");
  const int n = group.size();
  std::memcpy(group.my_area(sizeof mine), &mine, sizeof mine);
  group.arrive();
  group.wait_arrived();
  for (int r = 0; r < n; ++r) {
    SingleCopyOutcome theirs;
    std::memcpy(&theirs, group.area(r, sizeof theirs), sizeof theirs);
    if (theirs.error == 0) continue;
    const bool valid_peer = theirs.peer >= 0 && theirs.peer < n;
    const std::string whom = valid_peer ? group.name_of(static_cast<int>(theirs.peer)) : std::string("a peer");
    group.next_step();
    // A copy that failed once the communicator had failed (a peer gone, or
    // withdrawn from the group after its own call failed) is a consequence:
    // the first failure is the one to report.
    group.check_failure();
    // A peer whose process is gone: the communicator's monitor reports that
    // within milliseconds of the exit, naming it and its host as every other
    // rank hears it; that report, not this copy's errno, is the one to give.
    if (theirs.error == ESRCH) group.await_failure(kDeadPeerReportWait);
    if (theirs.error == kPeerWithdrew) {
      throw Error(Status::kPeerFailed, group.name_of(r) + " could not " + verb + " " + whom +
                                           "'s buffer: " + whom + " left the call after it failed there");
    }
    throw Error(theirs.error == ESRCH ? Status::kPeerFailed : Status::kSystem,
                group.name_of(r) + " could not " + verb + " " + whom + "'s buffer (" +
                    std::strerror(static_cast<int>(theirs.error)) + ") in a single-copy exchange");
  }
  group.next_step();
}

}  // namespace dist
