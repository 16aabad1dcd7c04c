// AdamW, learning-rate schedule and gradient norms.
#include "fp8lab/optimizer.hpp"

#include "fp8lab/error.hpp"
#include "fp8lab/fp8_format.hpp"  // bf16 conversions

#include <algorithm>
#include <cmath>
#include <numbers>

namespace fp8lab {

float learning_rate(const OptimConfig& o, std::int64_t train_steps, std::int64_t step) {
  if (step < o.warmup_steps) {
    return o.lr * static_cast<float>(step + 1) / static_cast<float>(o.warmup_steps);
  }
  if (o.decay == "constant") return o.lr;
  const std::int64_t end = o.decay_steps > 0 ? o.decay_steps : train_steps;
  const double span = static_cast<double>(std::max<std::int64_t>(1, end - o.warmup_steps));
  const double progress = std::clamp(static_cast<double>(step - o.warmup_steps) / span, 0.0, 1.0);
  const double range = static_cast<double>(o.lr) - o.min_lr;
  if (o.decay == "linear") return static_cast<float>(o.lr - range * progress);
  return static_cast<float>(o.min_lr + 0.5 * range * (1.0 + std::cos(std::numbers::pi * progress)));
}

std::vector<double> gradient_sums_of_squares(GptModel& model) {
  std::vector<double> sums;
  for (const ParamInfo& p : model.layout().params()) {
    sums.push_back(model.backend().sum_of_squares(model.grad(p)));
  }
  return sums;
}

AdamW::AdamW(const OptimConfig& optim, GptModel& model)
    : AdamW(optim, model, Shard{0, model.parameter_count()}) {}

AdamW::AdamW(const OptimConfig& optim, GptModel& model, Shard shard)
    : optim_(optim), model_(model), shard_(shard) {
  FP8LAB_CHECK(shard.begin >= 0 && shard.begin <= shard.end && shard.end <= model.parameter_count(),
               "AdamW shard [{}, {}) outside the {} parameters", shard.begin, shard.end,
               model.parameter_count());
  const Shape shape{shard.size()};
  FP8LAB_CHECK(optim.moments == DType::f32 || optim.moments == DType::bf16,
               "AdamW moments in {}: fp32 or bf16 only", dtype_name(optim.moments));
  m_ = model.backend().allocate(MemoryKind::optimizer, optim.moments, shape, "adam.exp_avg");
  v_ = model.backend().allocate(MemoryKind::optimizer, optim.moments, shape, "adam.exp_avg_sq");
  model.backend().fill_zero(m_);
  model.backend().fill_zero(v_);
}

bool AdamW::decays(const ParamInfo& p) const {
  switch (p.role) {
    case ParamRole::matrix:
      return true;
    case ParamRole::norm:
      return optim_.decay_norms;
    case ParamRole::embedding:
      return optim_.decay_embeddings;
  }
  return true;
}

TensorView AdamW::m(const ParamInfo& p) const {
  FP8LAB_CHECK(holds_all(), "AdamW::m({}): this optimizer holds only the shard [{}, {})", p.name,
               shard_.begin, shard_.end);
  return param_slice(m_.view(), p);
}

TensorView AdamW::v(const ParamInfo& p) const {
  FP8LAB_CHECK(holds_all(), "AdamW::v({}): this optimizer holds only the shard [{}, {})", p.name,
               shard_.begin, shard_.end);
  return param_slice(v_.view(), p);
}

namespace {

// Elements [begin, end) of a flat buffer as a 1-D view.
TensorView flat_range(const TensorView& t, std::int64_t begin, std::int64_t end) {
  return {static_cast<char*>(t.data) + static_cast<std::size_t>(begin) * dtype_size(t.dtype),
          t.dtype, Shape{end - begin}, t.device};
}

}  // namespace

std::vector<float> AdamW::m_host() const { return download_as_f32(model_.backend(), m_.view()); }

std::vector<float> AdamW::v_host() const { return download_as_f32(model_.backend(), v_.view()); }

void AdamW::set_moments(const float* m, const float* v) {
  upload_from_f32(model_.backend(), m_.view(), m);
  upload_from_f32(model_.backend(), v_.view(), v);
}

void AdamW::step(float lr, float grad_scale) {
  ++updates_;
  AdamWStep s;
  s.lr = lr;
  s.beta1 = optim_.beta1;
  s.beta2 = optim_.beta2;
  s.eps = optim_.eps;
  const double t = static_cast<double>(updates_);
  s.bias_correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(optim_.beta1), t));
  s.bias_correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(optim_.beta2), t));
  s.grad_scale = grad_scale;
  // Holding every parameter, the update writes each whole working weight, and with it each FP8
  // linear's W amax (GptModel::weight_amax_slot); a shard's update writes no working copy.
  const bool whole = writes_working_copy();
  if (whole) model_.begin_weight_update();
  for (const ParamInfo& p : model_.layout().params()) {
    s.weight_decay = decays(p) ? optim_.weight_decay : 0.f;
    const std::int64_t begin = std::max(p.offset, shard_.begin);
    const std::int64_t end = std::min(p.offset + p.numel(), shard_.end);
    if (begin >= end) continue;  // another rank's parameter
    if (begin == p.offset && end == p.offset + p.numel()) {
      // The whole tensor: the same calls as without sharding (the update is elementwise, so a
      // split tensor gets the same bits too).
      const Shape& shape = p.shape;
      const TensorView mv = flat_range(m_.view(), begin - shard_.begin, end - shard_.begin);
      const TensorView vv = flat_range(v_.view(), begin - shard_.begin, end - shard_.begin);
      model_.backend().adamw_update(model_.param(p), model_.grad(p),
                                    {mv.data, mv.dtype, shape, mv.device},
                                    {vv.data, vv.dtype, shape, vv.device}, s,
                                    whole ? model_.working_copy(p) : TensorView{},
                                    whole ? model_.weight_amax_slot(p) : AmaxSlot{});
    } else {
      model_.backend().adamw_update(flat_range(model_.master(), begin, end),
                                    flat_range(model_.grads(), begin, end),
                                    flat_range(m_.view(), begin - shard_.begin, end - shard_.begin),
                                    flat_range(v_.view(), begin - shard_.begin, end - shard_.begin),
                                    s);
    }
  }
  if (whole) model_.finish_weight_update();
}

}  // namespace fp8lab
