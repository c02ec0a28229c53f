// How the GPU replicas of one worker combine their values (TF's
// CrossDeviceOps), and where REDUCTION_TO_ONE_DEVICE reduces: which one a
// strategy's options and its devices give, by TF's rule where they leave it
// to the library. The numbers are the public DIST_CROSS_DEVICE_OPS_* values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace dist {

enum class CrossDeviceOps : int32_t {
  kAuto = 0,
  kNcclAllReduce = 1,
  kHierarchicalCopy = 2,
  kReductionToOneDevice = 3,
};

// Throws invalid-argument naming the value when it is not one.
CrossDeviceOps cross_device_ops_from_int(int32_t value);
// TF's class names: "NcclAllReduce", "HierarchicalCopyAllReduce", ...
const char* name(CrossDeviceOps ops);

// Where REDUCTION_TO_ONE_DEVICE sums: host memory, or local replica i's GPU.
struct ReduceTarget {
  bool host = false;
  int replica = 0;
};

// What a strategy's devices allow of its options.
struct ReplicaDevices {
  int count = 1;
  bool gpus = false;         // the replicas are CUDA devices this build drives
  bool nccl_usable = false;  // NCCL opened (and not turned off by DIST_NCCL=0)
};

// The ops in effect: `requested` as given, or AUTO resolved by TF's rule
// (NCCL_ALL_REDUCE when every replica is a GPU and NCCL is usable, else
// REDUCTION_TO_ONE_DEVICE). Throws invalid-argument for ops the replicas
// cannot run (NCCL or hierarchical copies of CPU devices), unsupported for
// NCCL_ALL_REDUCE without a usable NCCL.
CrossDeviceOps resolve_cross_device_ops(CrossDeviceOps requested, const ReplicaDevices& devices);

// Parses reduce_to_device ("CPU:0", "GPU:1", TF's "/cpu:0", "/device:GPU:1";
// unset: the first replica's device, as TF) against the replicas. Throws
// invalid-argument naming the text when it is no such device.
ReduceTarget parse_reduce_target(const std::optional<std::string>& text, const ReplicaDevices& devices);

}  // namespace dist
