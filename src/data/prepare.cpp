// `fp8lab data prepare`: documents -> split -> token shards + byte-length sidecars + manifest.
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <optional>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/document_source.hpp"
#include "fp8lab/data_prepare.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"
#include "fp8lab/output_dir.hpp"
#include "core/sha256.hpp"
#include "data/shard.hpp"
#include "fp8lab/tokenizer.hpp"

namespace fp8lab::data {
namespace fs = std::filesystem;

namespace {

using Json = nlohmann::ordered_json;

// Text read per round; encoded in parallel, then written in order.
constexpr std::size_t kBatchBytes = std::size_t{256} << 20;

// Accumulates one split's tokens and cuts them into shards of exactly shard_tokens.
class SplitWriter {
 public:
  SplitWriter(fs::path dir, std::string name, std::int64_t shard_tokens)
      : dir_(std::move(dir)), shard_tokens_(shard_tokens) {
    summary_.name = std::move(name);
    // Reserve a shard's worth up front: growing a vector of 100M tokens by doubling costs more
    // time in copies and page faults than the BPE itself. Untouched pages cost nothing.
    const auto reserve = static_cast<std::size_t>(std::min<std::int64_t>(shard_tokens, 1 << 28));
    ids_.reserve(reserve);
    lengths_.reserve(reserve);
  }

  void add(const std::vector<TokenId>& ids, std::optional<TokenId> separator,
           const std::vector<std::uint8_t>& byte_table, std::size_t text_bytes) {
    if (separator) {
      ids_.push_back(*separator);
      lengths_.push_back(0);
    }
    for (TokenId id : ids) {
      ids_.push_back(id);
      lengths_.push_back(byte_table[static_cast<std::size_t>(id)]);
    }
    ++summary_.documents;
    summary_.bytes += static_cast<std::int64_t>(text_bytes);
    summary_.tokens += static_cast<std::int64_t>(ids.size()) + (separator ? 1 : 0);
    while (static_cast<std::int64_t>(ids_.size()) >= shard_tokens_) flush(shard_tokens_);
  }

  void finish() {
    if (!ids_.empty()) flush(static_cast<std::int64_t>(ids_.size()));
  }

  const SplitSummary& summary() const { return summary_; }
  const Json& shards() const { return shards_; }

 private:
  void flush(std::int64_t count) {
    const std::string stem = fmt::format("{}_{:06d}", summary_.name, summary_.shards);
    const auto n = static_cast<std::size_t>(count);
    const std::string sha = write_token_shard(dir_ / (stem + ".bin"), std::span(ids_).first(n));
    const std::string len_sha =
        write_byte_length_file(dir_ / (stem + ".bytes"), std::span(lengths_).first(n));
    Json s;
    s["file"] = stem + ".bin";
    s["tokens"] = count;
    s["sha256"] = sha;
    s["byte_lengths"] = stem + ".bytes";
    s["byte_lengths_sha256"] = len_sha;
    shards_.push_back(std::move(s));
    ids_.erase(ids_.begin(), ids_.begin() + count);
    lengths_.erase(lengths_.begin(), lengths_.begin() + count);
    ++summary_.shards;
  }

  fs::path dir_;
  std::int64_t shard_tokens_;
  SplitSummary summary_;
  std::vector<TokenId> ids_;
  std::vector<std::uint8_t> lengths_;
  Json shards_ = Json::array();
};

void validate(const PrepareOptions& o) {
  FP8LAB_CHECK(!o.out_dir.empty(), "prepare: no output directory");
  FP8LAB_CHECK(o.shard_tokens > 0 && o.shard_tokens <= 2'000'000'000,
               "prepare: shard_tokens {} must be in [1, 2e9] (int32 header count)", o.shard_tokens);
  const SplitSpec& s = o.split;
  FP8LAB_CHECK(s.kind == "hash" || s.kind == "subtree",
               "prepare: split kind '{}' (hash or subtree)", s.kind);
  if (s.kind == "hash") {
    FP8LAB_CHECK(s.heldout_fraction >= 0 && s.heldout_fraction < 1,
                 "prepare: held-out fraction {} must be in [0, 1)", s.heldout_fraction);
  } else {
    FP8LAB_CHECK(!s.heldout_subtrees.empty(), "prepare: a subtree split needs held-out subtrees");
  }
  FP8LAB_CHECK(s.in_distribution_fraction >= 0 && s.in_distribution_fraction < 1,
               "prepare: in-distribution fraction {} must be in [0, 1)", s.in_distribution_fraction);
  FP8LAB_CHECK(s.in_distribution_fraction == 0 || s.kind == "subtree",
               "prepare: an in-distribution split ({}) needs the subtree split (the hash split's "
               "held-out set is in-distribution already)",
               s.in_distribution_fraction);
  FP8LAB_CHECK(s.train_name != s.heldout_name && !s.train_name.empty() && !s.heldout_name.empty(),
               "prepare: split names '{}' and '{}' must differ", s.train_name, s.heldout_name);
  FP8LAB_CHECK(s.in_distribution_fraction == 0 ||
                   (!s.in_distribution_name.empty() && s.in_distribution_name != s.train_name &&
                    s.in_distribution_name != s.heldout_name),
               "prepare: the in-distribution split's name '{}' must differ from '{}' and '{}'",
               s.in_distribution_name, s.train_name, s.heldout_name);
}

// SHA-256(text)'s first 8 bytes as a fraction of 2^64.
double hash_fraction(const std::string& sha_hex) {
  return static_cast<double>(std::stoull(sha_hex.substr(0, 16), nullptr, 16)) * 0x1p-64;
}

enum class SplitOf { train, heldout, in_distribution };

SplitOf split_of(const SplitSpec& s, const Document& d, const std::string& sha_hex) {
  if (s.kind == "hash") return hash_fraction(sha_hex) < s.heldout_fraction ? SplitOf::heldout : SplitOf::train;
  if (std::any_of(s.heldout_subtrees.begin(), s.heldout_subtrees.end(),
                  [&](const std::string& t) { return name_in_subtree(d.name, t); }))
    return SplitOf::heldout;
  return hash_fraction(sha_hex) < s.in_distribution_fraction ? SplitOf::in_distribution
                                                             : SplitOf::train;
}

// An output directory of a prepare from before fp8lab marked its output: its manifest says so.
bool written_by_older_prepare(const fs::path& dir) {
  try {
    const nlohmann::json m = read_json_file(dir / "manifest.json");
    return json_has_string(m, "format", "fp8lab-data-manifest");
  } catch (const Error&) {
    return false;
  }
}

// Only ever called on a directory claimed for data output (fp8lab made it, or --force).
void remove_stale_outputs(const fs::path& dir, const SplitSpec& s) {
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    const bool ours = (n.starts_with(s.train_name + "_") || n.starts_with(s.heldout_name + "_") ||
                       n.starts_with(s.in_distribution_name + "_")) &&
                      (n.ends_with(".bin") || n.ends_with(".bytes"));
    if (ours || n == "manifest.json") fs::remove(e.path());
  }
}

Json manifest_json(const PrepareOptions& o, const Tokenizer& tok, const std::string& list_sha,
                   const PrepareSummary& sum, const std::vector<const SplitWriter*>& writers) {
  Json m;
  m["format"] = "fp8lab-data-manifest";
  m["version"] = 2;  // 2: the document list line starts with the name's length
  m["tokenizer"] = {{"name", tok.name()},
                    {"identity", tok.identity()},
                    {"vocab_size", tok.vocab_size()},
                    {"eot_id", tok.eot_id() ? Json(*tok.eot_id()) : Json(nullptr)}};
  m["document_separator"] = tok.eot_id() ? "eot_before_each_document" : "none";
  Json src;
  Json inputs = Json::array();
  for (const auto& p : o.source.inputs) inputs.push_back(p.filename().string());
  src["inputs"] = inputs;
  src["include"] = o.source.include_globs;
  src["exclude"] = o.source.exclude_globs;
  src["max_file_bytes"] = o.source.max_file_bytes;
  src["format"] = o.source.format;
  src["documents"] = sum.documents;
  src["bytes"] = sum.bytes;
  src["document_list_sha256"] = list_sha;
  src["document_list_line"] =
      "len(name):name<TAB>bytes<TAB>sha256(text)<LF>, in name order (len in decimal bytes)";
  m["sources"] = src;
  Json split;
  split["kind"] = o.split.kind;
  if (o.split.kind == "hash") {
    split["heldout_fraction"] = o.split.heldout_fraction;
  } else {
    split["heldout_subtrees"] = o.split.heldout_subtrees;
    if (o.split.in_distribution_fraction > 0) {
      split["in_distribution_fraction"] = o.split.in_distribution_fraction;
      split["in_distribution_name"] = o.split.in_distribution_name;
    }
  }
  m["split"] = split;
  m["shard_tokens"] = o.shard_tokens;
  for (const SplitWriter* w : writers) {
    const SplitSummary& s = w->summary();
    m["splits"][s.name] = {{"documents", s.documents},
                           {"bytes", s.bytes},
                           {"tokens", s.tokens},
                           {"shards", w->shards()}};
  }
  return m;
}

}  // namespace

PrepareSummary prepare_corpus(const PrepareOptions& o) {
  validate(o);
  const auto start = std::chrono::steady_clock::now();
  const auto tok = make_tokenizer(o.tokenizer, o.vocab_dir);
  const std::vector<std::uint8_t> byte_table = tok->byte_length_table();
  const int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
  check_output_not_input(o.out_dir, o.source.inputs, "prepare --out");
  ClaimOptions claim;
  claim.force = o.force;
  claim.written_by_older_fp8lab = written_by_older_prepare;
  const OutputDirectory output(o.out_dir, "data", claim);
  remove_stale_outputs(o.out_dir, o.split);
  SplitWriter train(o.out_dir, o.split.train_name, o.shard_tokens);
  SplitWriter held(o.out_dir, o.split.heldout_name, o.shard_tokens);
  const bool with_id = o.split.in_distribution_fraction > 0;
  std::optional<SplitWriter> in_dist;
  if (with_id) in_dist.emplace(o.out_dir, o.split.in_distribution_name, o.shard_tokens);
  Sha256 doc_list;
  PrepareSummary sum;
  DocumentStream stream(o.source);
  std::vector<Document> docs;
  std::int64_t skipped_empty = 0;
  while (stream.next_batch(docs, kBatchBytes)) {
    const auto n = static_cast<std::int64_t>(docs.size());
    std::vector<std::vector<TokenId>> ids(docs.size());
    std::vector<std::string> sha(docs.size());
    std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::int64_t i = 0; i < n; ++i) {
      try {
        sha[i] = sha256_hex(docs[i].text);
        tok->encode_append(docs[i].text, ids[i]);
      } catch (...) {
#pragma omp critical(fp8lab_prepare_failure)
        if (!failure) failure = std::current_exception();
      }
    }
    if (failure) std::rethrow_exception(failure);
    for (std::size_t i = 0; i < docs.size(); ++i) {
      if (docs[i].text.empty()) {
        ++skipped_empty;
        continue;
      }
      // The name's length first: names may hold tabs and newlines, and without it two
      // different document lists could hash alike.
      const std::string line = fmt::format("{}:{}\t{}\t{}\n", docs[i].name.size(), docs[i].name,
                                           docs[i].text.size(), sha[i]);
      doc_list.update(line.data(), line.size());
      ++sum.documents;
      sum.bytes += static_cast<std::int64_t>(docs[i].text.size());
      const SplitOf where = split_of(o.split, docs[i], sha[i]);
      SplitWriter& w = where == SplitOf::heldout ? held
                       : where == SplitOf::in_distribution ? *in_dist
                                                           : train;
      w.add(ids[i], tok->eot_id(), byte_table, docs[i].text.size());
    }
    docs.clear();
    if (o.progress) {
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr, "prepare: %.1f / %.1f MB read, %.2fM tokens, %.1f MB/s\n",
                   stream.input_bytes_done() / 1e6, stream.total_input_bytes() / 1e6,
                   (train.summary().tokens + held.summary().tokens +
                    (with_id ? in_dist->summary().tokens : 0)) / 1e6,
                   sum.bytes / 1e6 / secs);
    }
  }
  FP8LAB_CHECK(sum.documents > 0, "prepare: the inputs hold no non-empty document");
  train.finish();
  held.finish();
  sum.splits = {train.summary(), held.summary()};
  std::vector<const SplitWriter*> writers{&train, &held};
  if (with_id) {
    in_dist->finish();
    sum.splits.push_back(in_dist->summary());
    writers.push_back(&*in_dist);
  }
  sum.manifest = o.out_dir / "manifest.json";
  const Json m = manifest_json(o, *tok, doc_list.hex_digest(), sum, writers);
  std::ofstream(sum.manifest) << m.dump(2) << "\n";
  if (skipped_empty > 0 && o.progress) {
    std::fprintf(stderr, "prepare: skipped %lld empty documents\n",
                 static_cast<long long>(skipped_empty));
  }
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return sum;
}

}  // namespace fp8lab::data
