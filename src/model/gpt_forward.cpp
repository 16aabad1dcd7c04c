// GptModel forward and backward over the Backend ops. The same code runs every backend,
// precision policy and compute mode; only the LinearMode of each linear and the activation
// dtype change.
//
// The FP8 linears' amax: an op that writes a linear's input gets the linear's AmaxSlot
// (x_amax / dy_amax; empty unless the linear is FP8 and fuse_amax is on) and the linear the same
// slot, so the amax costs no extra read of the tensor (see AmaxSlot in backend.hpp).
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

AmaxSlot GptModel::x_amax(std::int64_t layer, BlockLinear which) const {
  if (!fuse_amax_ || linear_mode_for(precision_, which) != LinearMode::fp8) return {};
  static_assert(static_cast<int>(BlockLinear::mlp_proj) + 1 == Activations::kSlotsPerBlock,
                "one x slot per block linear, in BlockLinear order");
  const int k = static_cast<int>(which);
  return amax_slot(acts_->amax_slots, static_cast<int>(layer) * Activations::kSlotsPerBlock + k,
                   Fp8Format::e4m3);
}

AmaxSlot GptModel::dy_amax(BlockLinear which) const {
  if (!fuse_amax_ || linear_mode_for(precision_, which) != LinearMode::fp8) return {};
  // One slot for every dY: each producer's output goes straight into its linear's backward,
  // which copies the slot (stream-ordered) before the next producer starts filling it.
  return amax_slot(acts_->amax_slots,
                   static_cast<int>(config_.n_layers) * Activations::kSlotsPerBlock,
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
  {
    IdleLoan loan(backend_, a.dresid);  // the backward's first write to it is its fill_zero
    forward(training);
    loan.switch_to(a.d_mlp);  // the logits chunk: d_mlp (and gelu.shared) is idle in the loss
    sums =
        backend_.cross_entropy(a.lnf, working(wte), a.targets, ignore_index, chunk_rows, grad_scale,
                               training ? a.d_lnf.view() : none, training ? grad(wte) : none);
  }
  if (training) backward();
  return sums;
}

void GptModel::mlp_forward(std::int64_t l, bool state_only) {
  Activations& a = *acts_;
  Block& b = a.blocks[static_cast<std::size_t>(l)];
  const TensorView& fc = own_or(b.fc, a.fc_shared);
  const TensorView& gelu = own_or(b.gelu, a.gelu_shared);
  // fc's x amax was left by the forward's ln2 norm (kept per block for this recompute).
  b.fc_ctx =
      backend_.linear_forward(linear_mode_for(precision_, BlockLinear::mlp_fc),
                              own_or(b.ln2, a.ln_shared), working(block_param(l, "mlp.fc.weight")),
                              fc, linear_name(l, "mlp.fc"), x_amax(l, BlockLinear::mlp_fc));
  backend_.gelu_forward(fc, gelu, x_amax(l, BlockLinear::mlp_proj));
  // A recompute needs proj's saved state (its input, or its FP8 casts), not its output.
  const TensorView no_output;
  b.mlp_proj_ctx = backend_.linear_forward(
      linear_mode_for(precision_, BlockLinear::mlp_proj), gelu,
      working(block_param(l, "mlp.proj.weight")), state_only ? no_output : a.branch_out.view(),
      linear_name(l, "mlp.proj"), x_amax(l, BlockLinear::mlp_proj));
}

void GptModel::forward(bool training) {
  Activations& a = *acts_;
  const auto& params = layout_.params();
  const float eps = config_.norm_eps;
  const int heads = static_cast<int>(config_.n_heads), seq = static_cast<int>(config_.seq_len);
  backend_.embedding_forward(a.tokens, param(params[0]), param(params[1]), a.resid[0]);
  for (std::int64_t l = 0; l < config_.n_layers; ++l) {
    Block& b = a.blocks[static_cast<std::size_t>(l)];
    const TensorView& x_attn = a.resid[static_cast<std::size_t>(2 * l)];
    const TensorView& x_mlp = a.resid[static_cast<std::size_t>(2 * l + 1)];
    const TensorView& x_next = a.resid[static_cast<std::size_t>(2 * l + 2)];
    const TensorView& ln1 = own_or(b.ln1, a.ln_shared);
    backend_.rmsnorm_forward(x_attn, param(block_param(l, "ln1.weight")), eps, ln1, b.rstd1,
                             x_amax(l, BlockLinear::attn_qkv));
    b.qkv_ctx =
        backend_.linear_forward(linear_mode_for(precision_, BlockLinear::attn_qkv), ln1,
                                working(block_param(l, "attn.qkv.weight")), b.qkv,
                                linear_name(l, "attn.qkv"), x_amax(l, BlockLinear::attn_qkv));
    backend_.attention_forward(b.qkv, heads, seq, b.att, b.lse, x_amax(l, BlockLinear::attn_proj));
    b.attn_proj_ctx =
        backend_.linear_forward(linear_mode_for(precision_, BlockLinear::attn_proj), b.att,
                                working(block_param(l, "attn.proj.weight")), a.branch_out,
                                linear_name(l, "attn.proj"), x_amax(l, BlockLinear::attn_proj));
    backend_.add(x_attn, a.branch_out, x_mlp);

    backend_.rmsnorm_forward(x_mlp, param(block_param(l, "ln2.weight")), eps,
                             own_or(b.ln2, a.ln_shared), b.rstd2, x_amax(l, BlockLinear::mlp_fc));
    mlp_forward(l, /*state_only=*/false);
    backend_.add(x_mlp, a.branch_out, x_next);
    if (!training || precision_.mlp_recompute) {
      // Recompute mode: the MLP's saved state (e.g. its FP8 operands) is rebuilt in backward.
      b.fc_ctx.reset();
      b.mlp_proj_ctx.reset();
    }
    if (!training) {
      b.qkv_ctx.reset();
      b.attn_proj_ctx.reset();
    }
  }
  backend_.rmsnorm_forward(a.resid.back(), param(params.back()), eps, a.lnf, a.rstdf);
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
  backend_.rmsnorm_backward(a.resid.back(), param(params.back()), a.rstdf, a.d_lnf, a.dresid,
                            grad(params.back()));
  for (std::int64_t l = config_.n_layers - 1; l >= 0; --l) {
    block_backward(l);
    ready(block_param(l, "ln1.weight").offset);  // the block and everything after it
  }
  backend_.embedding_backward(a.tokens, a.dresid, grad(params[0]), grad(params[1]));
  ready(0);
}

void GptModel::block_backward(std::int64_t l) {
  Activations& a = *acts_;
  Block& b = a.blocks[static_cast<std::size_t>(l)];
  const int heads = static_cast<int>(config_.n_heads), seq = static_cast<int>(config_.seq_len);
  // MLP branch: x_next = x_mlp + proj(gelu(fc(ln2(x_mlp)))). Workspaces (e.g. the FP8 casts of
  // dY) go into memory that is idle at that point: d_mlp before proj's backward writes it, d_ln
  // before fc's backward writes it, then this block's fc pre-activation, dead once the GELU
  // backward has read it, for the rest of the block.
  IdleLoan loan(backend_, a.d_mlp);
  if (precision_.mlp_recompute) mlp_forward(l, /*state_only=*/true);  // same bits as the forward
  const TensorView& fc = own_or(b.fc, a.fc_shared);
  backend_.convert(a.dresid, a.d_branch, dy_amax(BlockLinear::mlp_proj));
  loan.switch_to(a.d_ln);
  backend_.linear_backward(*b.mlp_proj_ctx, a.d_branch, a.d_mlp,
                           grad(block_param(l, "mlp.proj.weight")), dy_amax(BlockLinear::mlp_proj));
  // In place: d(gelu out) -> d(fc out).
  backend_.gelu_backward(fc, a.d_mlp, a.d_mlp, dy_amax(BlockLinear::mlp_fc));
  loan.switch_to(fc);
  backend_.linear_backward(*b.fc_ctx, a.d_mlp, a.d_ln, grad(block_param(l, "mlp.fc.weight")),
                           dy_amax(BlockLinear::mlp_fc));
  const ParamInfo& ln2 = block_param(l, "ln2.weight");
  backend_.rmsnorm_backward(a.resid[static_cast<std::size_t>(2 * l + 1)], param(ln2), b.rstd2,
                            a.d_ln, a.dresid, grad(ln2));
  b.fc_ctx.reset();
  b.mlp_proj_ctx.reset();
  // Attention branch: x_mlp = x_attn + proj(attention(qkv(ln1(x_attn)))).
  backend_.convert(a.dresid, a.d_branch, dy_amax(BlockLinear::attn_proj));
  backend_.linear_backward(*b.attn_proj_ctx, a.d_branch, a.d_att,
                           grad(block_param(l, "attn.proj.weight")),
                           dy_amax(BlockLinear::attn_proj));
  backend_.attention_backward(b.qkv, b.att, b.lse, a.d_att, heads, seq, a.d_qkv,
                              dy_amax(BlockLinear::attn_qkv));
  backend_.linear_backward(*b.qkv_ctx, a.d_qkv, a.d_ln, grad(block_param(l, "attn.qkv.weight")),
                           dy_amax(BlockLinear::attn_qkv));
  const ParamInfo& ln1 = block_param(l, "ln1.weight");
  backend_.rmsnorm_backward(a.resid[static_cast<std::size_t>(2 * l)], param(ln1), b.rstd1, a.d_ln,
                            a.dresid, grad(ln1));
  b.qkv_ctx.reset();
  b.attn_proj_ctx.reset();
}

}  // namespace fp8lab
