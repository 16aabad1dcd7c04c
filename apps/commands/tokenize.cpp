// `fp8lab tokenize`: print the token ids of a whole input (stdin by default), no special tokens.
// The input streams through in chunks (data::encode_stream), so memory does not grow with it.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "command_registry.hpp"
#include "commands/json_output.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/tokenizer.hpp"

namespace fp8lab::cli {
namespace {

struct TokenizeOptions {
  std::string tokenizer = "gpt2";
  std::string vocab_dir;
  std::string input;
  JsonOutput json;
};

struct FileClose {
  void operator()(std::FILE* f) const {
    if (f != nullptr && f != stdin) std::fclose(f);
  }
};

// Writes `text` to `f`; `what` names the destination in the error.
void write_all(std::FILE* f, const std::string& text, const char* what) {
  FP8LAB_CHECK_KIND(ErrorKind::io, std::fwrite(text.data(), 1, text.size(), f) == text.size(),
                    "tokenize: writing the ids to {} failed: {}", what, std::strerror(errno));
}

void run_tokenize(const TokenizeOptions& o) {
  auto tokenizer = data::make_tokenizer(o.tokenizer, o.vocab_dir);
  const bool from_stdin = o.input.empty() || o.input == "-";
  if (!from_stdin) o.json.check_not_input({o.input});
  std::unique_ptr<std::FILE, FileClose> in(from_stdin ? stdin : std::fopen(o.input.c_str(), "rb"));
  FP8LAB_CHECK_KIND(ErrorKind::io, in != nullptr, "tokenize: cannot read {}: {}", o.input,
                    std::strerror(errno));
  std::unique_ptr<std::FILE, FileClose> json_file;
  if (!o.json.file.empty()) {
    json_file.reset(std::fopen(o.json.file.c_str(), "wb"));
    FP8LAB_CHECK_KIND(ErrorKind::io, json_file != nullptr, "tokenize: cannot write {}: {}",
                      o.json.file, std::strerror(errno));
  }
  // The ids stream out as they come: as text (space-separated) on stdout unless --json, and as
  // one JSON object on stdout (--json) and in --json-file.
  const bool text_out = !o.json.to_stdout;
  const bool json_out = o.json.to_stdout || json_file != nullptr;
  std::uint64_t bytes = 0, count = 0;
  std::string text, json;
  if (json_out) json = fmt::format("{{\"tokenizer\":\"{}\",\"ids\":[", tokenizer->name());
  const auto flush = [&] {
    if (text_out) write_all(stdout, text, "stdout");
    if (o.json.to_stdout) write_all(stdout, json, "stdout");
    if (json_file) write_all(json_file.get(), json, o.json.file.c_str());
    text.clear();
    json.clear();
  };
  data::encode_stream(
      *tokenizer,
      [&](char* buffer, std::size_t n) {
        const std::size_t got = std::fread(buffer, 1, n, in.get());
        FP8LAB_CHECK_KIND(ErrorKind::io, got > 0 || !std::ferror(in.get()),
                          "tokenize: reading {} failed", from_stdin ? "stdin" : o.input);
        bytes += got;
        return got;
      },
      [&](std::span<const data::TokenId> ids) {
        for (data::TokenId id : ids) {
          const bool first = count++ == 0;
          if (text_out) text += (first ? "" : " ") + std::to_string(id);
          if (json_out) json += (first ? "" : ",") + std::to_string(id);
        }
        flush();
      });
  // The totals come last: they are known only at the end of a streamed input.
  if (text_out) text += "\n";
  if (json_out) json += fmt::format("],\"bytes\":{},\"count\":{}}}\n", bytes, count);
  flush();
  if (json_file) {
    FP8LAB_CHECK_KIND(ErrorKind::io, std::fclose(json_file.release()) == 0,
                      "tokenize: writing {} failed: {}", o.json.file, std::strerror(errno));
  }
}

const CommandRegistration registration{CommandSpec{
    "tokenize", "Print the token ids of a text (stdin by default); adds no special token",
    [](CLI::App& sub) {
      auto o = std::make_shared<TokenizeOptions>();
      sub.add_option("--tokenizer", o->tokenizer, "byte or gpt2")
          ->check(CLI::IsMember({"byte", "gpt2"}))
          ->capture_default_str();
      sub.add_option("--vocab-dir", o->vocab_dir,
                     "directory with encoder.json and vocab.bpe (default: $FP8LAB_GPT2_VOCAB or "
                     "data/cache/gpt2-vocab; see scripts/fetch-gpt2-vocab)");
      sub.footer(
          "Without --json, stdout gets the ids separated by spaces and a newline. The JSON object\n"
          "is {tokenizer, ids, bytes, count}, the totals last (the input streams through).\n"
          "Example: echo 'In the beginning' | fp8lab tokenize --tokenizer byte\n"
          "Example: fp8lab tokenize --tokenizer gpt2 --in book.txt --json-file ids.json\n");
      sub.add_option("--in", o->input, "input file (default: stdin; - is stdin too)");
      o->json.add_options(sub, "the ids and totals");
      sub.callback([o] { run_tokenize(*o); });
    }}};

}  // namespace
}  // namespace fp8lab::cli
