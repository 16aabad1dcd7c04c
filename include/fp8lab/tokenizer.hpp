// Tokenizers: byte-level (vocab 256) and GPT-2 byte-level BPE (vocab 50257).
//
// Both are lossless on arbitrary bytes: decode(encode(x)) == x even for invalid UTF-8, because
// every token stands for a byte string and the pre-tokeniser covers the input exactly.
// encode() never inserts special tokens; callers add the document separator (eot_id()) themselves.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fp8lab::data {

using TokenId = std::int32_t;

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // "byte" or "gpt2".
  virtual std::string name() const = 0;
  // A stable description of the vocabulary, e.g. "gpt2:encoder.json=<sha256>,vocab.bpe=<sha256>".
  // Recorded in data manifests so shards are never read with the wrong tokenizer.
  virtual std::string identity() const = 0;
  virtual std::int32_t vocab_size() const = 0;
  // The document separator (<|endoftext|> = 50256 for GPT-2); nullopt for the byte tokenizer,
  // whose 256 ids are all bytes.
  virtual std::optional<TokenId> eot_id() const = 0;

  // Appends the ids of `text` to `out`. Thread-safe: many threads may encode at once.
  virtual void encode_append(std::string_view text, std::vector<TokenId>& out) const = 0;
  // The bytes decode() emits for one token ("<|endoftext|>" for GPT-2's separator). Throws
  // fp8lab::Error on an id outside the vocabulary.
  virtual std::string_view token_bytes(TokenId id) const = 0;
  // True for special tokens (the separator): they stand for no text.
  virtual bool is_special(TokenId id) const = 0;

  std::vector<TokenId> encode(std::string_view text) const;
  std::string decode(std::span<const TokenId> ids) const;
  // UTF-8 byte length of the text a token stands for (0 for special tokens): the BPB denominator.
  std::size_t token_byte_length(TokenId id) const {
    return is_special(id) ? 0 : token_bytes(id).size();
  }
  // token_byte_length for every id, indexable by id (values fit uint8: GPT-2's longest is 128).
  std::vector<std::uint8_t> byte_length_table() const;
};

std::unique_ptr<Tokenizer> make_byte_tokenizer();

// Loads encoder.json and vocab.bpe from `vocab_dir` (see scripts/fetch-gpt2-vocab). Throws
// fp8lab::Error (io / format) naming the file, line or key when they are missing or malformed.
std::unique_ptr<Tokenizer> make_gpt2_tokenizer(const std::filesystem::path& vocab_dir);

// Same, from the files' contents (used by tests and the fuzzers).
std::unique_ptr<Tokenizer> make_gpt2_tokenizer_from_text(std::string_view encoder_json,
                                                         std::string_view vocab_bpe);

// The default vocabulary directory: $FP8LAB_GPT2_VOCAB if set, else <source>/data/cache/gpt2-vocab.
std::filesystem::path default_gpt2_vocab_dir();

// "byte" or "gpt2" (vocab_dir empty: default_gpt2_vocab_dir()).
std::unique_ptr<Tokenizer> make_tokenizer(std::string_view name,
                                          const std::filesystem::path& vocab_dir = {});

// Encodes many documents on `threads` threads (0: all hardware threads); result[i] holds the ids of
// documents[i], without separators. Deterministic: identical to encoding one by one.
std::vector<std::vector<TokenId>> encode_documents(const Tokenizer& tokenizer,
                                                   std::span<const std::string_view> documents,
                                                   int threads = 0);

// Encoding an input of any size in bounded memory. The input is cut only where GPT-2's
// pre-tokeniser always cuts: before a ' ' that follows a printable, non-space ASCII byte (no piece
// spans that point, and the pieces after it do not depend on the text before it), so the ids are
// exactly encode() of the whole input. Any cut is safe for the byte tokenizer. Memory is bounded
// by about chunk_bytes plus the longest stretch of the input without such a point (a text
// without " " after a printable ASCII byte, e.g. one long run of letters, is one piece anyway).
// `read` fills up to n bytes and returns how many (0 at the end); `emit` receives the ids.
using ReadBytes = std::function<std::size_t(char* buffer, std::size_t n)>;
using EmitIds = std::function<void(std::span<const TokenId> ids)>;
void encode_stream(const Tokenizer& tokenizer, const ReadBytes& read, const EmitIds& emit,
                   std::size_t chunk_bytes = std::size_t{1} << 20);

// The last position in `text` where encode_stream may cut (0: none).
std::size_t last_safe_cut(std::string_view text);

}  // namespace fp8lab::data
