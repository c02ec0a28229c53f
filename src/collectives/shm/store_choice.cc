#include "collectives/shm/store_choice.h"

#include <cstdlib>
#include <cstring>

namespace dist {

namespace {

int fixed_from_environment() {
  const char* setting = std::getenv("DIST_SHM_STREAM_STORES");
  if (setting == nullptr) return -1;
  if (std::strcmp(setting, "0") == 0) return 0;
  if (std::strcmp(setting, "1") == 0) return 1;
  return -1;  // anything else: chosen per call, the default
}

}  // namespace

StoreChoice::StoreChoice() : fixed_(fixed_from_environment()) {}

StoreChoice::StoreChoice(bool streamed) : fixed_(streamed ? 1 : 0) {}

StoreChoice::Call StoreChoice::choose(size_t bytes) {
  Call call;
  if (fixed_ >= 0) {
    call.streamed = fixed_ == 1;
    return call;
  }
  const TimedChoice::Call learned = learned_.choose(bytes);
  call.streamed = learned.second;
  call.timed = true;
  call.size_class = learned.size_class;
  return call;
}

void StoreChoice::took(const Call& call, int64_t ns) {
  if (call.timed) learned_.took({call.streamed, call.size_class}, ns);
}

ChosenStores::ChosenStores(StoreChoice& choice, size_t bytes) : choice_(choice), call_(choice.choose(bytes)) {
  if (call_.timed) start_ = std::chrono::steady_clock::now();
}

void ChosenStores::finished() {
  if (!call_.timed) return;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_);
  choice_.took(call_, ns.count());
}

}  // namespace dist
