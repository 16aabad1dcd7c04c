// The GPT model: token + learned position embedding, pre-norm blocks (RMSNorm, causal multi-head
// attention, MLP 4x with tanh-GELU), a final RMSNorm and the LM head tied to the token embedding.
// No biases.
//
// Parameters live in ONE contiguous fp32 master buffer (hashing, optimizer, checkpoints and a
// future all-reduce each see one span), in the order of ParameterLayout. In mixed compute the
// linears read a bf16 working copy of that buffer, refreshed after every optimizer step;
// embeddings and norms read the fp32 master. Gradients are one buffer in the same layout, fp32
// or bf16 (PrecisionConfig::grads).
//
// Every buffer comes from the Backend; the model code never touches memory directly.
#pragma once

#include "fp8lab/backend.hpp"
#include "fp8lab/config.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fp8lab {

// embedding: wte, wpe; norm: RMSNorm weights; matrix: linear weights.
enum class ParamRole : std::uint8_t { embedding, norm, matrix };

struct ParamInfo {
  std::string name;  // "blocks.3.mlp.fc.weight" (also the safetensors name)
  Shape shape;
  std::int64_t offset;  // elements from the start of the buffer
  ParamRole role;
  float init_std;  // 0 for norms (initialised to 1)
  std::int64_t numel() const { return shape.numel(); }
};

class ParameterLayout {
 public:
  explicit ParameterLayout(const ModelConfig& config);
  const std::vector<ParamInfo>& params() const { return params_; }
  std::int64_t total() const { return total_; }
  const ParamInfo& find(std::string_view name) const;  // throws naming the unknown parameter

 private:
  std::vector<ParamInfo> params_;
  std::int64_t total_ = 0;
};

// Deterministic initialisation on the host: parameter p gets
// fill_normal(seed, stream_id(p.name), 0, p.init_std), norms 1. Independent of policy, backend and
// thread count, so every run with the same seed starts from the same bytes.
void init_parameters_host(const ParameterLayout& layout, std::uint64_t seed, float* out);

// The view of parameter p inside a flat buffer laid out like the parameters (master weights,
// gradients, optimizer moments, the bf16 working copy): same dtype, p's offset and shape.
TensorView param_slice(const TensorView& flat, const ParamInfo& p);

// The linear mode each block linear uses under a precision config.
enum class BlockLinear : std::uint8_t { attn_qkv, attn_proj, mlp_fc, mlp_proj };
LinearMode linear_mode_for(const PrecisionConfig& precision, BlockLinear which);

class GptModel {
 public:
  // Allocates parameters, gradients and the activations of one micro-batch of `micro_batch`
  // sequences of config.seq_len tokens.
  GptModel(const ModelConfig& config, const PrecisionConfig& precision, std::int64_t micro_batch,
           Backend& backend);
  ~GptModel();
  GptModel(const GptModel&) = delete;
  GptModel& operator=(const GptModel&) = delete;

  const ModelConfig& config() const { return config_; }
  const PrecisionConfig& precision() const { return precision_; }
  const ParameterLayout& layout() const { return layout_; }
  std::int64_t parameter_count() const { return layout_.total(); }
  std::int64_t micro_batch() const { return micro_batch_; }
  Backend& backend() { return backend_; }

  void init_parameters(std::uint64_t seed);
  void set_parameters(const std::vector<float>& host);  // full layout; refreshes working copy
  std::vector<float> get_parameters();
  std::vector<float> get_gradients();  // widened to fp32 when the buffer is bf16
  std::string parameter_sha256();  // SHA-256 of the fp32 master bytes (little-endian)

  TensorView master() const { return master_.view(); }
  // The gradients, f32 or bf16 (PrecisionConfig::grads). Reading them (grads, grad, get_gradients)
  // right after zero_grads gives zeros: these accessors zero the buffer then, if the next
  // forward_backward has not yet written it.
  TensorView grads() const;
  TensorView param(const ParamInfo& p) const;  // f32 view into the master buffer
  TensorView grad(const ParamInfo& p) const;   // view into the gradient buffer
  void refresh_working_weights();              // after the master weights changed
  // The bf16 working copy of p that the linears read; empty (data null) in fp32 compute, where
  // they read the master itself, and for a weight the model keeps in the master only (an FP8
  // block linear's under PrecisionConfig::fp8_weights_from_master).
  TensorView working_copy(const ParamInfo& p) const;
  // The weight a linear reads: p's working copy; for a weight kept in the master only, the
  // master converted to bf16 (the working copy's bits) into the model's one-weight scratch, which
  // the next such call overwrites, in stream order (each linear queues its reads of W before it
  // returns); in fp32 compute the master itself.
  TensorView linear_weight(const ParamInfo& p);
  // The gradients read as zero from here on. The buffer itself is not zeroed: the next
  // forward_backward writes the gradients instead of adding to them (GradWrite::overwrite for
  // the linears, the LM head and the norm gains; wpe, whose kernel only adds, is zeroed first).
  // Zeroing all of it cost 1.2 ms per gpt1.3b step on the H200.
  void zero_grads();

  // The FP8 linears' amax is producer-fused (AmaxSlot in backend.hpp; tensorwise recipe): the
  // ops that write an FP8 linear's input (the RMSNorms into qkv and fc, the attention into
  // attn.proj, GELU into mlp.proj; in the backward the converts into the projections' dY,
  // GELU's backward into fc's and the attention backward into qkv's) also reduce its amax, and
  // the linear skips its own pass over the tensor. The slots (one per block and linear, for x
  // and for dY) are deferred: the producers only accumulate, each FP8 linear finalises its
  // scale as it casts, and every slot is zeroed once at the start of each forward.
  //
  // W's amax comes from the optimizer: the update that writes an FP8 linear's bf16 working
  // weight (Backend::adamw_update with working_amax) reduces its amax as it stores it, and the
  // linear's W cast takes it from there instead of reading W once more. The slots (one per FP8
  // block linear, deferred) hold the amax of the working copy from an update that wrote every
  // weight (begin_weight_update ... finish_weight_update) until anything else writes it
  // (refresh_working_weights, set_parameters, init_parameters); outside that window each W cast
  // reads W for its amax, with the same bits.
  // For the optimizer. The slot of p's working-copy amax, to hand to adamw_update with p's
  // working copy; empty when p is not an FP8 linear's weight.
  AmaxSlot weight_amax_slot(const ParamInfo& p) const;
  // Around an update of the working copy: begin zeroes the slots and stops the linears trusting
  // them; finish says every weight_amax_slot was handed to the update of its whole weight, so
  // the next forwards may use them. An update that fails between the two leaves them unused.
  void begin_weight_update();
  void finish_weight_update();
  // Whether the next forward's FP8 linears take W's amax from the slots (tests, benchmarks).
  bool weight_amax_current() const { return w_amax_current_; }

  // The residual add runs inside the RMSNorm that reads its sum (Backend::add_rmsnorm_forward:
  // every add but the embedding is followed by ln2, the next block's ln1 or ln_f), and the
  // backward's activation-dtype copy of the residual gradient (the projections' dY) is written
  // by the RMSNorm backward that updates it (rmsnorm_backward_and_convert).
  //
  // The MLP's fc and GELU run as one op (Backend::linear_gelu_forward); the GELU backward is its
  // own op after proj's backward. A backend may take GELU of fc's product before its rounding
  // (the CUDA backend does in bf16), so the loss can differ from the separate ops' by roundings,
  // not by formula. Pointwise recompute of gelu keeps the separate ops: its backward rebuilds
  // gelu with gelu_forward from the kept fc, and proj's dW must see the bits its forward saw.

  // One micro-batch: inputs and targets are host int32 [micro_batch * seq_len]. Accumulates
  // grad_scale * d(sum of token losses)/dparams into the gradients (pick 1 / total counted
  // targets of the optimizer step for a mean loss).
  LossSums forward_backward(const std::int32_t* inputs, const std::int32_t* targets,
                            float grad_scale, int ignore_index, int loss_chunk_rows);
  // Loss only, no gradients.
  LossSums evaluate(const std::int32_t* inputs, const std::int32_t* targets, int ignore_index,
                    int loss_chunk_rows);

  // Gradient readiness, for all-reducing gradient buckets while the backward still runs.
  // The hook is called by every forward_backward's backward each time the range [begin, end) of
  // the flat gradient buffer has received its last contribution of that backward: after the
  // last block (its range includes ln_f, which follows it in the layout), after each earlier
  // block, and after the embedding backward ([0, blocks.0): wte, whose LM-head contribution
  // came first, and wpe). The ranges descend and cover [0, parameter_count()) exactly once per
  // backward; their begins are gradient_ready_points(), in that order. "Final" is per backward:
  // with gradient accumulation only the last micro-batch's calls mean final for the step.
  // The hook runs when the work is ENQUEUED: on the CUDA backend the consumer must order
  // itself after the backend's stream. No hook (the default): nothing is called.
  using GradientReadyHook = std::function<void(std::int64_t begin, std::int64_t end)>;
  void set_gradient_ready_hook(GradientReadyHook hook) { gradient_ready_hook_ = std::move(hook); }
  std::vector<std::int64_t> gradient_ready_points() const;

 private:
  struct Activations;
  struct Block;
  void forward(bool training);
  // state_only: the backward's recompute (proj's output is not needed, only its saved state).
  void mlp_forward(std::int64_t layer, bool state_only);
  // Block `layer`'s qkv linear forward (also the backward's recompute under qkv_recompute).
  void qkv_forward(std::int64_t layer);
  void backward();
  void block_backward(std::int64_t layer);
  // sum = x + branch, then y, rstd = RMSNorm(sum) with weight `w`, in one op.
  void add_and_norm(const TensorView& x, const TensorView& branch, const TensorView& sum,
                    const ParamInfo& w, const TensorView& y, const TensorView& rstd, AmaxSlot amax);
  // Block `layer`'s residual sum after its attention branch (the MLP's input): its own f32
  // buffer, or the shared one under residual recompute.
  const TensorView& mid_resid(std::int64_t layer) const;
  // Residual recompute: that sum again from the block's input and its kept attn.proj output,
  // before anything in the block's backward reads it; with pointwise recompute of ln2, ln2 is
  // rebuilt in the same pass (recompute_norm's bits).
  void rebuild_mid_resid(std::int64_t layer);
  // The RMSNorm backward (dy -> a.dresid, dw); with `next_dy` (the linear whose backward reads
  // the residual gradient next) also a.d_branch = dresid as that linear's dY, with its amax.
  void norm_backward(const TensorView& x, const ParamInfo& w, const TensorView& rstd,
                     const TensorView& dy, std::optional<BlockLinear> next_dy,
                     std::int64_t next_layer);
  // Pointwise recompute: block `layer`'s ln1 (reader attn_qkv) or ln2 (reader mlp_fc) again,
  // into ln_shared where the forward stored it, the same bits.
  void recompute_norm(std::int64_t layer, BlockLinear reader);
  // The producer-fused amax slot of `which`'s x (forward) or dY (backward) in block `layer`;
  // empty when the linear is not a tensorwise FP8 one (fused_amax_linear).
  AmaxSlot x_amax(std::int64_t layer, BlockLinear which) const;
  AmaxSlot dy_amax(std::int64_t layer, BlockLinear which) const;
  // W's slot of `which` in block `layer` while weight_amax_current(), or always for a weight cast
  // from the master (the forward's linear_weight fills it); empty otherwise.
  AmaxSlot w_amax(std::int64_t layer, BlockLinear which) const;
  AmaxSlot slot(int index, Fp8Format format) const;
  // `which` is an FP8 linear whose amax a producer may fuse (the tensorwise recipe).
  bool fused_amax_linear(BlockLinear which) const;
  AmaxSlot weight_slot(int index) const;  // index: layer * 4 + BlockLinear
  // The W slot of the tensorwise FP8 block linear whose weight p is; empty for any other p.
  AmaxSlot block_weight_slot(const ParamInfo& p) const;
  // p's index in the layout's parameter list.
  std::size_t param_index(const ParamInfo& p) const;
  // Whether p (by index) is kept in the master only (fp8_weights_from_master).
  bool master_only(std::size_t index) const;
  // The gradient of p as the backward writes it: no zeroing of a pending zero_grads (grad does).
  TensorView grad_target(const ParamInfo& p) const;
  // Zeroes the gradient buffer if zero_grads is still pending (the accessors' side of it).
  void settle_zero_grads() const;
  // Before a backward that overwrites: zeroes the gradients of the ops that only add (wpe), in
  // runs of neighbours in the layout.
  void zero_added_grads();
  const ParamInfo& block_param(std::int64_t layer, std::string_view suffix) const;
  LossSums loss(const std::int32_t* inputs, const std::int32_t* targets, int ignore_index,
                int chunk_rows, bool training, float grad_scale);

  ModelConfig config_;
  PrecisionConfig precision_;
  std::int64_t micro_batch_;
  Backend& backend_;
  ParameterLayout layout_;
  DType act_dtype_;
  Buffer master_, working_, grads_;
  // Per parameter, where its working copy starts in working_ (elements; the copies of the
  // other parameters packed in layout order), or -1 where it has none.
  std::vector<std::int64_t> working_offset_;
  Buffer weight_scratch_;     // bf16, room for the largest weight kept in the master only
  Buffer weight_amax_slots_;  // one per block linear when any is FP8 (weight_amax_slot)
  std::unique_ptr<Activations> acts_;
  GradientReadyHook gradient_ready_hook_;
  bool w_amax_current_ = false;  // the slots hold the working copy's amax (finish_weight_update)
  // zero_grads was called and no backward has written the gradients since (zero_grads).
  mutable bool grads_zero_pending_ = false;
  // How the running backward stores the GEMM-written gradients (overwrite after zero_grads).
  GradWrite dw_write_ = GradWrite::accumulate;
};

}  // namespace fp8lab
