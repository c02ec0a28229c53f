// Helpers for the C++ suites that test internal code (test_*.cc).
#pragma once

#include <string>

// Before cmocka.h, whose fail() macro would clash with dist::fail.
#include "base/status.h"

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
}

// Runs `call` and fails the test unless it throws a dist::Error with `status`
// whose message contains `needle`.
template <typename Call>
void expect_error(dist::Status status, const char* what, const std::string& needle, Call call) {
  try {
    call();
  } catch (const dist::Error& e) {
    if (e.status() != status) {
      fail_msg("%s: status %d, expected %d", what, static_cast<int>(e.status()), static_cast<int>(status));
    }
    if (std::string(e.what()).find(needle) == std::string::npos) {
      fail_msg("%s: message \"%s\" does not contain \"%s\"", what, e.what(), needle.c_str());
    }
    return;
  }
  fail_msg("%s: no error", what);
}

// The same for an invalid-argument error.
template <typename Call>
void expect_invalid(const char* what, const std::string& needle, Call call) {
  expect_error(dist::Status::kInvalidArgument, what, needle, call);
}
