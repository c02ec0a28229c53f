// Where dist-bench's buffers live (--memory): host memory, or CUDA device
// memory used on a stream of its own. The result check fills and reads host
// arrays; with device memory they travel to the device before the checked
// call and back after it.
//
// With device memory each rank takes one GPU: device (local rank % visible
// devices), made the calling thread's current device before anything is
// allocated (the library's calls on CUDA memory need the buffers' device to be
// current). Ranks of a host then sit on distinct GPUs while there are enough,
// which the library's NCCL path needs; ranks that share a GPU get its staged
// path.
#pragma once

#include <cstddef>

#include <distribute/c_api.h>

namespace dist::bench {

class Placement {
 public:
  // Device buffers of these sizes when `cuda`, on device local_rank % the
  // visible devices; throws dist::Error where this dist-bench was built without
  // CUDA, no device is visible or the runtime refuses.
  Placement(bool cuda, int local_rank, size_t send_bytes, size_t recv_bytes);
  ~Placement();
  Placement(const Placement&) = delete;
  Placement& operator=(const Placement&) = delete;

  dist_memory_kind_t memory_kind() const { return cuda_ ? DIST_MEMORY_CUDA : DIST_MEMORY_HOST; }
  void* stream() const { return stream_; }
  // The CUDA device the buffers are on, and how many were visible (-1 and 0
  // for host memory).
  int device() const { return device_; }
  int device_count() const { return device_count_; }
  // The buffers the collectives get: the host arrays themselves, or the device's.
  void* send(void* host_send) const { return cuda_ ? device_send_ : host_send; }
  void* recv(void* host_recv) const { return cuda_ ? device_recv_ : host_recv; }
  // Copies the host arrays to the device and back (nothing for host memory).
  void upload(const void* host_send, size_t send_bytes, const void* host_recv, size_t recv_bytes) const;
  void download(void* host_recv, size_t recv_bytes) const;

 private:
  bool cuda_ = false;
  int device_ = -1;
  int device_count_ = 0;
  void* device_send_ = nullptr;
  void* device_recv_ = nullptr;
  void* stream_ = nullptr;
};

}  // namespace dist::bench
