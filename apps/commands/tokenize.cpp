// `fp8lab tokenize`: print the token ids of a whole input (stdin by default), no special tokens.
// The input streams through in chunks (data::encode_stream), so memory does not grow with it.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "command_registry.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/tokenizer.hpp"

namespace fp8lab::cli {
namespace {

struct TokenizeOptions {
  std::string tokenizer = "gpt2";
  std::string vocab_dir;
  std::string input;
  bool json = false;
};

struct FileClose {
  void operator()(std::FILE* f) const {
    if (f != nullptr && f != stdin) std::fclose(f);
  }
};

void run_tokenize(const TokenizeOptions& o) {
  auto tokenizer = data::make_tokenizer(o.tokenizer, o.vocab_dir);
  const bool from_stdin = o.input.empty() || o.input == "-";
  std::unique_ptr<std::FILE, FileClose> in(from_stdin ? stdin : std::fopen(o.input.c_str(), "rb"));
  FP8LAB_CHECK_KIND(ErrorKind::io, in != nullptr, "tokenize: cannot read {}: {}", o.input,
                    std::strerror(errno));
  std::uint64_t bytes = 0, count = 0;
  const char separator = o.json ? ',' : ' ';
  std::string out;
  if (o.json) out = fmt::format("{{\"tokenizer\":\"{}\",\"ids\":[", tokenizer->name());
  const auto flush = [&] {
    FP8LAB_CHECK_KIND(ErrorKind::io, std::fwrite(out.data(), 1, out.size(), stdout) == out.size(),
                      "tokenize: writing the ids failed: {}", std::strerror(errno));
    out.clear();
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
          if (count++ > 0) out += separator;
          out += std::to_string(id);
        }
        flush();
      });
  // The totals come last: they are known only at the end of a streamed input.
  out += o.json ? fmt::format("],\"bytes\":{},\"count\":{}}}\n", bytes, count) : "\n";
  flush();
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
      sub.add_option("--in", o->input, "input file (default: stdin)");
      sub.add_flag("--json", o->json,
                   "print one JSON object {tokenizer, ids, bytes, count} (the totals last)");
      sub.callback([o] { run_tokenize(*o); });
    }}};

}  // namespace
}  // namespace fp8lab::cli
