// Parameter layout (names, shapes, offsets) and the deterministic initialisation.
#include "fp8lab/error.hpp"
#include "fp8lab/model.hpp"
#include "fp8lab/rng.hpp"

#include <cmath>

namespace fp8lab {

ParameterLayout::ParameterLayout(const ModelConfig& c) {
  c.validate();
  const std::int64_t d = c.d_model;
  // GPT-2's scaled init: the two projections that write into the residual stream get
  // init_std / sqrt(2 L), so the residual variance does not grow with depth.
  const float proj_std = c.init_std / std::sqrt(2.f * static_cast<float>(c.n_layers));
  auto add = [&](std::string name, Shape shape, ParamRole role, float std_dev) {
    params_.push_back({std::move(name), shape, total_, role, std_dev});
    total_ += shape.numel();
  };
  add("wte.weight", {c.vocab_size, d}, ParamRole::embedding, c.init_std);
  add("wpe.weight", {c.seq_len, d}, ParamRole::embedding, 0.5f * c.init_std);
  for (std::int64_t l = 0; l < c.n_layers; ++l) {
    const std::string p = "blocks." + std::to_string(l) + ".";
    add(p + "ln1.weight", {d}, ParamRole::norm, 0.f);
    add(p + "attn.qkv.weight", {3 * d, d}, ParamRole::matrix, c.init_std);
    add(p + "attn.proj.weight", {d, d}, ParamRole::matrix, proj_std);
    add(p + "ln2.weight", {d}, ParamRole::norm, 0.f);
    add(p + "mlp.fc.weight", {c.d_ff(), d}, ParamRole::matrix, c.init_std);
    add(p + "mlp.proj.weight", {d, c.d_ff()}, ParamRole::matrix, proj_std);
  }
  add("ln_f.weight", {d}, ParamRole::norm, 0.f);
}

const ParamInfo& ParameterLayout::find(std::string_view name) const {
  for (const ParamInfo& p : params_) {
    if (p.name == name) return p;
  }
  FP8LAB_FAIL(ErrorKind::invalid_argument, "no parameter named '{}' in a layout of {} tensors",
              name, params_.size());
}

void init_parameters_host(const ParameterLayout& layout, std::uint64_t seed, float* out) {
  for (const ParamInfo& p : layout.params()) {
    float* dst = out + p.offset;
    if (p.role == ParamRole::norm) {
      for (std::int64_t i = 0; i < p.numel(); ++i) dst[i] = 1.f;
    } else {
      fill_normal(dst, p.numel(), seed, stream_id(p.name), 0.f, p.init_std);
    }
  }
}

LinearMode linear_mode_for(const PrecisionConfig& precision, BlockLinear which) {
  if (precision.compute == ComputeMode::fp32) return LinearMode::f32;
  switch (precision.policy) {
    case PrecisionPolicy::bf16:
      return LinearMode::bf16;
    case PrecisionPolicy::fp8_linears:
      return LinearMode::fp8;
    case PrecisionPolicy::fp8_mlp:
      return which == BlockLinear::mlp_fc || which == BlockLinear::mlp_proj ? LinearMode::fp8
                                                                            : LinearMode::bf16;
  }
  return LinearMode::bf16;
}

}  // namespace fp8lab
