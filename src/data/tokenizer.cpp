// The Tokenizer base helpers, the byte-level tokenizer, the factory and parallel encoding.
#include "fp8lab/tokenizer.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>

#include "fp8lab/environment.hpp"
#include "fp8lab/error.hpp"

namespace fp8lab::data {

std::vector<TokenId> Tokenizer::encode(std::string_view text) const {
  std::vector<TokenId> out;
  encode_append(text, out);
  return out;
}

std::string Tokenizer::decode(std::span<const TokenId> ids) const {
  std::string out;
  for (TokenId id : ids) out += token_bytes(id);
  return out;
}

std::vector<std::uint8_t> Tokenizer::byte_length_table() const {
  std::vector<std::uint8_t> table(static_cast<std::size_t>(vocab_size()));
  for (TokenId id = 0; id < vocab_size(); ++id) {
    const std::size_t len = token_byte_length(id);
    FP8LAB_CHECK_KIND(ErrorKind::format, len <= 255,
                      "{} token {} is {} bytes long; byte lengths are stored as uint8", name(), id,
                      len);
    table[static_cast<std::size_t>(id)] = static_cast<std::uint8_t>(len);
  }
  return table;
}

namespace {

class ByteTokenizer final : public Tokenizer {
 public:
  ByteTokenizer() {
    for (int b = 0; b < 256; ++b) bytes_[b] = static_cast<char>(b);
  }
  std::string name() const override { return "byte"; }
  std::string identity() const override { return "byte:256"; }
  std::int32_t vocab_size() const override { return 256; }
  std::optional<TokenId> eot_id() const override { return std::nullopt; }
  void encode_append(std::string_view text, std::vector<TokenId>& out) const override {
    out.reserve(out.size() + text.size());
    for (char c : text) out.push_back(static_cast<unsigned char>(c));
  }
  std::string_view token_bytes(TokenId id) const override {
    FP8LAB_CHECK(id >= 0 && id < 256, "byte tokenizer: token id {} is outside [0, 256)", id);
    return std::string_view(&bytes_[id], 1);
  }
  bool is_special(TokenId) const override { return false; }

 private:
  char bytes_[256];
};

}  // namespace

std::unique_ptr<Tokenizer> make_byte_tokenizer() { return std::make_unique<ByteTokenizer>(); }

std::filesystem::path default_gpt2_vocab_dir() {
  if (const std::string& dir = environment().gpt2_vocab_dir; !dir.empty()) return dir;
  return std::filesystem::path(FP8LAB_SOURCE_DIR) / "data" / "cache" / "gpt2-vocab";
}

std::unique_ptr<Tokenizer> make_tokenizer(std::string_view name,
                                          const std::filesystem::path& vocab_dir) {
  if (name == "byte") return make_byte_tokenizer();
  if (name == "gpt2")
    return make_gpt2_tokenizer(vocab_dir.empty() ? default_gpt2_vocab_dir() : vocab_dir);
  FP8LAB_FAIL(ErrorKind::invalid_argument, "unknown tokenizer '{}' (expected byte or gpt2)", name);
}

std::size_t last_safe_cut(std::string_view text) {
  for (std::size_t i = text.size(); i-- > 1;) {
    const auto before = static_cast<unsigned char>(text[i - 1]);
    if (text[i] == ' ' && before > 0x20 && before < 0x7F) return i;
  }
  return 0;
}

void encode_stream(const Tokenizer& tokenizer, const ReadBytes& read, const EmitIds& emit,
                   std::size_t chunk_bytes) {
  FP8LAB_CHECK(chunk_bytes > 0, "encode_stream: chunk_bytes must be positive");
  std::string buffer;
  std::vector<TokenId> ids;
  std::size_t want = chunk_bytes;  // doubles while no safe cut has been found
  bool end = false;
  while (!end || !buffer.empty()) {
    while (!end && buffer.size() < want) {
      const std::size_t have = buffer.size();
      buffer.resize(want);
      const std::size_t got = read(buffer.data() + have, want - have);
      buffer.resize(have + got);
      end = got == 0;
    }
    const std::size_t cut = end ? buffer.size() : last_safe_cut(buffer);
    if (cut == 0) {
      want *= 2;
      continue;
    }
    ids.clear();
    tokenizer.encode_append(std::string_view(buffer).substr(0, cut), ids);
    emit(ids);
    buffer.erase(0, cut);
    want = std::max(chunk_bytes, buffer.size() + 1);
  }
}

std::vector<std::vector<TokenId>> encode_documents(const Tokenizer& tokenizer,
                                                   std::span<const std::string_view> documents,
                                                   int threads) {
  std::vector<std::vector<TokenId>> result(documents.size());
  const int n_threads = threads > 0 ? threads : omp_get_max_threads();
  const auto count = static_cast<std::int64_t>(documents.size());
  // Errors cannot leave an OpenMP region: keep the first and rethrow after it.
  std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic, 1) num_threads(n_threads)
  for (std::int64_t i = 0; i < count; ++i) {
    try {
      tokenizer.encode_append(documents[static_cast<std::size_t>(i)],
                              result[static_cast<std::size_t>(i)]);
    } catch (...) {
#pragma omp critical(fp8lab_encode_documents_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return result;
}

}  // namespace fp8lab::data
