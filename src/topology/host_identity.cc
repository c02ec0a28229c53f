#include "topology/host_identity.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace dist {

std::string kernel_hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

std::string host_identity() {
  if (const char* test_host = std::getenv("DIST_HOST_ID_FOR_TESTS"); test_host != nullptr && *test_host != '\0') {
    return std::string("test/") + test_host;
  }
  std::string boot_id;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot_id;
  return kernel_hostname() + "/" + boot_id;
}

}  // namespace dist
