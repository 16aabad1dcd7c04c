// `fp8lab data prepare|pack|unpack`: build token shards from text, and carry text as packs.
#include "fp8lab/data_prepare.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <cstdio>
#include <memory>

#include "command_registry.hpp"
#include "commands/json_output.hpp"
#include "fp8lab/error.hpp"

namespace fp8lab::cli {
namespace {

void add_source_options(CLI::App& sub, data::SourceSpec& s) {
  sub.add_option("--input", s.inputs,
                 "one or more text files, directories (recursive), .jsonl files or .fp8pack packs")
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

// The summaries: one JSON object (--json, --json-file) and its text form (the default).
nlohmann::json prepare_json(const data::PrepareSummary& s) {
  nlohmann::json splits = nlohmann::json::object();
  for (const data::SplitSummary& sp : s.splits) {
    splits[sp.name] = {{"documents", sp.documents},
                       {"bytes", sp.bytes},
                       {"tokens", sp.tokens},
                       {"shards", sp.shards}};
  }
  return {{"manifest", s.manifest.string()},
          {"documents", s.documents},
          {"bytes", s.bytes},
          {"seconds", s.seconds},
          {"mb_per_s", s.seconds > 0 ? static_cast<double>(s.bytes) / 1e6 / s.seconds : 0.0},
          {"splits", splits}};
}

void print_prepare_text(const data::PrepareSummary& s, const nlohmann::json& j) {
  std::printf("fp8lab data prepare: %lld documents, %lld bytes in %.2f s (%.1f MB/s) -> %s\n",
              static_cast<long long>(s.documents), static_cast<long long>(s.bytes), s.seconds,
              j["mb_per_s"].get<double>(), s.manifest.string().c_str());
  for (const data::SplitSummary& sp : s.splits) {
    std::printf("  %-16s %lld documents, %lld bytes, %lld tokens, %lld shards\n", sp.name.c_str(),
                static_cast<long long>(sp.documents), static_cast<long long>(sp.bytes),
                static_cast<long long>(sp.tokens), static_cast<long long>(sp.shards));
  }
}

nlohmann::json pack_json(const data::PackOptions& o, const data::PackSummary& s) {
  return {{"pack", o.out.string()},
          {"documents", s.documents},
          {"bytes", s.bytes},
          {"compressed_bytes", s.compressed_bytes},
          {"ratio", s.compressed_bytes > 0 ? static_cast<double>(s.bytes) /
                                                 static_cast<double>(s.compressed_bytes)
                                           : 0.0},
          {"seconds", s.seconds},
          {"sha256", s.sha256}};
}

// Under --json stdout holds the one JSON line; otherwise the text summary goes there.
template <typename Text>
void report(const JsonOutput& json, const nlohmann::json& j, Text&& text) {
  json.emit(j);
  if (!json.to_stdout) text();
}

void setup_prepare(CLI::App& sub) {
  auto o = std::make_shared<data::PrepareOptions>();
  auto json = std::make_shared<JsonOutput>();
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
  json->add_options(sub, "the summary (manifest, documents, bytes, seconds, mb_per_s, splits)");
  sub.footer(
      "--input takes several files and directories (and .fp8pack packs) at once. --out is a\n"
      "directory. By default a text summary goes to stdout; --json prints it as one JSON line.\n"
      "Example: fp8lab data prepare --tokenizer byte --input texts/ --split hash "
      "--heldout-fraction 0.01 --out data/mine\n"
      "Example: fp8lab data prepare --input kernel-c.fp8pack --split subtree --heldout-subtree "
      "sound --out data/kc --json\n");
  sub.callback([o, json] {
    std::vector<std::filesystem::path> inputs = o->source.inputs;
    inputs.push_back(o->out_dir / "manifest.json");
    json->check_not_input(inputs);
    const data::PrepareSummary s = data::prepare_corpus(*o);
    const nlohmann::json j = prepare_json(s);
    report(*json, j, [&] { print_prepare_text(s, j); });
    // Written all the same (a split may be meant to stay empty), but never silently.
    for (const data::SplitSummary& sp : s.splits)
      if (sp.documents == 0)
        std::fprintf(stderr,
                     "fp8lab data prepare: warning: split '%s' received none of the %lld "
                     "documents; a run that reads it has nothing to train on or score\n",
                     sp.name.c_str(), static_cast<long long>(s.documents));
  });
}

void setup_pack(CLI::App& sub) {
  auto o = std::make_shared<data::PackOptions>();
  auto json = std::make_shared<JsonOutput>();
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
  json->add_options(sub, "the summary (pack, documents, bytes, compressed_bytes, ratio, sha256)");
  sub.footer(
      "--input takes several files and directories at once; --out is the pack file.\n"
      "Example: fp8lab data pack --input linux/ --include '*.c' --budget-mb 200 --out c.fp8pack\n");
  sub.callback([o, json] {
    std::vector<std::filesystem::path> inputs = o->source.inputs;
    inputs.push_back(o->out);
    json->check_not_input(inputs);
    const data::PackSummary s = data::write_pack(*o);
    const nlohmann::json j = pack_json(*o, s);
    report(*json, j, [&] {
      std::printf("fp8lab data pack: %lld documents, %lld bytes -> %s (%lld bytes, ratio %.2f) in "
                  "%.1f s\n  sha256 %s\n",
                  static_cast<long long>(s.documents), static_cast<long long>(s.bytes),
                  o->out.string().c_str(), static_cast<long long>(s.compressed_bytes),
                  j["ratio"].get<double>(), s.seconds, s.sha256.c_str());
    });
  });
}

void setup_unpack(CLI::App& sub) {
  auto pack = std::make_shared<std::filesystem::path>();
  auto out = std::make_shared<std::filesystem::path>();
  auto force = std::make_shared<bool>(false);
  auto json = std::make_shared<JsonOutput>();
  sub.add_option("--in", *pack, "the .fp8pack file")->required();
  sub.add_option("--out", *out,
                 "directory to extract the documents into (new, empty, or an earlier unpack's)")
      ->required();
  sub.add_flag("--force", *force, "extract into --out even when fp8lab did not create it");
  json->add_options(sub, "the summary (documents, out)");
  sub.footer("Example: fp8lab data unpack --in kernel-c.fp8pack --out kernel-c\n");
  sub.callback([pack, out, force, json] {
    json->check_not_input({*pack});
    const std::int64_t n = data::unpack_to_directory(*pack, *out, *force);
    report(*json, {{"documents", n}, {"out", out->string()}}, [&] {
      std::printf("fp8lab data unpack: %lld documents -> %s\n", static_cast<long long>(n),
                  out->string().c_str());
    });
  });
}

const CommandRegistration registration{CommandSpec{
    "data", "Corpus tools: prepare token shards, pack/unpack text for carrying", [](CLI::App& sub) {
      sub.require_subcommand(1);
      sub.footer(
          "Example: fp8lab data prepare --tokenizer byte --input texts/ --out data/mine\n"
          "Each subcommand has --help.\n");
      setup_prepare(*sub.add_subcommand(
          "prepare", "Tokenise documents into llm.c-layout shards + byte lengths + manifest.json"));
      setup_pack(*sub.add_subcommand("pack", "Write selected documents into one zstd .fp8pack"));
      setup_unpack(*sub.add_subcommand("unpack", "Extract a .fp8pack's documents as files"));
    }}};

}  // namespace
}  // namespace fp8lab::cli
