// GptDecoder (fp8lab/decoder.hpp): the model's forward on new rows over a key/value cache.
//
// Buffers: x and sum hold the f32 residual stream and swap roles at every add (each add writes
// the other one: add_rmsnorm_forward's sum must overlap nothing); ln holds the output of
// whichever RMSNorm ran last (ln1, ln2, then ln_f after the last block), branch the output of
// the last projection. The cache is [n_layers][k | v][seq_len, d_model] in the activation dtype:
// the k and v columns of qkv exactly as the qkv linear stored them.
//
// The GEMMs take their rows in multiples of kGemmRows (a bf16 GEMM needs M % 8 == 0 on the GPU),
// so the row buffers hold kGemmRows - 1 spare rows past max_rows, zeroed once: a linear over the
// padded rows computes the real rows exactly as over n (a GEMM's rows are independent) and finite
// values in the spare rows, which nothing else reads.
#include <algorithm>
#include <string>
#include <utility>

#include "fp8lab/decoder.hpp"
#include "fp8lab/error.hpp"

namespace fp8lab {
namespace {

std::string linear_name(std::int64_t layer, const char* which) {
  return "blocks." + std::to_string(layer) + "." + which;
}

constexpr std::int64_t kGemmRows = 8;

std::int64_t gemm_rows(std::int64_t n) { return (n + kGemmRows - 1) / kGemmRows * kGemmRows; }

// Rows [first, first + n) of a 2-D view.
TensorView row_slice(const TensorView& t, std::int64_t first, std::int64_t n) {
  TensorView v = t;
  v.data = static_cast<char*>(t.data) +
           static_cast<std::size_t>(first * t.shape[1]) * dtype_size(t.dtype);
  v.shape = {n, t.shape[1]};
  return v;
}

}  // namespace

GptDecoder::GptDecoder(GptModel& model, std::int64_t max_rows)
    : model_(model),
      backend_(model.backend()),
      max_rows_(max_rows > 0 ? std::min(max_rows, model.config().seq_len) : model.config().seq_len),
      mode_(model.precision().compute == ComputeMode::fp32 ? LinearMode::f32 : LinearMode::bf16) {
  const ModelConfig& c = model.config();
  const DType act = mode_ == LinearMode::f32 ? DType::f32 : DType::bf16;
  const std::int64_t m = max_rows_ + kGemmRows - 1, d = c.d_model;
  auto activation = [&](DType dtype, Shape shape, const char* name) {
    Buffer b = backend_.allocate(MemoryKind::activations, dtype, shape, name);
    backend_.fill_zero(b.view());
    return b;
  };
  tokens_ = activation(DType::i32, {m}, "decoder.tokens");
  cache_ = activation(act, {c.n_layers * 2 * c.seq_len, d}, "decoder.kv_cache");
  x_ = activation(DType::f32, {m, d}, "decoder.x");
  sum_ = activation(DType::f32, {m, d}, "decoder.sum");
  ln_ = activation(act, {m, d}, "decoder.ln");
  rstd_ = activation(DType::f32, {m}, "decoder.rstd");
  qkv_ = activation(act, {m, 3 * d}, "decoder.qkv");
  att_ = activation(act, {m, d}, "decoder.att");
  branch_ = activation(act, {m, d}, "decoder.branch");
  fc_ = activation(act, {m, c.d_ff()}, "decoder.fc");
  gelu_ = activation(act, {m, c.d_ff()}, "decoder.gelu");
  logits_ = activation(DType::f32, {m, c.vocab_size}, "decoder.logits");
}

TensorView GptDecoder::linear_weight(const ParamInfo& p) const {
  return model_.linear_weight(p);  // bf16 in mixed compute, the fp32 master in fp32
}

TensorView GptDecoder::rows(const Buffer& b, std::int64_t n) const {
  TensorView v = b.view();
  v.shape = v.shape.rank() == 1 ? Shape{n} : Shape{n, v.shape[1]};
  return v;
}

std::vector<float> GptDecoder::feed(std::span<const std::int32_t> tokens, bool all_rows) {
  const std::int64_t n = static_cast<std::int64_t>(tokens.size()), vocab = vocab_size();
  FP8LAB_CHECK(n > 0, "GptDecoder::feed: no tokens");
  FP8LAB_CHECK(position_ + n <= context(),
               "{} tokens after the {} in the cache exceed the model's context of {} positions", n,
               position_, context());
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int32_t id = tokens[static_cast<std::size_t>(i)];
    FP8LAB_CHECK(id >= 0 && id < vocab,
                 "token id {} at position {} is outside the vocabulary "
                 "[0, {})",
                 id, position_ + i, vocab);
  }
  std::vector<float> logits(static_cast<std::size_t>((all_rows ? n : 1) * vocab));
  for (std::int64_t done = 0; done < n;) {
    const std::int64_t piece = std::min(max_rows_, n - done);
    const bool last_piece = done + piece == n;
    // all_rows: every row's logits; otherwise only the last row of the last piece.
    const std::int64_t first_row = all_rows ? 0 : (last_piece ? piece - 1 : piece);
    float* out = logits.data() + (all_rows ? static_cast<std::size_t>(done * vocab) : 0);
    forward_rows(tokens.subspan(static_cast<std::size_t>(done), static_cast<std::size_t>(piece)),
                 first_row, out);
    done += piece;
  }
  return logits;
}

void GptDecoder::forward_rows(std::span<const std::int32_t> tokens, std::int64_t first_row,
                              float* out) {
  const ModelConfig& c = model_.config();
  const ParameterLayout& layout = model_.layout();
  const std::int64_t n = static_cast<std::int64_t>(tokens.size()), pos = position_;
  const float eps = c.norm_eps;
  const int heads = static_cast<int>(c.n_heads);
  auto block = [&](std::int64_t l, const char* suffix) -> const ParamInfo& {
    return layout.find("blocks." + std::to_string(l) + "." + suffix);
  };
  const TensorView tok = rows(tokens_, n), ln = rows(ln_, n), rstd = rows(rstd_, n);
  const TensorView qkv = rows(qkv_, n), att = rows(att_, n), branch = rows(branch_, n);
  const TensorView fc = rows(fc_, n), gelu = rows(gelu_, n);
  TensorView x = rows(x_, n), sum = rows(sum_, n);
  // The linears' operands over the padded rows (see the top of the file).
  const std::int64_t np = gemm_rows(n);
  const TensorView ln_p = rows(ln_, np), qkv_p = rows(qkv_, np), att_p = rows(att_, np);
  const TensorView branch_p = rows(branch_, np), fc_p = rows(fc_, np), gelu_p = rows(gelu_, np);
  backend_.upload(tok, tokens.data());
  // Positions pos .. pos + n - 1: the embedding op adds wpe row (m mod its rows) to row m, so it
  // gets exactly the n rows it needs.
  const TensorView wpe = row_slice(model_.param(layout.find("wpe.weight")), pos, n);
  backend_.embedding_forward(tok, model_.param(layout.find("wte.weight")), wpe, x);
  backend_.rmsnorm_forward(x, model_.param(block(0, "ln1.weight")), eps, ln, rstd);
  for (std::int64_t l = 0; l < c.n_layers; ++l) {
    const TensorView k_cache = row_slice(cache_, (2 * l) * c.seq_len, c.seq_len);
    const TensorView v_cache = row_slice(cache_, (2 * l + 1) * c.seq_len, c.seq_len);
    backend_.linear_forward(mode_, ln_p, linear_weight(block(l, "attn.qkv.weight")), qkv_p,
                            linear_name(l, "attn.qkv"));
    backend_.attention_cached_forward(qkv, heads, pos, k_cache, v_cache, att);
    backend_.linear_forward(mode_, att_p, linear_weight(block(l, "attn.proj.weight")), branch_p,
                            linear_name(l, "attn.proj"));
    backend_.add_rmsnorm_forward(x, branch, sum, model_.param(block(l, "ln2.weight")), eps, ln,
                                 rstd);
    std::swap(x, sum);
    backend_.linear_forward(mode_, ln_p, linear_weight(block(l, "mlp.fc.weight")), fc_p,
                            linear_name(l, "mlp.fc"));
    backend_.gelu_forward(fc, gelu);
    backend_.linear_forward(mode_, gelu_p, linear_weight(block(l, "mlp.proj.weight")), branch_p,
                            linear_name(l, "mlp.proj"));
    const ParamInfo& next_norm =
        l + 1 < c.n_layers ? block(l + 1, "ln1.weight") : layout.find("ln_f.weight");
    backend_.add_rmsnorm_forward(x, branch, sum, model_.param(next_norm), eps, ln, rstd);
    std::swap(x, sum);
  }
  position_ += n;
  if (first_row >= n) return;  // a middle piece of a long feed: only its cache rows matter
  const std::int64_t wanted = n - first_row, wanted_p = gemm_rows(wanted);
  const TensorView lnf = row_slice(ln_.view(), first_row, wanted_p);
  backend_.lm_head_logits(lnf, linear_weight(layout.find("wte.weight")), rows(logits_, wanted_p));
  backend_.download(rows(logits_, wanted), out);
}

}  // namespace fp8lab
