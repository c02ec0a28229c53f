// Incremental SHA-256 (OpenSSL): checkpoint checksums, files written whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

typedef struct evp_md_ctx_st EVP_MD_CTX;

namespace dist {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, size_t bytes);
  // Lowercase hex of the digest; the object is spent afterwards.
  std::string hex();

 private:
  EVP_MD_CTX* context_;
};

// The digest of a whole file, read in chunks; `bytes` receives its size.
// Throws kSystem naming the file when it cannot be read.
std::string sha256_of_file(const std::string& path, uint64_t* bytes);

}  // namespace dist
