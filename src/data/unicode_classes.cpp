#include "data/unicode_classes.hpp"

#include <algorithm>
#include <array>
#include <iterator>

namespace fp8lab::data {
namespace {

#include "data/unicode_tables.inc"

// The White_Space property (Unicode PropList.txt; unchanged since 6.3). This is what \s means in
// the Rust regex engine that tiktoken uses. Note that it differs from JavaScript's \s (which adds
// U+FEFF and omits U+0085) and from Python's str.isspace() (which adds U+001C..U+001F).
bool is_white_space(std::uint32_t cp) {
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
  switch (cp) {
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

CharClass classify_slow(std::uint32_t cp) {
  if (is_white_space(cp)) return CharClass::space;
  const auto* end = std::end(kLetterNumberRanges);
  const auto* it =
      std::upper_bound(std::begin(kLetterNumberRanges), end, cp,
                       [](std::uint32_t v, const CodePointRange& r) { return v < r.first; });
  if (it == std::begin(kLetterNumberRanges)) return CharClass::other;
  --it;
  return cp <= it->last ? static_cast<CharClass>(it->char_class) : CharClass::other;
}

// The first 2048 code points (ASCII, Latin, Greek, Cyrillic, Hebrew, Arabic...) by direct lookup.
constexpr std::uint32_t kFastTableSize = 2048;
const std::array<CharClass, kFastTableSize>& fast_table() {
  static const std::array<CharClass, kFastTableSize> table = [] {
    std::array<CharClass, kFastTableSize> t{};
    for (std::uint32_t cp = 0; cp < kFastTableSize; ++cp) t[cp] = classify_slow(cp);
    return t;
  }();
  return table;
}

bool is_continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

}  // namespace

Utf8Unit decode_utf8(const unsigned char* p, const unsigned char* end) {
  const unsigned char b0 = p[0];
  if (b0 < 0x80) return {b0, 1};
  const std::ptrdiff_t avail = end - p;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    if (avail >= 2 && is_continuation(p[1])) return {((b0 & 0x1Fu) << 6) | (p[1] & 0x3Fu), 2};
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (avail >= 3 && is_continuation(p[1]) && is_continuation(p[2])) {
      std::uint32_t cp = ((b0 & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
      if (cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF)) return {cp, 3};
    }
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (avail >= 4 && is_continuation(p[1]) && is_continuation(p[2]) && is_continuation(p[3])) {
      std::uint32_t cp =
          ((b0 & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu);
      if (cp >= 0x10000 && cp <= 0x10FFFF) return {cp, 4};
    }
  }
  return {kInvalidCodePoint, 1};
}

CharClass classify_code_point(std::uint32_t cp) {
  if (cp < kFastTableSize) return fast_table()[cp];
  if (cp == kInvalidCodePoint) return CharClass::other;
  return classify_slow(cp);
}

const char* unicode_tables_version() { return kUnicodeVersion; }

}  // namespace fp8lab::data
