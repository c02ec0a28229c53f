// NCCL, opened at run time instead of linked: the library loads where NCCL is
// absent, and in a process that already has an NCCL (torch's wheel carries its
// own) it uses that one instead of loading a second copy whose symbols would
// clash with it.
#pragma once

#include <nccl.h>

#include <string>

namespace dist {

// The NCCL functions the library calls, resolved from the opened file.
struct NcclApi {
  ncclResult_t (*get_version)(int*) = nullptr;
  ncclResult_t (*get_unique_id)(ncclUniqueId*) = nullptr;
  ncclResult_t (*comm_init_rank_config)(ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*) = nullptr;
  ncclResult_t (*comm_split)(ncclComm_t, int, int, ncclComm_t*, ncclConfig_t*) = nullptr;
  ncclResult_t (*comm_get_async_error)(ncclComm_t, ncclResult_t*) = nullptr;
  ncclResult_t (*comm_finalize)(ncclComm_t) = nullptr;
  ncclResult_t (*comm_destroy)(ncclComm_t) = nullptr;
  ncclResult_t (*comm_abort)(ncclComm_t) = nullptr;
  const char* (*get_error_string)(ncclResult_t) = nullptr;
  const char* (*get_last_error)(ncclComm_t) = nullptr;
  ncclResult_t (*all_reduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                             cudaStream_t) = nullptr;
  ncclResult_t (*reduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t,
                         cudaStream_t) = nullptr;
  ncclResult_t (*broadcast)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*all_gather)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*reduce_scatter)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                 cudaStream_t) = nullptr;
  ncclResult_t (*send)(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*recv)(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*group_start)() = nullptr;
  ncclResult_t (*group_end)() = nullptr;
};

class NcclLibrary {
 public:
  // Opened once, on first use, from DIST_NCCL_LIBRARY when set, else
  // libnccl.so.2 through the loader (an NCCL the process already loaded, then
  // the loader's path), else the NCCL found when the library was built.
  static const NcclLibrary& instance();

  bool available() const { return available_; }
  // Why it is not available ("libnccl.so.2: cannot open shared object file",
  // "NCCL 2.12.3 is older than 2.18, which has ncclCommSplit"); empty when it is.
  const std::string& unavailable_reason() const { return reason_; }
  // The file it was opened from; empty when none was.
  const std::string& path() const { return path_; }
  // NCCL's version code (2.28.9 is 22809); 0 when none was opened.
  int version() const { return version_; }
  // Every function resolved; only when available().
  const NcclApi& api() const { return api_; }

 private:
  NcclLibrary();
  template <typename Function>
  bool resolve(Function& function, const char* symbol);

  void* handle_ = nullptr;
  bool available_ = false;
  std::string reason_;
  std::string path_;
  int version_ = 0;
  NcclApi api_;
};

// Whether the library's NCCL paths may run: NCCL opened and DIST_NCCL not
// set to "0" (the user's switch to keep every device call off NCCL).
bool nccl_enabled();

// "2.28.9" for 22809 (and the older encoding, major*1000 + minor*100 + patch,
// of releases before 2.9).
std::string nccl_version_text(int code);

}  // namespace dist
