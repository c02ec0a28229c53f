// The boundary between the C ABI and the C++ core: every exported function runs
// its body through call_guarded(), which turns any exception into a status code
// and a thread-local message, so nothing ever unwinds into C.
#pragma once

#include <string>

#include "base/status.h"
#include <distribute/c_api.h>

namespace dist {

// Records `message` as this thread's last error and returns `status`.
dist_status_t set_last_error(dist_status_t status, const std::string& message);

// Runs body(); returns DIST_OK, or the status of what it threw.
template <typename Body>
dist_status_t call_guarded(const char* function, Body&& body) noexcept {
  try {
    body();
    return DIST_OK;
  } catch (const Error& e) {
    return set_last_error(static_cast<dist_status_t>(e.status()), std::string(function) + ": " + e.what());
  } catch (const std::bad_alloc&) {
    return set_last_error(DIST_ERR_NO_MEMORY, std::string(function) + ": out of memory");
  } catch (const std::exception& e) {
    return set_last_error(DIST_ERR_INTERNAL, std::string(function) + ": internal error: " + e.what());
  } catch (...) {
    return set_last_error(DIST_ERR_INTERNAL, std::string(function) + ": internal error: unknown exception");
  }
}

// Argument checks shared by every entry point; they throw invalid-argument errors.
template <typename T>
T* require(T* pointer, const char* name) {
  if (pointer == nullptr) fail_invalid(std::string(name) + " is NULL");
  return pointer;
}

}  // namespace dist
