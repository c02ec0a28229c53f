#include "gloo_rendezvous.h"

#include <sys/socket.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

namespace {

// Bounded waits: a lost peer fails the run instead of hanging it.
constexpr std::chrono::seconds kTimeout{10};

std::string requireEnv(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) throw std::runtime_error(std::string(name) + " is not set");
  return value;
}

int requireInt(const char* name) {
  const std::string text = requireEnv(name);
  size_t used = 0;
  const int value = std::stoi(text, &used);
  if (used != text.size() || value < 0) throw std::runtime_error(std::string(name) + "=" + text);
  return value;
}

}  // namespace

std::shared_ptr<gloo::Context> glooJoin(bool busyPoll) {
  const int rank = requireInt("RANK");
  const int size = requireInt("SIZE");
  if (rank >= size) throw std::runtime_error("RANK must be below SIZE");

  // GLOO_ADDRESS: this rank's own address when the ranks run on several
  // (emulated) hosts; loopback otherwise.
  const char* address = std::getenv("GLOO_ADDRESS");
  gloo::transport::tcp::attr attr;
  attr.hostname = address && *address ? address : "127.0.0.1";
  attr.ai_family = AF_INET;
  auto device = gloo::transport::tcp::CreateDevice(attr);

  gloo::rendezvous::FileStore files(requireEnv("GLOO_STORE_DIR"));
  gloo::rendezvous::PrefixStore store("bench", files);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->setTimeout(kTimeout);
  context->connectFullMesh(store, device);

  if (busyPoll) {
    for (int peer = 0; peer < size; peer++)
      if (peer != rank) context->getPair(peer)->setSync(true, true);
  }
  return context;
}
