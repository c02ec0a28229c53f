#include "base/sha256.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/status.h"

namespace dist {

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  if (context_ == nullptr || EVP_DigestInit_ex(context_, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(context_);
    fail(Status::kInternal, "SHA-256: cannot initialise the digest");
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(context_); }

void Sha256::update(const void* data, size_t bytes) {
  if (bytes != 0 && EVP_DigestUpdate(context_, data, bytes) != 1) fail(Status::kInternal, "SHA-256: update failed");
}

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context_, digest, &length) != 1) fail(Status::kInternal, "SHA-256: final failed");
  static const char kDigits[] = "0123456789abcdef";
  std::string text;
  for (unsigned int i = 0; i < length; ++i) {
    text += kDigits[digest[i] >> 4];
    text += kDigits[digest[i] & 15];
  }
  return text;
}

std::string sha256_of_file(const std::string& path, uint64_t* bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(Status::kSystem, "cannot open '" + path + "': " + std::strerror(errno));
  Sha256 digest;
  std::vector<char> chunk(1 << 20);
  uint64_t total = 0;
  while (true) {
    ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      fail(Status::kSystem, "cannot read '" + path + "': " + std::strerror(error));
    }
    if (n == 0) break;
    digest.update(chunk.data(), static_cast<size_t>(n));
    total += static_cast<uint64_t>(n);
  }
  ::close(fd);
  *bytes = total;
  return digest.hex();
}

}  // namespace dist
