// Where dist-bench's buffers live (--memory): host memory, or CUDA device
// memory used on a stream of its own. The result check fills and reads host
// arrays; with device memory they travel to the device before the checked
// call and back after it.
#pragma once

#include <cstddef>

#include <distribute/c_api.h>

namespace dist::bench {

class Placement {
 public:
  // Device buffers of these sizes when `cuda`; throws dist::Error where this
  // dist-bench was built without CUDA or the runtime refuses.
  Placement(bool cuda, size_t send_bytes, size_t recv_bytes);
  ~Placement();
  Placement(const Placement&) = delete;
  Placement& operator=(const Placement&) = delete;

  dist_memory_kind_t memory_kind() const { return cuda_ ? DIST_MEMORY_CUDA : DIST_MEMORY_HOST; }
  void* stream() const { return stream_; }
  // The buffers the collectives get: the host arrays themselves, or the device's.
  void* send(void* host_send) const { return cuda_ ? device_send_ : host_send; }
  void* recv(void* host_recv) const { return cuda_ ? device_recv_ : host_recv; }
  // Copies the host arrays to the device and back (nothing for host memory).
  void upload(const void* host_send, size_t send_bytes, const void* host_recv, size_t recv_bytes) const;
  void download(void* host_recv, size_t recv_bytes) const;

 private:
  bool cuda_ = false;
  void* device_send_ = nullptr;
  void* device_recv_ = nullptr;
  void* stream_ = nullptr;
};

}  // namespace dist::bench
