// What this machine is made of, as hwloc discovers it: packages, NUMA nodes,
// cores, PUs, caches, GPUs and NICs with their PCI locations and locality.
// Everything reported comes from hwloc except `interfaces`, which lists the OS
// network interfaces (getifaddrs) so that users choosing UCX_NET_DEVICES or a
// bind address see virtual and loopback interfaces too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "topology/memory_pages.h"
#include "topology/network_interfaces.h"

namespace dist {

struct CpuPackage {
  unsigned os_index = 0;
  std::string vendor;  // "GenuineIntel"; empty when hwloc does not say
  std::string model;   // "Intel(R) Xeon(R) ..."; empty when hwloc does not say
  unsigned cores = 0;
  unsigned pus = 0;
};

struct NumaNode {
  unsigned os_index = 0;
  uint64_t memory_bytes = 0;  // memory local to this node
  std::string cpus;           // the node's PUs as a list, "0-15,32-47"
};

// The data or unified caches of one level.
struct CacheLevel {
  unsigned level = 0;               // 1 (data), 2, 3, ...
  unsigned count = 0;               // instances in the machine
  std::vector<uint64_t> sizes_bytes;  // distinct instance sizes, ascending
};

// Where a PCI device sits and which CPUs and NUMA nodes are close to it.
struct DeviceLocation {
  std::string pci_bus_id;             // "0000:3b:00.0"; empty when not on PCI
  uint16_t vendor_id = 0;             // PCI ids; 0 when not on PCI
  uint16_t device_id = 0;
  std::string vendor;                 // a name when known, otherwise empty
  std::vector<unsigned> numa_nodes;   // the nearest NUMA nodes (os indexes)
  std::string local_cpus;             // the nearest PUs as a list, "0-15"
};

struct Gpu {
  std::string name;  // the model when hwloc knows it, otherwise empty
  DeviceLocation location;
  std::vector<std::string> os_devices;  // "cuda0", "nvml0", "card0", "renderD128", ...
};

struct NicPort {
  unsigned number = 0;
  std::string state;  // "active", "down", ... (InfiniBand port states)
};

struct Nic {
  std::string name;     // the OS name: "eth0", "ib0" (network) or "mlx5_0" (openfabrics)
  std::string kind;     // "network" or "openfabrics"
  std::string address;  // MAC address or node GUID; empty when unknown
  std::vector<NicPort> ports;  // openfabrics only
  DeviceLocation location;
};

struct Topology {
  std::string hostname;
  std::string hwloc_version;  // of the library that did the discovery
  uint64_t memory_bytes = 0;
  MemoryPages pages;  // from the OS, not hwloc
  std::vector<CpuPackage> packages;
  std::vector<NumaNode> numa_nodes;
  unsigned cores = 0;
  unsigned pus = 0;          // online PUs of the machine
  unsigned allowed_pus = 0;  // of those, the ones this process may use (cgroups)
  std::vector<CacheLevel> caches;
  std::vector<Gpu> gpus;  // PCI display controllers and accelerators
  std::vector<Nic> nics;  // network and OpenFabrics devices hwloc found on PCI
  std::vector<NetworkInterface> interfaces;
};

// Discovers the machine. Without hwloc in the build this fails with
// Status::kUnsupported; a failing hwloc call fails with Status::kSystem.
Topology discover_topology();

// The summary as JSON, with the field names above (sizes in bytes, unknown
// strings as null).
Json topology_to_json(const Topology& topology);

}  // namespace dist
