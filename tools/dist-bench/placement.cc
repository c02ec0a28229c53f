#include "placement.h"

#include <string>

#include "base/status.h"

#ifdef DIST_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace dist::bench {

#ifdef DIST_HAVE_CUDA
namespace {

void check_cuda(cudaError_t error, const char* call) {
  if (error == cudaSuccess) return;
  (void)cudaGetLastError();
  fail(Status::kUnavailable, std::string("--memory cuda: ") + call + " failed (" + cudaGetErrorName(error) + ": " +
                                 cudaGetErrorString(error) + ")");
}

}  // namespace

Placement::Placement(bool cuda, int local_rank, size_t send_bytes, size_t recv_bytes) : cuda_(cuda) {
  if (!cuda_) return;
  check_cuda(cudaGetDeviceCount(&device_count_), "cudaGetDeviceCount");
  if (device_count_ <= 0) fail(Status::kUnavailable, "--memory cuda: no CUDA device is visible");
  device_ = (local_rank < 0 ? 0 : local_rank) % device_count_;
  // Before the stream and the buffers, which belong to the current device.
  check_cuda(cudaSetDevice(device_), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  stream_ = stream;
  check_cuda(cudaMalloc(&device_send_, send_bytes == 0 ? 1 : send_bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&device_recv_, recv_bytes == 0 ? 1 : recv_bytes), "cudaMalloc");
}

Placement::~Placement() {
  if (device_send_ != nullptr) (void)cudaFree(device_send_);
  if (device_recv_ != nullptr) (void)cudaFree(device_recv_);
  if (stream_ != nullptr) (void)cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

void Placement::upload(const void* host_send, size_t send_bytes, const void* host_recv, size_t recv_bytes) const {
  if (!cuda_) return;
  check_cuda(cudaMemcpy(device_send_, host_send, send_bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  check_cuda(cudaMemcpy(device_recv_, host_recv, recv_bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  // From pageable memory cudaMemcpy may return before its DMA ends, and the
  // non-blocking stream the collectives use does not wait for it.
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

void Placement::download(void* host_recv, size_t recv_bytes) const {
  if (!cuda_) return;
  check_cuda(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)), "cudaStreamSynchronize");
  check_cuda(cudaMemcpy(host_recv, device_recv_, recv_bytes, cudaMemcpyDeviceToHost), "cudaMemcpy from the device");
}

#else

Placement::Placement(bool cuda, int, size_t, size_t) : cuda_(cuda) {
  if (cuda_) fail(Status::kUnsupported, "--memory cuda: this dist-bench was built without CUDA");
}

Placement::~Placement() = default;

void Placement::upload(const void*, size_t, const void*, size_t) const {}
void Placement::download(void*, size_t) const {}

#endif

}  // namespace dist::bench
