// Shared by the fuzz targets: write the input to a private temporary file.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

namespace fp8lab::fuzz {

inline std::filesystem::path write_temp(const std::uint8_t* data, std::size_t size,
                                        const char* suffix) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("fp8lab_fuzz_" + std::to_string(::getpid()) + suffix);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) __builtin_trap();
  if (size > 0) std::fwrite(data, 1, size, f);
  std::fclose(f);
  return path;
}

}  // namespace fp8lab::fuzz
