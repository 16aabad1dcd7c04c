// UTF-8 decoding and the Unicode character classes of GPT-2's pre-tokenisation pattern.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fp8lab::data {

struct CodePointRange {
  std::uint32_t first;
  std::uint32_t last;
  std::uint8_t char_class;  // 1 letter, 2 number
};

enum class CharClass : std::uint8_t { other = 0, letter = 1, number = 2, space = 3 };

// One decoded unit of UTF-8 input: a valid code point, or a single invalid byte (which the
// pre-tokeniser treats as an `other` character so arbitrary bytes still tokenise losslessly).
struct Utf8Unit {
  std::uint32_t code_point;  // kInvalidCodePoint for an invalid byte
  std::uint8_t length;       // bytes consumed, 1..4
};
inline constexpr std::uint32_t kInvalidCodePoint = 0xFFFFFFFFu;

// Strict decoding (RFC 3629): overlong forms, surrogates and values above U+10FFFF are invalid;
// an invalid sequence consumes exactly one byte. Requires p < end.
Utf8Unit decode_utf8(const unsigned char* p, const unsigned char* end);

// \p{L}, \p{N}, \s (the White_Space property) or anything else.
CharClass classify_code_point(std::uint32_t code_point);

// The Unicode version of the letter/number tables (see scripts/data/gen_unicode_tables.py).
const char* unicode_tables_version();

}  // namespace fp8lab::data
