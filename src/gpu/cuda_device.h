// The CUDA devices this process can use, asked of the runtime without leaving
// an error set behind for the next CUDA user in the process.
#pragma once

#include <string>

namespace dist {

// Devices visible to this process (CUDA_VISIBLE_DEVICES applied); 0 when
// there are none, with `why` saying what the runtime answered.
int cuda_device_count(std::string* why = nullptr);

// The 16 bytes that name `device` across every process and host (its UUID):
// two ranks on one GPU see the same bytes. Throws kUnavailable.
struct DeviceIdentity {
  unsigned char bytes[16] = {};
};
DeviceIdentity cuda_device_identity(int device);

// Makes `device` current for this thread; throws kUnavailable naming the
// device and the runtime's answer when it cannot.
void use_cuda_device(int device);

}  // namespace dist
