// dist-info topology: the machine as hwloc sees it (packages, NUMA nodes, cores,
// PUs, caches, GPUs, NICs), plus the OS network interfaces.
#include <cstdint>
#include <cstdio>
#include <string>

#include "base/json.h"
#include "base/status.h"
#include "commands.h"
#include "topology/topology.h"

namespace dist::info {

namespace {

// 49152 -> "48 KiB", 110100480 -> "105 MiB", 4792201216 -> "4.46 GiB".
std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < sizeof units / sizeof units[0]) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  const bool whole = value == static_cast<double>(static_cast<uint64_t>(value));
  std::snprintf(text, sizeof text, whole ? "%.0f %s" : "%.2f %s", value, units[unit]);
  return text;
}

std::string or_unknown(const std::string& text) { return text.empty() ? "unknown" : text; }

std::string numa_list(const std::vector<unsigned>& nodes) {
  if (nodes.empty()) return "unknown";
  std::string out;
  for (unsigned node : nodes) out += (out.empty() ? "" : ",") + std::to_string(node);
  return out;
}

std::string pci_text(const DeviceLocation& location) {
  if (location.pci_bus_id.empty()) return "not on PCI";
  char ids[16];
  std::snprintf(ids, sizeof ids, "[%04x:%04x]", static_cast<unsigned>(location.vendor_id),
                static_cast<unsigned>(location.device_id));
  std::string out = "PCI " + location.pci_bus_id + " " + ids;
  if (!location.vendor.empty()) out += " " + location.vendor;
  return out;
}

std::string locality_text(const DeviceLocation& location) {
  return "NUMA " + numa_list(location.numa_nodes) + ", CPUs " + or_unknown(location.local_cpus);
}

void print_cpus(const Topology& topology) {
  std::printf("packages:    %zu\n", topology.packages.size());
  for (const CpuPackage& package : topology.packages) {
    std::string model = package.model.empty() ? "model unknown" : package.model;
    if (!package.vendor.empty()) model += " (" + package.vendor + ")";
    std::printf("  package %u: %s, %u cores, %u PUs\n", package.os_index, model.c_str(), package.cores, package.pus);
  }
  std::printf("NUMA nodes:  %zu\n", topology.numa_nodes.size());
  for (const NumaNode& node : topology.numa_nodes) {
    std::printf("  node %u: %s, CPUs %s\n", node.os_index, human_bytes(node.memory_bytes).c_str(),
                or_unknown(node.cpus).c_str());
  }
  std::printf("cores:       %u\n", topology.cores);
  std::printf("PUs:         %u (%u allowed for this process)\n", topology.pus, topology.allowed_pus);
  std::printf("caches:\n");
  if (topology.caches.empty()) std::printf("  (none reported)\n");
  for (const CacheLevel& level : topology.caches) {
    std::string sizes;
    for (uint64_t size : level.sizes_bytes) sizes += (sizes.empty() ? "" : " or ") + human_bytes(size);
    std::printf("  L%u%s: %u x %s\n", level.level, level.level == 1 ? "d" : "", level.count, sizes.c_str());
  }
}

void print_devices(const Topology& topology) {
  std::printf("GPUs:        %zu\n", topology.gpus.size());
  for (const Gpu& gpu : topology.gpus) {
    std::string devices;
    for (const std::string& name : gpu.os_devices) devices += (devices.empty() ? "" : ",") + name;
    std::printf("  %s: %s, %s, OS devices %s\n", or_unknown(gpu.name).c_str(), pci_text(gpu.location).c_str(),
                locality_text(gpu.location).c_str(), devices.empty() ? "none" : devices.c_str());
  }
  std::printf("NICs:        %zu\n", topology.nics.size());
  for (const Nic& nic : topology.nics) {
    std::string ports;
    for (const NicPort& port : nic.ports) ports += ", port " + std::to_string(port.number) + " " + port.state;
    std::printf("  %s (%s, %s%s): %s, %s\n", nic.name.c_str(), nic.kind.c_str(), or_unknown(nic.address).c_str(),
                ports.c_str(), pci_text(nic.location).c_str(), locality_text(nic.location).c_str());
  }
  std::printf("network interfaces (from the OS, not hwloc; may be virtual):\n");
  if (topology.interfaces.empty()) std::printf("  (none)\n");
  for (const NetworkInterface& interface : topology.interfaces) {
    std::string addresses;
    for (const std::string& address : interface.addresses) addresses += " " + address;
    std::printf("  %s: %s%s%s\n", interface.name.c_str(), interface.up ? "up" : "down",
                interface.loopback ? ", loopback" : "", addresses.c_str());
  }
}

}  // namespace

int topology_command(const Args& args) {
  bool json = false;
  for (const std::string& flag : args) {
    if (flag == "--json") {
      json = true;
    } else {
      fail_invalid("unknown flag " + quoted(flag) + " for dist-info topology (only --json)");
    }
  }
  const Topology topology = discover_topology();
  if (json) {
    std::printf("%s\n", dump_json(topology_to_json(topology), 2).c_str());
    return 0;
  }
  std::printf("machine:     %s (hwloc %s)\n", or_unknown(topology.hostname).c_str(),
              or_unknown(topology.hwloc_version).c_str());
  std::printf("memory:      %s\n", human_bytes(topology.memory_bytes).c_str());
  // The copies between processes run faster on huge pages (memory_pages.h).
  const MemoryPages& pages = topology.pages;
  std::printf("pages:       %s; transparent huge pages: %s, for shared memory: %s (from the OS)\n",
              human_bytes(pages.page_bytes).c_str(), or_unknown(pages.huge_pages).c_str(),
              or_unknown(pages.shmem_huge_pages).c_str());
  print_cpus(topology);
  print_devices(topology);
  return 0;
}

}  // namespace dist::info
