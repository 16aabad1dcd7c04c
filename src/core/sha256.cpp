#include "core/sha256.hpp"

#include "fp8lab/error.hpp"

#include <openssl/evp.h>

#include <fstream>
#include <vector>

namespace fp8lab {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = nullptr;
  bool finished = false;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  FP8LAB_CHECK_KIND(ErrorKind::internal, impl_->ctx != nullptr, "EVP_MD_CTX_new failed");
  FP8LAB_CHECK_KIND(ErrorKind::internal, EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) == 1,
                    "SHA-256 init failed");
}

Sha256::~Sha256() { EVP_MD_CTX_free(impl_->ctx); }

void Sha256::update(const void* data, std::size_t size) {
  FP8LAB_CHECK_KIND(ErrorKind::internal, !impl_->finished, "Sha256::update after hex_digest");
  FP8LAB_CHECK_KIND(ErrorKind::internal, EVP_DigestUpdate(impl_->ctx, data, size) == 1,
                    "SHA-256 update failed");
}

std::array<std::uint8_t, 32> Sha256::digest() {
  FP8LAB_CHECK_KIND(ErrorKind::internal, !impl_->finished, "Sha256 digest taken twice");
  std::array<std::uint8_t, 32> out{};
  unsigned int len = 0;
  FP8LAB_CHECK_KIND(ErrorKind::internal,
                    EVP_DigestFinal_ex(impl_->ctx, out.data(), &len) == 1 && len == out.size(),
                    "SHA-256 final failed");
  impl_->finished = true;
  return out;
}

std::string Sha256::hex_digest() {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (std::uint8_t b : digest()) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

std::string sha256_hex(const void* data, std::size_t size) {
  Sha256 h;
  h.update(data, size);
  return h.hex_digest();
}

std::string sha256_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  FP8LAB_CHECK_KIND(ErrorKind::io, in.good(), "cannot open '{}' for hashing", path.string());
  Sha256 h;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h.update(buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  FP8LAB_CHECK_KIND(ErrorKind::io, in.eof(), "read error while hashing '{}'", path.string());
  return h.hex_digest();
}

}  // namespace fp8lab
