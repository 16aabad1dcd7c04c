#include "data/gpt2_vocab.hpp"

#include <nlohmann/json.hpp>

#include "data/unicode_classes.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/json_read.hpp"

namespace fp8lab::data {
namespace {

constexpr std::string_view kEndOfText = "<|endoftext|>";

// GPT-2's bytes_to_unicode(): printable Latin-1 bytes stand for themselves; the other 68 bytes
// are shifted to U+0100.. in byte order. Inverse table: code point -> byte, or -1.
std::array<int, 512> unicode_to_byte_table() {
  std::array<int, 512> table;
  table.fill(-1);
  int shifted = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    table[printable ? b : 256 + shifted++] = b;
  }
  return table;
}

// A vocabulary string (UTF-8 of mapped code points) back to the bytes it stands for.
bool unmap_token(std::string_view mapped, std::string& bytes) {
  static const std::array<int, 512> table = unicode_to_byte_table();
  bytes.clear();
  const auto* p = reinterpret_cast<const unsigned char*>(mapped.data());
  const auto* end = p + mapped.size();
  while (p < end) {
    Utf8Unit u = decode_utf8(p, end);
    if (u.code_point >= table.size() || table[u.code_point] < 0) return false;
    bytes.push_back(static_cast<char>(table[u.code_point]));
    p += u.length;
  }
  return !bytes.empty();
}

void parse_encoder_json(std::string_view text, Gpt2Vocab& vocab) {
  const nlohmann::json root = parse_json(text, "encoder.json");
  FP8LAB_CHECK_KIND(ErrorKind::format, root.is_object(), "encoder.json: expected a JSON object");
  const std::size_t n = root.size();
  FP8LAB_CHECK_KIND(ErrorKind::format, n >= 257 && n <= 65536,
                    "encoder.json: {} entries; expected 257..65536 (uint16 token shards)", n);
  vocab.id_to_bytes.assign(n, std::string());
  std::vector<bool> seen(n, false);
  std::string bytes;
  for (const auto& [key, value] : root.items()) {
    FP8LAB_CHECK_KIND(ErrorKind::format, value.is_number_integer(),
                      "encoder.json: value of key '{}' is not an integer", key);
    const auto id = value.get<std::int64_t>();
    FP8LAB_CHECK_KIND(ErrorKind::format, id >= 0 && id < static_cast<std::int64_t>(n) && !seen[id],
                      "encoder.json: key '{}' has id {}: ids must be unique and in [0, {})", key,
                      id, n);
    seen[id] = true;
    if (key == kEndOfText) {
      vocab.eot = static_cast<TokenId>(id);
      vocab.id_to_bytes[id] = std::string(kEndOfText);
      continue;
    }
    FP8LAB_CHECK_KIND(ErrorKind::format, unmap_token(key, bytes),
                      "encoder.json: key '{}' (id {}) is not in GPT-2's byte-to-unicode alphabet",
                      key, id);
    vocab.id_to_bytes[id] = bytes;
    vocab.bytes_to_id.emplace(bytes, static_cast<TokenId>(id));
  }
  FP8LAB_CHECK_KIND(ErrorKind::format, vocab.eot >= 0, "encoder.json: no '{}' entry", kEndOfText);
  for (int b = 0; b < 256; ++b) {
    auto it = vocab.bytes_to_id.find(std::string(1, static_cast<char>(b)));
    FP8LAB_CHECK_KIND(ErrorKind::format, it != vocab.bytes_to_id.end(),
                      "encoder.json: byte 0x{:02X} has no token", b);
    vocab.byte_ids[b] = it->second;
  }
}

TokenId merge_part_id(const Gpt2Vocab& vocab, std::string_view mapped, std::size_t line_no) {
  std::string bytes;
  FP8LAB_CHECK_KIND(ErrorKind::format, unmap_token(mapped, bytes),
                    "vocab.bpe line {}: '{}' is not in GPT-2's byte-to-unicode alphabet", line_no,
                    mapped);
  auto it = vocab.bytes_to_id.find(bytes);
  FP8LAB_CHECK_KIND(ErrorKind::format, it != vocab.bytes_to_id.end(),
                    "vocab.bpe line {}: '{}' is not a token of encoder.json", line_no, mapped);
  return it->second;
}

void parse_vocab_bpe(std::string_view text, Gpt2Vocab& vocab) {
  std::size_t line_no = 0;
  std::int32_t rank = 0;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || (line_no == 1 && line.starts_with("#version"))) continue;
    const std::size_t space = line.find(' ');
    FP8LAB_CHECK_KIND(ErrorKind::format,
                      space != std::string_view::npos && space > 0 && space + 1 < line.size() &&
                          line.find(' ', space + 1) == std::string_view::npos,
                      "vocab.bpe line {}: expected two tokens separated by one space, got '{}'",
                      line_no, line);
    const TokenId left = merge_part_id(vocab, line.substr(0, space), line_no);
    const TokenId right = merge_part_id(vocab, line.substr(space + 1), line_no);
    const std::string joined = vocab.id_to_bytes[left] + vocab.id_to_bytes[right];
    auto it = vocab.bytes_to_id.find(joined);
    FP8LAB_CHECK_KIND(ErrorKind::format, it != vocab.bytes_to_id.end(),
                      "vocab.bpe line {}: the merge of '{}' is not a token of encoder.json",
                      line_no, line);
    const bool fresh =
        vocab.merges.emplace(pair_key(left, right), BpeMerge{rank, it->second}).second;
    FP8LAB_CHECK_KIND(ErrorKind::format, fresh, "vocab.bpe line {}: merge '{}' repeats", line_no,
                      line);
    ++rank;
  }
  FP8LAB_CHECK_KIND(ErrorKind::format, rank > 0, "vocab.bpe: no merges");
}

}  // namespace

Gpt2Vocab parse_gpt2_vocab(std::string_view encoder_json, std::string_view vocab_bpe) {
  Gpt2Vocab vocab;
  parse_encoder_json(encoder_json, vocab);
  parse_vocab_bpe(vocab_bpe, vocab);
  return vocab;
}

}  // namespace fp8lab::data
