// `fp8lab data prepare|pack|unpack`: build token shards from text, and carry text as packs.
#include "fp8lab/data_prepare.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <memory>

#include "command_registry.hpp"
#include "fp8lab/error.hpp"

namespace fp8lab::cli {
namespace {

void add_source_options(CLI::App& sub, data::SourceSpec& s) {
  sub.add_option("--input", s.inputs,
                 "text files, directories (recursive), .jsonl files or .fp8pack packs")
      ->required();
  sub.add_option("--include", s.include_globs,
                 "keep only names matching these globs (fnmatch; '*' also matches '/')");
  sub.add_option("--exclude", s.exclude_globs, "drop names matching these globs");
  sub.add_option("--max-file-bytes", s.max_file_bytes,
                 "drop files of this size or larger (0: none)")
      ->capture_default_str();
  sub.add_option("--format", s.format, "auto (.jsonl is JSONL), text or jsonl")
      ->check(CLI::IsMember({"auto", "text", "jsonl"}))
      ->capture_default_str();
  sub.add_option("--jsonl-field", s.jsonl_field, "the JSONL field holding the text")
      ->capture_default_str();
}

void print_prepare_summary(const data::PrepareSummary& s) {
  std::string splits;
  for (const data::SplitSummary& sp : s.splits) {
    splits += fmt::format("{}\"{}\":{{\"documents\":{},\"bytes\":{},\"tokens\":{},\"shards\":{}}}",
                          splits.empty() ? "" : ",", sp.name, sp.documents, sp.bytes, sp.tokens,
                          sp.shards);
  }
  std::printf(
      "{\"manifest\":\"%s\",\"documents\":%lld,\"bytes\":%lld,\"seconds\":%.2f,"
      "\"mb_per_s\":%.1f,\"splits\":{%s}}\n",
      s.manifest.string().c_str(), static_cast<long long>(s.documents),
      static_cast<long long>(s.bytes), s.seconds, s.bytes / 1e6 / s.seconds, splits.c_str());
}

void setup_prepare(CLI::App& sub) {
  auto o = std::make_shared<data::PrepareOptions>();
  add_source_options(sub, o->source);
  sub.add_option("--out", o->out_dir, "output directory (shards + manifest.json)")->required();
  sub.add_option("--tokenizer", o->tokenizer, "byte or gpt2")
      ->check(CLI::IsMember({"byte", "gpt2"}))
      ->capture_default_str();
  sub.add_option("--vocab-dir", o->vocab_dir,
                 "GPT-2 vocabulary directory (default: data/cache/gpt2-vocab)");
  sub.add_option("--split", o->split.kind, "hash (by document SHA-256) or subtree")
      ->check(CLI::IsMember({"hash", "subtree"}))
      ->capture_default_str();
  sub.add_option("--heldout-fraction", o->split.heldout_fraction, "hash split: held-out fraction")
      ->capture_default_str();
  sub.add_option("--heldout-subtree", o->split.heldout_subtrees,
                 "subtree split: names under these are held out (e.g. sound)");
  sub.add_option("--train-name", o->split.train_name, "name of the training split")
      ->capture_default_str();
  sub.add_option("--heldout-name", o->split.heldout_name, "name of the held-out split")
      ->capture_default_str();
  sub.add_option("--in-distribution-fraction", o->split.in_distribution_fraction,
                 "subtree split: also hold out this fraction of the other documents (by "
                 "SHA-256, as the hash split does) as an in-distribution validation split, "
                 "e.g. 0.005")
      ->capture_default_str();
  sub.add_option("--in-distribution-name", o->split.in_distribution_name,
                 "name of the in-distribution split")
      ->capture_default_str();
  sub.add_option("--shard-tokens", o->shard_tokens, "tokens per shard")->capture_default_str();
  sub.add_option("--threads", o->threads, "encoding threads (0: all)")->capture_default_str();
  sub.add_flag(
      "--quiet", [o](std::int64_t) { o->progress = false; }, "no progress on stderr");
  sub.add_flag("--force", o->force,
               "write into --out even when fp8lab did not create it (shards and manifest.json "
               "there are replaced)");
  sub.callback([o] { print_prepare_summary(data::prepare_corpus(*o)); });
}

void setup_pack(CLI::App& sub) {
  auto o = std::make_shared<data::PackOptions>();
  add_source_options(sub, o->source);
  sub.add_option("--out", o->out, "the .fp8pack file to write (not one of the inputs)")->required();
  const auto mb = [](std::string v) {
    long long n = -1;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || n < 0 || n > 9'000'000'000'000LL)
      throw CLI::ValidationError("budget", "'" + v + "' is not a whole number of MB >= 0");
    return std::to_string(n * 1'000'000);
  };
  sub.add_option("--budget-mb", o->budget_bytes,
                 "sample documents outside --keep-subtree by SHA-256(name) up to this many MB "
                 "(1e6 bytes) of text; 0: all")
      ->transform(mb);
  sub.add_option("--keep-subtree", o->keep_subtrees, "subtrees budgeted apart (e.g. sound)");
  sub.add_option("--keep-budget-mb", o->keep_budget_bytes,
                 "sample the --keep-subtree documents up to this many MB; 0: all")
      ->transform(mb);
  sub.add_option("--level", o->level, "zstd level")->capture_default_str();
  sub.add_option("--threads", o->threads, "compression threads (0: all)")->capture_default_str();
  sub.callback([o] {
    const data::PackSummary s = data::write_pack(*o);
    std::printf(
        "{\"pack\":\"%s\",\"documents\":%lld,\"bytes\":%lld,\"compressed_bytes\":%lld,"
        "\"ratio\":%.2f,\"seconds\":%.1f,\"sha256\":\"%s\"}\n",
        o->out.string().c_str(), static_cast<long long>(s.documents),
        static_cast<long long>(s.bytes), static_cast<long long>(s.compressed_bytes),
        static_cast<double>(s.bytes) / static_cast<double>(s.compressed_bytes), s.seconds,
        s.sha256.c_str());
  });
}

void setup_unpack(CLI::App& sub) {
  auto pack = std::make_shared<std::filesystem::path>();
  auto out = std::make_shared<std::filesystem::path>();
  auto force = std::make_shared<bool>(false);
  sub.add_option("--pack", *pack, "the .fp8pack file")->required();
  sub.add_option("--out", *out,
                 "directory to extract the documents into (new, empty, or an earlier unpack's)")
      ->required();
  sub.add_flag("--force", *force, "extract into --out even when fp8lab did not create it");
  sub.callback([pack, out, force] {
    const std::int64_t n = data::unpack_to_directory(*pack, *out, *force);
    std::printf("{\"documents\":%lld,\"out\":\"%s\"}\n", static_cast<long long>(n),
                out->string().c_str());
  });
}

const CommandRegistration registration{CommandSpec{
    "data", "Corpus tools: prepare token shards, pack/unpack text for carrying", [](CLI::App& sub) {
      sub.require_subcommand(1);
      setup_prepare(*sub.add_subcommand(
          "prepare", "Tokenise documents into llm.c-layout shards + byte lengths + manifest.json"));
      setup_pack(*sub.add_subcommand("pack", "Write selected documents into one zstd .fp8pack"));
      setup_unpack(*sub.add_subcommand("unpack", "Extract a .fp8pack's documents as files"));
    }}};

}  // namespace
}  // namespace fp8lab::cli
