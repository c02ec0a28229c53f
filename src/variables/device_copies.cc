#include "variables/device_copies.h"

#include <chrono>
#include <cstring>
#include <string>

namespace dist {
namespace {

using Deadline = std::chrono::steady_clock::time_point;

// Copies between caller memory and a device go through pinned memory: a copy
// from or to pageable memory waits for the stream inside CUDA, past any
// deadline. A copy not done by the deadline keeps its block (abandoned) and
// leaves the caller's memory alone.
void device_to_host(void* host, const void* data, int device, void* stream, size_t bytes, Deadline deadline,
                    const char* what) {
  PinnedBlock block(bytes);
  DeviceScope on(device);
  try {
    copy_to_host_async(block.data(), data, bytes, stream);
    StreamMark(stream).wait(deadline, what);
  } catch (...) {
    block.abandon();
    throw;
  }
  if (bytes > 0) std::memcpy(host, block.data(), bytes);
}

// `host` to every (data, device, stream) place, each on its stream, waited for.
struct DevicePlace {
  void* data;
  int device;
  void* stream;
};

void host_to_devices(const void* host, const std::vector<DevicePlace>& places, size_t bytes, Deadline deadline,
                     const char* what) {
  PinnedBlock block(bytes);
  if (bytes > 0) std::memcpy(block.data(), host, bytes);
  try {
    for (const DevicePlace& p : places) {
      DeviceScope on(p.device);
      copy_to_device_async(p.data, block.data(), bytes, p.stream);
    }
    for (const DevicePlace& p : places) {
      DeviceScope on(p.device);
      StreamMark(p.stream).wait(deadline, what);
    }
  } catch (...) {
    block.abandon();
    throw;
  }
}

}  // namespace

DeviceCopies::DeviceCopies(Strategy& strategy, const void* initial, size_t bytes)
    : strategy_(strategy), bytes_(bytes) {
  for (int i = 0; i < strategy.num_local_replicas(); ++i) {
    copies_.push_back(std::make_unique<DeviceBuffer>(strategy.replica_device(i), bytes));
  }
  try {
    store_all(initial);
  } catch (...) {
    for (auto& copy : copies_) copy->abandon();  // a copy into them may still run
    throw;
  }
}

void DeviceCopies::read(int i, const TensorRef& out) const {
  if (!out.on_device()) {
    load(i, out.data);
    return;
  }
  // On the output's stream, after the work its replica enqueued on the
  // copy; each stream named with its own device current.
  {
    DeviceScope on(device(i));
    StreamMark mark(stream(i));
    DeviceScope on_out(out.device);
    mark.hold(out.stream);
  }
  DeviceScope on(out.device);
  copy_between_devices_async(out.data, out.device, data(i), device(i), bytes_, out.stream);
  StreamMark(out.stream).wait(strategy_.deadline(), "reading a variable's copy into device memory");
}

void DeviceCopies::load(int i, void* host) const {
  device_to_host(host, data(i), device(i), stream(i), bytes_, strategy_.deadline(),
                 "reading a variable's copy on its GPU");
}

void DeviceCopies::store(int i, const void* host) {
  host_to_devices(host, {DevicePlace{data(i), device(i), stream(i)}}, bytes_, strategy_.deadline(),
                  "writing a variable's copy on its GPU");
}

void DeviceCopies::store_all(const void* host) {
  std::vector<DevicePlace> places;
  for (int i = 0; i < count(); ++i) places.push_back(DevicePlace{data(i), device(i), stream(i)});
  host_to_devices(host, places, bytes_, strategy_.deadline(), "writing a variable's copies on their GPUs");
}

const void* host_view(const TensorRef& value, std::vector<unsigned char>& staging, Deadline deadline) {
  if (!value.on_device()) return value.data;
  staging.resize(value.bytes());
  device_to_host(staging.data(), value.data, value.device, value.stream, value.bytes(), deadline,
                 "copying a value from device memory");
  return staging.data();
}

void write_out(Strategy& strategy, const void* host, const TensorRef& out) {
  if (!out.on_device()) {
    if (out.bytes() > 0) std::memcpy(out.data, host, out.bytes());
    return;
  }
  host_to_devices(host, {DevicePlace{out.data, out.device, out.stream}}, out.bytes(), strategy.deadline(),
                  "copying a result to device memory");
}

}  // namespace dist
