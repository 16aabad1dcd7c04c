// `fp8lab tokenize`: print the token ids of a whole input (stdin by default), no special tokens.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

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

std::string read_all(const std::string& path) {
  if (path.empty() || path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(path, std::ios::binary);
  FP8LAB_CHECK_KIND(ErrorKind::io, in.good(), "tokenize: cannot read {}", path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void append_ids(std::string& out, const std::vector<data::TokenId>& ids, char separator) {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += separator;
    out += std::to_string(ids[i]);
  }
}

void run_tokenize(const TokenizeOptions& o) {
  auto tokenizer = data::make_tokenizer(o.tokenizer, o.vocab_dir);
  const std::string text = read_all(o.input);
  const std::vector<data::TokenId> ids = tokenizer->encode(text);
  std::string out;
  out.reserve(ids.size() * 6 + 64);
  if (o.json) {
    out += fmt::format("{{\"tokenizer\":\"{}\",\"bytes\":{},\"count\":{},\"ids\":[",
                       tokenizer->name(), text.size(), ids.size());
    append_ids(out, ids, ',');
    out += "]}\n";
  } else {
    append_ids(out, ids, ' ');
    out += "\n";
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
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
      sub.add_flag("--json", o->json, "print one JSON object {tokenizer, bytes, count, ids}");
      sub.callback([o] { run_tokenize(*o); });
    }}};

}  // namespace
}  // namespace fp8lab::cli
