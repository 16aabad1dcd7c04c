#include "data/gpt2_pretokenize.hpp"

#include <cstdint>

#include "data/unicode_classes.hpp"

namespace fp8lab::data {
namespace {

// The text decoded once: per unit its class and byte offset (offset[n] = text size).
struct DecodedText {
  std::vector<CharClass> cls;
  std::vector<std::uint32_t> offset;
  std::vector<std::uint32_t> code_point;
};

void decode_all(std::string_view text, DecodedText& d) {
  d.cls.clear();
  d.offset.clear();
  d.code_point.clear();
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  const auto* begin = p;
  while (p < end) {
    Utf8Unit u = decode_utf8(p, end);
    d.cls.push_back(classify_code_point(u.code_point));
    d.offset.push_back(static_cast<std::uint32_t>(p - begin));
    d.code_point.push_back(u.code_point);
    p += u.length;
  }
  d.offset.push_back(static_cast<std::uint32_t>(text.size()));
}

// Length (in units) of a contraction starting at i, or 0. Only ASCII letters, case-sensitive.
std::size_t contraction_length(const DecodedText& d, std::size_t i, std::size_t n) {
  if (d.code_point[i] != '\'' || i + 1 >= n) return 0;
  const std::uint32_t a = d.code_point[i + 1];
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (i + 2 >= n) return 0;
  const std::uint32_t b = d.code_point[i + 2];
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

std::size_t run_end(const DecodedText& d, std::size_t j, std::size_t n, CharClass c) {
  while (j < n && d.cls[j] == c) ++j;
  return j;
}

// End (exclusive, in units) of the piece that starts at i.
std::size_t piece_end(const DecodedText& d, std::size_t i, std::size_t n) {
  if (std::size_t len = contraction_length(d, i, n)) return i + len;
  const CharClass c = d.cls[i];
  // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: an optional U+0020 then a run of one class.
  if (d.code_point[i] == ' ' && i + 1 < n && d.cls[i + 1] != CharClass::space) {
    return run_end(d, i + 1, n, d.cls[i + 1]);
  }
  if (c != CharClass::space) return run_end(d, i, n, c);
  // `\s+(?!\S)`: a whitespace run, minus its last unit when a non-space follows (that unit then
  // starts the next piece, e.g. as the space of " word"); `\s+` when the run is a single unit.
  const std::size_t k = run_end(d, i, n, CharClass::space);
  if (k < n && k - i >= 2) return k - 1;
  return k;
}

}  // namespace

void gpt2_pretokenize(std::string_view text, std::vector<std::string_view>& pieces) {
  thread_local DecodedText d;
  decode_all(text, d);
  const std::size_t n = d.cls.size();
  std::size_t i = 0;
  while (i < n) {
    const std::size_t j = piece_end(d, i, n);
    pieces.push_back(text.substr(d.offset[i], d.offset[j] - d.offset[i]));
    i = j;
  }
}

}  // namespace fp8lab::data
