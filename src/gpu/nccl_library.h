// NCCL, opened at run time instead of linked: the library loads where NCCL is
// absent, and in a process that already has an NCCL (torch's wheel carries its
// own) it uses that one instead of loading a second copy whose symbols would
// clash with it.
#pragma once

#include <string>

namespace dist {

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

 private:
  NcclLibrary();

  void* handle_ = nullptr;
  bool available_ = false;
  std::string reason_;
  std::string path_;
  int version_ = 0;
};

// "2.28.9" for 22809 (and the older encoding, major*1000 + minor*100 + patch,
// of releases before 2.9).
std::string nccl_version_text(int code);

}  // namespace dist
