// Bounded whole-file reads (see fp8lab/file_read.hpp).
#include "fp8lab/file_read.hpp"

#include "fp8lab/error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace fp8lab {
namespace {

template <typename Bytes>
Bytes read_bounded(const std::filesystem::path& path, std::uint64_t max_bytes,
                   std::string_view what) {
  // O_NONBLOCK: opening a FIFO without a writer must not hang; it is refused below anyway.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  FP8LAB_CHECK_KIND(ErrorKind::io, fd >= 0, "cannot open {} '{}': {}", what, path.string(),
                    std::strerror(errno));
  Bytes bytes;
  try {
    struct stat st {};
    FP8LAB_CHECK_KIND(ErrorKind::io, ::fstat(fd, &st) == 0, "cannot stat {} '{}': {}", what,
                      path.string(), std::strerror(errno));
    FP8LAB_CHECK_KIND(ErrorKind::invalid_argument, S_ISREG(st.st_mode),
                      "{} '{}' is not a regular file (a device, FIFO or directory cannot be read "
                      "as one)",
                      what, path.string());
    const auto size = static_cast<std::uint64_t>(st.st_size);
    FP8LAB_CHECK_KIND(ErrorKind::format, size <= max_bytes,
                      "{} '{}' holds {} bytes, more than the limit of {} bytes", what,
                      path.string(), size, max_bytes);
    bytes.resize(static_cast<std::size_t>(size));
    std::size_t done = 0;
    while (true) {
      // One byte of room past the size seen: a file that grew since fstat is noticed.
      if (done == bytes.size()) {
        FP8LAB_CHECK_KIND(ErrorKind::format, done < max_bytes + 1 && done <= size,
                          "{} '{}' grew past {} bytes while being read", what, path.string(), size);
        bytes.resize(done + 1);
      }
      const ssize_t n =
          ::read(fd, reinterpret_cast<char*>(bytes.data()) + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      FP8LAB_CHECK_KIND(ErrorKind::io, n >= 0, "cannot read {} '{}': {}", what, path.string(),
                        std::strerror(errno));
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    bytes.resize(done);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return bytes;
}

}  // namespace

std::string read_file_bounded(const std::filesystem::path& path, std::uint64_t max_bytes,
                              std::string_view what) {
  return read_bounded<std::string>(path, max_bytes, what);
}

std::vector<std::uint8_t> read_file_bytes_bounded(const std::filesystem::path& path,
                                                  std::uint64_t max_bytes, std::string_view what) {
  return read_bounded<std::vector<std::uint8_t>>(path, max_bytes, what);
}

}  // namespace fp8lab
