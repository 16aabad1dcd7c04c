// GPT-2 byte-level BPE: pre-tokenise, then merge each piece's bytes by merge rank.
#include <atomic>
#include <fstream>
#include <limits>
#include <queue>
#include <sstream>

#include "data/gpt2_pretokenize.hpp"
#include "data/gpt2_vocab.hpp"
#include "fp8lab/error.hpp"
#include "core/sha256.hpp"
#include "fp8lab/tokenizer.hpp"

namespace fp8lab::data {
namespace {

constexpr std::int32_t kNoMerge = std::numeric_limits<std::int32_t>::max();
// Pieces up to this many bytes use the quadratic scan (fast for the short pieces of real text);
// longer ones (long runs of punctuation or whitespace) use a heap, O(n log n).
constexpr std::size_t kHeapThreshold = 128;
// Per-thread piece cache; cleared when it grows past this many entries.
constexpr std::size_t kCacheLimit = 1 << 17;

class Gpt2Tokenizer final : public Tokenizer {
 public:
  Gpt2Tokenizer(Gpt2Vocab vocab, std::string identity)
      : vocab_(std::move(vocab)), identity_(std::move(identity)), instance_(next_instance_++) {}

  std::string name() const override { return "gpt2"; }
  std::string identity() const override { return identity_; }
  std::int32_t vocab_size() const override {
    return static_cast<std::int32_t>(vocab_.id_to_bytes.size());
  }
  std::optional<TokenId> eot_id() const override { return vocab_.eot; }
  bool is_special(TokenId id) const override { return id == vocab_.eot; }
  std::string_view token_bytes(TokenId id) const override {
    FP8LAB_CHECK(id >= 0 && id < vocab_size(), "gpt2 tokenizer: token id {} is outside [0, {})", id,
                 vocab_size());
    return vocab_.id_to_bytes[static_cast<std::size_t>(id)];
  }

  void encode_append(std::string_view text, std::vector<TokenId>& out) const override {
    FP8LAB_CHECK(text.size() < (std::size_t{1} << 32),
                 "gpt2 tokenizer: one text of {} bytes; split it below 4 GiB", text.size());
    thread_local std::vector<std::string_view> pieces;
    pieces.clear();
    gpt2_pretokenize(text, pieces);
    Cache& cache = thread_cache();
    for (std::string_view piece : pieces) {
      if (auto it = vocab_.bytes_to_id.find(piece); it != vocab_.bytes_to_id.end()) {
        out.push_back(it->second);
        continue;
      }
      if (auto it = cache.map.find(piece); it != cache.map.end()) {
        out.insert(out.end(), it->second.begin(), it->second.end());
        continue;
      }
      const std::size_t start = out.size();
      if (piece.size() <= kHeapThreshold) {
        merge_scan(piece, out);
      } else {
        merge_heap(piece, out);
      }
      // Long pieces are rare and would make the cache's memory grow with the input.
      if (piece.size() > kHeapThreshold) continue;
      if (cache.map.size() >= kCacheLimit) cache.map.clear();
      cache.map.emplace(std::string(piece), std::vector<TokenId>(out.begin() + start, out.end()));
    }
  }

  // Exposed for tests through encode paths; both must agree (tests compare long pieces).
  void merge_scan(std::string_view piece, std::vector<TokenId>& out) const;
  void merge_heap(std::string_view piece, std::vector<TokenId>& out) const;

 private:
  struct Cache {
    std::uint64_t owner = 0;
    std::unordered_map<std::string, std::vector<TokenId>, StringViewHash, std::equal_to<>> map;
  };
  Cache& thread_cache() const {
    thread_local Cache cache;
    if (cache.owner != instance_) {
      cache.map.clear();
      cache.owner = instance_;
    }
    return cache;
  }
  BpeMerge lookup(TokenId left, TokenId right) const {
    auto it = vocab_.merges.find(pair_key(left, right));
    return it == vocab_.merges.end() ? BpeMerge{kNoMerge, -1} : it->second;
  }

  Gpt2Vocab vocab_;
  std::string identity_;
  std::uint64_t instance_;
  static inline std::atomic<std::uint64_t> next_instance_{1};
};

// Repeatedly merges the lowest-ranked adjacent pair (the leftmost on ties), keeping each pair's
// rank cached so a merge costs two lookups and one linear scan.
void Gpt2Tokenizer::merge_scan(std::string_view piece, std::vector<TokenId>& out) const {
  thread_local std::vector<TokenId> parts;
  thread_local std::vector<BpeMerge> pair;  // pair[i]: merge of parts[i], parts[i+1]
  parts.clear();
  pair.clear();
  for (char c : piece) parts.push_back(vocab_.byte_ids[static_cast<unsigned char>(c)]);
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) pair.push_back(lookup(parts[i], parts[i + 1]));
  while (!pair.empty()) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < pair.size(); ++i) {
      if (pair[i].rank < pair[best].rank) best = i;
    }
    if (pair[best].rank == kNoMerge) break;
    parts[best] = pair[best].result;
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    pair.erase(pair.begin() + static_cast<std::ptrdiff_t>(best));
    if (best > 0) pair[best - 1] = lookup(parts[best - 1], parts[best]);
    if (best < pair.size()) pair[best] = lookup(parts[best], parts[best + 1]);
  }
  out.insert(out.end(), parts.begin(), parts.end());
}

// The same merge order with a doubly linked list and a min-heap of (rank, position); stale heap
// entries are recognised by comparing the pair they recorded with the list's current state.
void Gpt2Tokenizer::merge_heap(std::string_view piece, std::vector<TokenId>& out) const {
  const auto n = static_cast<std::int64_t>(piece.size());
  std::vector<TokenId> id(static_cast<std::size_t>(n));
  std::vector<std::int64_t> prev(static_cast<std::size_t>(n)), next(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    id[i] = vocab_.byte_ids[static_cast<unsigned char>(piece[static_cast<std::size_t>(i)])];
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  struct Entry {
    std::int32_t rank;
    std::int64_t left, right;
    TokenId left_id, right_id;
    bool operator>(const Entry& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  auto push = [&](std::int64_t left) {
    if (left < 0 || next[left] < 0) return;
    const BpeMerge m = lookup(id[left], id[next[left]]);
    if (m.rank != kNoMerge) heap.push({m.rank, left, next[left], id[left], id[next[left]]});
  };
  for (std::int64_t i = 0; i + 1 < n; ++i) push(i);
  std::vector<bool> alive(static_cast<std::size_t>(n), true);
  while (!heap.empty()) {
    const Entry e = heap.top();
    heap.pop();
    if (!alive[e.left] || next[e.left] != e.right || id[e.left] != e.left_id ||
        id[e.right] != e.right_id) {
      continue;
    }
    id[e.left] = lookup(e.left_id, e.right_id).result;
    alive[e.right] = false;
    next[e.left] = next[e.right];
    if (next[e.right] >= 0) prev[next[e.right]] = e.left;
    push(prev[e.left]);
    push(e.left);
  }
  for (std::int64_t i = 0; i >= 0; i = next[i]) out.push_back(id[i]);
}

std::string read_file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  FP8LAB_CHECK_KIND(ErrorKind::io, in.good(),
                    "cannot read {} (fetch the GPT-2 vocabulary with scripts/fetch-gpt2-vocab)",
                    path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::unique_ptr<Tokenizer> make_gpt2_tokenizer_from_text(std::string_view encoder_json,
                                                         std::string_view vocab_bpe) {
  std::string identity =
      "gpt2:encoder.json=" + sha256_hex(encoder_json) + ",vocab.bpe=" + sha256_hex(vocab_bpe);
  return std::make_unique<Gpt2Tokenizer>(parse_gpt2_vocab(encoder_json, vocab_bpe),
                                         std::move(identity));
}

std::unique_ptr<Tokenizer> make_gpt2_tokenizer(const std::filesystem::path& vocab_dir) {
  const std::string encoder = read_file_text(vocab_dir / "encoder.json");
  const std::string merges = read_file_text(vocab_dir / "vocab.bpe");
  return make_gpt2_tokenizer_from_text(encoder, merges);
}

}  // namespace fp8lab::data
