// GptModel: allocation of parameters, gradients and activations; parameter access and hashing.
#include "fp8lab/model.hpp"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "core/sha256.hpp"
#include "model/gpt_activations.hpp"

namespace fp8lab {
namespace {

// A second name for memory that `owner` holds (it releases nothing itself).
Buffer alias_of(const Buffer& owner, const Shape& shape) {
  TensorView v = owner.view();
  v.shape = shape;
  FP8LAB_CHECK(v.nbytes() <= owner.view().nbytes(), "alias of {} bytes over a buffer of {}",
               v.nbytes(), owner.view().nbytes());
  return Buffer(v, nullptr);
}

// A block's parameters in layout order (parameters.cpp; after wte and wpe, six per block), with
// the block linear each weight belongs to (-1: a norm's).
struct BlockParam {
  std::string_view suffix;
  int linear;  // BlockLinear
};
constexpr BlockParam kBlockParams[] = {
    {"ln1.weight", -1},
    {"attn.qkv.weight", static_cast<int>(BlockLinear::attn_qkv)},
    {"attn.proj.weight", static_cast<int>(BlockLinear::attn_proj)},
    {"ln2.weight", -1},
    {"mlp.fc.weight", static_cast<int>(BlockLinear::mlp_fc)},
    {"mlp.proj.weight", static_cast<int>(BlockLinear::mlp_proj)}};
constexpr std::int64_t kParamsPerBlock = std::size(kBlockParams);

// The block linear whose weight is parameter `index` of a model of `n_layers` blocks, or -1
// (an embedding, a norm).
int block_linear_at(std::size_t index, std::int64_t n_layers) {
  if (index < 2 || index - 2 >= static_cast<std::size_t>(n_layers * kParamsPerBlock)) return -1;
  return kBlockParams[(index - 2) % kParamsPerBlock].linear;
}

// `shape`'s elements of `flat` from element `offset` on.
TensorView flat_slice(const TensorView& flat, std::int64_t offset, const Shape& shape) {
  TensorView v = flat;
  v.data =
      static_cast<char*>(flat.data) + static_cast<std::size_t>(offset) * dtype_size(flat.dtype);
  v.shape = shape;
  return v;
}

// Calls fn(first, last) with the indices of each run of neighbouring parameters that `in_run`
// takes: a run is one contiguous range of the layout.
template <class InRun, class Fn>
void for_each_run(const std::vector<ParamInfo>& params, InRun in_run, Fn fn) {
  for (std::size_t i = 0; i < params.size();) {
    if (!in_run(i)) {
      ++i;
      continue;
    }
    std::size_t end = i + 1;
    while (end < params.size() && in_run(end)) ++end;
    fn(i, end - 1);
    i = end;
  }
}

// The number of elements from the start of params[first] to the end of params[last].
std::int64_t run_numel(const std::vector<ParamInfo>& params, std::size_t first, std::size_t last) {
  return params[last].offset + params[last].numel() - params[first].offset;
}

}  // namespace

GptModel::GptModel(const ModelConfig& config, const PrecisionConfig& precision,
                   std::int64_t micro_batch, Backend& backend)
    : config_(config),
      precision_(precision),
      micro_batch_(micro_batch),
      backend_(backend),
      layout_(config) {
  FP8LAB_CHECK(micro_batch > 0, "micro_batch {} must be positive", micro_batch);
  precision.validate();
  backend.set_fp8_options(precision.fp8);  // the recipe of this model's FP8 linears
  const bool fp32 = precision.compute == ComputeMode::fp32;
  act_dtype_ = fp32 ? DType::f32 : DType::bf16;
  const std::int64_t n = layout_.total();
  master_ = backend.allocate(MemoryKind::parameters, DType::f32, {n}, "params.master");
  // The working copies, packed in layout order without the weights kept in the master only.
  const auto& params = layout_.params();
  working_offset_.assign(params.size(), -1);
  std::int64_t working_n = 0, scratch_n = 0;
  for (std::size_t i = 0; i < params.size() && !fp32; ++i) {
    if (master_only(i)) {
      scratch_n = std::max(scratch_n, params[i].numel());
    } else {
      working_offset_[i] = working_n;
      working_n += params[i].numel();
    }
  }
  if (working_n > 0)
    working_ = backend.allocate(MemoryKind::parameters, DType::bf16, {working_n}, "params.working");
  if (scratch_n > 0)
    weight_scratch_ =
        backend.allocate(MemoryKind::activations, DType::bf16, {scratch_n}, "weight scratch");
  grads_ = backend.allocate(MemoryKind::gradients, precision.grads, {n}, "grads");
  backend.fill_zero(master_);
  backend.fill_zero(grads_);

  const std::int64_t m = micro_batch * config.seq_len, d = config.d_model, ff = config.d_ff();
  const std::int64_t heads = config.n_heads, layers = config.n_layers;
  auto act = [&](Shape s, const char* name) {
    return backend.allocate(MemoryKind::activations, act_dtype_, s, name);
  };
  auto f32 = [&](Shape s, const char* name) {
    return backend.allocate(MemoryKind::activations, DType::f32, s, name);
  };
  acts_ = std::make_unique<Activations>();
  Activations& a = *acts_;
  a.tokens = backend.allocate(MemoryKind::activations, DType::i32, {m}, "tokens");
  a.targets = backend.allocate(MemoryKind::activations, DType::i32, {m}, "targets");
  // Under residual recompute the sums after the attention branches (odd i) share one buffer.
  for (std::int64_t i = 0; i <= 2 * layers; ++i)
    a.resid.push_back(precision.residual_recompute && i % 2 == 1 ? Buffer{} : f32({m, d}, "resid"));
  if (precision.residual_recompute) a.resid_mid_shared = f32({m, d}, "resid.mid.shared");
  a.blocks.resize(static_cast<std::size_t>(layers));
  // Which pointwise outputs the backward reads (see Block in gpt_activations.hpp): a bf16
  // linear's input for its dW, ln2 as the MLP recompute's input; gelu only when the MLP
  // recompute does not rebuild it itself. Pointwise recompute rebuilds them instead of keeping.
  const bool fp8_qkv = linear_mode_for(precision, BlockLinear::attn_qkv) == LinearMode::fp8;
  const bool fp8_fc = linear_mode_for(precision, BlockLinear::mlp_fc) == LinearMode::fp8;
  const bool fp8_proj = linear_mode_for(precision, BlockLinear::mlp_proj) == LinearMode::fp8;
  // An FP8 linear with a BF16 wgrad reads its BF16 input in the backward, as a BF16 linear.
  const bool wgrad16 = precision.fp8.bf16_wgrad;
  const bool read_ln1 = !fp8_qkv || wgrad16 || precision.qkv_recompute;
  const bool read_ln2 = !fp8_fc || wgrad16 || precision.mlp_recompute;
  const bool read_gelu = (!fp8_proj || wgrad16) && !precision.mlp_recompute;
  const bool pointwise = precision.pointwise_recompute;
  a.recompute_ln1 = (pointwise && read_ln1) || precision.qkv_recompute;
  a.recompute_ln2 = pointwise && read_ln2;
  a.recompute_gelu = pointwise && read_gelu;
  const bool keep_ln1 = read_ln1 && !a.recompute_ln1;
  const bool keep_ln2 = read_ln2 && !pointwise;
  const bool keep_gelu = read_gelu && !pointwise;
  for (Block& b : a.blocks) {
    if (keep_ln1) b.ln1 = act({m, d}, "ln1");
    b.rstd1 = f32({m}, "rstd1");
    if (!precision.qkv_recompute) b.qkv = act({m, 3 * d}, "qkv");
    b.att = act({m, d}, "att");
    b.lse = f32({micro_batch, heads, config.seq_len}, "lse");
    if (precision.residual_recompute) b.attn_out = act({m, d}, "attn.out");
    if (keep_ln2) b.ln2 = act({m, d}, "ln2");
    b.rstd2 = f32({m}, "rstd2");
    if (!precision.mlp_recompute) b.fc = act({m, ff}, "fc");
    if (keep_gelu) b.gelu = act({m, ff}, "gelu");
  }
  a.lnf = act({m, d}, "lnf");
  a.rstdf = f32({m}, "rstdf");
  a.dresid = f32({m, d}, "dresid");
  a.d_branch = act({m, d}, "d_branch");
  a.d_ln = act({m, d}, "d_ln");
  a.d_mlp = act({m, ff}, "d_mlp");
  a.d_att = a.d_mlp.view();
  a.d_att.shape = {m, d};
  a.d_qkv = a.d_mlp.view();
  a.d_qkv.data = static_cast<char*>(a.d_mlp.view().data) +
                 static_cast<std::size_t>(m * d) * dtype_size(act_dtype_);
  a.d_qkv.shape = {m, 3 * d};
  // Forward-only buffers share memory with backward-only scratch (gpt_activations.hpp says why
  // each pair never overlaps in time).
  a.branch_out = alias_of(a.d_branch, {m, d});
  a.d_lnf = alias_of(a.d_ln, {m, d});
  if (!keep_ln1 || !keep_ln2) a.ln_shared = alias_of(a.lnf, {m, d});
  if (precision.mlp_recompute) a.fc_shared = act({m, ff}, "fc.shared");
  if (precision.qkv_recompute) a.qkv_shared = act({m, 3 * d}, "qkv.shared");
  if (!keep_gelu) {
    // A gelu the backward rebuilds (MLP or pointwise recompute) is read by proj's backward while
    // it writes d_mlp: its own buffer then.
    a.gelu_shared = precision.mlp_recompute || a.recompute_gelu ? act({m, ff}, "gelu.shared")
                                                                : alias_of(a.d_mlp, {m, ff});
  }
  // Producer-fused amax slots serve the tensorwise recipe only (AmaxSlot is one amax per tensor).
  if ((fp8_qkv || fp8_fc || fp8_proj) && precision.fp8.recipe == Fp8Recipe::tensorwise) {
    a.amax_slots =
        allocate_amax_slots(backend, static_cast<int>(layers) * Activations::kSlotsPerBlock * 2,
                            MemoryKind::activations, "amax slots");
    weight_amax_slots_ =
        allocate_amax_slots(backend, static_cast<int>(layers) * Activations::kSlotsPerBlock,
                            MemoryKind::parameters, "weight amax slots");
  }
}

GptModel::~GptModel() = default;

TensorView param_slice(const TensorView& flat, const ParamInfo& p) {
  return flat_slice(flat, p.offset, p.shape);
}

TensorView GptModel::param(const ParamInfo& p) const { return param_slice(master_.view(), p); }

TensorView GptModel::grad(const ParamInfo& p) const {
  settle_zero_grads();
  return param_slice(grads_.view(), p);
}

TensorView GptModel::grads() const {
  settle_zero_grads();
  return grads_.view();
}

TensorView GptModel::grad_target(const ParamInfo& p) const {
  return param_slice(grads_.view(), p);
}

void GptModel::settle_zero_grads() const {
  if (!grads_zero_pending_) return;
  backend_.fill_zero(grads_);
  grads_zero_pending_ = false;
}

void GptModel::zero_added_grads() {
  const auto& params = layout_.params();
  // Written under GradWrite: the block matrices, the norm gains and wte (the LM head's dW,
  // which the embedding backward then adds to). Only wpe's op (the embedding backward) adds.
  auto added = [&](std::size_t i) { return i != 0 && params[i].role == ParamRole::embedding; };
  for_each_run(params, added, [&](std::size_t first, std::size_t last) {
    backend_.fill_zero(
        flat_slice(grads_.view(), params[first].offset, {run_numel(params, first, last)}));
  });
}

std::size_t GptModel::param_index(const ParamInfo& p) const {
  const auto& params = layout_.params();
  const auto it =
      std::lower_bound(params.begin(), params.end(), p.offset,
                       [](const ParamInfo& q, std::int64_t offset) { return q.offset < offset; });
  FP8LAB_CHECK_KIND(ErrorKind::internal, it != params.end() && it->offset == p.offset,
                    "parameter '{}' (offset {}) is not in the model's layout", p.name, p.offset);
  return static_cast<std::size_t>(it - params.begin());
}

bool GptModel::master_only(std::size_t index) const {
  if (!precision_.fp8_weights_from_master) return false;
  const int which = block_linear_at(index, config_.n_layers);
  return which >= 0 &&
         linear_mode_for(precision_, static_cast<BlockLinear>(which)) == LinearMode::fp8;
}

TensorView GptModel::working_copy(const ParamInfo& p) const {
  const std::int64_t offset = working_offset_[param_index(p)];  // -1 throughout in fp32 compute
  return offset < 0 ? TensorView{} : flat_slice(working_.view(), offset, p.shape);
}

TensorView GptModel::linear_weight(const ParamInfo& p) {
  if (precision_.compute == ComputeMode::fp32) return param(p);
  const TensorView copy = working_copy(p);
  if (copy.data != nullptr) return copy;
  TensorView w = weight_scratch_.view();
  w.shape = p.shape;
  // The bits refresh_working_weights would have written; for a tensorwise linear the convert
  // also fills W's slot (zeroed by each forward), as AdamW's update fills it for a working copy.
  backend_.convert(param(p), w, block_weight_slot(p));
  return w;
}

const ParamInfo& GptModel::block_param(std::int64_t layer, std::string_view suffix) const {
  for (std::int64_t i = 0; i < kParamsPerBlock; ++i) {
    if (kBlockParams[i].suffix == suffix)
      return layout_.params()[static_cast<std::size_t>(2 + layer * kParamsPerBlock + i)];
  }
  FP8LAB_FAIL(ErrorKind::internal, "no block parameter '{}'", suffix);
}

void GptModel::refresh_working_weights() {
  w_amax_current_ = false;  // a plain convert: the slots no longer describe the working copy
  if (precision_.compute != ComputeMode::mixed) return;
  // One convert per run of neighbours that have working copies (one in all without
  // fp8_weights_from_master): a run is contiguous in the master and in working_.
  const auto& params = layout_.params();
  auto copied = [&](std::size_t i) { return working_offset_[i] >= 0; };
  for_each_run(params, copied, [&](std::size_t first, std::size_t last) {
    const Shape run{run_numel(params, first, last)};
    backend_.convert(flat_slice(master_.view(), params[first].offset, run),
                     flat_slice(working_.view(), working_offset_[first], run));
  });
}

AmaxSlot GptModel::weight_slot(int index) const {
  AmaxSlot s = amax_slot(weight_amax_slots_, index, Fp8Format::e4m3);
  s.deferred = true;  // zeroed by begin_weight_update, read by the W casts (see backend.hpp)
  return s;
}

AmaxSlot GptModel::weight_amax_slot(const ParamInfo& p) const {
  // Only a working copy's: a weight kept in the master gets its amax from linear_weight.
  if (working_copy(p).data == nullptr) return {};
  return block_weight_slot(p);
}

AmaxSlot GptModel::block_weight_slot(const ParamInfo& p) const {
  const std::size_t index = param_index(p);
  const int which = block_linear_at(index, config_.n_layers);
  if (which < 0 || !fused_amax_linear(static_cast<BlockLinear>(which))) return {};
  const int layer = static_cast<int>((index - 2) / kParamsPerBlock);
  return weight_slot(layer * Activations::kSlotsPerBlock + which);
}

void GptModel::begin_weight_update() {
  w_amax_current_ = false;
  if (weight_amax_slots_.view().data != nullptr) backend_.fill_zero(weight_amax_slots_);
}

void GptModel::finish_weight_update() {
  // Only where weight_amax_slot handed slots out (some block linear is a tensorwise FP8 one).
  w_amax_current_ = weight_amax_slots_.view().data != nullptr;
}

void GptModel::zero_grads() { grads_zero_pending_ = true; }

void GptModel::init_parameters(std::uint64_t seed) {
  std::vector<float> host(static_cast<std::size_t>(layout_.total()));
  init_parameters_host(layout_, seed, host.data());
  set_parameters(host);
}

void GptModel::set_parameters(const std::vector<float>& host) {
  FP8LAB_CHECK_KIND(ErrorKind::shape, static_cast<std::int64_t>(host.size()) == layout_.total(),
                    "set_parameters: {} values for a layout of {} parameters", host.size(),
                    layout_.total());
  backend_.upload(master_, host.data());
  refresh_working_weights();
}

std::vector<float> GptModel::get_parameters() {
  std::vector<float> host(static_cast<std::size_t>(layout_.total()));
  backend_.download(master_, host.data());
  return host;
}

std::vector<float> GptModel::get_gradients() { return download_as_f32(backend_, grads()); }

std::string GptModel::parameter_sha256() {
  const std::vector<float> host = get_parameters();
  return sha256_hex(host.data(), host.size() * sizeof(float));
}

}  // namespace fp8lab
