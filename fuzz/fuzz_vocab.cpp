// Fuzzes the GPT-2 vocabulary parsers (encoder.json + vocab.bpe). Input: the two files joined by
// the first NUL byte. Any malformed input must end in fp8lab::Error; a vocabulary that parses
// must encode losslessly.
#include <cstdint>
#include <string_view>

#include "fp8lab/error.hpp"
#include "fp8lab/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = all.find('\0');
  const std::string_view encoder = all.substr(0, cut);
  const std::string_view merges =
      cut == std::string_view::npos ? std::string_view() : all.substr(cut + 1);
  try {
    auto tok = fp8lab::data::make_gpt2_tokenizer_from_text(encoder, merges);
    const std::string_view sample = merges.substr(0, 256);
    if (tok->decode(tok->encode(sample)) != sample) __builtin_trap();
  } catch (const fp8lab::Error&) {
  }
  return 0;
}
