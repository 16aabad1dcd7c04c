// `fp8lab data pack` / `unpack`: choosing the documents of a pack, and extracting one.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "data/document_source.hpp"
#include "fp8lab/data_prepare.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/sha256.hpp"

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

std::int64_t unpack_to_directory(const fs::path& pack, const fs::path& out_dir) {
  PackReader reader(pack);
  Document doc;
  std::int64_t count = 0;
  while (reader.next(doc)) {
    const fs::path rel(doc.name);
    const bool safe =
        rel.is_relative() && std::none_of(rel.begin(), rel.end(), [](const fs::path& part) {
          return part == ".." || part == ".";
        });
    FP8LAB_CHECK_KIND(ErrorKind::format, safe, "pack {}: document name '{}' would leave {}",
                      pack.string(), doc.name, out_dir.string());
    const fs::path target = out_dir / rel;
    fs::create_directories(target.parent_path());
    std::ofstream out(target, std::ios::binary | std::ios::trunc);
    out.write(doc.text.data(), static_cast<std::streamsize>(doc.text.size()));
    FP8LAB_CHECK_KIND(ErrorKind::io, out.good(), "cannot write {}", target.string());
    ++count;
  }
  return count;
}

}  // namespace fp8lab::data
