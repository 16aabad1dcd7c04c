// GPT-2 pre-tokenisation and Unicode classes on hand-worked cases, and BPE on a toy vocabulary
// whose merges are worked out by hand; vocabulary-file errors.
#include <nlohmann/json.hpp>

#include "data/gpt2_pretokenize.hpp"
#include "data/unicode_classes.hpp"
#include "data_test_util.hpp"
#include "fp8lab/error.hpp"

namespace fp8lab::data {
namespace {

std::vector<std::string> pieces_of(std::string_view text) {
  std::vector<std::string_view> views;
  gpt2_pretokenize(text, views);
  return std::vector<std::string>(views.begin(), views.end());
}

using Pieces = std::vector<std::string>;

TEST(Gpt2Pretokenize, SplitsLikeTheRegex) {
  EXPECT_EQ(pieces_of("Hello  world"), (Pieces{"Hello", " ", " world"}));
  EXPECT_EQ(pieces_of("a\n\nb"), (Pieces{"a", "\n", "\n", "b"}));
  EXPECT_EQ(pieces_of("x  "), (Pieces{"x", "  "}));
  EXPECT_EQ(pieces_of("it's they're I'LL"), (Pieces{"it", "'s", " they", "'re", " I", "'", "LL"}));
  EXPECT_EQ(pieces_of("'st"), (Pieces{"'s", "t"}));
  EXPECT_EQ(pieces_of("!!'s"), (Pieces{"!!'", "s"}));
  EXPECT_EQ(pieces_of("abc123 45x"), (Pieces{"abc", "123", " 45", "x"}));
  EXPECT_EQ(pieces_of(" \t x"), (Pieces{" \t", " x"}));
  EXPECT_EQ(pieces_of("\tx"), (Pieces{"\t", "x"}));
  EXPECT_EQ(pieces_of("a ! b"), (Pieces{"a", " !", " b"}));
  EXPECT_EQ(pieces_of("naïve café"), (Pieces{"naïve", " café"}));
  EXPECT_EQ(pieces_of("x\u00a0y"), (Pieces{"x", "\u00a0", "y"}));  // NBSP is \s, not ` `
  EXPECT_EQ(pieces_of("中文１２"), (Pieces{"中文", "１２"}));
  EXPECT_EQ(pieces_of("\xFF\xFEz"), (Pieces{"\xFF\xFE", "z"}));  // invalid bytes are `other`
  EXPECT_EQ(pieces_of(""), Pieces{});
}

TEST(UnicodeClasses, LettersNumbersSpaces) {
  EXPECT_EQ(classify_code_point('a'), CharClass::letter);
  EXPECT_EQ(classify_code_point(0x0416), CharClass::letter);   // Ж
  EXPECT_EQ(classify_code_point(0x4E2D), CharClass::letter);   // 中
  EXPECT_EQ(classify_code_point(0x02B0), CharClass::letter);   // ʰ (Lm)
  EXPECT_EQ(classify_code_point(0x0663), CharClass::number);   // ٣ (Nd)
  EXPECT_EQ(classify_code_point(0x216B), CharClass::number);   // Ⅻ (Nl)
  EXPECT_EQ(classify_code_point(0x00BD), CharClass::number);   // ½ (No)
  EXPECT_EQ(classify_code_point(0x1D7D9), CharClass::number);  // 𝟙
  EXPECT_EQ(classify_code_point(0x0085), CharClass::space);
  EXPECT_EQ(classify_code_point(0x3000), CharClass::space);
  EXPECT_EQ(classify_code_point(0x200A), CharClass::space);
  EXPECT_EQ(classify_code_point(0x200B), CharClass::other);  // zero width space is not \s
  EXPECT_EQ(classify_code_point(0xFEFF), CharClass::other);
  EXPECT_EQ(classify_code_point(0x001F), CharClass::other);
  EXPECT_EQ(classify_code_point(0x0301), CharClass::other);  // combining mark (Mn)
  EXPECT_EQ(classify_code_point(0x1F600), CharClass::other);
  EXPECT_EQ(classify_code_point(kInvalidCodePoint), CharClass::other);
  EXPECT_STREQ(unicode_tables_version(), "14.0.0");
}

TEST(UnicodeClasses, StrictUtf8Decoding) {
  auto decode = [](std::string_view s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    return decode_utf8(p, p + s.size());
  };
  EXPECT_EQ(decode("\xE2\x82\xAC").code_point, 0x20ACu);
  EXPECT_EQ(decode("\xE2\x82\xAC").length, 3);
  EXPECT_EQ(decode("\xF0\x9F\x98\x80").code_point, 0x1F600u);
  for (std::string_view bad : {"\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82", "\x80",
                               "\xFF", "\xE0\x80\xAF"}) {
    const Utf8Unit u = decode(bad);
    EXPECT_EQ(u.code_point, kInvalidCodePoint) << ::testing::PrintToString(std::string(bad));
    EXPECT_EQ(u.length, 1);
  }
}

// GPT-2's byte-to-unicode mapping, written out again here for the toy vocabulary.
std::string mapped(std::string_view bytes) {
  std::string out;
  for (unsigned char b : bytes) {
    int shifted = 0, cp = -1;
    for (int x = 0; x < 256 && cp < 0; ++x) {
      const bool printable = (x >= 33 && x <= 126) || (x >= 161 && x <= 172) || x >= 174;
      if (x == b) cp = printable ? x : 256 + shifted;
      if (!printable) ++shifted;
    }
    // UTF-8 encode cp (< 0x800).
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

struct ToyVocab {
  std::string encoder_json;
  std::string vocab_bpe;
};

// Bytes 0..255 have ids 0..255; "ab" = 256, "abab" = 257, <|endoftext|> = 258.
ToyVocab toy_vocab() {
  nlohmann::json enc = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) enc[mapped(std::string(1, static_cast<char>(b)))] = b;
  enc[mapped("ab")] = 256;
  enc[mapped("abab")] = 257;
  enc["<|endoftext|>"] = 258;
  return {enc.dump(), "#version: 0.2\na b\nab ab\n"};
}

TEST(Gpt2Bpe, ToyVocabularyMergesByRank) {
  const ToyVocab v = toy_vocab();
  auto tok = make_gpt2_tokenizer_from_text(v.encoder_json, v.vocab_bpe);
  EXPECT_EQ(tok->vocab_size(), 259);
  EXPECT_EQ(tok->eot_id(), 258);
  // "ababa": a b a b a -> (ab) a b a -> (ab)(ab) a -> (abab) a.
  EXPECT_EQ(tok->encode("ababa"), (std::vector<TokenId>{257, 'a'}));
  // " ab" is one piece: ' ' a b -> ' ' (ab).
  EXPECT_EQ(tok->encode(" ab"), (std::vector<TokenId>{' ', 256}));
  EXPECT_EQ(tok->encode("ba!"), (std::vector<TokenId>{'b', 'a', '!'}));
  // A 300-byte piece takes the heap path: 150 x "ab" -> 75 x "abab".
  std::string long_piece;
  for (int i = 0; i < 150; ++i) long_piece += "ab";
  EXPECT_EQ(tok->encode(long_piece), std::vector<TokenId>(75, 257));
  EXPECT_EQ(tok->encode(long_piece + "a"), [] {
    std::vector<TokenId> ids(75, 257);
    ids.push_back('a');
    return ids;
  }());
}

void expect_format_error(const std::string& encoder_json, const std::string& vocab_bpe,
                         const std::string& needle) {
  try {
    make_gpt2_tokenizer_from_text(encoder_json, vocab_bpe);
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::format) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Gpt2Bpe, MalformedVocabularyFilesAreFormatErrors) {
  const ToyVocab v = toy_vocab();
  expect_format_error("{not json", v.vocab_bpe, "encoder.json: not valid JSON");
  nlohmann::json missing_byte = nlohmann::json::parse(v.encoder_json);
  missing_byte.erase(mapped("z"));
  missing_byte[mapped("zz")] = 'z';
  expect_format_error(missing_byte.dump(), v.vocab_bpe, "byte 0x7A has no token");
  nlohmann::json dup = nlohmann::json::parse(v.encoder_json);
  dup[mapped("abab")] = 256;
  expect_format_error(dup.dump(), v.vocab_bpe, "ids must be unique");
  expect_format_error(v.encoder_json, "#version: 0.2\na b c\n", "vocab.bpe line 2");
  expect_format_error(v.encoder_json, "#version: 0.2\na b\na c\n", "vocab.bpe line 3");
  expect_format_error(v.encoder_json, "#version: 0.2\na b\na b\n", "repeats");
  expect_format_error(v.encoder_json, "#version: 0.2\n", "no merges");
}

}  // namespace
}  // namespace fp8lab::data
