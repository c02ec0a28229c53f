#include "transport/handshake.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <array>
#include <cstring>

#include "base/status.h"

namespace dist {

namespace {

constexpr uint32_t kHandshakeVersion = 1;
constexpr size_t kNonceBytes = 32;
constexpr size_t kMacBytes = 32;
using Nonce = std::array<unsigned char, kNonceBytes>;
using Mac = std::array<unsigned char, kMacBytes>;

struct Hello {
  char magic[8];
  uint32_t version;
  Nonce nonce;
};
struct AuthReply {
  char magic[8];
  uint32_t version;
  Nonce nonce;
  Mac mac;
};
struct Verdict {
  char magic[8];
  Mac mac;
};

Nonce fresh_nonce() {
  Nonce nonce{};
  if (RAND_bytes(nonce.data(), static_cast<int>(nonce.size())) != 1) {
    fail(Status::kSystem, "handshake: no randomness for a nonce (RAND_bytes failed)");
  }
  return nonce;
}

// The role is part of the MAC so one side's proof cannot be replayed as the other's.
Mac compute_mac(const std::string& token, const char* role, const Nonce& a, const Nonce& c) {
  unsigned char message[16 + 2 * kNonceBytes] = {};
  std::strncpy(reinterpret_cast<char*>(message), role, 15);
  std::memcpy(message + 16, a.data(), kNonceBytes);
  std::memcpy(message + 16 + kNonceBytes, c.data(), kNonceBytes);
  Mac mac{};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()), message, sizeof message, mac.data(),
           &length) == nullptr ||
      length != kMacBytes) {
    fail(Status::kInternal, "handshake: HMAC-SHA256 failed");
  }
  return mac;
}

bool same_mac(const Mac& a, const Mac& b) { return CRYPTO_memcmp(a.data(), b.data(), kMacBytes) == 0; }

void check_magic(const char (&magic)[8], const char* expected, const std::string& peer) {
  if (std::memcmp(magic, expected, 8) != 0) {
    throw AuthFailure(peer, "it does not speak libdistribute's bootstrap protocol");
  }
}

}  // namespace

void authenticate_as_acceptor(int fd, const std::string& token, SteadyTime deadline, const std::string& peer) {
  Hello hello{};
  std::memcpy(hello.magic, "DISTHELO", 8);
  hello.version = kHandshakeVersion;
  hello.nonce = fresh_nonce();
  write_all(fd, &hello, sizeof hello, deadline, peer);

  AuthReply reply{};
  read_all(fd, &reply, sizeof reply, deadline, peer);
  check_magic(reply.magic, "DISTAUTH", peer);
  if (reply.version != kHandshakeVersion) {
    throw AuthFailure(peer, "it speaks protocol version " + std::to_string(reply.version) +
                                ", this library speaks " + std::to_string(kHandshakeVersion));
  }
  Verdict verdict{};
  if (!same_mac(reply.mac, compute_mac(token, "connector", hello.nonce, reply.nonce))) {
    std::memcpy(verdict.magic, "DISTDENY", 8);
    try {
      write_all(fd, &verdict, sizeof verdict, deadline, peer);
    } catch (const Error&) {
      // The refusal is a courtesy; the connection is dropped either way.
    }
    throw AuthFailure(peer, "the cluster token differs");
  }
  std::memcpy(verdict.magic, "DISTOKAY", 8);
  verdict.mac = compute_mac(token, "acceptor", hello.nonce, reply.nonce);
  write_all(fd, &verdict, sizeof verdict, deadline, peer);
}

void authenticate_as_connector(int fd, const std::string& token, SteadyTime deadline, const std::string& peer) {
  Hello hello{};
  read_all(fd, &hello, sizeof hello, deadline, peer);
  check_magic(hello.magic, "DISTHELO", peer);
  AuthReply reply{};
  std::memcpy(reply.magic, "DISTAUTH", 8);
  reply.version = kHandshakeVersion;
  reply.nonce = fresh_nonce();
  reply.mac = compute_mac(token, "connector", hello.nonce, reply.nonce);
  write_all(fd, &reply, sizeof reply, deadline, peer);

  Verdict verdict{};
  read_all(fd, &verdict, sizeof verdict, deadline, peer);
  if (std::memcmp(verdict.magic, "DISTDENY", 8) == 0) {
    throw AuthFailure(peer, "refused: the cluster token differs");
  }
  check_magic(verdict.magic, "DISTOKAY", peer);
  if (!same_mac(verdict.mac, compute_mac(token, "acceptor", hello.nonce, reply.nonce))) {
    throw AuthFailure(peer, "it does not know the cluster token");
  }
}

}  // namespace dist
