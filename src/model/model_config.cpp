// Model configuration: validation, presets and policy names.
#include "fp8lab/config.hpp"
#include "fp8lab/error.hpp"

namespace fp8lab {

void ModelConfig::validate() const {
  FP8LAB_CHECK(vocab_size > 0 && vocab_size <= (std::int64_t{1} << 31) - 1,
               "model.vocab_size {} must be in [1, 2^31)", vocab_size);
  FP8LAB_CHECK(d_model > 0 && n_layers > 0 && n_heads > 0 && seq_len > 0,
               "model.d_model {}, n_layers {}, n_heads {}, seq_len {} must all be positive",
               d_model, n_layers, n_heads, seq_len);
  FP8LAB_CHECK(d_model % n_heads == 0, "model.d_model {} is not divisible by model.n_heads {}",
               d_model, n_heads);
  // Far beyond any model this trainer can hold, and small enough that sizes cannot overflow
  // int64 and no loop over the layers runs for hours before an allocation fails.
  constexpr std::int64_t kMaxDModel = 1 << 17, kMaxLayers = 1 << 12, kMaxSeqLen = 1 << 24;
  FP8LAB_CHECK(d_model <= kMaxDModel && n_layers <= kMaxLayers && seq_len <= kMaxSeqLen,
               "model.d_model {}, n_layers {}, seq_len {} exceed the limits {}, {}, {}", d_model,
               n_layers, seq_len, kMaxDModel, kMaxLayers, kMaxSeqLen);
  const double d = static_cast<double>(d_model);
  const double params = (static_cast<double>(vocab_size) + static_cast<double>(seq_len)) * d +
                        static_cast<double>(n_layers) * 12.0 * d * d;
  FP8LAB_CHECK(params <= 0x1p40, "model of about {:.3g} parameters: more than 2^40", params);
  FP8LAB_CHECK(norm_eps > 0.f && init_std > 0.f, "model.norm_eps {} and init_std {} must be > 0",
               norm_eps, init_std);
}

void PrecisionConfig::validate() const {
  FP8LAB_CHECK(compute == ComputeMode::mixed || policy == PrecisionPolicy::bf16,
               "precision.compute=fp32 is the fp32 reference and takes policy bf16, not {}",
               policy_name(policy));
  FP8LAB_CHECK(!fp8_weights_from_master || policy != PrecisionPolicy::bf16,
               "precision.fp8_weights_from_master concerns FP8 linears: it needs policy fp8-mlp "
               "or fp8-linears, not {}",
               policy_name(policy));
  FP8LAB_CHECK(!residual_recompute || compute == ComputeMode::mixed,
               "precision.residual_recompute keeps the attention branch in bf16 for the f32 sum "
               "it rebuilds: it needs compute mixed, not {}",
               compute_mode_name(compute));
  FP8LAB_CHECK(grads == DType::f32 || grads == DType::bf16,
               "precision.grads must be fp32 or bf16, not {}", dtype_name(grads));
  FP8LAB_CHECK(grads == DType::f32 || compute == ComputeMode::mixed,
               "precision.grads=bf16 rounds the mixed-precision gradients: it needs compute "
               "mixed, not {} (the fp32 reference keeps fp32 gradients)",
               compute_mode_name(compute));
}

const char* policy_name(PrecisionPolicy p) {
  switch (p) {
    case PrecisionPolicy::bf16:
      return "bf16";
    case PrecisionPolicy::fp8_mlp:
      return "fp8-mlp";
    case PrecisionPolicy::fp8_linears:
      return "fp8-linears";
  }
  return "?";
}

PrecisionPolicy parse_policy(std::string_view name) {
  for (PrecisionPolicy p :
       {PrecisionPolicy::bf16, PrecisionPolicy::fp8_mlp, PrecisionPolicy::fp8_linears}) {
    if (name == policy_name(p)) return p;
  }
  FP8LAB_FAIL(ErrorKind::invalid_argument,
              "unknown precision policy '{}' (expected bf16, fp8-mlp or fp8-linears)", name);
}

const char* compute_mode_name(ComputeMode m) {
  return m == ComputeMode::fp32 ? "fp32" : "mixed";
}

ComputeMode parse_compute_mode(std::string_view name) {
  if (name == "mixed") return ComputeMode::mixed;
  if (name == "fp32") return ComputeMode::fp32;
  FP8LAB_FAIL(ErrorKind::invalid_argument, "unknown compute mode '{}' (expected mixed or fp32)",
              name);
}

const char* state_dtype_name(DType t) { return t == DType::bf16 ? "bf16" : "fp32"; }

DType parse_state_dtype(std::string_view name, const char* key) {
  FP8LAB_CHECK_KIND(ErrorKind::invalid_argument, name == "fp32" || name == "bf16",
                    "{} '{}' must be fp32 or bf16", key, name);
  return name == "bf16" ? DType::bf16 : DType::f32;
}

std::vector<std::string> preset_names() {
  return {"tiny", "gpt50m", "gpt350m", "gpt1.3b"};
}

ModelConfig model_preset(std::string_view name) {
  ModelConfig c;
  if (name == "tiny") {
    // Byte-level and small enough to train at thousands of tokens/s on two CPU cores.
    c.vocab_size = 256, c.d_model = 128, c.n_layers = 4, c.n_heads = 4, c.seq_len = 128;
  } else if (name == "gpt50m") {
    // 50304 = the GPT-2 vocabulary (50257) padded to a multiple of 128 for the GEMMs.
    c.vocab_size = 50304, c.d_model = 512, c.n_layers = 8, c.n_heads = 8, c.seq_len = 2048;
  } else if (name == "gpt350m") {
    c.vocab_size = 50304, c.d_model = 1024, c.n_layers = 24, c.n_heads = 16, c.seq_len = 2048;
  } else if (name == "gpt1.3b") {
    c.vocab_size = 50304, c.d_model = 2048, c.n_layers = 24, c.n_heads = 16, c.seq_len = 2048;
  } else {
    FP8LAB_FAIL(ErrorKind::invalid_argument,
                "unknown preset '{}' (expected tiny, gpt50m, gpt350m or gpt1.3b)", name);
  }
  return c;
}

RunConfig run_preset(std::string_view name) {
  RunConfig r;
  r.preset = std::string(name);
  r.model = model_preset(name);
  if (name == "tiny") {
    r.train.micro_batch = 8;
    r.optim.lr = 1e-3f, r.optim.min_lr = 1e-4f, r.optim.warmup_steps = 20;
    r.train.loss_chunk_rows = 1024;
    return r;
  }
  // The GPU presets use the batches of the PyTorch peer's measurements (B x T tokens per step).
  r.data.kind = "shards";
  r.train.loss_chunk_rows = 8192;
  r.optim.warmup_steps = 200;
  r.train.eval_every = 250;
  r.train.checkpoint_every = 1000;
  if (name == "gpt50m") {
    r.train.micro_batch = 64, r.optim.lr = 6e-4f, r.optim.min_lr = 6e-5f;
  } else if (name == "gpt350m") {
    r.train.micro_batch = 16, r.optim.lr = 3e-4f, r.optim.min_lr = 3e-5f;
  } else {
    r.train.micro_batch = 8, r.optim.lr = 2e-4f, r.optim.min_lr = 2e-5f;
  }
  return r;
}

}  // namespace fp8lab
