#include "base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/status.h"

namespace dist {
namespace {

[[noreturn]] void fail_errno(const std::string& what) { fail(Status::kSystem, what + ": " + std::strerror(errno)); }

std::string directory_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

void fsync_directory(const std::string& directory) {
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail_errno("cannot open directory '" + directory + "'");
  int rc = ::fsync(fd);
  int error = errno;
  ::close(fd);
  errno = error;
  if (rc != 0) fail_errno("fsync of directory '" + directory + "'");
}

}  // namespace

AtomicFile::AtomicFile(std::string path, Digest digest) : path_(std::move(path)) {
  if (digest == Digest::kSha256) digest_.emplace();
  temporary_ = path_ + ".tmp." + std::to_string(::getpid());
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail_errno("cannot create '" + temporary_ + "'");
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(temporary_.c_str());
  }
}

void AtomicFile::write(const void* data, size_t bytes) {
  if (digest_) digest_->update(data, bytes);
  const char* p = static_cast<const char*>(data);
  size_t left = bytes;
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_errno("cannot write '" + temporary_ + "'");
    p += n;
    left -= static_cast<size_t>(n);
  }
  bytes_ += bytes;
}

std::string AtomicFile::commit() {
  if (::fsync(fd_) != 0) fail_errno("fsync of '" + temporary_ + "'");
  if (::close(fd_) != 0) {
    fd_ = -1;
    ::unlink(temporary_.c_str());
    fail_errno("close of '" + temporary_ + "'");
  }
  fd_ = -1;
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) {
    int error = errno;
    ::unlink(temporary_.c_str());
    errno = error;
    fail_errno("cannot rename '" + temporary_ + "' to '" + path_ + "'");
  }
  fsync_directory(directory_of(path_));
  return digest_ ? digest_->hex() : std::string();
}

void make_directories(const std::string& path) {
  if (path.empty()) fail_invalid("a directory to create is named by an empty path");
  std::string prefix;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    prefix = path.substr(0, slash);
    start = slash + 1;
    if (prefix.empty()) continue;
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) fail_errno("cannot create directory '" + prefix + "'");
  }
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    fail(Status::kSystem, "'" + path + "' is not a directory");
  }
}

void write_file_atomically(const std::string& path, const std::string& text) {
  AtomicFile file(path);
  file.write(text.data(), text.size());
  file.commit();
}

std::string read_small_file(const std::string& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_errno("cannot open '" + path + "'");
  std::string text;
  char chunk[4096];
  while (true) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      errno = error;
      fail_errno("cannot read '" + path + "'");
    }
    if (n == 0) break;
    text.append(chunk, static_cast<size_t>(n));
    if (text.size() > max_bytes) {
      ::close(fd);
      fail_invalid("'" + path + "' is larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return text;
}

}  // namespace dist
