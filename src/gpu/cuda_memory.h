// What the staged path needs of CUDA: whether a buffer is device memory,
// pinned host memory to stage it in, copies and host functions enqueued on
// the caller's stream. A stream is passed as void* (a cudaStream_t; null is
// the legacy default stream), as the C ABI carries it.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace dist {

// Throws unless `data` (`bytes` bytes) is memory a CUDA device of this
// process holds (device or managed memory): kUnavailable naming the
// runtime's answer where no device is usable, kInvalidArgument naming `name`
// for host memory or a pointer the runtime does not know. Returns the device
// it lies on (the calling thread's current device for an empty buffer
// without data).
int check_device_buffer(const void* data, size_t bytes, const std::string& name);

// Page-locked host memory, so that copies to and from the device run
// asynchronously at full speed. Taken from a process-wide pool (cudaHostAlloc
// costs milliseconds) and given back to it on destruction without any CUDA
// call, so that a block may be dropped on CUDA's own host-function thread,
// where CUDA calls are not allowed. The pool keeps every block it made.
class PinnedBlock {
 public:
  PinnedBlock() = default;
  // At least `bytes` bytes (uninitialized); throws kNoMemory.
  explicit PinnedBlock(size_t bytes);
  ~PinnedBlock();
  PinnedBlock(PinnedBlock&& other) noexcept;
  PinnedBlock& operator=(PinnedBlock&& other) noexcept;
  PinnedBlock(const PinnedBlock&) = delete;
  PinnedBlock& operator=(const PinnedBlock&) = delete;

  unsigned char* data() const { return static_cast<unsigned char*>(data_); }
  // Forgets the block without giving it back: for one a copy may still be
  // writing or reading, which no later call may then be handed.
  void abandon() {
    data_ = nullptr;
    capacity_ = 0;
  }

 private:
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

// Copies of `bytes` enqueued on `stream`; nothing for 0 bytes. Throw kSystem
// naming the runtime's error.
void copy_to_host_async(void* host, const void* device, size_t bytes, void* stream);
void copy_to_device_async(void* device, const void* host, size_t bytes, void* stream);

// The calling thread's current device.
int current_device();

// Device memory for the length of some stream work: allocated and freed in
// stream order (cudaMallocAsync), so no call waits for the stream. On the
// current device, with `stream` one of its streams; freed there whatever
// device is current then (a null stream is that device's legacy stream).
class StreamScratch {
 public:
  StreamScratch(size_t bytes, void* stream);  // throws kNoMemory
  ~StreamScratch();                           // frees in stream order
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
  void* stream_ = nullptr;
  int device_ = -1;
};

// A copy between two device buffers, enqueued on `stream`.
void copy_on_device_async(void* to, const void* from, size_t bytes, void* stream);

// A copy between buffers on two devices (or one), enqueued on `stream`; CUDA
// goes through host memory where the two have no peer access.
void copy_between_devices_async(void* to, int to_device, const void* from, int from_device, size_t bytes,
                                void* stream);

// Device memory of its own on `device` (cudaMalloc), for state that lives
// across calls: a variable's copy on a GPU replica, an optimizer's slots.
class DeviceBuffer {
 public:
  DeviceBuffer(int device, size_t bytes);  // uninitialized; throws kNoMemory
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return data_; }
  int device() const { return device_; }
  // Forgets the memory without freeing it: for memory a copy that missed its
  // deadline may still write (cudaFree would wait for that copy, unbounded).
  void abandon() { data_ = nullptr; }

 private:
  void* data_ = nullptr;
  int device_ = -1;
};

// Lets each of `devices` map the stream-ordered memory (cudaMallocAsync's
// default pool) of every other, where the hardware has peer access between
// them, so that copies and kernels may read one GPU's scratch from another:
// pool memory ignores cudaDeviceEnablePeerAccess. Best effort: a pair without
// peer access is left to CUDA's copies. Throws kSystem when a grant fails.
void share_stream_ordered_memory(const std::vector<int>& devices);

// A non-blocking stream of its own on `device` (the replicas' streams of a
// strategy on GPUs). Throws kSystem.
class OwnedStream {
 public:
  explicit OwnedStream(int device);
  ~OwnedStream();
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  void* get() const { return stream_; }
  int device() const { return device_; }

 private:
  void* stream_ = nullptr;
  int device_ = -1;
};

// Makes `device` current for this thread while it lives, and the device that
// was current before again afterwards: the caller's choice is theirs.
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

// A CUDA event recorded on a stream: the point its work had reached. Made and
// destroyed on threads that may call CUDA (not in a host function).
class StreamMark {
 public:
  explicit StreamMark(void* stream);  // records at once; throws kSystem
  ~StreamMark();
  StreamMark(const StreamMark&) = delete;
  StreamMark& operator=(const StreamMark&) = delete;

  // Whether the stream got there; throws kSystem for a stream that failed.
  bool reached() const;
  // Waits until reached; throws kTimeout at `deadline`, saying `what` did
  // not finish on its stream.
  void wait(std::chrono::steady_clock::time_point deadline, const std::string& what) const;
  // Holds the work enqueued on `stream` from now on until this mark is
  // reached (cudaStreamWaitEvent): ordering across streams, no host wait.
  void hold(void* stream) const;

 private:
  void* event_ = nullptr;
};

// Enqueues function(argument) on `stream`: CUDA runs it on a thread of its
// own once the work before it on the stream is done, and holds the work
// after it until it returns. It must not call CUDA.
void launch_host_function(void* stream, void (*function)(void*), void* argument);

}  // namespace dist
