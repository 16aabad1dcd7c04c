// Claiming and locking output directories (see fp8lab/output_dir.hpp).
#include "fp8lab/output_dir.hpp"

#include "fp8lab/error.hpp"
#include "fp8lab/file_read.hpp"
#include "fp8lab/json_read.hpp"
#include "core/utc_time.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fp8lab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string host_name() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string("?");
}

void write_all(int fd, const std::string& text, const fs::path& path) {
  FP8LAB_CHECK_KIND(ErrorKind::io, ::ftruncate(fd, 0) == 0 && ::lseek(fd, 0, SEEK_SET) == 0,
                    "cannot rewrite '{}': {}", path.string(), std::strerror(errno));
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    FP8LAB_CHECK_KIND(ErrorKind::io, n > 0, "cannot write '{}': {}", path.string(),
                      std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

void write_marker(const fs::path& dir, std::string_view kind) {
  const json marker{{"created_by", "fp8lab"}, {"kind", kind}, {"created_utc", utc_now_iso8601()}};
  const fs::path path = dir / kOutputMarkerFile;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  FP8LAB_CHECK_KIND(ErrorKind::io, fd >= 0, "cannot create '{}': {}", path.string(),
                    std::strerror(errno));
  try {
    write_all(fd, marker.dump() + "\n", path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

// Claims `dir` for `kind`, or throws; creates and marks it when needed.
void claim(const fs::path& dir, std::string_view kind, const ClaimOptions& o) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (!fs::exists(st)) {
    fs::create_directories(dir);
    write_marker(dir, kind);
    return;
  }
  FP8LAB_CHECK(fs::is_directory(st), "output '{}' exists and is not a directory", dir.string());
  const std::string marked = output_marker_kind(dir);
  if (marked == kind) return;
  FP8LAB_CHECK(marked.empty() || o.force,
               "output directory '{}' holds fp8lab {} output, not {} output: choose another "
               "directory (or pass --force to reuse it)",
               dir.string(), marked, kind);
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name != kOutputLockFile) entries.push_back(name);
  }
  const bool older = o.written_by_older_fp8lab && o.written_by_older_fp8lab(dir);
  if (!entries.empty() && !older && !o.force) {
    std::string some;
    for (std::size_t i = 0; i < entries.size() && i < 3; ++i) some += (i ? ", " : "") + entries[i];
    FP8LAB_FAIL(ErrorKind::invalid_argument,
                "refusing to write {} output into '{}': fp8lab did not create it (no {} marker) "
                "and it holds {} entries ({}{}); choose a new or empty directory, or pass --force",
                kind, dir.string(), kOutputMarkerFile, entries.size(), some,
                entries.size() > 3 ? ", ..." : "");
  }
  write_marker(dir, kind);
}

// "pid 123 on host h, since 2026-01-01T00:00:00Z" from a lock file's text, or a fallback.
std::string describe_holder(const std::string& text) {
  const auto j = try_parse_json(text);
  if (!j || !j->is_object()) return "holder unknown";
  const auto field = [&](const char* key) {
    const json v = j->value(key, json());
    return v.is_string() ? v.get<std::string>().substr(0, 100) : json_excerpt(v);
  };
  return fmt::format("pid {} on host {}, since {}", field("pid"), field("host"),
                     field("started_utc"));
}

}  // namespace

std::string output_marker_kind(const fs::path& dir) {
  const fs::path path = dir / kOutputMarkerFile;
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(path, ec))) return {};
  const auto j = try_parse_json(read_file_bounded(path, 4096, "output marker"));
  return j && j->is_object() && j->value("created_by", "") == "fp8lab" ? j->value("kind", "")
                                                                       : std::string();
}

OutputDirectory::OutputDirectory(const fs::path& dir, std::string_view kind,
                                 const ClaimOptions& options)
    : dir_(dir) {
  claim(dir, kind, options);
  const fs::path path = dir / kOutputLockFile;
  lock_fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  FP8LAB_CHECK_KIND(ErrorKind::io, lock_fd_ >= 0, "cannot open lock file '{}': {}", path.string(),
                    std::strerror(errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(lock_fd_);
    lock_fd_ = -1;
    FP8LAB_CHECK_KIND(ErrorKind::io, err == EWOULDBLOCK, "cannot lock '{}': {}", path.string(),
                      std::strerror(err));
    std::string holder;
    try {
      holder = describe_holder(read_file_bounded(path, 4096, "lock file"));
    } catch (const Error&) {
      holder = "holder unknown";
    }
    FP8LAB_FAIL(ErrorKind::busy,
                "'{}' is in use by another fp8lab process ({}): wait for it to finish or stop "
                "it; two writers would interleave their files",
                dir.string(), holder);
  }
  try {
    const json holder{
        {"pid", ::getpid()}, {"host", host_name()}, {"started_utc", utc_now_iso8601()}};
    write_all(lock_fd_, holder.dump() + "\n", path);
  } catch (...) {
    ::close(lock_fd_);
    throw;
  }
}

OutputDirectory::~OutputDirectory() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock; the file stays (it is harmless)
}

void check_output_not_input(const fs::path& output, const std::vector<fs::path>& inputs,
                            std::string_view what) {
  std::error_code ec;
  const fs::path out = fs::weakly_canonical(fs::absolute(output), ec);
  for (const fs::path& input : inputs) {
    const fs::path in = fs::weakly_canonical(fs::absolute(input), ec);
    const bool same = out == in || fs::equivalent(output, input, ec);
    const auto inside = [](const fs::path& inner, const fs::path& outer) {
      const fs::path rel = inner.lexically_relative(outer);
      return !rel.empty() && *rel.begin() != "..";
    };
    FP8LAB_CHECK(!same && !inside(in, out) && !inside(out, in),
                 "{} '{}' would overwrite or lie inside the input '{}': choose an output apart "
                 "from every input",
                 what, output.string(), input.string());
  }
}

}  // namespace fp8lab
