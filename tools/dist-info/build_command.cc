// dist-info build: the build report of the loaded library, read through the
// public C ABI (dist_build_info) as any program would.
#include <cstdio>
#include <memory>
#include <string>

#include "base/json.h"
#include "base/status.h"
#include <distribute/c_api.h>
#include "commands.h"

namespace dist::info {

namespace {

std::string fetch_build_info() {
  char* raw = nullptr;
  const dist_status_t status = dist_build_info(&raw);
  if (status != DIST_OK) fail(static_cast<Status>(status), dist_last_error());
  std::unique_ptr<char, decltype(&dist_string_free)> owned(raw, &dist_string_free);
  return raw;
}

std::string text_or(const Json& value, const std::string& fallback) {
  return value.is_string() ? value.get<std::string>() : fallback;
}

std::string joined(const Json& list) {
  std::string out;
  for (const Json& item : list) out += (out.empty() ? "" : " ") + item.get<std::string>();
  return out.empty() ? "none" : out;
}

void print_component(const char* label, const std::string& running, const std::string& built) {
  std::printf("  %-14s %-16s %s\n", label, running.c_str(), built.c_str());
}

void print_human(const Json& info) {
  std::printf("libdistribute %s (ABI %d)\n", info["version"].get<std::string>().c_str(),
              info["abi_version"].get<int>());
  std::printf("build type:  %s\n", info["build_type"].get<std::string>().c_str());
  std::printf("compiler:    %s\n", info["compiler"].get<std::string>().c_str());
  std::printf("sanitizers:  %s\n", joined(info["sanitizers"]).c_str());
  std::printf("features:    %s\n", joined(info["features"]).c_str());
  std::printf("components:      %-16s %s\n", "running", "built against");
  const Json& built = info["compiled_against"];
  const std::string absent = "not built in";
  print_component("ucx", text_or(info["ucx"], absent), text_or(built["ucx"], "-"));
  // hwloc reports the API version of its release series, not the release.
  print_component("hwloc", info["hwloc"].is_string() ? info["hwloc"].get<std::string>() + " (API)" : absent,
                  text_or(built["hwloc"], "-"));
  print_component("cuda runtime", text_or(info["cuda_runtime"], absent), text_or(built["cuda_runtime"], "-"));
  const bool have_cuda = built["cuda_runtime"].is_string();
  print_component("cuda driver", text_or(info["cuda_driver"], have_cuda ? "none found" : absent), "-");
  const bool have_nccl = built["nccl"].is_string();
  print_component("nccl", text_or(info["nccl"], have_nccl ? "not loaded" : absent), text_or(built["nccl"], "-"));
  // NCCL is opened at run time: say from where, or why it could not be.
  if (info.contains("nccl_library") && info["nccl_library"].is_string()) {
    std::printf("nccl library:    %s\n", info["nccl_library"].get<std::string>().c_str());
  }
  if (info.contains("nccl_unavailable") && info["nccl_unavailable"].is_string()) {
    std::printf("nccl path off:   %s\n", info["nccl_unavailable"].get<std::string>().c_str());
  }
}

}  // namespace

int build_command(const Args& args) {
  bool json = false;
  for (const std::string& flag : args) {
    if (flag == "--json") {
      json = true;
    } else {
      fail_invalid("unknown flag " + quoted(flag) + " for dist-info build (only --json)");
    }
  }
  const std::string report = fetch_build_info();
  if (json) {
    std::printf("%s\n", report.c_str());
  } else {
    print_human(Json::parse(report));
  }
  return 0;
}

}  // namespace dist::info
