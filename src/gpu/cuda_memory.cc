#include "gpu/cuda_memory.h"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <thread>

#include "base/status.h"
#include "gpu/cuda_device.h"

namespace dist {
namespace {

std::string runtime_words(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
}

// Throws `status` for a failed runtime call, naming it, and clears the error
// so that it does not stick to the next call in this thread.
void check(cudaError_t error, const char* call, Status status = Status::kSystem) {
  if (error == cudaSuccess) return;
  (void)cudaGetLastError();
  fail(status, std::string(call) + " failed (" + runtime_words(error) + ")");
}

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

// The blocks no call holds, by capacity. Never destroyed: blocks may come
// back from CUDA's threads while the process exits.
class PinnedPool {
 public:
  static PinnedPool& instance() {
    static auto* pool = new PinnedPool;
    return *pool;
  }

  // The smallest free block of at least `bytes`, or a new one.
  void* take(size_t bytes, size_t* capacity) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      auto found = free_.lower_bound(bytes);
      if (found != free_.end()) {
        *capacity = found->first;
        void* data = found->second;
        free_.erase(found);
        return data;
      }
    }
    void* data = nullptr;
    check(cudaHostAlloc(&data, bytes, cudaHostAllocPortable), "cudaHostAlloc of pinned staging memory",
          Status::kNoMemory);
    *capacity = bytes;
    return data;
  }

  void give_back(void* data, size_t capacity) {
    std::lock_guard<std::mutex> guard(mutex_);
    free_.emplace(capacity, data);
  }

 private:
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;
};

}  // namespace

int check_device_buffer(const void* data, size_t bytes, const std::string& name) {
  std::string why;
  if (cuda_device_count(&why) == 0) fail(Status::kUnavailable, name + " is CUDA memory but " + why);
  if (bytes == 0 && data == nullptr) return current_device();
  cudaPointerAttributes attributes{};
  const cudaError_t error = cudaPointerGetAttributes(&attributes, data);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    fail_invalid(name + ": data is not memory the CUDA runtime knows (" + runtime_words(error) + ")");
  }
  if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged) {
    fail_invalid(name + ": memory_kind is DIST_MEMORY_CUDA but data is host memory");
  }
  return attributes.device;
}

PinnedBlock::PinnedBlock(size_t bytes) { data_ = PinnedPool::instance().take(bytes == 0 ? 1 : bytes, &capacity_); }

PinnedBlock::~PinnedBlock() {
  if (data_ != nullptr) PinnedPool::instance().give_back(data_, capacity_);
}

PinnedBlock::PinnedBlock(PinnedBlock&& other) noexcept : data_(other.data_), capacity_(other.capacity_) {
  other.data_ = nullptr;
  other.capacity_ = 0;
}

PinnedBlock& PinnedBlock::operator=(PinnedBlock&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) PinnedPool::instance().give_back(data_, capacity_);
    data_ = other.data_;
    capacity_ = other.capacity_;
    other.data_ = nullptr;
    other.capacity_ = 0;
  }
  return *this;
}

void copy_to_host_async(void* host, const void* device, size_t bytes, void* stream) {
  if (bytes == 0) return;
  check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, as_stream(stream)),
        "cudaMemcpyAsync from the device to pinned memory");
}

void copy_to_device_async(void* device, const void* host, size_t bytes, void* stream) {
  if (bytes == 0) return;
  check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, as_stream(stream)),
        "cudaMemcpyAsync from pinned memory to the device");
}

int current_device() {
  int device = -1;
  check(cudaGetDevice(&device), "cudaGetDevice", Status::kUnavailable);
  return device;
}

StreamScratch::StreamScratch(size_t bytes, void* stream) : stream_(stream) {
  check(cudaGetDevice(&device_), "cudaGetDevice", Status::kUnavailable);
  check(cudaMallocAsync(&data_, bytes == 0 ? 1 : bytes, as_stream(stream)), "cudaMallocAsync", Status::kNoMemory);
}

StreamScratch::~StreamScratch() {
  int current = -1;
  const bool switch_device = cudaGetDevice(&current) == cudaSuccess && current != device_;
  if (switch_device) (void)cudaSetDevice(device_);
  (void)cudaFreeAsync(data_, as_stream(stream_));
  if (switch_device) (void)cudaSetDevice(current);
}

void copy_on_device_async(void* to, const void* from, size_t bytes, void* stream) {
  if (bytes == 0) return;
  check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, as_stream(stream)), "cudaMemcpyAsync on the device");
}

void copy_between_devices_async(void* to, int to_device, const void* from, int from_device, size_t bytes,
                                void* stream) {
  if (bytes == 0) return;
  if (to_device == from_device) {
    copy_on_device_async(to, from, bytes, stream);
    return;
  }
  check(cudaMemcpyPeerAsync(to, to_device, from, from_device, bytes, as_stream(stream)),
        "cudaMemcpyPeerAsync between devices");
}

DeviceBuffer::DeviceBuffer(int device, size_t bytes) : device_(device) {
  DeviceScope on(device);
  check(cudaMalloc(&data_, bytes == 0 ? 1 : bytes), "cudaMalloc", Status::kNoMemory);
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ == nullptr) return;
  int previous = -1;
  const bool restore = cudaGetDevice(&previous) == cudaSuccess && previous != device_;
  if (restore) (void)cudaSetDevice(device_);
  (void)cudaFree(data_);
  if (restore) (void)cudaSetDevice(previous);
}

void share_stream_ordered_memory(const std::vector<int>& devices) {
  for (int owner : devices) {
    cudaMemPool_t pool = nullptr;
    check(cudaDeviceGetDefaultMemPool(&pool, owner), "cudaDeviceGetDefaultMemPool");
    std::vector<cudaMemAccessDesc> grants;
    for (int peer : devices) {
      int can = 0;
      if (peer == owner || cudaDeviceCanAccessPeer(&can, peer, owner) != cudaSuccess || can == 0) continue;
      cudaMemAccessDesc grant{};
      grant.location.type = cudaMemLocationTypeDevice;
      grant.location.id = peer;
      grant.flags = cudaMemAccessFlagsProtReadWrite;
      grants.push_back(grant);
    }
    (void)cudaGetLastError();
    if (!grants.empty()) check(cudaMemPoolSetAccess(pool, grants.data(), grants.size()), "cudaMemPoolSetAccess");
  }
}

OwnedStream::OwnedStream(int device) : device_(device) {
  DeviceScope scope(device);
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  stream_ = stream;
}

OwnedStream::~OwnedStream() { (void)cudaStreamDestroy(as_stream(stream_)); }

DeviceScope::DeviceScope(int device) {
  check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != device) check(cudaSetDevice(device), "cudaSetDevice", Status::kUnavailable);
}

DeviceScope::~DeviceScope() {
  int now = -1;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_) (void)cudaSetDevice(previous_);
}

StreamMark::StreamMark(void* stream) {
  cudaEvent_t event = nullptr;
  check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  const cudaError_t error = cudaEventRecord(event, as_stream(stream));
  if (error != cudaSuccess) {
    (void)cudaEventDestroy(event);
    check(error, "cudaEventRecord on the buffer's stream");
  }
  event_ = event;
}

StreamMark::~StreamMark() { (void)cudaEventDestroy(static_cast<cudaEvent_t>(event_)); }

bool StreamMark::reached() const {
  const cudaError_t error = cudaEventQuery(static_cast<cudaEvent_t>(event_));
  if (error == cudaErrorNotReady) return false;
  check(error, "the buffer's stream (cudaEventQuery)");
  return true;
}

void StreamMark::wait(std::chrono::steady_clock::time_point deadline, const std::string& what) const {
  // Copies of small buffers take microseconds: poll at once, then nap, since
  // the stream may first run the caller's long kernels (cudaEventSynchronize
  // would wait past any deadline).
  for (unsigned polls = 0; !reached(); ++polls) {
    if (std::chrono::steady_clock::now() >= deadline) {
      fail(Status::kTimeout, what + " did not finish on its CUDA stream by the deadline");
    }
    if (polls > 200) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void StreamMark::hold(void* stream) const {
  check(cudaStreamWaitEvent(as_stream(stream), static_cast<cudaEvent_t>(event_), 0), "cudaStreamWaitEvent");
}

void launch_host_function(void* stream, void (*function)(void*), void* argument) {
  check(cudaLaunchHostFunc(as_stream(stream), function, argument), "cudaLaunchHostFunc");
}

}  // namespace dist
