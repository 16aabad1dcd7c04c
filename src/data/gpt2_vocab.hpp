// GPT-2's vocabulary files, parsed: encoder.json (token string -> id) and vocab.bpe (merges in
// rank order). Both store tokens through GPT-2's byte-to-unicode mapping; here they are bytes.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fp8lab/tokenizer.hpp"

namespace fp8lab::data {

struct StringViewHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct BpeMerge {
  std::int32_t rank;  // line order in vocab.bpe: lower merges first
  TokenId result;
};

struct Gpt2Vocab {
  std::vector<std::string> id_to_bytes;  // every id; the special token holds its literal text
  TokenId eot = -1;                      // id of "<|endoftext|>"
  std::unordered_map<std::string, TokenId, StringViewHash, std::equal_to<>> bytes_to_id;
  std::unordered_map<std::uint64_t, BpeMerge> merges;  // key: pair_key(left, right)
  std::array<TokenId, 256> byte_ids{};                 // the id of each single byte
};

inline std::uint64_t pair_key(TokenId left, TokenId right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
         static_cast<std::uint32_t>(right);
}

// Parses and validates both files; fp8lab::Error (ErrorKind::format) names the file and the key
// or line at fault. Ids must be exactly 0..N-1 (N <= 65536), every single byte must be a token,
// and every merge must join two tokens into a third.
Gpt2Vocab parse_gpt2_vocab(std::string_view encoder_json, std::string_view vocab_bpe);

}  // namespace fp8lab::data
