#include "data/document_source.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"

namespace fp8lab::data {
namespace fs = std::filesystem;

namespace {

bool matches_any(const std::vector<std::string>& globs, const std::string& name) {
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) {
    return ::fnmatch(g.c_str(), name.c_str(), 0) == 0;
  });
}

EntryKind kind_of(const SourceSpec& spec, const fs::path& file) {
  if (file.extension() == ".fp8pack") return EntryKind::pack;
  if (spec.format == "jsonl") return EntryKind::jsonl;
  if (spec.format == "text") return EntryKind::text;
  FP8LAB_CHECK(spec.format == "auto", "unknown input format '{}' (auto, text or jsonl)",
               spec.format);
  return file.extension() == ".jsonl" ? EntryKind::jsonl : EntryKind::text;
}

void add_file(const SourceSpec& spec, const fs::path& file, std::string name,
              std::vector<SourceEntry>& out) {
  const EntryKind kind = kind_of(spec, file);
  const auto size = static_cast<std::int64_t>(fs::file_size(file));
  // Packs and JSONL files are containers: the filters apply to the documents inside them.
  if (kind == EntryKind::text) {
    if (!name_selected(spec, name)) return;
    if (spec.max_file_bytes > 0 && size >= spec.max_file_bytes) return;
  }
  out.push_back({std::move(name), file, size, kind});
}

}  // namespace

bool name_selected(const SourceSpec& spec, const std::string& name) {
  if (!spec.include_globs.empty() && !matches_any(spec.include_globs, name)) return false;
  return !matches_any(spec.exclude_globs, name);
}

bool name_in_subtree(const std::string& name, const std::string& subtree) {
  std::string s = subtree;
  while (!s.empty() && s.back() == '/') s.pop_back();
  return name == s || (name.size() > s.size() && name.starts_with(s) && name[s.size()] == '/');
}

std::vector<SourceEntry> list_source_entries(const SourceSpec& spec) {
  FP8LAB_CHECK(!spec.inputs.empty(), "data: no inputs given");
  std::vector<SourceEntry> out;
  for (const fs::path& input : spec.inputs) {
    FP8LAB_CHECK_KIND(ErrorKind::io, fs::exists(input), "data: input {} does not exist",
                      input.string());
    if (!fs::is_directory(input)) {
      add_file(spec, input, input.filename().string(), out);
      continue;
    }
    for (const auto& entry : fs::recursive_directory_iterator(input)) {
      if (entry.is_symlink() || !entry.is_regular_file()) continue;
      add_file(spec, entry.path(), fs::relative(entry.path(), input).generic_string(), out);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const SourceEntry& a, const SourceEntry& b) { return a.name < b.name; });
  // Names order the documents and become file names on unpack: two of one name would make the
  // order depend on the sort and one file overwrite the other.
  const auto dup = std::adjacent_find(
      out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name == b.name; });
  FP8LAB_CHECK(dup == out.end(), "data: inputs {} and {} both give the document name '{}'",
               dup == out.end() ? "" : dup->file.string(),
               dup == out.end() ? "" : std::next(dup)->file.string(),
               dup == out.end() ? "" : dup->name);
  return out;
}

std::string read_whole_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  FP8LAB_CHECK_KIND(ErrorKind::io, in.good(), "cannot read {}", path.string());
  std::string text;
  in.seekg(0, std::ios::end);
  text.resize(static_cast<std::size_t>(in.tellg()));
  in.seekg(0);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  FP8LAB_CHECK_KIND(ErrorKind::io, !in.fail(), "reading {} failed", path.string());
  return text;
}

DocumentStream::DocumentStream(const SourceSpec& spec)
    : spec_(spec), entries_(list_source_entries(spec)) {
  for (const SourceEntry& e : entries_) total_bytes_ += e.size;
}

DocumentStream::~DocumentStream() = default;

bool DocumentStream::next_document(Document& doc) {
  while (true) {
    if (open_pack_) {
      if (open_pack_->next(doc)) {
        if (!name_selected(spec_, doc.name)) continue;
        if (spec_.max_file_bytes > 0 &&
            static_cast<std::int64_t>(doc.text.size()) >= spec_.max_file_bytes) {
          continue;
        }
        return true;
      }
      open_pack_.reset();
      done_bytes_ += open_entry_->size;
      open_entry_ = nullptr;
      continue;
    }
    if (open_entry_ != nullptr && open_entry_->kind == EntryKind::jsonl) {
      while (open_pos_ < open_text_.size()) {
        const std::size_t eol = std::min(open_text_.find('\n', open_pos_), open_text_.size());
        const std::string_view line(open_text_.data() + open_pos_, eol - open_pos_);
        open_pos_ = eol + 1;
        ++open_line_;
        if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
        const nlohmann::json j =
            parse_json(line, fmt::format("{} line {}", open_entry_->file.string(), open_line_));
        FP8LAB_CHECK_KIND(
            ErrorKind::format,
            j.is_object() && j.contains(spec_.jsonl_field) && j[spec_.jsonl_field].is_string(),
            "{} line {}: expected an object with a string field '{}'", open_entry_->file.string(),
            open_line_, spec_.jsonl_field);
        doc.name = open_entry_->name + ":" + std::to_string(open_line_);
        doc.text = j[spec_.jsonl_field].get<std::string>();
        return true;
      }
      done_bytes_ += open_entry_->size;
      open_text_.clear();
      open_entry_ = nullptr;
      continue;
    }
    if (next_entry_ >= entries_.size()) return false;
    const SourceEntry& e = entries_[next_entry_++];
    if (e.kind == EntryKind::text) {
      doc.name = e.name;
      doc.text = read_whole_file(e.file);
      done_bytes_ += e.size;
      return true;
    }
    open_entry_ = &e;
    if (e.kind == EntryKind::pack) {
      open_pack_ = std::make_unique<PackReader>(e.file);
    } else {
      open_text_ = read_whole_file(e.file);
      open_pos_ = 0;
      open_line_ = 0;
    }
  }
}

bool DocumentStream::next_batch(std::vector<Document>& out, std::size_t max_bytes) {
  std::size_t added = 0;
  Document doc;
  bool any = false;
  while (added < max_bytes && next_document(doc)) {
    added += doc.text.size();
    out.push_back(std::move(doc));
    doc = Document();
    any = true;
  }
  return any;
}

}  // namespace fp8lab::data
