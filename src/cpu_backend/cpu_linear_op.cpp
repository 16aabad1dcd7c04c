// The CPU backend's linear op: the fp32 reference GEMMs for LinearMode::f32, and the CPU
// reference linear layer (fp8lab/linear.hpp) for bf16 and fp8. The FP8 operands that the forward
// saves for the backward are allocated through the backend, so they count toward its peak.
#include <optional>
#include <string>
#include <vector>

#include "cpu_backend/cpu_backend.hpp"
#include "fp8lab/linear.hpp"
#include "nn/op_shapes.hpp"

namespace fp8lab::cpu {
namespace {

struct CpuLinearContext final : LinearContext {
  LinearMode mode = LinearMode::f32;
  LinearConfig config;
  TensorView x, w;             // f32 mode: the caller's inputs (alive until the backward)
  std::vector<Buffer> fp8;     // fp8 mode: the forward-rounded operands and their scales
  LinearSaved saved;           // bf16/fp8 modes: what linear_forward_cpu left for the backward
};

// A buffer of the backend for an FP8 operand or its inverse scales (mode tensor: none).
TensorView take(CpuBackend& b, std::vector<Buffer>& keep, MemoryKind kind, DType dtype,
                const Shape& shape, const char* name) {
  keep.push_back(b.allocate(kind, dtype, shape, name));
  return keep.back().view();
}

TensorView take_scales(CpuBackend& b, std::vector<Buffer>& keep, MemoryKind kind, ScaleMode mode,
                       std::int64_t rows, std::int64_t cols, const char* name) {
  if (mode == ScaleMode::tensor) return {};
  return take(b, keep, kind, DType::f32, {ScaleLayout{mode, rows, cols}.count()}, name);
}

void check_linear_shapes(const TensorView& x, const TensorView& w, const TensorView& y) {
  check_rank(x, 2, "linear x");
  check_rank(w, 2, "linear w");
  check_rank(y, 2, "linear y");
  FP8LAB_CHECK_KIND(
      ErrorKind::shape,
      x.shape[1] == w.shape[1] && y.shape[0] == x.shape[0] && y.shape[1] == w.shape[0],
      "linear: x {}, w {}, y {} do not fit [M, K], [N, K], [M, N]", x.describe(), w.describe(),
      y.describe());
}

// The amax a producer left in the slot, for an fp8 linear; nothing for the other modes.
std::optional<float> given_amax(AmaxSlot slot, LinearMode mode, Fp8Format format,
                                const std::string& tensor) {
  if (!slot || mode != LinearMode::fp8) return std::nullopt;
  check_amax_slot_format(slot, format, tensor);
  return slot.meta->amax;
}

int dim(std::int64_t v) {
  return static_cast<int>(v);
}

}  // namespace

std::unique_ptr<LinearContext> CpuBackend::linear_forward(LinearMode mode, const TensorView& x,
                                                          const TensorView& w,
                                                          const TensorView& y_or_null,
                                                          std::string_view name, AmaxSlot x_amax,
                                                          AmaxSlot w_amax) {
  // No output wanted (a recompute for the backward's state): compute into a scratch y; the
  // reference keeps one code path, and the saved state is the same bits either way.
  HostTensor scratch_y;
  TensorView output = y_or_null;
  if (output.data == nullptr) {
    check_rank(x, 2, "linear x");
    check_rank(w, 2, "linear w");
    scratch_y = HostTensor(mode == LinearMode::f32 ? DType::f32 : DType::bf16,
                           {x.shape[0], w.shape[0]});
    output = scratch_y.view();
  }
  const TensorView& y = output;
  check_linear_shapes(x, w, y);
  auto ctx = std::make_unique<CpuLinearContext>();
  ctx->mode = mode;
  ctx->x = x;
  ctx->w = w;
  const std::int64_t m = x.shape[0], k = x.shape[1], n = w.shape[0];
  if (mode == LinearMode::f32) {
    for (const TensorView* t : {&x, &w, &y}) check_dtype(*t, DType::f32, "f32 linear operand");
    sgemm_nt(dim(m), dim(n), dim(k), 1.f, x.as<const float>(), dim(k), w.as<const float>(), dim(k),
             0.f, y.as<float>(), dim(n));
    return ctx;
  }
  ctx->config.precision = mode == LinearMode::fp8 ? LinearPrecision::fp8 : LinearPrecision::bf16;
  ctx->config.name = std::string(name);
  ctx->config.fp8 = fp8_options();
  ctx->saved.precision = ctx->config.precision;
  ctx->saved.fp8 = ctx->config.fp8;
  if (mode == LinearMode::fp8) {
    const Fp8Options& o = ctx->config.fp8;
    if (o.recipe != Fp8Recipe::tensorwise)
      FP8LAB_CHECK(!x_amax && !w_amax,
                   "linear '{}': a producer-fused amax is tensorwise, the layer runs the {} recipe",
                   name, fp8_recipe_name(o.recipe));
    const OperandScaling xs = operand_scaling(o.recipe, Fp8Role::x);
    const OperandScaling ws = operand_scaling(o.recipe, Fp8Role::w);
    constexpr MemoryKind kAct = MemoryKind::activations;
    LinearSaved& s = ctx->saved;
    std::vector<Buffer>& keep = ctx->fp8;
    s.xq = take(*this, keep, kAct, DType::e4m3, {m, k}, "linear.xq");
    s.xq_inv = take_scales(*this, keep, kAct, xs.q, m, k, "linear.xq scales");
    if (!o.bf16_wgrad) {
      s.xq_t = take(*this, keep, kAct, DType::e4m3, {k, m}, "linear.xq_t");
      s.xq_t_inv = take_scales(*this, keep, kAct, xs.qt, k, m, "linear.xq_t scales");
    }
    s.wq = take(*this, keep, kAct, DType::e4m3, {n, k}, "linear.wq");
    s.wq_inv = take_scales(*this, keep, kAct, ws.q, n, k, "linear.wq scales");
    s.wq_t = take(*this, keep, kAct, DType::e4m3, {k, n}, "linear.wq_t");
    s.wq_t_inv = take_scales(*this, keep, kAct, ws.qt, k, n, "linear.wq_t scales");
  }
  linear_forward_cpu(ctx->config, x, w, y, ctx->saved,
                     given_amax(x_amax, mode, Fp8Format::e4m3, ctx->config.name + ".x"),
                     given_amax(w_amax, mode, Fp8Format::e4m3, ctx->config.name + ".w"));
  return ctx;
}

void CpuBackend::linear_backward(LinearContext& saved, const TensorView& dy, const TensorView& dx,
                                 const TensorView& dw_accum, AmaxSlot dy_amax,
                                 GradWrite dw_write) {
  const bool accumulate = dw_write == GradWrite::accumulate;
  auto* ctx = dynamic_cast<CpuLinearContext*>(&saved);
  FP8LAB_CHECK(ctx != nullptr, "linear_backward: the saved state was not made by the CPU backend");
  nn::check_grad_dtype(dw_accum, "linear dw");
  check_shape(dw_accum, ctx->w.shape, "linear dw");
  check_shape(dy, {ctx->x.shape[0], ctx->w.shape[0]}, "linear dy");
  check_shape(dx, ctx->x.shape, "linear dx");
  const std::int64_t m = ctx->x.shape[0], k = ctx->x.shape[1], n = ctx->w.shape[0];
  if (ctx->mode == LinearMode::f32) {
    check_dtype(dy, DType::f32, "f32 linear dy");
    check_dtype(dx, DType::f32, "f32 linear dx");
    check_dtype(dw_accum, DType::f32, "f32 linear dw");
    sgemm_nn(dim(m), dim(k), dim(n), 1.f, dy.as<const float>(), dim(n), ctx->w.as<const float>(),
             dim(k), 0.f, dx.as<float>(), dim(k));
    sgemm_tn(dim(n), dim(k), dim(m), 1.f, dy.as<const float>(), dim(n), ctx->x.as<const float>(),
             dim(k), accumulate ? 1.f : 0.f, dw_accum.as<float>(), dim(k));
    return;
  }
  LinearScratch scratch;
  std::vector<Buffer> keep;
  if (ctx->mode == LinearMode::fp8) {
    const Fp8Options& o = ctx->config.fp8;
    if (o.recipe != Fp8Recipe::tensorwise)
      FP8LAB_CHECK(!dy_amax,
                   "linear '{}': a producer-fused amax is tensorwise, the layer runs the {} recipe",
                   ctx->config.name, fp8_recipe_name(o.recipe));
    const OperandScaling ds = operand_scaling(o.recipe, Fp8Role::dy);
    constexpr MemoryKind kWs = MemoryKind::workspace;
    scratch.dyq = take(*this, keep, kWs, DType::e5m2, {m, n}, "linear.dyq");
    scratch.dyq_inv = take_scales(*this, keep, kWs, ds.q, m, n, "linear.dyq scales");
    if (!o.bf16_wgrad) {
      scratch.dyq_t = take(*this, keep, kWs, DType::e5m2, {n, m}, "linear.dyq_t");
      scratch.dyq_t_inv = take_scales(*this, keep, kWs, ds.qt, n, m, "linear.dyq_t scales");
    }
  }
  linear_backward_cpu(ctx->config, ctx->saved, dy, dx, dw_accum, scratch, accumulate,
                      given_amax(dy_amax, ctx->mode, Fp8Format::e5m2, ctx->config.name + ".dy"));
}

}  // namespace fp8lab::cpu
