// Fuzzes GPT-2 encoding with the real vocabulary ($FP8LAB_GPT2_VOCAB or data/cache/gpt2-vocab):
// decode(encode(x)) must equal x for any bytes, and no id may be the separator.
#include <memory>
#include <string_view>

#include "fp8lab/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::unique_ptr<fp8lab::data::Tokenizer> tok =
      fp8lab::data::make_gpt2_tokenizer(fp8lab::data::default_gpt2_vocab_dir());
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto ids = tok->encode(text);
  for (auto id : ids) {
    if (id == *tok->eot_id()) __builtin_trap();
  }
  if (tok->decode(ids) != text) __builtin_trap();
  return 0;
}
