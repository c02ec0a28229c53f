// dist_build_info: what this build contains and which versions of its optional
// components it runs with. Facts come from the compiler's predefined macros
// (this file is compiled with the same flags as the rest of the library) and
// from the components' own version calls at run time.
#include <string>

#include "base/json.h"
#include "c_api/guard.h"
#include "c_api/strings.h"
#include "transport/ucx_version.h"

#ifdef DIST_HAVE_HWLOC
#include <hwloc.h>
#endif
#ifdef DIST_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#ifdef DIST_HAVE_NCCL
#include <nccl.h>

#include "gpu/nccl_library.h"
#endif

namespace dist {
namespace {

std::string trimmed(std::string text) {
  const auto end = text.find_last_not_of(" \t");
  text.erase(end == std::string::npos ? 0 : end + 1);
  return text;
}

std::string compiler() {
#if defined(__clang__)
  return trimmed("clang " __clang_version__);
#elif defined(__GNUC__)
  return trimmed("gcc " __VERSION__);
#else
  return "unknown";
#endif
}

// CMake's build type is not passed to the sources, so it is read back from the
// flags it implies: -O0 (no __OPTIMIZE__) is Debug; -Os is MinSizeRel; -O2/-O3
// with NDEBUG is Release or RelWithDebInfo (indistinguishable here, so both are
// "release"); optimised code that keeps assert() is reported as such.
const char* build_type() {
#if !defined(__OPTIMIZE__)
  return "debug";
#elif defined(__OPTIMIZE_SIZE__) && defined(NDEBUG)
  return "minsizerel";
#elif defined(NDEBUG)
  return "release";
#else
  return "optimized-with-assertions";
#endif
}

#if defined(__has_feature)
#define DIST_HAS_FEATURE(x) __has_feature(x)
#else
#define DIST_HAS_FEATURE(x) 0
#endif

// GCC announces ASan, HWASan and TSan with __SANITIZE_*__ macros; clang answers
// __has_feature. GCC has no macro for UBSan, so a GCC build with
// -fsanitize=undefined alone reports no sanitizer.
Json sanitizers() {
  Json list = Json::array();
#if defined(__SANITIZE_ADDRESS__) || DIST_HAS_FEATURE(address_sanitizer)
  list.push_back("address");
#endif
#if defined(__SANITIZE_HWADDRESS__) || DIST_HAS_FEATURE(hwaddress_sanitizer)
  list.push_back("hwaddress");
#endif
#if defined(__SANITIZE_THREAD__) || DIST_HAS_FEATURE(thread_sanitizer)
  list.push_back("thread");
#endif
#if DIST_HAS_FEATURE(memory_sanitizer)
  list.push_back("memory");
#endif
#if DIST_HAS_FEATURE(undefined_behavior_sanitizer)
  list.push_back("undefined");
#endif
  return list;
}

Json features() {
  const dist_features_t built = dist_build_features();
  Json list = Json::array();
  if (built & DIST_FEATURE_UCX) list.push_back("ucx");
  if (built & DIST_FEATURE_HWLOC) list.push_back("hwloc");
  if (built & DIST_FEATURE_CUDA) list.push_back("cuda");
  if (built & DIST_FEATURE_NCCL) list.push_back("nccl");
  return list;
}

// The formatters are unused in builds without the component they format.
[[maybe_unused]] std::string dotted(int major, int minor, int patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

// CUDA encodes 12.4 as 12040.
[[maybe_unused]] std::string cuda_version_text(int code) {
  return std::to_string(code / 1000) + "." + std::to_string(code % 1000 / 10);
}

// The versions actually running. For hwloc that is the API version of the
// loaded library (hwloc_get_api_version), which stays the same across the
// releases of one series: hwloc 2.9.0 reports API 2.8.0.
void add_runtime_versions(Json& out) {
  out["ucx"] = nullptr;
  out["hwloc"] = nullptr;
  out["cuda_runtime"] = nullptr;
  out["cuda_driver"] = nullptr;
  out["nccl"] = nullptr;
#ifdef DIST_HAVE_UCX
  out["ucx"] = ucx_runtime_version();
#endif
#ifdef DIST_HAVE_HWLOC
  const unsigned api = hwloc_get_api_version();
  out["hwloc"] = dotted(api >> 16, (api >> 8) & 0xff, api & 0xff);
#endif
#ifdef DIST_HAVE_CUDA
  // The runtime is linked statically, so this is the toolkit built against; it
  // needs no driver. The driver version is 0 when no driver is installed.
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess && runtime > 0) out["cuda_runtime"] = cuda_version_text(runtime);
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) out["cuda_driver"] = cuda_version_text(driver);
  (void)cudaGetLastError();  // leave no sticky error for later CUDA users
#endif
#ifdef DIST_HAVE_NCCL
  const NcclLibrary& nccl = NcclLibrary::instance();
  if (nccl.version() > 0) out["nccl"] = nccl_version_text(nccl.version());
  out["nccl_library"] = nccl.path().empty() ? Json(nullptr) : Json(nccl.path());
  out["nccl_unavailable"] = nccl.available() ? Json(nullptr) : Json(nccl.unavailable_reason());
#endif
}

// The headers the library was compiled against, to compare with the above.
Json compiled_against() {
  Json out = Json::object();
  out["ucx"] = nullptr;
  out["hwloc"] = nullptr;
  out["cuda_runtime"] = nullptr;
  out["nccl"] = nullptr;
#ifdef DIST_HAVE_UCX
  out["ucx"] = ucx_compiled_api_version();
#endif
#ifdef DIST_HAVE_HWLOC
  out["hwloc"] = HWLOC_VERSION;
#endif
#ifdef DIST_HAVE_CUDA
  out["cuda_runtime"] = cuda_version_text(CUDART_VERSION);
#endif
#ifdef DIST_HAVE_NCCL
  out["nccl"] = nccl_version_text(NCCL_VERSION_CODE);
#endif
  return out;
}

Json build_report() {
  Json out = Json::object();
  out["version"] = dist_version_string();
  out["abi_version"] = DIST_ABI_VERSION;
  out["features"] = features();
  out["compiler"] = compiler();
  out["build_type"] = build_type();
  out["sanitizers"] = sanitizers();
  add_runtime_versions(out);
  out["compiled_against"] = compiled_against();
  return out;
}

}  // namespace
}  // namespace dist

extern "C" {

DIST_EXPORT dist_status_t dist_build_info(char** json) {
  return dist::call_guarded(__func__, [&] {
    dist::require(json, "json");
    *json = dist::copy_for_caller(dist::dump_json(dist::build_report()));
  });
}

}  // extern "C"
