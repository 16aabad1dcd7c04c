// Reading a whole input file with a size limit, so that no input can make fp8lab read (and
// hold) more than it was built to: `quantize --in /dev/zero`, a FIFO or a 10 GB "config" file end
// in a clear error instead of exhausting memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace fp8lab {

// The bytes of the regular file `path`. `what` names the file's role in errors ("config file").
// ErrorKind::io when it cannot be opened or read; ErrorKind::invalid_argument when it is not a
// regular file (a device such as /dev/zero, a FIFO, a directory); ErrorKind::format when it
// holds more than `max_bytes`.
std::string read_file_bounded(const std::filesystem::path& path, std::uint64_t max_bytes,
                              std::string_view what);
// The same, as bytes (for binary files: safetensors, byte corpora).
std::vector<std::uint8_t> read_file_bytes_bounded(const std::filesystem::path& path,
                                                  std::uint64_t max_bytes, std::string_view what);

// A bound for files that may legitimately be huge (an optimizer state, a corpus): only devices,
// FIFOs and directories are refused, and a file cannot grow while it is read.
inline constexpr std::uint64_t kMaxBinaryFileBytes = std::uint64_t{1} << 40;  // 1 TiB

}  // namespace fp8lab
