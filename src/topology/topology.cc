// Topology discovery through hwloc 2.x, and the JSON form of its summary.
#include "topology/topology.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <type_traits>

#include "base/status.h"
#include "topology/host_identity.h"
#include "topology/network_interfaces.h"

#ifdef DIST_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace dist {

namespace {

Json text_or_null(const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); }

std::string hex4(uint16_t value) {
  char text[8];
  std::snprintf(text, sizeof text, "%04x", static_cast<unsigned>(value));
  return text;
}

Json location_to_json(const DeviceLocation& location) {
  Json out = Json::object();
  out["pci_bus_id"] = text_or_null(location.pci_bus_id);
  const bool on_pci = !location.pci_bus_id.empty();
  out["vendor_id"] = on_pci ? Json(hex4(location.vendor_id)) : Json(nullptr);
  out["device_id"] = on_pci ? Json(hex4(location.device_id)) : Json(nullptr);
  out["vendor"] = text_or_null(location.vendor);
  out["numa_nodes"] = location.numa_nodes;
  out["local_cpus"] = text_or_null(location.local_cpus);
  return out;
}

#ifdef DIST_HAVE_HWLOC

// PCI vendors seen on machines that run distributed training; others are
// reported by id only.
const char* known_pci_vendor(uint16_t vendor_id) {
  switch (vendor_id) {
    case 0x10de: return "NVIDIA";
    case 0x1002: return "AMD";
    case 0x1022: return "AMD";
    case 0x8086: return "Intel";
    case 0x15b3: return "Mellanox (NVIDIA)";
    case 0x14e4: return "Broadcom";
    case 0x1077: return "QLogic";
    case 0x1924: return "Solarflare";
    case 0x1d0f: return "Amazon";
    case 0x1ae0: return "Google";
    case 0x1af4: return "Red Hat (virtio)";
    case 0x1a03: return "ASPEED";
    case 0x1da3: return "Habana Labs";
    case 0x19e5: return "Huawei";
    default: return nullptr;
  }
}

std::string info_of(hwloc_obj_t object, const char* name) {
  const char* value = hwloc_obj_get_info_by_name(object, name);
  return value == nullptr ? std::string() : std::string(value);
}

struct TopologyDeleter {
  void operator()(hwloc_topology_t topology) const { hwloc_topology_destroy(topology); }
};
using TopologyHandle = std::unique_ptr<std::remove_pointer_t<hwloc_topology_t>, TopologyDeleter>;

[[noreturn]] void fail_hwloc(const char* call) {
  fail(Status::kSystem, std::string("topology: ") + call + " failed: " + std::strerror(errno));
}

TopologyHandle load_topology() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) fail_hwloc("hwloc_topology_init");
  TopologyHandle topology(raw);
  // The whole machine, not only the PUs a cgroup lets us use: the allowed ones
  // are reported separately.
  if (hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) != 0) {
    fail_hwloc("hwloc_topology_set_flags");
  }
  // GPUs and NICs are I/O objects, which hwloc leaves out unless asked.
  if (hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0) {
    fail_hwloc("hwloc_topology_set_io_types_filter");
  }
  if (hwloc_topology_load(raw) != 0) fail_hwloc("hwloc_topology_load");
  return topology;
}

std::string cpu_list(hwloc_const_bitmap_t set) {
  if (set == nullptr || hwloc_bitmap_iszero(set)) return {};
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, set) < 0 || text == nullptr) fail_hwloc("hwloc_bitmap_list_asprintf");
  std::string out(text);
  std::free(text);
  return out;
}

std::vector<unsigned> bitmap_indexes(hwloc_const_bitmap_t set) {
  std::vector<unsigned> out;
  if (set == nullptr) return out;
  for (int index = hwloc_bitmap_first(set); index >= 0; index = hwloc_bitmap_next(set, index)) {
    out.push_back(static_cast<unsigned>(index));
  }
  return out;
}

unsigned count_inside(hwloc_topology_t topology, hwloc_const_cpuset_t set, hwloc_obj_type_t type) {
  const int count = hwloc_get_nbobjs_inside_cpuset_by_type(topology, set, type);
  return count > 0 ? static_cast<unsigned>(count) : 0;
}

unsigned count_of(hwloc_topology_t topology, hwloc_obj_type_t type) {
  const int count = hwloc_get_nbobjs_by_type(topology, type);
  return count > 0 ? static_cast<unsigned>(count) : 0;
}

std::vector<CpuPackage> discover_packages(hwloc_topology_t topology) {
  std::vector<CpuPackage> packages;
  for (hwloc_obj_t package = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PACKAGE, nullptr);
       package != nullptr; package = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PACKAGE, package)) {
    CpuPackage out;
    out.os_index = package->os_index;
    out.vendor = info_of(package, "CPUVendor");
    out.model = info_of(package, "CPUModel");
    out.cores = count_inside(topology, package->cpuset, HWLOC_OBJ_CORE);
    out.pus = count_inside(topology, package->cpuset, HWLOC_OBJ_PU);
    packages.push_back(std::move(out));
  }
  return packages;
}

std::vector<NumaNode> discover_numa_nodes(hwloc_topology_t topology) {
  std::vector<NumaNode> nodes;
  for (hwloc_obj_t node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, nullptr); node != nullptr;
       node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node)) {
    NumaNode out;
    out.os_index = node->os_index;
    out.memory_bytes = node->attr->numanode.local_memory;
    out.cpus = cpu_list(node->cpuset);
    nodes.push_back(std::move(out));
  }
  return nodes;
}

std::vector<CacheLevel> discover_caches(hwloc_topology_t topology) {
  // Data and unified caches only; instruction caches do not matter for where
  // buffers should live.
  const hwloc_obj_type_t types[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE,
                                    HWLOC_OBJ_L5CACHE};
  std::vector<CacheLevel> levels;
  for (hwloc_obj_type_t type : types) {
    CacheLevel level;
    std::set<uint64_t> sizes;
    for (hwloc_obj_t cache = hwloc_get_next_obj_by_type(topology, type, nullptr); cache != nullptr;
         cache = hwloc_get_next_obj_by_type(topology, type, cache)) {
      level.level = cache->attr->cache.depth;
      ++level.count;
      sizes.insert(cache->attr->cache.size);
    }
    if (level.count == 0) continue;
    level.sizes_bytes.assign(sizes.begin(), sizes.end());
    levels.push_back(std::move(level));
  }
  return levels;
}

hwloc_obj_t pci_parent(hwloc_obj_t object) {
  for (hwloc_obj_t parent = object; parent != nullptr; parent = parent->parent) {
    if (parent->type == HWLOC_OBJ_PCI_DEVICE) return parent;
    if (parent->type != HWLOC_OBJ_OS_DEVICE) return nullptr;
  }
  return nullptr;
}

// `device` is a PCI device or an OS device; locality comes from the first
// ancestor that has CPUs.
DeviceLocation locate(hwloc_topology_t topology, hwloc_obj_t device) {
  DeviceLocation location;
  if (hwloc_obj_t pci = pci_parent(device)) {
    const auto& attr = pci->attr->pcidev;
    char bus_id[32];
    std::snprintf(bus_id, sizeof bus_id, "%04x:%02x:%02x.%01x", static_cast<unsigned>(attr.domain),
                  static_cast<unsigned>(attr.bus), static_cast<unsigned>(attr.dev),
                  static_cast<unsigned>(attr.func));
    location.pci_bus_id = bus_id;
    location.vendor_id = attr.vendor_id;
    location.device_id = attr.device_id;
    location.vendor = info_of(pci, "PCIVendor");
    if (location.vendor.empty()) {
      if (const char* known = known_pci_vendor(attr.vendor_id)) location.vendor = known;
    }
  }
  if (hwloc_obj_t anchor = hwloc_get_non_io_ancestor_obj(topology, device)) {
    location.numa_nodes = bitmap_indexes(anchor->nodeset);
    location.local_cpus = cpu_list(anchor->cpuset);
  }
  return location;
}

std::vector<hwloc_obj_t> os_devices_of(hwloc_obj_t pci) {
  std::vector<hwloc_obj_t> out;
  for (hwloc_obj_t child = pci->io_first_child; child != nullptr; child = child->next_sibling) {
    if (child->type == HWLOC_OBJ_OS_DEVICE) out.push_back(child);
  }
  return out;
}

bool is_gpu(hwloc_obj_t pci, const std::vector<hwloc_obj_t>& os_devices) {
  const unsigned base_class = pci->attr->pcidev.class_id >> 8;
  constexpr unsigned kDisplayController = 0x03;
  constexpr unsigned kProcessingAccelerator = 0x12;
  if (base_class == kDisplayController || base_class == kProcessingAccelerator) return true;
  return std::any_of(os_devices.begin(), os_devices.end(), [](hwloc_obj_t os_device) {
    const auto type = os_device->attr->osdev.type;
    return type == HWLOC_OBJ_OSDEV_GPU || type == HWLOC_OBJ_OSDEV_COPROC;
  });
}

std::vector<Gpu> discover_gpus(hwloc_topology_t topology) {
  std::vector<Gpu> gpus;
  for (hwloc_obj_t pci = hwloc_get_next_pcidev(topology, nullptr); pci != nullptr;
       pci = hwloc_get_next_pcidev(topology, pci)) {
    const std::vector<hwloc_obj_t> os_devices = os_devices_of(pci);
    if (!is_gpu(pci, os_devices)) continue;
    Gpu gpu;
    gpu.location = locate(topology, pci);
    // CUDA, NVML, ROCm SMI and OpenCL OS devices carry the model; the PCI
    // database name (when hwloc has one) is the fallback.
    for (hwloc_obj_t os_device : os_devices) {
      if (os_device->name != nullptr) gpu.os_devices.emplace_back(os_device->name);
      if (gpu.name.empty()) gpu.name = info_of(os_device, "GPUModel");
      if (gpu.location.vendor.empty()) gpu.location.vendor = info_of(os_device, "GPUVendor");
    }
    if (gpu.name.empty()) gpu.name = info_of(pci, "PCIDevice");
    if (gpu.name.empty() && pci->name != nullptr) gpu.name = pci->name;
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

std::string port_state_name(const std::string& value) {
  static const std::map<std::string, std::string> names = {
      {"1", "down"}, {"2", "init"}, {"3", "armed"}, {"4", "active"}, {"5", "active_defer"}};
  auto found = names.find(value);
  return found == names.end() ? value : found->second;
}

// OpenFabrics devices describe each port in infos named "Port<N>State".
std::vector<NicPort> openfabrics_ports(hwloc_obj_t os_device) {
  std::vector<NicPort> ports;
  for (unsigned i = 0; i < os_device->infos_count; ++i) {
    const std::string name = os_device->infos[i].name;
    const std::string prefix = "Port", suffix = "State";
    if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
    NicPort port;
    port.number = static_cast<unsigned>(std::strtoul(digits.c_str(), nullptr, 10));
    port.state = port_state_name(os_device->infos[i].value);
    ports.push_back(std::move(port));
  }
  std::sort(ports.begin(), ports.end(), [](const NicPort& a, const NicPort& b) { return a.number < b.number; });
  return ports;
}

std::vector<Nic> discover_nics(hwloc_topology_t topology) {
  std::vector<Nic> nics;
  for (hwloc_obj_t os_device = hwloc_get_next_osdev(topology, nullptr); os_device != nullptr;
       os_device = hwloc_get_next_osdev(topology, os_device)) {
    const auto type = os_device->attr->osdev.type;
    if (type != HWLOC_OBJ_OSDEV_NETWORK && type != HWLOC_OBJ_OSDEV_OPENFABRICS) continue;
    Nic nic;
    nic.name = os_device->name != nullptr ? os_device->name : "";
    if (type == HWLOC_OBJ_OSDEV_NETWORK) {
      nic.kind = "network";
      nic.address = info_of(os_device, "Address");
    } else {
      nic.kind = "openfabrics";
      nic.address = info_of(os_device, "NodeGUID");
      nic.ports = openfabrics_ports(os_device);
    }
    nic.location = locate(topology, os_device);
    nics.push_back(std::move(nic));
  }
  return nics;
}

std::string local_hostname(hwloc_topology_t topology) {
  std::string name = info_of(hwloc_get_root_obj(topology), "HostName");
  if (!name.empty()) return name;
  return kernel_hostname();
}

#endif  // DIST_HAVE_HWLOC

}  // namespace

Topology discover_topology() {
#ifdef DIST_HAVE_HWLOC
  TopologyHandle handle = load_topology();
  hwloc_topology_t topology = handle.get();
  hwloc_obj_t root = hwloc_get_root_obj(topology);
  Topology out;
  out.hostname = local_hostname(topology);
  out.hwloc_version = info_of(root, "hwlocVersion");
  out.memory_bytes = root->total_memory;
  out.packages = discover_packages(topology);
  out.numa_nodes = discover_numa_nodes(topology);
  out.cores = count_of(topology, HWLOC_OBJ_CORE);
  out.pus = count_of(topology, HWLOC_OBJ_PU);
  const int allowed = hwloc_bitmap_weight(hwloc_topology_get_allowed_cpuset(topology));
  out.allowed_pus = allowed > 0 ? static_cast<unsigned>(allowed) : 0;
  out.caches = discover_caches(topology);
  out.gpus = discover_gpus(topology);
  out.nics = discover_nics(topology);
  out.interfaces = list_interfaces();
  out.pages = discover_memory_pages();
  return out;
#else
  fail(Status::kUnsupported,
       "topology: this libdistribute was built without hwloc (install hwloc's development files and "
       "configure with DIST_WITH_HWLOC=ON)");
#endif
}

Json topology_to_json(const Topology& topology) {
  Json out = Json::object();
  out["hostname"] = text_or_null(topology.hostname);
  out["hwloc_version"] = text_or_null(topology.hwloc_version);
  out["memory_bytes"] = topology.memory_bytes;
  out["pages"] = {{"page_bytes", topology.pages.page_bytes},
                  {"transparent_huge_pages", text_or_null(topology.pages.huge_pages)},
                  {"shmem_huge_pages", text_or_null(topology.pages.shmem_huge_pages)}};

  Json packages = Json::array();
  for (const CpuPackage& package : topology.packages) {
    packages.push_back({{"os_index", package.os_index},
                        {"vendor", text_or_null(package.vendor)},
                        {"model", text_or_null(package.model)},
                        {"cores", package.cores},
                        {"pus", package.pus}});
  }
  out["packages"] = std::move(packages);

  Json nodes = Json::array();
  for (const NumaNode& node : topology.numa_nodes) {
    nodes.push_back(
        {{"os_index", node.os_index}, {"memory_bytes", node.memory_bytes}, {"cpus", text_or_null(node.cpus)}});
  }
  out["numa_nodes"] = std::move(nodes);

  out["cores"] = topology.cores;
  out["pus"] = topology.pus;
  out["allowed_pus"] = topology.allowed_pus;

  Json caches = Json::array();
  for (const CacheLevel& level : topology.caches) {
    caches.push_back({{"level", level.level}, {"count", level.count}, {"sizes_bytes", level.sizes_bytes}});
  }
  out["caches"] = std::move(caches);

  Json gpus = Json::array();
  for (const Gpu& gpu : topology.gpus) {
    Json entry = location_to_json(gpu.location);
    entry["name"] = text_or_null(gpu.name);
    entry["os_devices"] = gpu.os_devices;
    gpus.push_back(std::move(entry));
  }
  out["gpus"] = std::move(gpus);

  Json nics = Json::array();
  for (const Nic& nic : topology.nics) {
    Json entry = location_to_json(nic.location);
    entry["name"] = text_or_null(nic.name);
    entry["kind"] = nic.kind;
    entry["address"] = text_or_null(nic.address);
    Json ports = Json::array();
    for (const NicPort& port : nic.ports) ports.push_back({{"number", port.number}, {"state", port.state}});
    entry["ports"] = std::move(ports);
    nics.push_back(std::move(entry));
  }
  out["nics"] = std::move(nics);

  Json interfaces = Json::array();
  for (const NetworkInterface& interface : topology.interfaces) {
    interfaces.push_back({{"name", interface.name},
                          {"up", interface.up},
                          {"loopback", interface.loopback},
                          {"addresses", interface.addresses}});
  }
  out["interfaces"] = std::move(interfaces);
  return out;
}

}  // namespace dist
