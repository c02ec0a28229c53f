#include "transport/rendezvous.h"

#include <algorithm>
#include <cstring>

#include "base/numbers.h"
#include "base/status.h"
#include "transport/handshake.h"

namespace dist {

namespace {

constexpr uint32_t kMaxAddress = 255;
// Rank 0 gives up at the deadline and tells the tasks why; they wait this much
// longer for its word rather than racing it with a vaguer error of their own.
constexpr auto kAnswerGrace = std::chrono::seconds(1);

struct JoinWire {
  char magic[8];
  int32_t rank;
  int32_t size;
  uint32_t address_bytes;
  uint32_t reserved;  // no padding: every byte sent is written
};
static_assert(sizeof(JoinWire) == 24, "JoinWire has padding");

struct AnswerWire {
  char magic[8];
  int32_t size;
  uint32_t bytes;
};
static_assert(sizeof(AnswerWire) == 16, "AnswerWire has padding");

// Whole seconds, rounded: a deadline of 4 s read a moment later is still "4 s".
std::string seconds_until(SteadyTime deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return describe_seconds(std::chrono::seconds(std::max<int64_t>(0, (left.count() + 500) / 1000)));
}

void send_answer(int fd, const char* magic, int32_t size, const std::string& payload, SteadyTime deadline,
                 const std::string& peer) {
  AnswerWire wire{};
  std::memcpy(wire.magic, magic, 8);
  wire.size = size;
  wire.bytes = static_cast<uint32_t>(payload.size());
  write_all(fd, &wire, sizeof wire, deadline, peer);
  write_all(fd, payload.data(), payload.size(), deadline, peer);
}

// An address from the wire must be one the bootstrap can use.
bool usable_address(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) return false;
  if (address.find_first_of("\n ,") != std::string::npos) return false;
  const std::string port = address.substr(colon + 1);
  return port.size() <= 5 && std::all_of(port.begin(), port.end(), ::isdigit) && std::stoi(port) >= 1 &&
         std::stoi(port) <= 65535;
}

// Accepts tasks until every rank has joined: their sockets and addresses.
void gather(const Socket& rendezvous, const RendezvousPoint& point, const std::string& token, SteadyTime deadline,
            const std::string& where, std::vector<Socket>& joined, std::vector<std::string>& addresses) {
  int32_t missing = point.size - 1;
  while (missing > 0) {
    Socket socket = accept_until(rendezvous, deadline);
    if (!socket.valid()) {
      std::string ranks;
      for (int32_t r = 1; r < point.size; ++r) {
        if (!joined[static_cast<size_t>(r)].valid()) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
      }
      fail(Status::kTimeout, where + ": rank" + (missing > 1 ? "s " : " ") + ranks + " of " +
                                 std::to_string(point.size) + " did not join by the connect deadline");
    }
    const std::string peer = "a task joining the " + where;
    const SteadyTime limit = std::min(deadline, std::chrono::steady_clock::now() + kHandshakeLimit);
    JoinWire wire{};
    std::string address;
    try {
      authenticate_as_acceptor(socket.fd(), token, limit, peer);
      read_all(socket.fd(), &wire, sizeof wire, limit, peer);
      if (std::memcmp(wire.magic, "DISTJOIN", 8) != 0 || wire.address_bytes > kMaxAddress) continue;
      address.resize(wire.address_bytes);
      read_all(socket.fd(), address.data(), address.size(), limit, peer);
    } catch (const Error&) {
      continue;  // refused or broken: not one of ours, and the real tasks keep coming
    }
    std::string problem;
    const std::string who = "rank " + std::to_string(wire.rank);
    if (wire.size != point.size) {
      problem = who + " says the job has " + std::to_string(wire.size) + " tasks, rank 0 says " +
                std::to_string(point.size);
    } else if (wire.rank <= 0 || wire.rank >= point.size) {
      problem = "a task says it is " + who + ", out of range 1.." + std::to_string(point.size - 1);
    } else if (joined[static_cast<size_t>(wire.rank)].valid()) {
      problem = who + " joined twice (two tasks started with the same rank?)";
    } else if (!usable_address(address)) {
      problem = who + " sent an address that is not host:port";
    }
    if (!problem.empty()) {
      try {
        send_answer(socket.fd(), "DISTFAIL", static_cast<int32_t>(Status::kMismatch), where + ": " + problem, limit, peer);
      } catch (const Error&) {
        // The task learns of it when the connection closes.
      }
      fail(Status::kMismatch, where + ": " + problem);
    }
    addresses[static_cast<size_t>(wire.rank)] = address;
    joined[static_cast<size_t>(wire.rank)] = std::move(socket);
    --missing;
  }
}

// Rank 0: gathers every task's address, then answers them all.
RendezvousOutcome serve(const RendezvousPoint& point, const std::string& token, SteadyTime deadline) {
  const HostPort at = split_address(point.address);
  const std::string where = point.source + " rendezvous at " + point.address;
  Socket rendezvous;
  try {
    rendezvous = listen_on(at);
  } catch (const Error& e) {
    fail(e.status(), where + ": rank 0 listens there, so it must run on that host: " + e.what());
  }
  RendezvousOutcome outcome;
  outcome.addresses.assign(static_cast<size_t>(point.size), "");
  outcome.listener = listen_on(HostPort{at.host, 0});
  outcome.addresses[0] = join_address(HostPort{at.host, local_address(outcome.listener).port});

  std::vector<Socket> joined(static_cast<size_t>(point.size));
  try {
    gather(rendezvous, point, token, deadline, where, joined, outcome.addresses);
  } catch (const Error& e) {
    // The tasks that joined hear why, instead of waiting for their own deadline.
    for (Socket& socket : joined) {
      if (!socket.valid()) continue;
      try {
        send_answer(socket.fd(), "DISTFAIL", static_cast<int32_t>(e.status()), e.what(),
                    std::chrono::steady_clock::now() + std::chrono::seconds(1), where);
      } catch (const Error&) {
      }
    }
    throw;
  }
  std::string payload;
  for (const std::string& address : outcome.addresses) payload += (payload.empty() ? "" : "\n") + address;
  for (int32_t r = 1; r < point.size; ++r) {
    // A task that died since it joined is the bootstrap's to report.
    try {
      send_answer(joined[static_cast<size_t>(r)].fd(), "DISTADDR", point.size, payload, deadline,
                  "rank " + std::to_string(r));
    } catch (const Error&) {
    }
  }
  return outcome;
}

// Every other rank: joins at rank 0 and waits for the answer.
RendezvousOutcome join(const RendezvousPoint& point, const std::string& token, SteadyTime deadline) {
  const HostPort at = split_address(point.address);
  const std::string master = "the " + point.source + " rendezvous (rank 0) at " + point.address;
  const std::string seconds = seconds_until(deadline);
  Socket socket = connect_until(at, deadline);
  if (!socket.valid()) {
    fail(Status::kTimeout, "rank " + std::to_string(point.rank) + " could not reach " + master + " within " + seconds);
  }
  authenticate_as_connector(socket.fd(), token, deadline, master);

  RendezvousOutcome outcome;
  const std::string host = local_address(socket).host;
  outcome.listener = listen_on(HostPort{host, 0});
  const std::string address = join_address(HostPort{host, local_address(outcome.listener).port});
  JoinWire wire{};
  std::memcpy(wire.magic, "DISTJOIN", 8);
  wire.rank = point.rank;
  wire.size = point.size;
  wire.address_bytes = static_cast<uint32_t>(address.size());
  write_all(socket.fd(), &wire, sizeof wire, deadline, master);
  write_all(socket.fd(), address.data(), address.size(), deadline, master);

  AnswerWire answer{};
  const SteadyTime answer_deadline = deadline + kAnswerGrace;
  try {
    read_all(socket.fd(), &answer, sizeof answer, answer_deadline, master);
  } catch (const Error& e) {
    if (e.status() != Status::kTimeout) {
      fail(e.status(), master + " closed the connection before answering (it failed; see its error)");
    }
    fail(Status::kTimeout, master + " did not send every task's address within " + seconds +
                               " (are all " + std::to_string(point.size) + " tasks started?)");
  }
  if (answer.bytes > static_cast<uint64_t>(point.size) * (kMaxAddress + 1)) {
    fail(Status::kPeerFailed, master + ": malformed answer (" + std::to_string(answer.bytes) + " bytes)");
  }
  std::string payload(answer.bytes, '\0');
  read_all(socket.fd(), payload.data(), payload.size(), answer_deadline, master);
  if (std::memcmp(answer.magic, "DISTFAIL", 8) == 0) {
    const bool known = answer.size == static_cast<int32_t>(Status::kTimeout) ||
                       answer.size == static_cast<int32_t>(Status::kMismatch);
    fail(known ? static_cast<Status>(answer.size) : Status::kPeerFailed, payload);
  }
  if (std::memcmp(answer.magic, "DISTADDR", 8) != 0 || answer.size != point.size) {
    fail(Status::kPeerFailed, master + ": malformed answer");
  }
  size_t start = 0;
  while (start <= payload.size()) {
    const size_t end = std::min(payload.find('\n', start), payload.size());
    outcome.addresses.push_back(payload.substr(start, end - start));
    start = end + 1;
  }
  if (outcome.addresses.size() != static_cast<size_t>(point.size) ||
      !std::all_of(outcome.addresses.begin(), outcome.addresses.end(), usable_address) ||
      outcome.addresses[static_cast<size_t>(point.rank)] != address) {
    fail(Status::kPeerFailed, master + ": malformed answer (not one host:port per task)");
  }
  return outcome;
}

}  // namespace

RendezvousOutcome run_rendezvous(const RendezvousPoint& point, const std::string& token, SteadyTime deadline) {
  return point.rank == 0 ? serve(point, token, deadline) : join(point, token, deadline);
}

}  // namespace dist
