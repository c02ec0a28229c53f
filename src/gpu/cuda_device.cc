#include "gpu/cuda_device.h"

#include <cuda_runtime_api.h>

#include <cstring>

#include "base/status.h"

namespace dist {
namespace {

std::string runtime_words(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
}

}  // namespace

int cuda_device_count(std::string* why) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    // Without a driver the runtime reports cudaErrorInsufficientDriver here
    // and keeps it as the last error: clear it for later callers.
    (void)cudaGetLastError();
    if (why != nullptr) *why = "cudaGetDeviceCount failed (" + runtime_words(error) + ")";
    return 0;
  }
  if (count == 0 && why != nullptr) *why = "the CUDA runtime sees no device";
  return count;
}

void use_cuda_device(int device) {
  std::string why;
  const int count = cuda_device_count(&why);
  if (device < 0 || device >= count) {
    fail(Status::kUnavailable, "CUDA device " + std::to_string(device) + " is not available: " +
                                   (count == 0 ? why : std::to_string(count) + " device(s) visible"));
  }
  const cudaError_t error = cudaSetDevice(device);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    fail(Status::kUnavailable, "cudaSetDevice(" + std::to_string(device) + ") failed (" + runtime_words(error) + ")");
  }
}

DeviceIdentity cuda_device_identity(int device) {
  cudaDeviceProp properties{};
  const cudaError_t error = cudaGetDeviceProperties(&properties, device);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    fail(Status::kUnavailable,
         "cudaGetDeviceProperties(" + std::to_string(device) + ") failed (" + runtime_words(error) + ")");
  }
  DeviceIdentity identity;
  static_assert(sizeof properties.uuid.bytes == sizeof identity.bytes, "a CUDA UUID is 16 bytes");
  std::memcpy(identity.bytes, properties.uuid.bytes, sizeof identity.bytes);
  return identity;
}

}  // namespace dist
