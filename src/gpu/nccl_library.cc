#include "gpu/nccl_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace dist {
namespace {

// ncclCommSplit and nonblocking ncclCommInitRankConfig are both in 2.18.
constexpr int kOldestUsable = 21800;

std::string dotted(int major, int minor, int patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::vector<std::string> candidates() {
  if (const char* explicit_path = std::getenv("DIST_NCCL_LIBRARY"); explicit_path != nullptr && *explicit_path) {
    return {explicit_path};  // said outright: nothing else is tried
  }
  std::vector<std::string> out{"libnccl.so.2"};
#ifdef DIST_NCCL_BUILD_DIR
  out.push_back(std::string(DIST_NCCL_BUILD_DIR) + "/libnccl.so.2");
#endif
  return out;
}

std::string opened_path(void* handle, const std::string& fallback) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && *map->l_name) {
    return map->l_name;
  }
  return fallback;
}

}  // namespace

std::string nccl_version_text(int code) {
  if (code >= 10000) return dotted(code / 10000, code % 10000 / 100, code % 100);
  return dotted(code / 1000, code % 1000 / 100, code % 100);
}

const NcclLibrary& NcclLibrary::instance() {
  static const NcclLibrary library;
  return library;
}

NcclLibrary::NcclLibrary() {
  std::string errors;
  for (const std::string& name : candidates()) {
    // RTLD_LOCAL: NCCL's symbols stay out of the global namespace, where they
    // could bind another library's references to this copy.
    handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) {
      path_ = opened_path(handle_, name);
      break;
    }
    const char* error = dlerror();
    errors += (errors.empty() ? "" : "; ") + std::string(error != nullptr ? error : name + ": cannot open");
  }
  if (handle_ == nullptr) {
    reason_ = "NCCL could not be opened (" + errors + "); set DIST_NCCL_LIBRARY to its libnccl.so.2";
    return;
  }
  resolve(api_.get_version, "ncclGetVersion");
  if (api_.get_version == nullptr || api_.get_version(&version_) != ncclSuccess || version_ <= 0) {
    reason_ = path_ + " is not a usable NCCL (ncclGetVersion missing or failing)";
    version_ = 0;
    return;
  }
  if (version_ < kOldestUsable) {
    reason_ = "NCCL " + nccl_version_text(version_) + " (" + path_ + ") is older than " +
              nccl_version_text(kOldestUsable) + ", the first with ncclCommSplit and nonblocking initialisation";
    return;
  }
  std::string missing;
  auto need = [&](auto& function, const char* symbol) {
    if (!resolve(function, symbol)) missing += (missing.empty() ? "" : ", ") + std::string(symbol);
  };
  need(api_.get_unique_id, "ncclGetUniqueId");
  need(api_.comm_init_rank_config, "ncclCommInitRankConfig");
  need(api_.comm_split, "ncclCommSplit");
  need(api_.comm_get_async_error, "ncclCommGetAsyncError");
  need(api_.comm_finalize, "ncclCommFinalize");
  need(api_.comm_destroy, "ncclCommDestroy");
  need(api_.comm_abort, "ncclCommAbort");
  need(api_.get_error_string, "ncclGetErrorString");
  need(api_.get_last_error, "ncclGetLastError");
  need(api_.all_reduce, "ncclAllReduce");
  need(api_.reduce, "ncclReduce");
  need(api_.broadcast, "ncclBroadcast");
  need(api_.all_gather, "ncclAllGather");
  need(api_.reduce_scatter, "ncclReduceScatter");
  need(api_.send, "ncclSend");
  need(api_.recv, "ncclRecv");
  need(api_.group_start, "ncclGroupStart");
  need(api_.group_end, "ncclGroupEnd");
  if (!missing.empty()) {
    reason_ = path_ + " lacks " + missing;
    return;
  }
  available_ = true;
}

template <typename Function>
bool NcclLibrary::resolve(Function& function, const char* symbol) {
  function = reinterpret_cast<Function>(dlsym(handle_, symbol));
  return function != nullptr;
}

bool nccl_enabled() {
  const char* setting = std::getenv("DIST_NCCL");
  if (setting != nullptr && std::strcmp(setting, "0") == 0) return false;
  return NcclLibrary::instance().available();
}

}  // namespace dist
