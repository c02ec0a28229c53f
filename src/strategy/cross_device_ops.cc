#include "strategy/cross_device_ops.h"

#include <cctype>

#include "base/status.h"

namespace dist {

CrossDeviceOps cross_device_ops_from_int(int32_t value) {
  if (value < 0 || value > static_cast<int32_t>(CrossDeviceOps::kReductionToOneDevice)) {
    fail_invalid("cross_device_ops " + std::to_string(value) +
                 " is not one of AUTO, NCCL_ALL_REDUCE, HIERARCHICAL_COPY, REDUCTION_TO_ONE_DEVICE");
  }
  return static_cast<CrossDeviceOps>(value);
}

const char* name(CrossDeviceOps ops) {
  switch (ops) {
    case CrossDeviceOps::kAuto: return "AUTO";
    case CrossDeviceOps::kNcclAllReduce: return "NcclAllReduce";
    case CrossDeviceOps::kHierarchicalCopy: return "HierarchicalCopyAllReduce";
    case CrossDeviceOps::kReductionToOneDevice: return "ReductionToOneDevice";
  }
  return "invalid";
}

CrossDeviceOps resolve_cross_device_ops(CrossDeviceOps requested, const ReplicaDevices& devices) {
  if (requested == CrossDeviceOps::kAuto) {
    return devices.gpus && devices.nccl_usable ? CrossDeviceOps::kNcclAllReduce : CrossDeviceOps::kReductionToOneDevice;
  }
  if (requested != CrossDeviceOps::kReductionToOneDevice && !devices.gpus) {
    fail_invalid(std::string("cross_device_ops ") + name(requested) +
                 " combines GPU replicas, and this strategy's replicas are CPU devices");
  }
  if (requested == CrossDeviceOps::kNcclAllReduce && !devices.nccl_usable) {
    fail(Status::kUnsupported, "cross_device_ops NcclAllReduce needs NCCL, which this process cannot use "
                               "(dist-info build says why; DIST_NCCL=0 turns it off)");
  }
  return requested;
}

namespace {

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// "7" -> 7; -1 for anything but a short run of digits.
int parse_index(const std::string& digits) {
  if (digits.empty() || digits.size() > 4) return -1;
  int value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace

ReduceTarget parse_reduce_target(const std::optional<std::string>& text, const ReplicaDevices& devices) {
  ReduceTarget target;
  if (!text) {
    target.host = !devices.gpus;
    return target;
  }
  std::string rest = lowercase(*text);
  for (const char* prefix : {"/device:", "/"}) {
    if (rest.rfind(prefix, 0) == 0) {
      rest = rest.substr(std::string(prefix).size());
      break;
    }
  }
  const auto bad = [&](const std::string& why) -> ReduceTarget {
    fail_invalid("reduce_to_device \"" + *text + "\" " + why);
  };
  const size_t colon = rest.find(':');
  if (colon == std::string::npos) return bad("is not CPU:0 or GPU:<replica>");
  const std::string type = rest.substr(0, colon);
  const int index = parse_index(rest.substr(colon + 1));
  if (type == "cpu" && index == 0) {
    target.host = true;
    return target;
  }
  if (type == "gpu" && index >= 0) {
    if (!devices.gpus) return bad("names a GPU, and this strategy's replicas are CPU devices");
    if (index >= devices.count) {
      return bad("is not a device of this strategy (" + std::to_string(devices.count) + " GPU replicas)");
    }
    target.replica = index;
    return target;
  }
  return bad("is not CPU:0 or GPU:<replica>");
}

}  // namespace dist
