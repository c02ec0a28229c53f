#include "variables/device_copies.h"

#include <cstring>
#include <string>

namespace dist {
namespace {

// Waits for the work enqueued so far on `stream` (on `device`).
void finish(int device, void* stream, const Strategy& strategy, const char* what) {
  DeviceScope on(device);
  StreamMark(stream).wait(strategy.deadline(), what);
}

}  // namespace

DeviceCopies::DeviceCopies(Strategy& strategy, const void* initial, size_t bytes)
    : strategy_(strategy), bytes_(bytes) {
  for (int i = 0; i < strategy.num_local_replicas(); ++i) {
    copies_.push_back(std::make_unique<DeviceBuffer>(strategy.replica_device(i), bytes));
  }
  store_all(initial);
}

void DeviceCopies::read(int i, const TensorRef& out) const {
  if (!out.on_device()) {
    load(i, out.data);
    return;
  }
  // On the output's stream, after the work its replica enqueued on the copy.
  {
    DeviceScope on(device(i));
    StreamMark(stream(i)).hold(out.stream);
  }
  DeviceScope on(out.device);
  copy_between_devices_async(out.data, out.device, data(i), device(i), bytes_, out.stream);
  StreamMark(out.stream).wait(strategy_.deadline(), "reading a variable's copy into device memory");
}

void DeviceCopies::load(int i, void* host) const {
  DeviceScope on(device(i));
  copy_to_host_async(host, data(i), bytes_, stream(i));
  finish(device(i), stream(i), strategy_, "reading a variable's copy on its GPU");
}

void DeviceCopies::store(int i, const void* host) {
  DeviceScope on(device(i));
  copy_to_device_async(data(i), host, bytes_, stream(i));
  finish(device(i), stream(i), strategy_, "writing a variable's copy on its GPU");
}

void DeviceCopies::store_all(const void* host) {
  for (int i = 0; i < count(); ++i) {
    DeviceScope on(device(i));
    copy_to_device_async(data(i), host, bytes_, stream(i));
  }
  for (int i = 0; i < count(); ++i) finish(device(i), stream(i), strategy_, "writing a variable's copies on their GPUs");
}

const void* host_view(Strategy& strategy, const TensorRef& value, std::vector<unsigned char>& staging) {
  if (!value.on_device()) return value.data;
  staging.resize(value.bytes());
  DeviceScope on(value.device);
  copy_to_host_async(staging.data(), value.data, value.bytes(), value.stream);
  StreamMark(value.stream).wait(strategy.deadline(), "copying a value from device memory");
  return staging.data();
}

void write_out(Strategy& strategy, const void* host, const TensorRef& out) {
  if (!out.on_device()) {
    if (out.bytes() > 0) std::memcpy(out.data, host, out.bytes());
    return;
  }
  DeviceScope on(out.device);
  copy_to_device_async(out.data, host, out.bytes(), out.stream);
  StreamMark(out.stream).wait(strategy.deadline(), "copying a result to device memory");
}

}  // namespace dist
