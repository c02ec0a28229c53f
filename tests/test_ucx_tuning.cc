// libdistribute's UCX defaults (transport/ucx_tuning.h): they reach UCX through
// each context's config, only where the user set nothing, never through the
// environment, which a library must not change under the other threads of
// its process (a setenv there once crashed a getenv in UCX on another thread).
#include <stdio.h>
#include <stdlib.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "internal_test_support.h"
#include "transport/ucx_tuning.h"
#include "transport/ucx_worker.h"

extern char** environ;

namespace {

std::vector<std::string> environment() {
  std::vector<std::string> all;
  for (char** entry = environ; *entry != nullptr; ++entry) all.emplace_back(*entry);
  return all;
}

// The RNDV_THRESH a context would start with: UCX's config as the process's
// environment gives it, with libdistribute's defaults applied, as printed by
// UCX itself.
std::string rendezvous_threshold() {
  ucp_config_t* config = nullptr;
  if (ucp_config_read(nullptr, nullptr, &config) != UCS_OK) fail_msg("ucp_config_read failed");
  dist::apply_ucx_defaults(config);
  char* text = nullptr;
  size_t length = 0;
  FILE* out = open_memstream(&text, &length);
  ucp_config_print(config, out, nullptr, UCS_CONFIG_PRINT_CONFIG);
  fclose(out);
  ucp_config_release(config);
  const std::string printed(text, length);
  free(text);
  const std::string key = "UCX_RNDV_THRESH=";
  const size_t at = printed.find(key);
  if (at == std::string::npos) fail_msg("ucp_config_print shows no %s", key.c_str());
  const size_t end = printed.find('\n', at);
  return printed.substr(at + key.size(), end - at - key.size());
}

void clear_settings() {
  unsetenv("UCX_TLS");
  unsetenv("UCX_RNDV_THRESH");
  unsetenv("DIST_UCX_DEFAULTS");
  unsetenv("DIST_UCX_BULK_ENDPOINTS");
  unsetenv("UCX_TCP_TX_SEG_SIZE");
  unsetenv("UCX_TCP_RX_SEG_SIZE");
}

void test_a_worker_leaves_the_environment_alone(void** state) {
  (void)state;
  clear_settings();
  setenv("UCX_TLS", "tcp", 1);  // the case with defaults to apply
  const std::vector<std::string> before = environment();
  {
    dist::UcxWorker worker;
    assert_false(worker.address().empty());
  }
  const std::vector<std::string> after = environment();
  if (before != after) {
    for (const std::string& entry : after) {
      bool seen = false;
      for (const std::string& old : before) seen = seen || old == entry;
      if (!seen) fail_msg("making a UCX worker set %s in the environment", entry.c_str());
    }
    fail_msg("making a UCX worker changed the environment");
  }
  clear_settings();
}

// Restricted to TCP, rendezvous from 512 KiB (zero-copy on the bulk
// endpoints), or never without them.
void test_rendezvous_over_tcp_unless_the_user_says_otherwise(void** state) {
  (void)state;
  clear_settings();
  const std::string ucx_own = rendezvous_threshold();  // every transport: UCX's choice
  assert_string_not_equal(ucx_own.c_str(), "inf");
  assert_string_not_equal(ucx_own.c_str(), "512K");

  setenv("UCX_TLS", "tcp", 1);
  assert_string_equal(rendezvous_threshold().c_str(), "512K");
  setenv("UCX_TLS", "self,tcp", 1);
  assert_string_equal(rendezvous_threshold().c_str(), "512K");
  setenv("DIST_UCX_BULK_ENDPOINTS", "0", 1);
  assert_string_equal(rendezvous_threshold().c_str(), "inf");
  unsetenv("DIST_UCX_BULK_ENDPOINTS");
  setenv("UCX_TLS", "tcp,posix", 1);  // not TCP alone
  assert_string_equal(rendezvous_threshold().c_str(), ucx_own.c_str());

  setenv("UCX_TLS", "tcp", 1);
  setenv("UCX_RNDV_THRESH", "32768", 1);  // the user's word stands
  const std::string users = rendezvous_threshold();
  assert_string_not_equal(users.c_str(), "inf");
  assert_string_not_equal(users.c_str(), ucx_own.c_str());

  unsetenv("UCX_RNDV_THRESH");
  setenv("DIST_UCX_DEFAULTS", "0", 1);  // no defaults at all
  assert_string_equal(rendezvous_threshold().c_str(), ucx_own.c_str());
  clear_settings();
}

// Whether a worker connected with error handling to another one gets a
// second endpoint for payloads, without it.
bool connects_with_bulk_endpoints() {
  dist::UcxWorker peer;
  dist::UcxWorker worker;
  worker.connect({"", peer.address()}, [](int, const std::string&) {});
  const bool bulk = worker.has_bulk_endpoints();
  if (bulk != (worker.bulk_endpoint(1) != worker.endpoint(1))) fail_msg("has_bulk_endpoints() disagrees");
  worker.disconnect(true);
  return bulk;
}

// Bulk endpoints only where UCX is restricted to TCP: elsewhere UCX may pick
// a shared-memory transport, which aborts the process when a peer vanishes
// under an endpoint without error handling.
void test_bulk_endpoints_only_over_tcp(void** state) {
  (void)state;
  clear_settings();
  assert_false(connects_with_bulk_endpoints());
  setenv("UCX_TLS", "tcp", 1);
  assert_true(connects_with_bulk_endpoints());
  setenv("DIST_UCX_BULK_ENDPOINTS", "0", 1);
  assert_false(connects_with_bulk_endpoints());
  unsetenv("DIST_UCX_BULK_ENDPOINTS");
  setenv("UCX_TLS", "tcp,posix", 1);
  assert_false(connects_with_bulk_endpoints());
  clear_settings();
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_worker_leaves_the_environment_alone),
      cmocka_unit_test(test_rendezvous_over_tcp_unless_the_user_says_otherwise),
      cmocka_unit_test(test_bulk_endpoints_only_over_tcp),
  };
  return cmocka_run_group_tests_name("ucx_tuning", tests, nullptr, nullptr);
}
