// GPT-2's pre-tokenisation, by hand over UTF-8 code points. It splits text exactly as the regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// does (leftmost alternative first, greedy), without a regex engine whose Unicode tables we
// would not control. Invalid UTF-8 bytes count as `other` characters, so the pieces always cover
// the input exactly and arbitrary bytes round-trip.
#pragma once

#include <string_view>
#include <vector>

namespace fp8lab::data {

// Appends the pieces of `text` (views into it, in order, covering it exactly) to `pieces`.
void gpt2_pretokenize(std::string_view text, std::vector<std::string_view>& pieces);

}  // namespace fp8lab::data
