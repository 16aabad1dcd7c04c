// Atomic file replacement with fsync (POSIX).
#include "fp8lab/checkpoint.hpp"
#include "fp8lab/error.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fp8lab {
namespace {

[[noreturn]] void fail_io(const char* what, const std::filesystem::path& path) {
  FP8LAB_FAIL(ErrorKind::io, "{} '{}': {}", what, path.string(), std::strerror(errno));
}

}  // namespace

void fsync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) fail_io("cannot open directory", dir);
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail_io("cannot fsync directory", dir);
  }
  ::close(fd);
}

void write_file_atomic(const std::filesystem::path& path, const void* data, std::size_t size) {
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_io("cannot create", tmp);
  const auto* p = static_cast<const char*>(data);
  std::size_t left = size;
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      fail_io("cannot write", tmp);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail_io("cannot fsync", tmp);
  }
  if (::close(fd) != 0) fail_io("cannot close", tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail_io("cannot rename temp file onto", path);
  fsync_directory(path.has_parent_path() ? path.parent_path() : std::filesystem::path("."));
}

}  // namespace fp8lab
