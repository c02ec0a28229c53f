// Little helpers to write and read fixed-width fields of messages and files.
// ByteReader checks every read against the bytes that are there, so a short or
// garbled input is an invalid-argument error naming `what`, never a read past
// the end. Fields are in the host's byte order (the magic numbers of the
// messages and files catch a peer that differs).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "base/status.h"

namespace dist::ps {

class ByteWriter {
 public:
  template <typename T>
  void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    append(&value, sizeof value);
  }
  void put_string(const std::string& text) {
    put(static_cast<uint32_t>(text.size()));
    append(text.data(), text.size());
  }
  void append(const void* data, size_t bytes) {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + bytes);
  }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

class ByteReader {
 public:
  ByteReader(const void* data, size_t bytes, std::string what)
      : data_(static_cast<const uint8_t*>(data)), size_(bytes), what_(std::move(what)) {}

  template <typename T>
  T get(const char* field) {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, take(sizeof value, field), sizeof value);
    return value;
  }
  std::string get_string(const char* field, size_t max_bytes) {
    uint32_t length = get<uint32_t>(field);
    if (length > max_bytes) {
      fail_invalid(what_ + ": " + field + " is " + std::to_string(length) + " bytes, more than " +
                   std::to_string(max_bytes));
    }
    return std::string(reinterpret_cast<const char*>(take(length, field)), length);
  }
  // A pointer to the next `bytes` bytes, which are consumed.
  const uint8_t* take(size_t bytes, const char* field) {
    if (bytes > size_ - offset_) {
      fail_invalid(what_ + ": truncated at " + field + " (needs " + std::to_string(bytes) + " bytes, " +
                   std::to_string(size_ - offset_) + " left)");
    }
    const uint8_t* p = data_ + offset_;
    offset_ += bytes;
    return p;
  }
  size_t remaining() const { return size_ - offset_; }
  size_t offset() const { return offset_; }
  // Fails unless every byte was consumed (trailing garbage is an error too).
  void expect_end() const {
    if (offset_ != size_) {
      fail_invalid(what_ + ": " + std::to_string(size_ - offset_) + " unexpected bytes at the end");
    }
  }
  const std::string& what() const { return what_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
  std::string what_;
};

}  // namespace dist::ps
