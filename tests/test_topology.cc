// Topology discovery, checked against what Linux says directly (sysconf,
// sched_getaffinity, /sys/devices/system, /sys/class/net) rather than against
// hwloc itself.
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "topology/accelerators.h"
#include "topology/topology.h"

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
}

namespace {

bool path_exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

bool nvidia_device_present() { return path_exists("/proc/driver/nvidia") || path_exists("/dev/nvidia0"); }

void test_no_gpus_without_an_nvidia_device(void**) {
  if (nvidia_device_present()) skip();
  assert_int_equal(dist::local_gpu_count(), 0);
#ifdef DIST_HAVE_HWLOC
  for (const dist::Gpu& gpu : dist::discover_topology().gpus) assert_int_not_equal(gpu.location.vendor_id, 0x10de);
#endif
}

// The JSON of a hand-made summary: field names, nulls for unknown strings, and
// PCI ids as four hex digits.
void test_json_of_a_known_summary(void**) {
  dist::Topology topology;
  topology.hostname = "node7";
  topology.pus = 8;
  topology.cores = 4;
  topology.allowed_pus = 6;
  dist::Gpu gpu;
  gpu.name = "Tesla T4";
  gpu.location.pci_bus_id = "0000:3b:00.0";
  gpu.location.vendor_id = 0x10de;
  gpu.location.device_id = 0x1eb8;
  gpu.location.numa_nodes = {1};
  gpu.os_devices = {"cuda0", "nvml0"};
  topology.gpus.push_back(gpu);
  dist::Nic nic;
  nic.name = "mlx5_0";
  nic.kind = "openfabrics";
  nic.ports = {{1, "active"}};
  topology.nics.push_back(nic);

  const dist::Json json = dist::topology_to_json(topology);
  assert_string_equal(json.at("hostname").get<std::string>().c_str(), "node7");
  assert_true(json.at("hwloc_version").is_null());
  assert_true(json.at("pages").at("transparent_huge_pages").is_null());
  assert_true(json.at("pages").at("shmem_huge_pages").is_null());
  const dist::Json& g = json.at("gpus").at(0);
  assert_string_equal(g.at("vendor_id").get<std::string>().c_str(), "10de");
  assert_string_equal(g.at("device_id").get<std::string>().c_str(), "1eb8");
  assert_string_equal(g.at("name").get<std::string>().c_str(), "Tesla T4");
  assert_true(g.at("vendor").is_null());
  assert_true(g.at("local_cpus").is_null());
  assert_int_equal(g.at("numa_nodes").at(0).get<unsigned>(), 1);
  assert_string_equal(g.at("os_devices").at(1).get<std::string>().c_str(), "nvml0");
  const dist::Json& n = json.at("nics").at(0);
  assert_true(n.at("pci_bus_id").is_null());
  assert_true(n.at("vendor_id").is_null());
  assert_true(n.at("numa_nodes").empty());
  assert_int_equal(n.at("ports").at(0).at("number").get<unsigned>(), 1);
  assert_string_equal(n.at("ports").at(0).at("state").get<std::string>().c_str(), "active");
}

// The mode in force is the bracketed word of the kernel's line.
void test_mode_in_force(void**) {
  assert_string_equal(dist::mode_in_force("always [madvise] never").c_str(), "madvise");
  assert_string_equal(dist::mode_in_force("[always] madvise never").c_str(), "always");
  assert_string_equal(dist::mode_in_force("always within_size advise [never] deny force").c_str(), "never");
  assert_true(dist::mode_in_force("always madvise never").empty());
  assert_true(dist::mode_in_force("").empty());
  assert_true(dist::mode_in_force("always [] never").empty());
  assert_true(dist::mode_in_force("always [madvise").empty());
}

#ifdef DIST_HAVE_HWLOC

dist::Topology discovered;

bool read_line(const std::string& path, std::string& line) {
  std::ifstream in(path);
  return static_cast<bool>(std::getline(in, line));
}

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}, as /sys/devices/system/*/online write it.
std::vector<unsigned> parse_ranges(const std::string& text) {
  std::vector<unsigned> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string range = text.substr(start, comma - start);
    const size_t dash = range.find('-');
    const unsigned first = static_cast<unsigned>(std::stoul(range.substr(0, dash)));
    const unsigned last = dash == std::string::npos ? first : static_cast<unsigned>(std::stoul(range.substr(dash + 1)));
    for (unsigned i = first; i <= last; ++i) out.push_back(i);
    start = comma + 1;
  }
  return out;
}

std::vector<unsigned> online_cpus() {
  std::string line;
  if (!read_line("/sys/devices/system/cpu/online", line)) return {};
  return parse_ranges(line);
}

// sysfs writes cache sizes as "2048K".
uint64_t parse_cache_size(const std::string& text) {
  uint64_t value = std::stoull(text);
  if (text.find('K') != std::string::npos) value *= 1024;
  if (text.find('M') != std::string::npos) value *= 1024 * 1024;
  return value;
}

int discover_once(void**) {
  try {
    discovered = dist::discover_topology();
  } catch (const std::exception& e) {
    print_error("discover_topology failed: %s\n", e.what());
    return -1;
  }
  return 0;
}

void test_pus_are_the_online_cpus(void**) {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  assert_true(online >= 1);
  assert_int_equal(discovered.pus, static_cast<unsigned>(online));
  const std::vector<unsigned> listed = online_cpus();
  if (!listed.empty()) assert_int_equal(discovered.pus, listed.size());
}

void test_allowed_pus_cover_this_process(void**) {
  cpu_set_t affinity;
  CPU_ZERO(&affinity);
  assert_int_equal(sched_getaffinity(0, sizeof affinity, &affinity), 0);
  const unsigned bound = static_cast<unsigned>(CPU_COUNT(&affinity));
  // The CPUs this thread may run on lie within those its cgroup allows.
  assert_true(bound >= 1);
  assert_true(discovered.allowed_pus >= bound);
  assert_true(discovered.allowed_pus <= discovered.pus);
}

void test_cores_and_packages(void**) {
  assert_true(discovered.cores >= 1);
  assert_true(discovered.cores <= discovered.pus);
  assert_true(discovered.packages.size() >= 1);
  unsigned package_cores = 0, package_pus = 0;
  for (const dist::CpuPackage& package : discovered.packages) {
    assert_true(package.cores >= 1);
    assert_true(package.pus >= package.cores);
    package_cores += package.cores;
    package_pus += package.pus;
  }
  assert_int_equal(package_cores, discovered.cores);
  assert_int_equal(package_pus, discovered.pus);

  // The kernel's package ids of the online CPUs, where it exposes them.
  std::set<std::string> package_ids;
  for (unsigned cpu : online_cpus()) {
    std::string id;
    if (!read_line("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/physical_package_id", id) ||
        id == "-1") {
      package_ids.clear();
      break;
    }
    package_ids.insert(id);
  }
  if (!package_ids.empty()) assert_int_equal(discovered.packages.size(), package_ids.size());
}

void test_numa_nodes(void**) {
  assert_true(discovered.numa_nodes.size() >= 1);
  std::string online;
  if (read_line("/sys/devices/system/node/online", online)) {
    assert_int_equal(discovered.numa_nodes.size(), parse_ranges(online).size());
  }
  uint64_t total = 0;
  for (const dist::NumaNode& node : discovered.numa_nodes) total += node.memory_bytes;
  assert_true(total > 0);
  assert_true(discovered.memory_bytes == total);
}

void test_caches_match_sysfs(void**) {
  unsigned previous_level = 0;
  for (const dist::CacheLevel& level : discovered.caches) {
    assert_true(level.level > previous_level);
    previous_level = level.level;
    assert_true(level.count >= 1);
    assert_false(level.sizes_bytes.empty());
  }
  // cpu0's data and unified caches, as the kernel reports them, must be among
  // the sizes hwloc found at that level.
  const std::string base = "/sys/devices/system/cpu/cpu0/cache/index";
  for (int index = 0; path_exists(base + std::to_string(index)); ++index) {
    const std::string dir = base + std::to_string(index);
    std::string level_text, type, size;
    if (!read_line(dir + "/level", level_text) || !read_line(dir + "/type", type) || !read_line(dir + "/size", size)) {
      continue;
    }
    if (type == "Instruction") continue;
    const unsigned level = static_cast<unsigned>(std::stoul(level_text));
    auto found = std::find_if(discovered.caches.begin(), discovered.caches.end(),
                              [level](const dist::CacheLevel& c) { return c.level == level; });
    assert_true(found != discovered.caches.end());
    const uint64_t bytes = parse_cache_size(size);
    assert_true(std::count(found->sizes_bytes.begin(), found->sizes_bytes.end(), bytes) == 1);
  }
}

void test_nics_are_real_devices(void**) {
  for (const dist::Nic& nic : discovered.nics) {
    assert_false(nic.name.empty());
    if (nic.kind == "network") {
      assert_true(path_exists("/sys/class/net/" + nic.name));
    } else {
      assert_string_equal(nic.kind.c_str(), "openfabrics");
      assert_true(path_exists("/sys/class/infiniband/" + nic.name));
    }
    if (!nic.location.pci_bus_id.empty()) {
      assert_true(path_exists("/sys/bus/pci/devices/" + nic.location.pci_bus_id));
    }
  }
}

void test_interfaces_include_loopback(void**) {
  if (!path_exists("/sys/class/net/lo")) skip();
  auto lo = std::find_if(discovered.interfaces.begin(), discovered.interfaces.end(),
                         [](const dist::NetworkInterface& i) { return i.name == "lo"; });
  assert_true(lo != discovered.interfaces.end());
  assert_true(lo->loopback);
  if (lo->up) {
    assert_true(std::count(lo->addresses.begin(), lo->addresses.end(), "127.0.0.1") == 1);
  }
  // Every reported interface is one the kernel has.
  for (const dist::NetworkInterface& interface : discovered.interfaces) {
    assert_true(path_exists("/sys/class/net/" + interface.name));
  }
}

// The pages are the OS's: the page size sysconf gives, the modes the kernel's
// files bracket (or none where it has no such file).
void test_pages_are_the_kernels(void**) {
  assert_true(discovered.pages.page_bytes == static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  std::string line;
  if (read_line("/sys/kernel/mm/transparent_hugepage/enabled", line)) {
    assert_true(line.find("[" + discovered.pages.huge_pages + "]") != std::string::npos);
    assert_false(discovered.pages.huge_pages.empty());
  } else {
    assert_true(discovered.pages.huge_pages.empty());
  }
  if (read_line("/sys/kernel/mm/transparent_hugepage/shmem_enabled", line)) {
    assert_true(line.find("[" + discovered.pages.shmem_huge_pages + "]") != std::string::npos);
  }
  const dist::Json json = dist::topology_to_json(discovered).at("pages");
  assert_true(json.at("page_bytes").get<uint64_t>() == discovered.pages.page_bytes);
  if (discovered.pages.huge_pages.empty()) {
    assert_true(json.at("transparent_huge_pages").is_null());
  } else {
    assert_string_equal(json.at("transparent_huge_pages").get<std::string>().c_str(),
                        discovered.pages.huge_pages.c_str());
  }
}

void test_json_carries_the_same_numbers(void**) {
  const dist::Json json = dist::topology_to_json(discovered);
  assert_int_equal(json.at("pus").get<unsigned>(), discovered.pus);
  assert_int_equal(json.at("allowed_pus").get<unsigned>(), discovered.allowed_pus);
  assert_int_equal(json.at("cores").get<unsigned>(), discovered.cores);
  assert_int_equal(json.at("packages").size(), discovered.packages.size());
  assert_int_equal(json.at("numa_nodes").size(), discovered.numa_nodes.size());
  assert_int_equal(json.at("gpus").size(), discovered.gpus.size());
  assert_int_equal(json.at("nics").size(), discovered.nics.size());
  assert_int_equal(json.at("interfaces").size(), discovered.interfaces.size());
  assert_true(json.at("memory_bytes").get<uint64_t>() == discovered.memory_bytes);
  assert_string_equal(json.at("hostname").get<std::string>().c_str(), discovered.hostname.c_str());
  for (size_t i = 0; i < discovered.packages.size(); ++i) {
    assert_int_equal(json["packages"][i].at("cores").get<unsigned>(), discovered.packages[i].cores);
    assert_int_equal(json["packages"][i].at("pus").get<unsigned>(), discovered.packages[i].pus);
  }
  for (size_t i = 0; i < discovered.numa_nodes.size(); ++i) {
    assert_true(json["numa_nodes"][i].at("memory_bytes").get<uint64_t>() == discovered.numa_nodes[i].memory_bytes);
  }
  for (size_t i = 0; i < discovered.caches.size(); ++i) {
    assert_int_equal(json["caches"][i].at("level").get<unsigned>(), discovered.caches[i].level);
    assert_int_equal(json["caches"][i].at("count").get<unsigned>(), discovered.caches[i].count);
    assert_true(json["caches"][i].at("sizes_bytes").get<std::vector<uint64_t>>() == discovered.caches[i].sizes_bytes);
  }
  for (size_t i = 0; i < discovered.nics.size(); ++i) {
    assert_string_equal(json["nics"][i].at("name").get<std::string>().c_str(), discovered.nics[i].name.c_str());
    const dist::Json& bus_id = json["nics"][i].at("pci_bus_id");
    assert_true(bus_id.is_null() ? discovered.nics[i].location.pci_bus_id.empty()
                                 : bus_id.get<std::string>() == discovered.nics[i].location.pci_bus_id);
  }
}

#else

void test_without_hwloc_is_unsupported(void**) {
  try {
    dist::discover_topology();
    fail_msg("discover_topology succeeded in a build without hwloc");
  } catch (const dist::Error& e) {
    assert_int_equal(static_cast<int>(e.status()), static_cast<int>(dist::Status::kUnsupported));
    assert_non_null(std::strstr(e.what(), "hwloc"));
  }
}
#endif  // DIST_HAVE_HWLOC

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
#ifdef DIST_HAVE_HWLOC
      cmocka_unit_test(test_pus_are_the_online_cpus),
      cmocka_unit_test(test_allowed_pus_cover_this_process),
      cmocka_unit_test(test_cores_and_packages),
      cmocka_unit_test(test_numa_nodes),
      cmocka_unit_test(test_caches_match_sysfs),
      cmocka_unit_test(test_nics_are_real_devices),
      cmocka_unit_test(test_interfaces_include_loopback),
      cmocka_unit_test(test_json_carries_the_same_numbers),
      cmocka_unit_test(test_pages_are_the_kernels),
#else
      cmocka_unit_test(test_without_hwloc_is_unsupported),
#endif
      cmocka_unit_test(test_no_gpus_without_an_nvidia_device),
      cmocka_unit_test(test_json_of_a_known_summary),
      cmocka_unit_test(test_mode_in_force),
  };
  #ifdef DIST_HAVE_HWLOC
  return cmocka_run_group_tests(tests, discover_once, nullptr);
#else
  return cmocka_run_group_tests(tests, nullptr, nullptr);
#endif
}
