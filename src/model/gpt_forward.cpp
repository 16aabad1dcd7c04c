// GptModel forward and backward over the Backend ops. The same code runs every backend,
// precision policy and compute mode; only the LinearMode of each linear and the activation
// dtype change.
//
// The FP8 linears' amax: an op that writes a linear's input gets the linear's AmaxSlot
// (x_amax / dy_amax; empty unless the linear is a tensorwise FP8 one) and the linear the same
// slot, so the amax costs no extra read of the tensor (see AmaxSlot in backend.hpp).
//
// The residual adds run inside the RMSNorm that reads their sum (add_and_norm), and the
// projections' dY, the residual gradient in the activation dtype, is stored by the RMSNorm
// backward that updates it (norm_backward).
//
// The MLP's GELU goes through linear_gelu_forward, so a backend can fold it into fc's GEMM.
//
// Pointwise recompute (PrecisionConfig::pointwise_recompute): the backward rebuilds ln1, ln2 and
// gelu in the shared buffers the forward wrote them to (a bf16 linear's saved state reads its x
// through a view of that memory at backward time) before the first op of the block's backward
// that reads each one: ln2 and gelu at the block's start, ln1 before the attention half
// (recompute_norm, block_backward).
#include <string>

#include "fp8lab/model.hpp"
#include "model/gpt_activations.hpp"

namespace fp8lab {
namespace {

std::string linear_name(std::int64_t layer, const char* which) {
  return "blocks." + std::to_string(layer) + "." + which;
}

// The block's own buffer when it keeps one, else the shared one (see gpt_activations.hpp).
const TensorView& own_or(const Buffer& own, const Buffer& shared) {
  return own.view().data != nullptr ? own.view() : shared.view();
}

// Lends `region` to the backend for a scope (Backend::lend_idle): memory the model leaves alone
// meanwhile, where the backend may put the scope's short-lived workspaces instead of allocating.
class IdleLoan {
 public:
  IdleLoan(Backend& backend, const TensorView& region) : backend_(backend) {
    backend_.lend_idle(region);
  }
  ~IdleLoan() { backend_.lend_idle({}); }
  IdleLoan(const IdleLoan&) = delete;
  IdleLoan& operator=(const IdleLoan&) = delete;
  void switch_to(const TensorView& region) { backend_.lend_idle(region); }

 private:
  Backend& backend_;
};

}  // namespace

AmaxSlot GptModel::slot(int index, Fp8Format format) const {
  AmaxSlot s = amax_slot(acts_->amax_slots, index, format);
  s.deferred = true;  // zeroed at the start of each forward, finalised by the linear's cast
  return s;
}

bool GptModel::fused_amax_linear(BlockLinear which) const {
  return linear_mode_for(precision_, which) == LinearMode::fp8 &&
         precision_.fp8.recipe == Fp8Recipe::tensorwise;
}

AmaxSlot GptModel::x_amax(std::int64_t layer, BlockLinear which) const {
  if (!fused_amax_linear(which)) return {};
  static_assert(static_cast<int>(BlockLinear::mlp_proj) + 1 == Activations::kSlotsPerBlock,
                "one x slot per block linear, in BlockLinear order");
  const int k = static_cast<int>(which);
  return slot(static_cast<int>(layer) * Activations::kSlotsPerBlock + k, Fp8Format::e4m3);
}

AmaxSlot GptModel::w_amax(std::int64_t layer, BlockLinear which) const {
  if (!fused_amax_linear(which)) return {};
  // A weight kept in the master: this forward's convert (linear_weight) filled the slot.
  if (!precision_.fp8_weights_from_master && !weight_amax_current()) return {};
  return weight_slot(static_cast<int>(layer) * Activations::kSlotsPerBlock +
                     static_cast<int>(which));
}

AmaxSlot GptModel::dy_amax(std::int64_t layer, BlockLinear which) const {
  if (!fused_amax_linear(which)) return {};
  const int k = static_cast<int>(which);
  return slot(static_cast<int>(config_.n_layers + layer) * Activations::kSlotsPerBlock + k,
              Fp8Format::e5m2);
}

LossSums GptModel::forward_backward(const std::int32_t* inputs, const std::int32_t* targets,
                                    float grad_scale, int ignore_index, int loss_chunk_rows) {
  return loss(inputs, targets, ignore_index, loss_chunk_rows, /*training=*/true, grad_scale);
}

LossSums GptModel::evaluate(const std::int32_t* inputs, const std::int32_t* targets,
                            int ignore_index, int loss_chunk_rows) {
  return loss(inputs, targets, ignore_index, loss_chunk_rows, /*training=*/false, 0.f);
}

LossSums GptModel::loss(const std::int32_t* inputs, const std::int32_t* targets, int ignore_index,
                        int chunk_rows, bool training, float grad_scale) {
  Activations& a = *acts_;
  backend_.upload(a.tokens, inputs);
  backend_.upload(a.targets, targets);
  const ParamInfo& wte = layout_.params()[0];
  const TensorView none;
  LossSums sums;
  // After zero_grads the GEMM-written gradients are written, not added to (zero_grads). The
  // pending flag stays until the backward is through: a backward cut short by an error leaves
  // them for the accessors to zero.
  dw_write_ = training && grads_zero_pending_ ? GradWrite::overwrite : GradWrite::accumulate;
  if (dw_write_ == GradWrite::overwrite) zero_added_grads();
  {
    IdleLoan loan(backend_, a.dresid);  // the backward's first write to it is its fill_zero
    forward(training);
    loan.switch_to(a.d_mlp);  // the logits chunk: d_mlp (and gelu.shared) is idle in the loss
    sums = backend_.cross_entropy(a.lnf, linear_weight(wte), a.targets, ignore_index, chunk_rows,
                                  grad_scale, training ? a.d_lnf.view() : none,
                                  training ? grad_target(wte) : none, dw_write_);
  }
  if (training) {
    backward();
    grads_zero_pending_ = false;
  }
  return sums;
}

void GptModel::mlp_forward(std::int64_t l, bool state_only) {
  Activations& a = *acts_;
  Block& b = a.blocks[static_cast<std::size_t>(l)];
  const TensorView& fc = own_or(b.fc, a.fc_shared);
  const TensorView& gelu = own_or(b.gelu, a.gelu_shared);
  // fc's x amax was left by the forward's ln2 norm (kept per block for this recompute), or
  // again by the pointwise recompute of ln2 just before.
  const LinearMode fc_mode = linear_mode_for(precision_, BlockLinear::mlp_fc);
  const TensorView& fc_x = own_or(b.ln2, a.ln_shared);
  const TensorView fc_w = linear_weight(block_param(l, "mlp.fc.weight"));
  if (!a.recompute_gelu) {  // pointwise recompute keeps the separate ops (model.hpp)
    b.fc_ctx = backend_.linear_gelu_forward(fc_mode, fc_x, fc_w, fc, gelu, linear_name(l, "mlp.fc"),
                                            x_amax(l, BlockLinear::mlp_fc),
                                            x_amax(l, BlockLinear::mlp_proj),
                                            w_amax(l, BlockLinear::mlp_fc));
  } else {
    b.fc_ctx = backend_.linear_forward(fc_mode, fc_x, fc_w, fc, linear_name(l, "mlp.fc"),
                                       x_amax(l, BlockLinear::mlp_fc),
                                       w_amax(l, BlockLinear::mlp_fc));
    backend_.gelu_forward(fc, gelu, x_amax(l, BlockLinear::mlp_proj));
  }
  // A recompute needs proj's saved state (its input, or its FP8 casts), not its output.
  const TensorView no_output;
  b.mlp_proj_ctx = backend_.linear_forward(
      linear_mode_for(precision_, BlockLinear::mlp_proj), gelu,
      linear_weight(block_param(l, "mlp.proj.weight")),
      state_only ? no_output : a.branch_out.view(), linear_name(l, "mlp.proj"),
      x_amax(l, BlockLinear::mlp_proj), w_amax(l, BlockLinear::mlp_proj));
}

// ln1's output (kept per block, or in ln_shared) -> q | k | v; under qkv recompute the forward and
// the backward's recompute both write qkv_shared, from the same ln1 bits and the same weight, so
// the recompute's q, k, v and saved state are the forward's bits (the x and W amax slots, when
// the linear is a tensorwise FP8 one, receive the same maxima again).
void GptModel::qkv_forward(std::int64_t l) {
  Activations& a = *acts_;
  Block& b = a.blocks[static_cast<std::size_t>(l)];
  b.qkv_ctx = backend_.linear_forward(
      linear_mode_for(precision_, BlockLinear::attn_qkv), own_or(b.ln1, a.ln_shared),
      linear_weight(block_param(l, "attn.qkv.weight")), own_or(b.qkv, a.qkv_shared),
      linear_name(l, "attn.qkv"), x_amax(l, BlockLinear::attn_qkv),
      w_amax(l, BlockLinear::attn_qkv));
}

void GptModel::add_and_norm(const TensorView& x, const TensorView& branch, const TensorView& sum,
                            const ParamInfo& w, const TensorView& y, const TensorView& rstd,
                            AmaxSlot amax) {
  backend_.add_rmsnorm_forward(x, branch, sum, param(w), config_.norm_eps, y, rstd, amax);
}

const TensorView& GptModel::mid_resid(std::int64_t l) const {
  const Activations& a = *acts_;
  return own_or(a.resid[static_cast<std::size_t>(2 * l + 1)], a.resid_mid_shared);
}

// The forward's add_and_norm stored this sum from the same two operands; backend.hpp's add and
// add_rmsnorm_forward both add in fp32 and round once, so the rebuilt sum has the kept one's bits
// and so do ln2 and rstd2 (see recompute_norm).
void GptModel::rebuild_mid_resid(std::int64_t l) {
  Activations& a = *acts_;
  Block& b = a.blocks[static_cast<std::size_t>(l)];
  const TensorView& x_attn = a.resid[static_cast<std::size_t>(2 * l)];
  if (a.recompute_ln2) {
    add_and_norm(x_attn, b.attn_out, a.resid_mid_shared, block_param(l, "ln2.weight"), a.ln_shared,
                 b.rstd2, x_amax(l, BlockLinear::mlp_fc));
  } else {
    backend_.add(x_attn, b.attn_out, a.resid_mid_shared);
  }
}

void GptModel::forward(bool training) {
  Activations& a = *acts_;
  const auto& params = layout_.params();
  const int heads = static_cast<int>(config_.n_heads), seq = static_cast<int>(config_.seq_len);
  // Deferred slots accumulate from zero; each has one producer per step (an MLP or pointwise
  // recompute stores the same values again, which leaves the maximum as it is).
  if (a.amax_slots.view().data != nullptr) backend_.fill_zero(a.amax_slots);
  // Weights kept in the master refill their W slots in each forward (linear_weight).
  if (precision_.fp8_weights_from_master && weight_amax_slots_.view().data != nullptr)
    backend_.fill_zero(weight_amax_slots_);
  backend_.embedding_forward(a.tokens, param(params[0]), param(params[1]), a.resid[0]);
  // The only norm without a residual add in front: every later one normalises the sum of the
  // add before it (add_and_norm), so block l > 0 finds its ln1 done by block l - 1.
  Block& first = a.blocks.front();
  backend_.rmsnorm_forward(a.resid[0], param(block_param(0, "ln1.weight")), config_.norm_eps,
                           own_or(first.ln1, a.ln_shared), first.rstd1,
                           x_amax(0, BlockLinear::attn_qkv));
  for (std::int64_t l = 0; l < config_.n_layers; ++l) {
    Block& b = a.blocks[static_cast<std::size_t>(l)];
    const TensorView& x_attn = a.resid[static_cast<std::size_t>(2 * l)];
    const TensorView& x_mlp = mid_resid(l);
    const TensorView& x_next = a.resid[static_cast<std::size_t>(2 * l + 2)];
    // attn.proj's output: kept per block under residual recompute, else the shared branch_out.
    const TensorView& attn_out = own_or(b.attn_out, a.branch_out);
    qkv_forward(l);
    const AmaxSlot att_amax = x_amax(l, BlockLinear::attn_proj);
    backend_.attention_forward(own_or(b.qkv, a.qkv_shared), heads, seq, b.att, b.lse, att_amax);
    b.attn_proj_ctx = backend_.linear_forward(
        linear_mode_for(precision_, BlockLinear::attn_proj), b.att,
        linear_weight(block_param(l, "attn.proj.weight")), attn_out, linear_name(l, "attn.proj"),
        att_amax, w_amax(l, BlockLinear::attn_proj));
    add_and_norm(x_attn, attn_out, x_mlp, block_param(l, "ln2.weight"), own_or(b.ln2, a.ln_shared),
                 b.rstd2, x_amax(l, BlockLinear::mlp_fc));
    mlp_forward(l, /*state_only=*/false);
    if (l + 1 < config_.n_layers) {  // the next block's ln1
      Block& next = a.blocks[static_cast<std::size_t>(l + 1)];
      add_and_norm(x_mlp, a.branch_out, x_next, block_param(l + 1, "ln1.weight"),
                   own_or(next.ln1, a.ln_shared), next.rstd1, x_amax(l + 1, BlockLinear::attn_qkv));
    } else {
      add_and_norm(x_mlp, a.branch_out, x_next, params.back(), a.lnf, a.rstdf, {});
    }
    if (!training || precision_.mlp_recompute) {
      // Recompute mode: the MLP's saved state (e.g. its FP8 operands) is rebuilt in backward.
      b.fc_ctx.reset();
      b.mlp_proj_ctx.reset();
    }
    if (!training || precision_.qkv_recompute) b.qkv_ctx.reset();  // rebuilt in the backward
    if (!training) b.attn_proj_ctx.reset();
  }
}

std::vector<std::int64_t> GptModel::gradient_ready_points() const {
  // A block's parameters are contiguous and start with its ln1 (parameters.cpp); everything
  // before blocks.0 (wte, wpe) is final only after the embedding backward.
  std::vector<std::int64_t> points;
  for (std::int64_t l = config_.n_layers - 1; l >= 0; --l)
    points.push_back(block_param(l, "ln1.weight").offset);
  points.push_back(0);
  return points;
}

void GptModel::norm_backward(const TensorView& x, const ParamInfo& w, const TensorView& rstd,
                             const TensorView& dy, std::optional<BlockLinear> next_dy,
                             std::int64_t next_layer) {
  Activations& a = *acts_;
  if (!next_dy) {
    backend_.rmsnorm_backward(x, param(w), rstd, dy, a.dresid, grad_target(w), dw_write_);
  } else {
    backend_.rmsnorm_backward_and_convert(x, param(w), rstd, dy, a.dresid, grad_target(w),
                                          a.d_branch, dy_amax(next_layer, *next_dy), dw_write_);
  }
}

// The forward stored this ln with add_rmsnorm_forward (block 0's ln1 with rmsnorm_forward), whose
// y and rstd are the bits rmsnorm_forward gives on the sum it stored in resid (backend.hpp; the
// CPU ops share normalize_row, the CUDA kernels the lane split of rmsnorm_rows.cuh). The kept
// rstd is rewritten with its own bits; the slot (FP8 fc under MLP recompute) gets its own amax.
void GptModel::recompute_norm(std::int64_t l, BlockLinear reader) {
  Activations& a = *acts_;
  const Block& b = a.blocks[static_cast<std::size_t>(l)];
  const bool ln1 = reader == BlockLinear::attn_qkv;
  FP8LAB_CHECK(ln1 || reader == BlockLinear::mlp_fc, "only qkv and fc read a norm's output");
  backend_.rmsnorm_forward(ln1 ? a.resid[static_cast<std::size_t>(2 * l)].view() : mid_resid(l),
                           param(block_param(l, ln1 ? "ln1.weight" : "ln2.weight")),
                           config_.norm_eps, a.ln_shared, ln1 ? b.rstd1 : b.rstd2,
                           x_amax(l, reader));
}

void GptModel::backward() {
  Activations& a = *acts_;
  const auto& params = layout_.params();
  // [begin, final_end) has just become final; the next range ends where this one begins.
  std::int64_t final_end = layout_.total();
  auto ready = [&](std::int64_t begin) {
    if (gradient_ready_hook_) gradient_ready_hook_(begin, final_end);
    final_end = begin;
  };
  backend_.fill_zero(a.dresid);
  // The last block's mlp.proj takes the residual gradient next (d_branch, see block_backward).
  norm_backward(a.resid.back(), params.back(), a.rstdf, a.d_lnf, BlockLinear::mlp_proj,
                config_.n_layers - 1);
  for (std::int64_t l = config_.n_layers - 1; l >= 0; --l) {
    block_backward(l);
    ready(block_param(l, "ln1.weight").offset);  // the block and everything after it
  }
  backend_.embedding_backward(a.tokens, a.dresid, grad_target(params[0]),
                              grad_target(params[1]));
  ready(0);
}

// Each projection's dY is the residual gradient in the activation dtype (d_branch), written by
// the norm backward that last updated dresid (norm_backward): ln_f's or the block above's ln1
// for mlp.proj, this block's ln2 for attn.proj. Nothing between that norm and the projection's
// backward writes d_branch (the MLP recompute writes no proj output; it is never lent).
void GptModel::block_backward(std::int64_t l) {
  Activations& a = *acts_;
  Block& b = a.blocks[static_cast<std::size_t>(l)];
  const int heads = static_cast<int>(config_.n_heads), seq = static_cast<int>(config_.seq_len);
  // MLP branch: x_next = x_mlp + proj(gelu(fc(ln2(x_mlp)))). Workspaces (e.g. the FP8 casts of
  // dY) go into memory that is idle at that point: d_mlp before proj's backward writes it, d_ln
  // before fc's backward writes it, then this block's fc pre-activation, dead once the GELU
  // backward has read it, for the rest of the block.
  IdleLoan loan(backend_, a.d_mlp);
  const TensorView& fc = own_or(b.fc, a.fc_shared);
  // ln2's input (residual recompute) and ln2 (pointwise recompute: the MLP recompute's input,
  // a bf16 fc's x), rebuilt first, in one pass when both; nothing below writes ln_shared
  // before fc's backward has read it.
  if (precision_.residual_recompute)
    rebuild_mid_resid(l);
  else if (a.recompute_ln2)
    recompute_norm(l, BlockLinear::mlp_fc);
  if (precision_.mlp_recompute) {
    mlp_forward(l, /*state_only=*/true);  // same bits as the forward
  } else if (a.recompute_gelu) {
    backend_.gelu_forward(fc, a.gelu_shared, x_amax(l, BlockLinear::mlp_proj));  // proj's x
  }
  loan.switch_to(a.d_ln);
  backend_.linear_backward(*b.mlp_proj_ctx, a.d_branch, a.d_mlp,
                           grad_target(block_param(l, "mlp.proj.weight")),
                           dy_amax(l, BlockLinear::mlp_proj), dw_write_);
  // In place: d(gelu out) -> d(fc out).
  backend_.gelu_backward(fc, a.d_mlp, a.d_mlp, dy_amax(l, BlockLinear::mlp_fc));
  loan.switch_to(fc);
  backend_.linear_backward(*b.fc_ctx, a.d_mlp, a.d_ln,
                           grad_target(block_param(l, "mlp.fc.weight")),
                           dy_amax(l, BlockLinear::mlp_fc), dw_write_);
  norm_backward(mid_resid(l), block_param(l, "ln2.weight"), b.rstd2, a.d_ln, BlockLinear::attn_proj,
                l);
  b.fc_ctx.reset();
  b.mlp_proj_ctx.reset();
  // qkv's x, for its dW: ln_shared is free once fc's backward has read ln2, and the attention
  // branch below does not touch it (its workspaces go to fc's memory).
  if (a.recompute_ln1) recompute_norm(l, BlockLinear::attn_qkv);
  if (precision_.qkv_recompute) qkv_forward(l);  // q, k, v for the attention backward below
  // Attention branch: x_mlp = x_attn + proj(attention(qkv(ln1(x_attn)))).
  backend_.linear_backward(*b.attn_proj_ctx, a.d_branch, a.d_att,
                           grad_target(block_param(l, "attn.proj.weight")),
                           dy_amax(l, BlockLinear::attn_proj), dw_write_);
  const AmaxSlot d_qkv_amax = dy_amax(l, BlockLinear::attn_qkv);
  backend_.attention_backward(own_or(b.qkv, a.qkv_shared), b.att, b.lse, a.d_att, heads, seq,
                              a.d_qkv, d_qkv_amax);
  backend_.linear_backward(*b.qkv_ctx, a.d_qkv, a.d_ln,
                           grad_target(block_param(l, "attn.qkv.weight")), d_qkv_amax, dw_write_);
  // Block 0's ln1 feeds the embedding backward, which reads dresid itself.
  norm_backward(a.resid[static_cast<std::size_t>(2 * l)], block_param(l, "ln1.weight"), b.rstd1,
                a.d_ln, l > 0 ? std::optional(BlockLinear::mlp_proj) : std::nullopt, l - 1);
  b.qkv_ctx.reset();
  b.attn_proj_ctx.reset();
}

}  // namespace fp8lab
