// SHA-256 of buffers and files (OpenSSL), as lowercase hex. Used for weight hashes, data
// manifests and run records.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace fp8lab {

std::string sha256_hex(const void* data, std::size_t size);
inline std::string sha256_hex(std::string_view s) { return sha256_hex(s.data(), s.size()); }
std::string sha256_file(const std::filesystem::path& path);  // throws ErrorKind::io if unreadable

// Incremental hashing for data that arrives in pieces.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, std::size_t size);
  std::string hex_digest();  // finishes the hash; update() afterwards is an error
  std::array<std::uint8_t, 32> digest();  // the same, as bytes

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fp8lab
