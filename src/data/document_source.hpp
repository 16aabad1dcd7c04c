// Reading corpus documents in a deterministic order from files, directories, JSONL and packs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fp8lab/data_prepare.hpp"

namespace fp8lab::data {

struct Document {
  std::string name;
  std::string text;
};

enum class EntryKind { text, jsonl, pack };

struct SourceEntry {
  std::string name;  // relative path (directories) or file name (file inputs)
  std::filesystem::path file;
  std::int64_t size = 0;
  EntryKind kind = EntryKind::text;
};

// True when `name` passes the include/exclude globs of `spec`.
bool name_selected(const SourceSpec& spec, const std::string& name);
// True when `name` is `subtree` or lies under it ("sound" matches "sound/x.c", not "sounds.c").
bool name_in_subtree(const std::string& name, const std::string& subtree);

// Every input file after filters, sorted by name (packs keep their place by their own name).
std::vector<SourceEntry> list_source_entries(const SourceSpec& spec);

class PackReader;

// Documents of all entries in order; a JSONL file yields one document per non-empty line.
class DocumentStream {
 public:
  explicit DocumentStream(const SourceSpec& spec);
  ~DocumentStream();
  // Appends documents until about `max_bytes` of text were added; false when nothing is left.
  bool next_batch(std::vector<Document>& out, std::size_t max_bytes);
  std::int64_t total_input_bytes() const { return total_bytes_; }  // file sizes, for progress
  std::int64_t input_bytes_done() const { return done_bytes_; }

 private:
  bool next_document(Document& doc);
  SourceSpec spec_;
  std::vector<SourceEntry> entries_;
  std::size_t next_entry_ = 0;
  std::int64_t total_bytes_ = 0, done_bytes_ = 0;
  // The JSONL file or pack being read, if any.
  std::string open_text_;
  std::size_t open_pos_ = 0, open_line_ = 0;
  const SourceEntry* open_entry_ = nullptr;
  std::unique_ptr<PackReader> open_pack_;
};

// Pack files, format version 2 (pack.cpp; integers little-endian):
//   header, 104 bytes: "FP8PACK2", u64 documents, u64 text bytes, u64 payload bytes (the
//     decompressed stream), u64 compressed bytes (the file after the header), SHA-256 of the
//     payload, SHA-256 of the header's first 72 bytes;
//   then one zstd frame (with its content checksum) of the payload: records (u32 name length,
//     name, u64 text length, text, SHA-256 of the record's preceding bytes), ended by a u32 zero.
// Names are 1..4096 bytes without NUL and unique within a pack. The payload may be at most
// kPackMaxExpansion times the compressed bytes, so a small file cannot claim a large one.
// Version 1 packs (a bare zstd stream of "FP8PACK1" and unchecked records) are refused.
inline constexpr std::uint64_t kPackMaxExpansion = 1024;
class PackReader {
 public:
  explicit PackReader(const std::filesystem::path& path);
  ~PackReader();
  bool next(Document& doc);  // false at the end marker; a missing end marker is an error

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class PackWriter {
 public:
  PackWriter(const std::filesystem::path& path, int level, int threads);
  ~PackWriter();
  void add(const Document& doc);
  std::int64_t finish();  // writes the end marker, returns the file size

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string read_whole_file(const std::filesystem::path& path);

}  // namespace fp8lab::data
