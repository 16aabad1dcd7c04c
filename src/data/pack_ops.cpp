// `fp8lab data pack` / `unpack`: choosing the documents of a pack, and extracting one.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "data/document_source.hpp"
#include "fp8lab/data_prepare.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"
#include "fp8lab/output_dir.hpp"
#include "core/sha256.hpp"

namespace fp8lab::data {
namespace fs = std::filesystem;

namespace {

// Adds entries of `pool` in SHA-256(name) order (a uniform, deterministic sample of the tree)
// until their text reaches `budget` bytes (budget <= 0: all of them).
void take_sample(std::vector<SourceEntry>& pool, std::int64_t budget,
                 std::vector<SourceEntry>& chosen) {
  std::vector<std::pair<std::string, std::size_t>> order;
  for (std::size_t i = 0; i < pool.size(); ++i) order.emplace_back(sha256_hex(pool[i].name), i);
  std::sort(order.begin(), order.end());
  std::int64_t total = 0;
  for (const auto& [hash, i] : order) {
    if (budget > 0 && total >= budget) break;
    total += pool[i].size;
    chosen.push_back(std::move(pool[i]));
  }
}

// The documents to pack, back in name order: a sample of those under keep_subtrees (up to
// keep_budget_bytes) and a sample of the others (up to budget_bytes).
std::vector<SourceEntry> choose_entries(const PackOptions& o) {
  std::vector<SourceEntry> entries = list_source_entries(o.source);
  if (o.budget_bytes <= 0 && o.keep_budget_bytes <= 0) return entries;
  for (const SourceEntry& e : entries) {
    FP8LAB_CHECK(e.kind == EntryKind::text,
                 "pack: a byte budget needs plain text inputs; {} is a JSONL file or pack",
                 e.file.string());
  }
  std::vector<SourceEntry> kept, rest, chosen;
  for (SourceEntry& e : entries) {
    const bool keep = std::any_of(o.keep_subtrees.begin(), o.keep_subtrees.end(),
                                  [&](const std::string& s) { return name_in_subtree(e.name, s); });
    (keep ? kept : rest).push_back(std::move(e));
  }
  take_sample(kept, o.keep_budget_bytes, chosen);
  take_sample(rest, o.budget_bytes, chosen);
  std::sort(chosen.begin(), chosen.end(),
            [](const SourceEntry& a, const SourceEntry& b) { return a.name < b.name; });
  return chosen;
}

}  // namespace

PackSummary write_pack(const PackOptions& o) {
  check_output_not_input(o.out, o.source.inputs, "pack --out");
  const auto start = std::chrono::steady_clock::now();
  const int threads =
      o.threads > 0 ? o.threads : static_cast<int>(std::thread::hardware_concurrency());
  const std::vector<SourceEntry> entries = choose_entries(o);
  FP8LAB_CHECK(!entries.empty(), "pack: no documents selected");
  std::int64_t planned = 0;
  for (const SourceEntry& e : entries) planned += e.size;
  PackSummary summary;
  {
    PackWriter writer(o.out, o.level, threads);
    SourceSpec spec = o.source;  // a stream over exactly the chosen files
    DocumentStream all(spec);
    std::vector<Document> batch;
    std::size_t next = 0;
    std::int64_t last_report = 0;
    while (all.next_batch(batch, 64 << 20)) {
      for (Document& d : batch) {
        // Documents come in name order, as do the chosen entries: keep the chosen ones.
        while (next < entries.size() && entries[next].name < d.name) ++next;
        if (next >= entries.size() || entries[next].name != d.name) continue;
        writer.add(d);
        ++summary.documents;
        summary.bytes += static_cast<std::int64_t>(d.text.size());
      }
      batch.clear();
      if (o.progress && summary.bytes - last_report >= (64 << 20)) {
        last_report = summary.bytes;
        std::fprintf(stderr, "pack: %.1f / %.1f MB\n", summary.bytes / 1e6, planned / 1e6);
      }
    }
    summary.compressed_bytes = writer.finish();
  }
  summary.sha256 = sha256_file(o.out);
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

namespace {

// A pack's document name as a path under the output directory, or an error: relative, no empty,
// "." or ".." component, not fp8lab's own marker or lock file.
std::vector<std::string> name_components(const fs::path& pack, const std::string& name) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = name.find('/', start);
    parts.push_back(name.substr(start, slash == std::string::npos ? slash : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  const bool safe =
      std::none_of(parts.begin(), parts.end(),
                   [](const std::string& p) { return p.empty() || p == "." || p == ".."; }) &&
      parts.front() != kOutputMarkerFile && parts.front() != kOutputLockFile;
  FP8LAB_CHECK_KIND(ErrorKind::format, safe,
                    "pack {}: document name {} is not a plain relative path (empty, '.' or "
                    "'..' components, a leading '/', or fp8lab's own files)",
                    pack.string(), json_excerpt(nlohmann::json(name)));
  return parts;
}

// Writes `text` to out_dir/parts..., never through a symbolic link and never into a file with
// other hard links: every directory is opened with O_NOFOLLOW, relative to its parent's handle,
// so neither a link already in the tree nor one made meanwhile can lead the write outside.
void write_beneath(int root_fd, const fs::path& out_dir, const std::vector<std::string>& parts,
                   const std::string& text) {
  const std::string shown = (out_dir / parts.back()).string();
  int dir_fd = ::dup(root_fd);
  FP8LAB_CHECK_KIND(ErrorKind::io, dir_fd >= 0, "cannot open {}: {}", out_dir.string(),
                    std::strerror(errno));
  const auto fail = [&](const char* what, const std::string& part, int err) {
    ::close(dir_fd);
    FP8LAB_FAIL(err == ELOOP || err == ENOTDIR || err == EMLINK ? ErrorKind::format : ErrorKind::io,
                "unpack into {}: {} '{}' failed: {} (a symbolic link, or a file where a "
                "directory is needed, is never followed)",
                out_dir.string(), what, part, std::strerror(err));
  };
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (::mkdirat(dir_fd, parts[i].c_str(), 0755) != 0 && errno != EEXIST)
      fail("creating directory", parts[i], errno);
    const int next =
        ::openat(dir_fd, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) fail("opening directory", parts[i], errno);
    ::close(dir_fd);
    dir_fd = next;
  }
  const int fd = ::openat(dir_fd, parts.back().c_str(),
                          O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) fail("creating file", parts.back(), errno);
  ::close(dir_fd);
  struct stat st {};
  const bool plain = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1;
  bool ok = plain && ::ftruncate(fd, 0) == 0;
  for (std::size_t done = 0; ok && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  const int err = errno;
  ok = (::close(fd) == 0) && ok;
  FP8LAB_CHECK_KIND(plain ? ErrorKind::io : ErrorKind::format, ok, "unpack: cannot write {}: {}",
                    shown,
                    plain ? std::strerror(err) : "it exists and is not a plain file of its own");
}

}  // namespace

std::int64_t unpack_to_directory(const fs::path& pack, const fs::path& out_dir, bool force) {
  check_output_not_input(out_dir, {pack}, "unpack --out");
  ClaimOptions claim;
  claim.force = force;
  const OutputDirectory output(out_dir, "unpack", claim);
  const int root_fd = ::open(out_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  FP8LAB_CHECK_KIND(ErrorKind::io, root_fd >= 0, "cannot open {}: {}", out_dir.string(),
                    std::strerror(errno));
  PackReader reader(pack);
  Document doc;
  std::set<std::string> seen;
  std::int64_t count = 0;
  try {
    while (reader.next(doc)) {
      const std::vector<std::string> parts = name_components(pack, doc.name);
      FP8LAB_CHECK_KIND(ErrorKind::format, seen.insert(doc.name).second,
                        "pack {}: two documents are named {}", pack.string(),
                        json_excerpt(nlohmann::json(doc.name)));
      write_beneath(root_fd, out_dir, parts, doc.text);
      ++count;
    }
  } catch (...) {
    ::close(root_fd);
    throw;
  }
  ::close(root_fd);
  return count;
}

}  // namespace fp8lab::data
