// Streaming tokenisation: encode_stream cuts its input only where the pre-tokeniser always cuts,
// so chunk by chunk it gives exactly the ids of encoding the whole input at once.
#include <algorithm>

#include "data_test_util.hpp"
#include "fp8lab/error.hpp"

namespace fp8lab::data {
namespace {

// Text that exercises the cut rule: words, runs of spaces, tabs, newlines, punctuation,
// contractions, digits, non-ASCII letters and invalid UTF-8, in random mixes.
std::string tricky_text(std::mt19937_64& rng, std::size_t pieces) {
  const std::vector<std::string> parts = {"the",
                                          " ",
                                          "  ",
                                          "\t",
                                          "\n",
                                          "\n\n",
                                          "'s",
                                          "'ll",
                                          "don't",
                                          "42",
                                          "3.14",
                                          ",",
                                          "!?",
                                          "caf\xC3\xA9",
                                          " \xC3\xA9"
                                          "t\xC3\xA9",
                                          "\xE4\xB8\xAD"
                                          "\xE6\x96\x87",
                                          "\xff",
                                          "\xC3",
                                          "x ",
                                          " y",
                                          "  z",
                                          "(a)",
                                          " \xC2\xA0"
                                          "b",
                                          "    ",
                                          "end."};
  std::string s;
  for (std::size_t i = 0; i < pieces; ++i) s += parts[rng() % parts.size()];
  return s;
}

std::vector<TokenId> streamed(const Tokenizer& tok, const std::string& text, std::size_t chunk,
                              std::size_t read_size) {
  std::size_t at = 0;
  std::vector<TokenId> ids;
  encode_stream(
      tok,
      [&](char* buffer, std::size_t n) {
        const std::size_t k = std::min({n, read_size, text.size() - at});
        std::copy_n(text.data() + at, k, buffer);
        at += k;
        return k;
      },
      [&](std::span<const TokenId> part) { ids.insert(ids.end(), part.begin(), part.end()); },
      chunk);
  return ids;
}

void expect_streaming_matches(const Tokenizer& tok) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 200; ++trial) {
    const std::string text = tricky_text(rng, 1 + rng() % 60);
    const std::vector<TokenId> whole = tok.encode(text);
    const std::size_t chunk = 1 + rng() % 24, read_size = 1 + rng() % 7;
    ASSERT_EQ(streamed(tok, text, chunk, read_size), whole)
        << "chunk " << chunk << " read " << read_size << " text '" << text << "'";
  }
  EXPECT_TRUE(streamed(tok, "", 4, 4).empty());
}

TEST(EncodeStream, Gpt2ChunkedEqualsWhole) {
  FP8LAB_REQUIRE_GPT2(tok);
  expect_streaming_matches(*tok);
}

TEST(EncodeStream, ByteChunkedEqualsWhole) { expect_streaming_matches(*make_byte_tokenizer()); }

TEST(EncodeStream, CutsOnlyBeforeASpaceAfterPrintableAscii) {
  EXPECT_EQ(last_safe_cut("ab cd ef"), 5u);
  EXPECT_EQ(last_safe_cut("ab  "), 2u);        // the space after a space is not a cut
  EXPECT_EQ(last_safe_cut("\xC3\xA9 x"), 0u);  // nor one after a non-ASCII byte
  EXPECT_EQ(last_safe_cut("a\n b"), 0u);
  EXPECT_EQ(last_safe_cut(" abc"), 0u);
}

}  // namespace
}  // namespace fp8lab::data
