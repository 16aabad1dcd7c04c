// Tokenizers: lossless round trips on arbitrary bytes, the byte tokenizer's identity mapping,
// GPT-2 specials, byte lengths, parallel encoding.
#include <algorithm>
#include <string_view>

#include "data_test_util.hpp"
#include "fp8lab/error.hpp"

namespace fp8lab::data {
namespace {

using testing::fresh_seed;
using testing::random_bytes;

TEST(ByteTokenizer, IdsAreTheBytesAndRoundTrip) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  auto tok = make_byte_tokenizer();
  EXPECT_EQ(tok->vocab_size(), 256);
  EXPECT_FALSE(tok->eot_id().has_value());
  const std::string text = random_bytes(rng, 1 + rng() % 4096);
  const std::vector<TokenId> ids = tok->encode(text);
  ASSERT_EQ(ids.size(), text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    ASSERT_EQ(ids[i], static_cast<unsigned char>(text[i])) << "at " << i;
    ASSERT_EQ(tok->token_byte_length(ids[i]), 1u);
  }
  EXPECT_EQ(tok->decode(ids), text);
  EXPECT_THROW(tok->token_bytes(256), Error);
}

TEST(Gpt2Tokenizer, RoundTripsRandomBytes) {
  FP8LAB_REQUIRE_GPT2(tok);
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 200; ++trial) {
    const std::string text = random_bytes(rng, rng() % 600);
    const std::vector<TokenId> ids = tok->encode(text);
    ASSERT_EQ(tok->decode(ids), text) << "trial " << trial;
    for (TokenId id : ids) ASSERT_NE(id, *tok->eot_id());
  }
}

TEST(Gpt2Tokenizer, RoundTripsInvalidAndTrickyUtf8) {
  FP8LAB_REQUIRE_GPT2(tok);
  const std::vector<std::string> cases = {
      "\xC0\xAF",                // overlong '/'
      "\xED\xA0\x80 surrogate",  // UTF-16 surrogate encoded in UTF-8
      "\xF4\x90\x80\x80",        // above U+10FFFF
      "abc\xE2\x82",             // truncated 3-byte sequence at the end
      "\xE2\x82 x",              // truncated sequence followed by space
      "\x80\x80\x80 lone continuations",
      "\xFF\xFE\xFD",                          // bytes never valid in UTF-8
      "caf\xC3\xA9 \xF0\x9F\x98\x80\xF0\x9F",  // valid then a cut-off emoji
      std::string("nul\0inside", 10),
      " \xC3 ",
      "'\xC3s",
      "  \x80x",
  };
  for (const std::string& text : cases) {
    EXPECT_EQ(tok->decode(tok->encode(text)), text) << "case " << ::testing::PrintToString(text);
  }
}

TEST(Gpt2Tokenizer, SeparatorIsSpecialAndNotProducedByText) {
  FP8LAB_REQUIRE_GPT2(tok);
  ASSERT_EQ(tok->vocab_size(), 50257);
  ASSERT_EQ(tok->eot_id(), 50256);
  EXPECT_TRUE(tok->is_special(50256));
  EXPECT_FALSE(tok->is_special(50255));
  EXPECT_EQ(tok->token_bytes(50256), "<|endoftext|>");
  EXPECT_EQ(tok->token_byte_length(50256), 0u);
  // Text that spells the separator is ordinary text: encode() adds no special token.
  const std::vector<TokenId> ids = tok->encode("a<|endoftext|>b");
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 50256), 0);
  EXPECT_EQ(tok->decode(ids), "a<|endoftext|>b");
  EXPECT_THROW(tok->token_bytes(50257), Error);
  EXPECT_THROW(tok->token_bytes(-1), Error);
}

TEST(Gpt2Tokenizer, ByteLengthTableMatchesTokenBytes) {
  FP8LAB_REQUIRE_GPT2(tok);
  const std::vector<std::uint8_t> table = tok->byte_length_table();
  ASSERT_EQ(table.size(), 50257u);
  std::size_t longest = 0;
  for (TokenId id = 0; id < 50256; ++id) {
    ASSERT_EQ(table[id], tok->token_bytes(id).size()) << "id " << id;
    ASSERT_GT(table[id], 0) << "id " << id;
    longest = std::max<std::size_t>(longest, table[id]);
  }
  EXPECT_EQ(table[50256], 0);
  EXPECT_GT(longest, 1u);
  // " the" is one GPT-2 token of 4 bytes.
  const std::vector<TokenId> the = tok->encode(" the");
  ASSERT_EQ(the.size(), 1u);
  EXPECT_EQ(tok->token_byte_length(the[0]), 4u);
}

TEST(Gpt2Tokenizer, ParallelEncodingEqualsSerial) {
  FP8LAB_REQUIRE_GPT2(tok);
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const std::vector<std::string_view> words = {"the",  " kernel", "\n\t", "struct", " 42",  "é",
                                               "中文", "  ",      "!=",   "'s",     "\xFF", "😀"};
  std::vector<std::string> docs(64);
  for (std::string& d : docs) {
    for (std::size_t n = rng() % 300; n > 0; --n) d += words[rng() % words.size()];
  }
  std::vector<std::string_view> views(docs.begin(), docs.end());
  const auto parallel = encode_documents(*tok, views, 4);
  ASSERT_EQ(parallel.size(), docs.size());
  for (std::size_t i = 0; i < docs.size(); ++i) {
    EXPECT_EQ(parallel[i], tok->encode(docs[i])) << "doc " << i;
    EXPECT_EQ(tok->decode(parallel[i]), docs[i]) << "doc " << i;
  }
}

TEST(Tokenizer, FactoryRejectsUnknownNames) {
  EXPECT_EQ(make_tokenizer("byte")->name(), "byte");
  EXPECT_THROW(make_tokenizer("gpt3"), Error);
  EXPECT_THROW(make_gpt2_tokenizer("/nonexistent/vocab/dir"), Error);
}

}  // namespace
}  // namespace fp8lab::data
