// The op interface: every computation of the GPT model goes through a Backend.
//
// Model code holds TensorViews and calls these ops; it never knows whether the memory is host or
// device memory. Every buffer the model uses (parameters, gradients, optimizer moments,
// activations, scratch) is allocated through Backend::allocate, so a backend can plan them (the
// CUDA backend places activations in an arena) and report the peak it reached.
//
// Conventions shared by all backends (the CPU backend is the reference):
// - Tensors are contiguous and row-major; M = batch * seq_len rows of token activations.
// - Activation arguments are f32 or bf16 (each argument independently); ops compute in fp32 and
//   round once when they store bf16. Gradients of parameters are f32 or bf16
//   (PrecisionConfig::grads) and ops ACCUMULATE into them (dW += ...), so tied weights and
//   gradient accumulation need no extra buffers; into bf16 an op adds its whole contribution to
//   the widened stored value in fp32 and rounds once.
// - "dx_accum" arguments are accumulated (+=), "dx" arguments are overwritten. The dW of the
//   linears, the LM head and the RMSNorm gains may instead be written (GradWrite::overwrite):
//   the first micro-batch of a step then needs no zeroed gradient buffer.
// - Token ids and targets are i32.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "fp8lab/fp8_format.hpp"
#include "fp8lab/fp8_meta.hpp"
#include "fp8lab/fp8_recipe.hpp"
#include "fp8lab/kernel_options.hpp"
#include "fp8lab/tensor.hpp"

namespace fp8lab {

// What a buffer holds; backends may place kinds differently and report peaks per kind.
enum class MemoryKind : std::uint8_t { parameters, gradients, optimizer, activations, workspace };
const char* memory_kind_name(MemoryKind kind);

// An owning handle to backend memory. Moving transfers ownership; destruction frees. A Buffer
// must be destroyed before the Backend that allocated it.
class Buffer {
 public:
  Buffer() = default;
  Buffer(TensorView view, std::function<void()> release);
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  const TensorView& view() const { return view_; }
  operator const TensorView&() const { return view_; }

 private:
  void reset();
  TensorView view_;
  std::function<void()> release_;
};

struct MemoryStats {
  std::int64_t current_bytes = 0;
  std::int64_t peak_bytes = 0;
  // current_bytes by MemoryKind (indexed by its value): the training state (parameters,
  // gradients, optimizer) apart from the activations and workspaces.
  std::array<std::int64_t, 5> current_by_kind{};
  std::int64_t current(MemoryKind kind) const {
    return current_by_kind[static_cast<std::size_t>(kind)];
  }
};

// How an op stores a parameter gradient: dW += ... (accumulate, the default) or dW = ...
// (overwrite: the first micro-batch of a step, which then needs no fill_zero of the gradients
// first; the f32 gradients take 1.2 ms to zero per gpt1.3b step on the H200). The values are
// those of accumulating into zeros: only a -0 may come out where the accumulation gave +0.
enum class GradWrite : std::uint8_t { accumulate, overwrite };

// Which arithmetic a linear layer uses. f32: the fp32 reference (finite-difference tests);
// bf16: BF16 operands, fp32 accumulation; fp8: current-scaled E4M3/E5M2 (design §2) under the
// backend's FP8 options (Backend::set_fp8_options: the scaling recipe, a BF16 wgrad).
enum class LinearMode : std::uint8_t { f32, bf16, fp8 };
const char* linear_mode_name(LinearMode p);

// What a linear forward keeps for its backward (e.g. the forward-rounded FP8 operands and their
// scales). Backend-specific; the model only stores and returns it.
class LinearContext {
 public:
  virtual ~LinearContext() = default;
};

struct AdamWStep {
  float lr = 0.f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.f;      // decoupled: p -= lr * wd * p (0 for excluded tensors)
  float bias_correction1 = 1.f;  // 1 - beta1^t
  float bias_correction2 = 1.f;  // 1 - beta2^t
  // The gradient is multiplied by this first, rounded once: the gradient-norm clip folded into
  // the update (the same bits as scale_inplace(grad, grad_scale) before it; 1: no clipping).
  float grad_scale = 1.f;
};

// Sums over the rows of one cross-entropy call: the model divides by the global count.
struct LossSums {
  double loss_sum = 0.0;     // sum of -log p(target) over counted rows
  std::int64_t counted = 0;  // rows whose target is not ignore_index
};

// Producer-fused amax. An FP8 linear must know max|x| of its input before it can cast it (current
// scaling, design §2), which costs one extra full read of x. When the op that wrote x is one of
// the model's own (RMSNorm, GELU, a convert), it can reduce that maximum over the values it
// stores while it stores them. An AmaxSlot is where such an op leaves the result: one Fp8Meta in
// the backend's memory, filled exactly as the linear's own amax pass fills its meta (the maximum
// over the STORED values, e.g. after bf16 rounding; NaN above inf; the scale from
// scale_from_amax for `format`; the non-finite flag). Handing the same slot to linear_forward
// (x, e4m3) or linear_backward (dy, e5m2) makes the linear take its amax from there instead of
// reading the tensor again; every byte it computes is the same. An empty slot (the default)
// changes nothing: the producer only produces, the linear computes its own amax.
//
// Deferred slots: the producer only accumulates max|stored| into the slot (the CUDA kernels'
// atomicMax of keys, no finalising ticket), and the linear that reads the slot derives the
// amax and scale from that, the same bits again. The slot must hold zero before its producer
// runs (the owner zeroes it, e.g. GptModel once per forward for slots used once per step), and
// a producer that runs again over the same values leaves it unchanged. Why: on the GPU the
// ticket's round trip holds each CTA ~0.8 us after its last store, which costs the attention
// kernels and other one-CTA-per-SM producers 3-17% (docs/performance.md, "Casts and amax"). A
// backend whose producers always finalise (the CPU) may ignore the flag.
struct AmaxSlot {
  Fp8Meta* meta = nullptr;             // backend memory; null: no fused amax
  Fp8Format format = Fp8Format::e4m3;  // the cast the scale is for: e4m3 (x) or e5m2 (dy)
  bool deferred = false;               // see above
  explicit operator bool() const { return meta != nullptr; }
};

class Backend;
// `count` zeroed slots in one buffer (u8 [count * sizeof(Fp8Meta)]).
Buffer allocate_amax_slots(Backend& backend, int count, MemoryKind kind, std::string_view name);
// Slot `index` of such a buffer, for a cast in `format`.
AmaxSlot amax_slot(const Buffer& slots, int index, Fp8Format format);
// A linear's check that the slot it was handed holds the scale of its cast of `tensor`.
void check_amax_slot_format(AmaxSlot slot, Fp8Format cast, std::string_view tensor);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual std::string name() const = 0;
  // The hardware the backend computes on, as a run record names it ("NVIDIA H200", or the CPU's
  // model name): timings from two devices are not comparable.
  virtual std::string device_name() const = 0;

  // The recipe of every LinearMode::fp8 linear from now on (fp8lab/fp8_recipe.hpp); GptModel
  // sets it from its PrecisionConfig. The producer-fused amax (AmaxSlot) is tensorwise: under
  // the other recipes the linears take no slots (an FP8 linear handed one is an error).
  void set_fp8_options(const Fp8Options& options) { fp8_options_ = options; }
  const Fp8Options& fp8_options() const { return fp8_options_; }

  // ---- memory -------------------------------------------------------------------------------
  virtual Buffer allocate(MemoryKind kind, DType dtype, const Shape& shape,
                          std::string_view name) = 0;
  virtual MemoryStats memory_stats() const = 0;
  virtual void upload(const TensorView& dst, const void* host_src) = 0;  // dst.nbytes() bytes
  virtual void download(const TensorView& src, void* host_dst) = 0;
  virtual void synchronize() = 0;
  // Lends the backend memory its owner will not touch until the loan ends (the next lend_idle;
  // an empty region just ends it). While lent, the backend may place the short-lived workspaces
  // of its ops there instead of allocating more (the model lends backward scratch during the
  // forward, for example); a workspace never outlives its op, so none survives the loan. A new
  // loan while a workspace still lives in the old one is an error. Default: unused.
  virtual void lend_idle(const TensorView& region) { (void)region; }

  // ---- elementwise --------------------------------------------------------------------------
  virtual void fill_zero(const TensorView& t) = 0;
  // f32/bf16, same numel; `amax` (optional): the producer-fused amax of dst (see AmaxSlot).
  virtual void convert(const TensorView& src, const TensorView& dst, AmaxSlot amax = {}) = 0;
  virtual void add_inplace(const TensorView& dst, const TensorView& src) = 0;  // dst += src
  // out = a + b (the residual add into the next stream buffer): by default a copy and an
  // add_inplace; a backend may fuse them (same bits: one fp32 add, rounded once on store).
  virtual void add(const TensorView& a, const TensorView& b, const TensorView& out) {
    convert(a, out);
    add_inplace(out, b);
  }
  virtual void scale_inplace(const TensorView& t, float factor) = 0;  // f32 only

  // ---- ops (forward and backward) -------------------------------------------------------------
  // out[m] = wte[tokens[m]] + wpe[m % seq_len]; wte [V, D], wpe [seq_len, D] f32; tokens [M].
  virtual void embedding_forward(const TensorView& tokens, const TensorView& wte,
                                 const TensorView& wpe, const TensorView& out) = 0;
  virtual void embedding_backward(const TensorView& tokens, const TensorView& dout,
                                  const TensorView& dwte_accum, const TensorView& dwpe_accum) = 0;

  // y = x * rstd * w with rstd = 1 / sqrt(mean(x^2) + eps) per row; w [D] f32; rstd [M] f32.
  // `amax` (optional): the producer-fused amax of y (see AmaxSlot); likewise for GELU's y, dx.
  virtual void rmsnorm_forward(const TensorView& x, const TensorView& w, float eps,
                               const TensorView& y, const TensorView& rstd, AmaxSlot amax = {}) = 0;
  // dw_write: dw_accum += or = the gain's gradient (GradWrite).
  virtual void rmsnorm_backward(const TensorView& x, const TensorView& w, const TensorView& rstd,
                                const TensorView& dy, const TensorView& dx_accum,
                                const TensorView& dw_accum,
                                GradWrite dw_write = GradWrite::accumulate) = 0;

  // The residual add and the RMSNorm that reads its sum, in one pass over each row:
  // add(x, branch, sum_out) then rmsnorm_forward(sum_out, w, eps, y, rstd, amax), the same bits.
  // x and sum_out are f32 (the residual stream), branch f32 or bf16; sum_out overlaps nothing.
  // Default: the two unfused ops.
  virtual void add_rmsnorm_forward(const TensorView& x, const TensorView& branch,
                                   const TensorView& sum_out, const TensorView& w, float eps,
                                   const TensorView& y, const TensorView& rstd, AmaxSlot amax = {});
  // rmsnorm_backward, then convert(dx_accum, dx_copy, copy_amax) of the updated dx_accum (the
  // next linear's dY), the same bits; a backend may store the copy as it stores dx_accum instead
  // of reading dx_accum again. A separate op rather than optional arguments of rmsnorm_backward:
  // every backend stays correct through this default, and a backend's rmsnorm_backward needs
  // no "is there a copy" branch. dx_copy overlaps nothing. Default: the two unfused ops.
  virtual void rmsnorm_backward_and_convert(const TensorView& x, const TensorView& w,
                                            const TensorView& rstd, const TensorView& dy,
                                            const TensorView& dx_accum, const TensorView& dw_accum,
                                            const TensorView& dx_copy, AmaxSlot copy_amax = {},
                                            GradWrite dw_write = GradWrite::accumulate);

  // Causal multi-head attention. qkv [M, 3D] holds q | k | v, each split into heads of D / H
  // columns; out [M, D]; lse [B, H, T] f32 (the row log-sum-exp, saved for the backward).
  // `out_amax` (optional): the producer-fused amax of out (see AmaxSlot), attn.proj's x.
  virtual void attention_forward(const TensorView& qkv, int n_heads, int seq_len,
                                 const TensorView& out, const TensorView& lse,
                                 AmaxSlot out_amax = {}) = 0;
  // The backward also takes the forward's `out` (flash-attention's D_i = rowsum(dout_i * out_i));
  // a backend may instead recompute it. `dqkv_amax` (optional): the producer-fused amax of all
  // of dqkv (dq, dk and dv together), attn.qkv's dY.
  virtual void attention_backward(const TensorView& qkv, const TensorView& out,
                                  const TensorView& lse, const TensorView& dout, int n_heads,
                                  int seq_len, const TensorView& dqkv, AmaxSlot dqkv_amax = {}) = 0;

  // GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
  virtual void gelu_forward(const TensorView& x, const TensorView& y, AmaxSlot amax = {}) = 0;
  // dx may be dy (in place).
  virtual void gelu_backward(const TensorView& x, const TensorView& dy, const TensorView& dx,
                             AmaxSlot amax = {}) = 0;

  // y = x W^T; x [M, K], w [N, K], y [M, N]. The returned state feeds linear_backward, which
  // writes dx [M, K] and accumulates dw_accum [N, K] f32 or bf16 (or writes it: dw_write). `name`
  // labels errors (non-finite amax).
  // With y.data == nullptr only the backward's state is made (the same bits, e.g. the same FP8
  // casts) and the product is skipped: MLP recompute needs proj's state, not its output.
  // x_amax / dy_amax (optional, fp8 mode): a slot the op that wrote x / dy filled (AmaxSlot);
  // the linear then skips its own amax pass. w_amax likewise for W, filled by the optimizer
  // update that wrote the working weight (adamw_update's working_amax). Ignored by the bf16 and
  // f32 modes.
  virtual std::unique_ptr<LinearContext> linear_forward(LinearMode precision, const TensorView& x,
                                                        const TensorView& w, const TensorView& y,
                                                        std::string_view name,
                                                        AmaxSlot x_amax = {},
                                                        AmaxSlot w_amax = {}) = 0;
  virtual void linear_backward(LinearContext& saved, const TensorView& dy, const TensorView& dx,
                               const TensorView& dw_accum, AmaxSlot dy_amax = {},
                               GradWrite dw_write = GradWrite::accumulate) = 0;

  // An MLP's first linear and its GELU: pre = x W^T, y = gelu(pre); the returned state is
  // linear_forward's. Default: linear_forward(precision, x, w, pre, name, x_amax, w_amax) then
  // gelu_forward(pre, y, y_amax). A backend may instead take GELU of the product before its
  // rounding to pre's type (the CUDA backend's bf16 GEMM epilogue does), so y can differ from
  // gelu_forward(pre) by a rounding; it must give the same bits on every call (MLP recompute
  // relies on it).
  virtual std::unique_ptr<LinearContext> linear_gelu_forward(
      LinearMode precision, const TensorView& x, const TensorView& w, const TensorView& pre,
      const TensorView& y, std::string_view name, AmaxSlot x_amax = {}, AmaxSlot y_amax = {},
      AmaxSlot w_amax = {});

  // Tied LM head + cross-entropy, chunked over rows so the [M, V] logits never exist at once:
  // logits = x w^T (fp32 accumulation), loss = -log softmax(logits)[target]. Rows whose target
  // equals ignore_index are skipped. With dx.data non-null it also writes
  // dx = grad_scale * dloss/dx and accumulates dw_accum += grad_scale * dloss/dw, where the loss
  // is the SUM over counted rows (the caller picks grad_scale = 1 / global count). With
  // GradWrite::overwrite the first chunk writes dw_accum and the later ones add to it.
  virtual LossSums cross_entropy(const TensorView& x, const TensorView& w,
                                 const TensorView& targets, int ignore_index, int chunk_rows,
                                 float grad_scale, const TensorView& dx,
                                 const TensorView& dw_accum,
                                 GradWrite dw_write = GradWrite::accumulate) = 0;

  // ---- reductions and the optimizer ---------------------------------------------------------
  virtual double sum_of_squares(const TensorView& t) = 0;  // f32 or bf16, accumulated in f64
  virtual bool all_finite(const TensorView& t) = 0;        // f32 or bf16
  // One AdamW update of a parameter tensor (f32 param, grad f32 or bf16, m and v f32 or bf16, of
  // equal numel). `working`
  // (optional, bf16, same numel): also the bf16 copy of the updated param, the bits
  // convert(param, working) would write after it, without a second pass over param.
  // working_amax (optional, with `working`): the slot of that copy's amax, as a producer fills it
  // (AmaxSlot), so an FP8 linear's W cast can skip its own pass over the weight.
  virtual void adamw_update(const TensorView& param, const TensorView& grad, const TensorView& m,
                            const TensorView& v, const AdamWStep& step,
                            const TensorView& working = {}, AmaxSlot working_amax = {}) = 0;

  // ---- inference: generation with a key/value cache (fp8lab/decoder.hpp) ------------------
  // Causal attention of new query rows against one sequence's cache. qkv [n, 3D] holds the
  // q | k | v of the n consecutive positions pos .. pos+n-1 (heads as attention_forward's); the
  // op first stores their k and v into rows pos .. pos+n-1 of k_cache and v_cache ([T, D],
  // qkv's dtype, T the context), then row i of out [n, D] attends to cache rows 0 .. pos+i:
  // softmax(q k^T / sqrt(D / H)) v in fp32, rounded once on store. Rows beyond pos+n-1 are
  // neither read nor written.
  virtual void attention_cached_forward(const TensorView& qkv, int n_heads, std::int64_t pos,
                                        const TensorView& k_cache, const TensorView& v_cache,
                                        const TensorView& out) = 0;
  // The tied LM head's logits, as cross_entropy computes them before its softmax: logits f32
  // [M, V] = x w^T with fp32 accumulation; x [M, D] and w [V, D] f32 or bf16.
  virtual void lm_head_logits(const TensorView& x, const TensorView& w,
                              const TensorView& logits) = 0;

 protected:
  Fp8Options fp8_options_;
};

// An f32 or bf16 backend tensor as fp32 host values (bf16 widened exactly), and back (rounded
// to bf16 to nearest even); the training state kept in either dtype (gradients, moments).
std::vector<float> download_as_f32(Backend& backend, const TensorView& t);
void upload_from_f32(Backend& backend, const TensorView& t, const float* values);

// The reference backend: host memory, OpenMP + BLAS.
std::unique_ptr<Backend> make_cpu_backend();

// The CUDA backend (src/cuda_backend/cuda_backend.cpp) running the kernel families `kernels` names;
// throws fp8lab::Error saying why it cannot start (no GPU, not sm_90, or an fp8lab built
// without CUDA).
std::unique_ptr<Backend> make_cuda_backend(const KernelOptions& kernels = {});

// "cpu", "cuda" or "auto" (choose_backend); throws fp8lab::Error naming unknown backends. The
// CPU backend has one kernel per op and ignores `kernels`.
std::unique_ptr<Backend> make_backend(std::string_view name, const KernelOptions& kernels = {});

// Which backend a command runs on. "auto" (the default of train, eval, bench and sample) is
// "cuda" when this fp8lab was built with CUDA and a usable GPU is present, else "cpu"; "cpu" and
// "cuda" are taken as given. Throws fp8lab::Error naming any other name.
struct BackendChoice {
  std::string name;    // "cpu" or "cuda": what make_backend takes
  std::string reason;  // why: "auto: a usable CUDA GPU", "auto: no CUDA GPU: ...", "asked for"
  // The line each command prints first: "fp8lab <command>: backend cuda (auto: ...)".
  std::string line(std::string_view command) const;
};
BackendChoice choose_backend(std::string_view requested);

}  // namespace fp8lab
