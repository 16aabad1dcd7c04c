// Helpers shared by the data tests: fresh random seeds, scratch directories, the GPT-2 tokenizer.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "fp8lab/tokenizer.hpp"

namespace fp8lab::data::testing {

// A fresh seed per call, reported through SCOPED_TRACE by the caller so failures reproduce.
inline std::uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) | rd();
}

inline std::string random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xFF);
  return s;
}

// A new empty directory under the system temp dir, removed by the destructor.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    path_ = std::filesystem::temp_directory_path() /
            ("fp8lab_" + tag + "_" + std::to_string(fresh_seed()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The GPT-2 tokenizer from the fetched vocabulary (scripts/test fetches it), or nullptr.
inline const Tokenizer* gpt2_or_null() {
  static const std::unique_ptr<Tokenizer> tokenizer = []() -> std::unique_ptr<Tokenizer> {
    const auto dir = default_gpt2_vocab_dir();
    if (!std::filesystem::exists(dir / "encoder.json")) return nullptr;
    return make_gpt2_tokenizer(dir);
  }();
  return tokenizer.get();
}

#define FP8LAB_REQUIRE_GPT2(tok)                                                  \
  const ::fp8lab::data::Tokenizer* tok = ::fp8lab::data::testing::gpt2_or_null(); \
  if (tok == nullptr) {                                                           \
    GTEST_SKIP() << "GPT-2 vocabulary missing in " << default_gpt2_vocab_dir()    \
                 << ": run scripts/fetch-gpt2-vocab (scripts/test does)";         \
  }

inline std::string source_path(const std::string& relative) {
  return std::string(FP8LAB_SOURCE_DIR) + "/" + relative;
}

}  // namespace fp8lab::data::testing
