// The authentication handshake every bootstrap connection starts with: HMAC-
// SHA256 challenge-response over fresh random nonces, both ways. A peer without
// the token learns nothing (it only ever sees a nonce) and changes nothing (the
// acceptor closes the connection before reading anything else).
//
//   acceptor  -> connector : "DISTHELO" version nonce_a
//   connector -> acceptor  : "DISTAUTH" version nonce_c mac("connector", nonce_a, nonce_c)
//   acceptor  -> connector : "DISTOKAY" mac("acceptor", nonce_a, nonce_c)   or "DISTDENY"
#pragma once

#include <chrono>
#include <string>
#include <utility>

#include "base/status.h"
#include "transport/socket.h"

namespace dist {

// The kAuth error of a peer that failed the handshake: "handshake with PEER:
// REASON". reason() alone ("the cluster token differs") lets a listener name
// whom it refused, and why, in a later error of its own.
class AuthFailure : public Error {
 public:
  AuthFailure(const std::string& peer, std::string reason)
      : Error(Status::kAuth, "handshake with " + peer + ": " + reason), reason_(std::move(reason)) {}
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

// Both throw AuthFailure when the other side does not prove the token (or does
// not speak this protocol), and the socket errors of read_all/write_all
// otherwise. `peer` names it in messages.
// How long a listener gives one connection to prove the token before it
// serves the next (a stranger that says nothing holds it no longer).
constexpr auto kHandshakeLimit = std::chrono::seconds(10);

void authenticate_as_acceptor(int fd, const std::string& token, SteadyTime deadline, const std::string& peer);
void authenticate_as_connector(int fd, const std::string& token, SteadyTime deadline, const std::string& peer);

}  // namespace dist
