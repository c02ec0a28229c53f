// UCX's own messages reach the terminal only through the library's log
// (transport/ucx_log.h): while a UCX worker lives, a message UCX logs is
// formatted and judged by the library's level (UCX's errors are info, which
// the default level, warn, does not print); once the last worker is gone,
// UCX prints by itself again.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucs/config/global_opts.h>
#include <ucs/debug/log_def.h>
#include <unistd.h>

#include <string>

#include "internal_test_support.h"
#include "base/log.h"
#include "transport/ucx_worker.h"

namespace {

// What `action` wrote on stdout and stderr (UCX's own handler prints on
// stdout unless UCX_LOG_FILE says otherwise).
template <typename Action>
std::string output_of(Action action) {
  char path[] = "/tmp/test_ucx_log.XXXXXX";
  const int file = mkstemp(path);
  if (file < 0) fail_msg("mkstemp failed");
  fflush(stdout);
  fflush(stderr);
  const int saved_out = dup(STDOUT_FILENO);
  const int saved_err = dup(STDERR_FILENO);
  dup2(file, STDOUT_FILENO);
  dup2(file, STDERR_FILENO);
  action();
  fflush(stdout);
  fflush(stderr);
  dup2(saved_out, STDOUT_FILENO);
  dup2(saved_err, STDERR_FILENO);
  close(saved_out);
  close(saved_err);
  std::string text;
  char chunk[4096];
  lseek(file, 0, SEEK_SET);
  for (ssize_t n; (n = read(file, chunk, sizeof chunk)) > 0;) text.append(chunk, static_cast<size_t>(n));
  close(file);
  unlink(path);
  return text;
}

void ucx_logs(ucs_log_level_t level, const char* text) {
  ucs_log_dispatch(__FILE__, __LINE__, __func__, level, &ucs_global_opts.log_component, "%s", text);
}

void test_ucx_messages_go_through_the_library_log(void** state) {
  (void)state;
  unsetenv("UCX_LOG_LEVEL");
  std::string printed;
  {
    dist::UcxWorker worker;
    printed = output_of([] { ucx_logs(UCS_LOG_LEVEL_ERROR, "an error UCX reports"); });
    // UCX's errors are the library's info: not printed at the default level.
    assert_int_equal(dist::log_enabled(dist::LogLevel::kInfo), 0);
    assert_true(printed.empty());
    {
      dist::UcxWorker second;  // two workers, one route
      printed = output_of([] { ucx_logs(UCS_LOG_LEVEL_WARN, "a warning UCX gives"); });
      assert_true(printed.empty());
    }
    printed = output_of([] { ucx_logs(UCS_LOG_LEVEL_ERROR, "still routed"); });
    assert_true(printed.empty());
  }
  // The last worker gone, UCX's own handler prints again.
  printed = output_of([] { ucx_logs(UCS_LOG_LEVEL_ERROR, "after the last worker"); });
  assert_true(printed.find("after the last worker") != std::string::npos);
  assert_true(printed.find("libdistribute[") == std::string::npos);
}

void test_the_library_log_prints_warnings_as_one_line(void** state) {
  (void)state;
  const std::string printed = output_of([] {
    dist::log_message(dist::LogLevel::kWarn, "a warning\n", "ucx");
    dist::log_message(dist::LogLevel::kDebug, "not shown");
  });
  const std::string expected = "libdistribute[" + std::to_string(getpid()) + "] warn: ucx: a warning\n";
  assert_string_equal(printed.c_str(), expected.c_str());
}

}  // namespace

int main() {
  // The level is read once per process, from DIST_LOG_LEVEL: the default here.
  unsetenv("DIST_LOG_LEVEL");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ucx_messages_go_through_the_library_log),
      cmocka_unit_test(test_the_library_log_prints_warnings_as_one_line),
  };
  return cmocka_run_group_tests_name("ucx_log", tests, nullptr, nullptr);
}
