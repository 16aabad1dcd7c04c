// Corpus preparation: documents from text files, directories, JSONL or packs -> a deterministic
// train/held-out split -> token shards (llm.c layout) + byte-length sidecars + a manifest.
//
// Determinism: documents are visited in byte order of their names (the path relative to the
// input directory; "<file>:<line>" for JSONL; the stored name for packs), so the same sources
// always give byte-identical shards and manifest, on any machine and thread count.
// With a separator (GPT-2), every document is preceded by <|endoftext|>, as llm.c does.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace fp8lab::data {

struct SourceSpec {
  // Files, directories (walked recursively), JSONL files and .fp8pack packs.
  std::vector<std::filesystem::path> inputs;
  // fnmatch(3) patterns on names ('*' also matches '/'); empty include = everything.
  std::vector<std::string> include_globs;
  std::vector<std::string> exclude_globs;
  std::int64_t max_file_bytes = 0;  // > 0: drop files of this size or larger
  // How a plain file is read: "auto" (JSONL when its name ends in .jsonl), "text" or "jsonl".
  std::string format = "auto";
  std::string jsonl_field = "text";
};

struct SplitSpec {
  // "hash": a document is held out when the first 8 bytes of SHA-256(text), as a fraction of
  // 2^64, fall below heldout_fraction. "subtree": held out when its name lies under one of
  // heldout_subtrees ("sound" holds out "sound/..."), so near-duplicates cannot straddle the split.
  std::string kind = "hash";
  double heldout_fraction = 0.005;
  std::vector<std::string> heldout_subtrees;
  std::string train_name = "train";
  std::string heldout_name = "val";
  // subtree split only, > 0: of the documents outside the held-out subtrees, also hold out
  // those whose hash fraction (as for "hash") falls below this, as a second held-out split named
  // in_distribution_name: an in-distribution validation set beside the subtree's.
  double in_distribution_fraction = 0.0;
  std::string in_distribution_name = "val_id";
};

struct PrepareOptions {
  SourceSpec source;
  SplitSpec split;
  std::string tokenizer = "gpt2";
  std::filesystem::path vocab_dir;  // empty: default_gpt2_vocab_dir()
  std::filesystem::path out_dir;
  std::int64_t shard_tokens = 100'000'000;  // tokens per shard (the last one holds the rest)
  int threads = 0;                          // 0: all hardware threads
  bool progress = true;                     // progress lines on stderr
  // out_dir must be new, empty or made by an earlier prepare (fp8lab/output_dir.hpp); force:
  // accept any directory (its files named like shards or manifest.json are replaced).
  bool force = false;
};

struct SplitSummary {
  std::string name;
  std::int64_t documents = 0;
  std::int64_t bytes = 0;   // UTF-8 bytes of the documents' text
  std::int64_t tokens = 0;  // including separators
  std::int64_t shards = 0;
};

struct PrepareSummary {
  std::vector<SplitSummary> splits;  // train, held-out, then the in-distribution split if any
  std::int64_t documents = 0;
  std::int64_t bytes = 0;
  double seconds = 0;
  std::filesystem::path manifest;
};

// Writes <out_dir>/<split>_NNNNNN.bin (+ .bytes) and <out_dir>/manifest.json. Throws
// fp8lab::Error on unreadable inputs, malformed JSONL (naming file and line) or an empty corpus.
PrepareSummary prepare_corpus(const PrepareOptions& options);

// A pack: the selected documents (names and text) in one zstd-compressed file, to carry a corpus
// to a machine without network and prepare it there (`prepare` reads packs as inputs).
struct PackOptions {
  SourceSpec source;
  std::filesystem::path out;  // written beside itself and renamed; never one of the inputs
  // Sampling for a size limit (plain text inputs only): documents are taken in SHA-256(name)
  // order (a uniform, deterministic sample of the tree) until their text reaches the budget;
  // those under keep_subtrees (e.g. the held-out "sound") and the others have separate budgets.
  // <= 0: no limit. The pack stores the chosen documents in name order.
  std::int64_t budget_bytes = 0;
  std::vector<std::string> keep_subtrees;
  std::int64_t keep_budget_bytes = 0;
  int level = 19;  // zstd level
  int threads = 0;
  bool progress = true;
};

struct PackSummary {
  std::int64_t documents = 0;
  std::int64_t bytes = 0;             // text bytes packed
  std::int64_t compressed_bytes = 0;  // pack file size
  std::string sha256;                 // of the pack file
  double seconds = 0;
};

PackSummary write_pack(const PackOptions& options);

// Extracts a pack's documents as files under out_dir (names are relative paths). out_dir is
// claimed as fp8lab/output_dir.hpp describes (force: any directory). Refused: names that would
// leave out_dir, duplicate names, and writing through a symbolic link or into a file with other
// hard links. Returns the number of documents.
std::int64_t unpack_to_directory(const std::filesystem::path& pack,
                                 const std::filesystem::path& out_dir, bool force = false);

}  // namespace fp8lab::data
