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

// The value a context would start with for `name` (UCX_<name>): UCX's config
// as the process's environment gives it, with libdistribute's defaults
// applied, as printed by UCX itself.
std::string setting(const std::string& name) {
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
  const std::string key = "\nUCX_" + name + "=";
  const size_t at = printed.find(key);
  if (at == std::string::npos) fail_msg("ucp_config_print shows no %s", key.c_str());
  const size_t end = printed.find('\n', at + 1);
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

// Restricted to TCP, rendezvous from 512 KiB with bulk endpoints (zero-copy
// there), or never without them (the default).
void test_rendezvous_over_tcp_unless_the_user_says_otherwise(void** state) {
  (void)state;
  clear_settings();
  const std::string ucx_own = setting("RNDV_THRESH");  // every transport: UCX's choice
  assert_string_not_equal(ucx_own.c_str(), "inf");
  assert_string_not_equal(ucx_own.c_str(), "512K");

  setenv("UCX_TLS", "tcp", 1);
  assert_string_equal(setting("RNDV_THRESH").c_str(), "inf");
  setenv("DIST_UCX_BULK_ENDPOINTS", "1", 1);
  assert_string_equal(setting("RNDV_THRESH").c_str(), "512K");
  setenv("UCX_TLS", "self,tcp", 1);
  assert_string_equal(setting("RNDV_THRESH").c_str(), "512K");
  setenv("DIST_UCX_BULK_ENDPOINTS", "0", 1);
  assert_string_equal(setting("RNDV_THRESH").c_str(), "inf");
  unsetenv("DIST_UCX_BULK_ENDPOINTS");
  assert_string_equal(setting("RNDV_THRESH").c_str(), "inf");
  setenv("UCX_TLS", "tcp,posix", 1);  // not TCP alone
  assert_string_equal(setting("RNDV_THRESH").c_str(), ucx_own.c_str());

  setenv("UCX_TLS", "tcp", 1);
  setenv("UCX_RNDV_THRESH", "32768", 1);  // the user's word stands
  const std::string users = setting("RNDV_THRESH");
  assert_string_not_equal(users.c_str(), "inf");
  assert_string_not_equal(users.c_str(), ucx_own.c_str());

  unsetenv("UCX_RNDV_THRESH");
  setenv("DIST_UCX_DEFAULTS", "0", 1);  // no defaults at all
  assert_string_equal(setting("RNDV_THRESH").c_str(), ucx_own.c_str());
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

// Bulk endpoints only on request (DIST_UCX_BULK_ENDPOINTS=1), and on this
// host only where UCX is restricted to TCP: elsewhere UCX may pick a
// shared-memory transport, which aborts the process when a peer vanishes
// under an endpoint without error handling.
void test_bulk_endpoints_only_on_request_over_tcp(void** state) {
  (void)state;
  clear_settings();
  assert_false(connects_with_bulk_endpoints());
  setenv("UCX_TLS", "tcp", 1);
  assert_false(connects_with_bulk_endpoints());  // not by default: UCX aborts when a peer dies under one
  setenv("DIST_UCX_BULK_ENDPOINTS", "1", 1);
  assert_true(connects_with_bulk_endpoints());
  setenv("DIST_UCX_BULK_ENDPOINTS", "0", 1);
  assert_false(connects_with_bulk_endpoints());
  setenv("DIST_UCX_BULK_ENDPOINTS", "1", 1);
  setenv("UCX_TLS", "tcp,posix", 1);
  assert_false(connects_with_bulk_endpoints());
  clear_settings();
}


// Sends to other hosts take UCX's "local" rendezvous threshold, set to
// 512 KiB unless the user set it; the context's own threshold stays UCX's.
void test_other_hosts_switch_to_rendezvous_at_512k(void** state) {
  (void)state;
  clear_settings();
  unsetenv("UCX_RNDV_SEND_NBR_THRESH");
  assert_string_equal(setting("RNDV_SEND_NBR_THRESH").c_str(), "512K");
  assert_string_not_equal(setting("RNDV_THRESH").c_str(), "512K");
  setenv("UCX_RNDV_SEND_NBR_THRESH", "64K", 1);
  assert_string_equal(setting("RNDV_SEND_NBR_THRESH").c_str(), "64K");
  unsetenv("UCX_RNDV_SEND_NBR_THRESH");
  setenv("DIST_UCX_DEFAULTS", "0", 1);
  assert_string_not_equal(setting("RNDV_SEND_NBR_THRESH").c_str(), "512K");
  clear_settings();
}

// A worker has a network-only address beside its full one: a shorter one,
// since it leaves out every shared-memory transport.
void test_a_worker_has_a_network_only_address(void** state) {
  (void)state;
  clear_settings();
  dist::UcxWorker worker;
  assert_false(worker.network_address().empty());
  assert_true(worker.network_address().size() < worker.address().size());
}

// Connected to a peer said to be on another host: over its network-only
// address, with a bulk endpoint wherever UCX reaches other hosts by TCP
// only; to one on this host, as before.
bool connects_to_other_host_with_bulk_endpoints(bool same_host) {
  dist::UcxWorker peer;
  dist::UcxWorker worker;
  std::vector<dist::UcxPeer> peers(2);
  peers[1].address = peer.address();
  peers[1].network_address = peer.network_address();
  peers[1].same_host = same_host;
  peers[1].location = "host other (192.0.2.1)";
  worker.connect(peers, [](int, const std::string&) {});
  assert_int_equal(worker.remote_host(1), !same_host);
  assert_string_equal(worker.describe("worker:1", 1).c_str(), "worker:1 on host other (192.0.2.1)");
  assert_string_equal(worker.describe("worker:0", 0).c_str(), "worker:0");  // this process: no location given
  const bool bulk = worker.has_bulk_endpoints();
  worker.disconnect(true);
  return bulk;
}

void test_bulk_endpoints_to_other_hosts_over_tcp(void** state) {
  (void)state;
  clear_settings();
  // Not by default, whatever the transports.
  assert_false(connects_to_other_host_with_bulk_endpoints(false));
  setenv("UCX_TLS", "tcp", 1);
  assert_false(connects_to_other_host_with_bulk_endpoints(false));
  // On request: unrestricted, TCP only where the machine has no RDMA devices.
  unsetenv("UCX_TLS");
  setenv("DIST_UCX_BULK_ENDPOINTS", "1", 1);
  assert_int_equal(connects_to_other_host_with_bulk_endpoints(false), dist::ucx_network_is_tcp_only());
  assert_false(connects_to_other_host_with_bulk_endpoints(true));
  setenv("UCX_TLS", "tcp", 1);
  assert_true(connects_to_other_host_with_bulk_endpoints(false));
  setenv("UCX_TLS", "tcp,sm", 1);  // shared memory does not reach other hosts
  assert_true(dist::ucx_network_is_tcp_only());
  assert_true(connects_to_other_host_with_bulk_endpoints(false));
  setenv("UCX_TLS", "rc,tcp", 1);  // RDMA: its error path aborts without error handling
  assert_false(dist::ucx_network_is_tcp_only());
  assert_false(dist::ucx_bulk_endpoints_wanted(false));
  setenv("UCX_TLS", "tcp", 1);
  setenv("DIST_UCX_BULK_ENDPOINTS", "0", 1);
  assert_false(connects_to_other_host_with_bulk_endpoints(false));
  clear_settings();
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_worker_leaves_the_environment_alone),
      cmocka_unit_test(test_rendezvous_over_tcp_unless_the_user_says_otherwise),
      cmocka_unit_test(test_bulk_endpoints_only_on_request_over_tcp),
      cmocka_unit_test(test_other_hosts_switch_to_rendezvous_at_512k),
      cmocka_unit_test(test_a_worker_has_a_network_only_address),
      cmocka_unit_test(test_bulk_endpoints_to_other_hosts_over_tcp),
  };
  return cmocka_run_group_tests_name("ucx_tuning", tests, nullptr, nullptr);
}
