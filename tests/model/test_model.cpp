// The GPT model on the CPU backend: whole-model finite differences in fp32, initialisation
// identity across policies, MLP recompute, pointwise recompute, producer-fused amax and fused
// add + RMSNorm bit-identity, and mixed precision vs the fp32 reference.
#include "common/forwarding_backend.hpp"
#include "common/test_data.hpp"
#include "fp8lab/model.hpp"
#include "model/model_ab_run.hpp"
#include "model/model_fixtures.hpp"
#include "nn/gradcheck.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace fp8lab {
namespace {

using testing::ModelRun;
using testing::random_tokens;

PrecisionConfig fp32_reference() {
  PrecisionConfig p;
  p.compute = ComputeMode::fp32;
  return p;
}

// Every policy, each with and without MLP recompute.
std::vector<PrecisionConfig> policies_with_and_without_mlp_recompute() {
  std::vector<PrecisionConfig> out;
  for (PrecisionPolicy policy :
       {PrecisionPolicy::bf16, PrecisionPolicy::fp8_mlp, PrecisionPolicy::fp8_linears}) {
    for (bool recompute : {false, true}) {
      PrecisionConfig p;
      p.policy = policy;
      p.mlp_recompute = recompute;
      out.push_back(p);
    }
  }
  return out;
}

std::string precision_label(const PrecisionConfig& p) {
  return std::string(policy_name(p.policy)) + (p.mlp_recompute ? "+recompute" : "") +
         (p.compute == ComputeMode::fp32 ? " fp32" : "");
}

TEST(GptModel, ParameterCountMatchesTheArchitecture) {
  for (const std::string& name : preset_names()) {
    const ModelConfig c = model_preset(name);
    const std::int64_t d = c.d_model;
    const std::int64_t per_block = 2 * d + 3 * d * d + d * d + 2 * 4 * d * d;
    const std::int64_t expected = c.vocab_size * d + c.seq_len * d + c.n_layers * per_block + d;
    EXPECT_EQ(ParameterLayout(c).total(), expected) << name;
  }
  // gpt50m: 25.8M in the embeddings, 25.2M in the blocks.
  EXPECT_NEAR(static_cast<double>(ParameterLayout(model_preset("gpt50m")).total()), 52.0e6, 1.5e6);
}

TEST(GptModel, WholeModelGradientsMatchFiniteDifferences) {
  const std::uint64_t seed = testing::fresh_seed();
  const ModelConfig c = testing::gradcheck_model();
  auto be = make_cpu_backend();
  const std::int64_t batch = 2, m = batch * c.seq_len;
  GptModel model(c, fp32_reference(), batch, *be);
  model.init_parameters(seed);
  const auto inputs = random_tokens(m, c.vocab_size, seed, 1);
  const auto targets = random_tokens(m, c.vocab_size, seed, 2);
  model.zero_grads();
  const LossSums sums = model.forward_backward(inputs.data(), targets.data(), 1.f / m, -1, 5);
  ASSERT_EQ(sums.counted, m);
  const std::vector<float> analytic = model.get_gradients();
  // The CPU backend's master buffer is host memory: perturb it in place.
  float* params = model.master().as<float>();
  auto objective = [&] {
    return model.evaluate(inputs.data(), targets.data(), -1, 5).loss_sum / static_cast<double>(m);
  };
  for (const ParamInfo& p : model.layout().params()) {
    std::vector<float> g(analytic.begin() + p.offset, analytic.begin() + p.offset + p.numel());
    const auto r =
        testing::finite_difference_check(params + p.offset, p.numel(), g, objective, 12, 1e-2);
    EXPECT_LT(r.relative_error, 5e-3) << p.name << ": max abs error " << r.max_abs_error;
  }
}

TEST(GptModel, InitialisationIsIdenticalAcrossPoliciesAndDependsOnTheSeed) {
  const std::uint64_t seed = testing::fresh_seed();
  const ModelConfig c = testing::fp8_model();
  auto be = make_cpu_backend();
  std::vector<float> reference;
  std::string reference_hash;
  for (const PrecisionConfig& p : policies_with_and_without_mlp_recompute()) {
    GptModel model(c, p, 2, *be);
    model.init_parameters(seed);
    if (reference.empty()) {
      reference = model.get_parameters();
      reference_hash = model.parameter_sha256();
      continue;
    }
    const std::vector<float> params = model.get_parameters();
    ASSERT_EQ(params.size(), reference.size());
    EXPECT_EQ(std::memcmp(params.data(), reference.data(), params.size() * 4), 0)
        << precision_label(p);
    EXPECT_EQ(model.parameter_sha256(), reference_hash);
  }
  GptModel other(c, PrecisionConfig{}, 2, *be);
  other.init_parameters(seed + 1);
  EXPECT_NE(other.parameter_sha256(), reference_hash);
  // The layout's norms start at 1 and the matrices at the configured spread.
  const ParamInfo& fc = ParameterLayout(c).find("blocks.1.mlp.fc.weight");
  double ss = 0;
  for (std::int64_t i = 0; i < fc.numel(); ++i)
    ss += reference[fc.offset + i] * reference[fc.offset + i];
  EXPECT_NEAR(std::sqrt(ss / fc.numel()), c.init_std, 0.1 * c.init_std);
  EXPECT_EQ(reference[ParameterLayout(c).find("ln_f.weight").offset], 1.f);
}

// Recomputing the MLP in the backward runs the same ops on the same inputs: gradients must be
// bit-identical to keeping the activations, in every policy.
TEST(GptModel, MlpRecomputeGivesBitIdenticalGradients) {
  const std::uint64_t seed = testing::fresh_seed();
  const ModelConfig c = testing::fp8_model();
  auto be = make_cpu_backend();
  const std::int64_t m = 2 * c.seq_len;
  const auto inputs = random_tokens(m, c.vocab_size, seed, 1);
  const auto targets = random_tokens(m, c.vocab_size, seed, 2);
  for (PrecisionPolicy policy :
       {PrecisionPolicy::bf16, PrecisionPolicy::fp8_mlp, PrecisionPolicy::fp8_linears}) {
    std::vector<float> grads[2];
    double losses[2];
    std::int64_t peaks[2];
    for (int recompute = 0; recompute < 2; ++recompute) {
      auto backend = make_cpu_backend();
      PrecisionConfig p;
      p.policy = policy;
      p.mlp_recompute = recompute == 1;
      GptModel model(c, p, 2, *backend);
      model.init_parameters(seed);
      model.zero_grads();
      losses[recompute] =
          model.forward_backward(inputs.data(), targets.data(), 1.f / m, -1, 16).loss_sum;
      grads[recompute] = model.get_gradients();
      peaks[recompute] = backend->memory_stats().peak_bytes;
    }
    EXPECT_EQ(losses[0], losses[1]) << policy_name(policy);
    EXPECT_EQ(std::memcmp(grads[0].data(), grads[1].data(), grads[0].size() * 4), 0)
        << policy_name(policy);
    EXPECT_LT(peaks[1], peaks[0]) << policy_name(policy) << ": recompute must save memory";
  }
}

// Counts the pointwise forwards, so the test below knows the recompute really ran.
class PointwiseOpCounter final : public testing::ForwardingBackend {
 public:
  int norms = 0, gelus = 0;
  void rmsnorm_forward(const TensorView& x, const TensorView& w, float eps, const TensorView& y,
                       const TensorView& r, AmaxSlot a = {}) override {
    ++norms;
    ForwardingBackend::rmsnorm_forward(x, w, eps, y, r, a);
  }
  void gelu_forward(const TensorView& x, const TensorView& y, AmaxSlot a = {}) override {
    ++gelus;
    ForwardingBackend::gelu_forward(x, y, a);
  }
};

// Pointwise recompute rebuilds ln1, ln2 and gelu in the backward with the ops that made them
// (the plain RMSNorm gives the fused add + norm's bits): loss, evaluation loss and gradients are
// bit-identical to keeping them, in every policy with and without MLP recompute (fp32 compute
// too), and the peak falls by at least the per-block buffers it drops, less the shared gelu
// buffer it adds. Two accumulated micro-batches: the second finds the shared buffers holding
// the first one's last values.
TEST(GptModel, PointwiseRecomputeGivesBitIdenticalGradientsAndLowerPeak) {
  const std::uint64_t seed = testing::fresh_seed();
  const ModelConfig c = testing::fp8_model();
  const std::int64_t batch = 2, m = batch * c.seq_len;
  const auto inputs = random_tokens(m, c.vocab_size, seed, 1);
  const auto targets = random_tokens(m, c.vocab_size, seed, 2);
  std::vector<PrecisionConfig> cases = policies_with_and_without_mlp_recompute();
  cases.push_back(fp32_reference());
  for (const PrecisionConfig& base : cases) {
    const std::string label = precision_label(base);
    ModelRun runs[2];
    int norms[2], gelus[2];
    for (int pointwise = 0; pointwise < 2; ++pointwise) {
      PointwiseOpCounter be;
      PrecisionConfig p = base;
      p.pointwise_recompute = pointwise == 1;
      GptModel model(c, p, batch, be);
      runs[pointwise] = testing::run_two_batches_and_evaluate(model, seed, inputs, targets, 16);
      norms[pointwise] = be.norms;
      gelus[pointwise] = be.gelus;
    }
    testing::expect_bit_identical(runs[0], runs[1], label);
    // Per backward (two) and block: one plain RMSNorm per rebuilt ln, one GELU per rebuilt gelu.
    const testing::PointwiseRebuilt r = testing::pointwise_rebuilt(base);
    EXPECT_EQ(norms[1] - norms[0], 2 * c.n_layers * ((r.ln1 ? 1 : 0) + (r.ln2 ? 1 : 0))) << label;
    EXPECT_EQ(gelus[1] - gelus[0], 2 * c.n_layers * (r.gelu ? 1 : 0)) << label;
    const std::int64_t saving = testing::pointwise_recompute_saving(c, base, batch);
    std::fprintf(stderr, "%s: peak %lld -> %lld bytes (predicted saving %lld)\n", label.c_str(),
                 static_cast<long long>(runs[0].peak_bytes),
                 static_cast<long long>(runs[1].peak_bytes), static_cast<long long>(saving));
    if (saving > 0) {
      EXPECT_GE(runs[0].peak_bytes - runs[1].peak_bytes, saving) << label;
    } else {  // fp8-linears without MLP recompute keeps none of the three: nothing to rebuild
      EXPECT_EQ(runs[0].peak_bytes, runs[1].peak_bytes) << label;
    }
  }
}

// One recompute option off and on, over the same batches: the two runs, and how often the op that
// does the option's rebuilding ran in each (Counter::count).
struct OptionPair {
  ModelRun off, on;
  int ops_off = 0, ops_on = 0;
};

template <class Counter>
OptionPair run_option_pair(const ModelConfig& c, const PrecisionConfig& base,
                           bool PrecisionConfig::*option, std::uint64_t seed,
                           const std::vector<std::int32_t>& inputs,
                           const std::vector<std::int32_t>& targets) {
  OptionPair pair;
  for (const bool on : {false, true}) {
    Counter be;
    PrecisionConfig p = base;
    p.*option = on;
    GptModel model(c, p, 2, be);
    (on ? pair.on : pair.off) =
        testing::run_two_batches_and_evaluate(model, seed, inputs, targets, 16);
    (on ? pair.ops_on : pair.ops_off) = be.count;
  }
  return pair;
}

// Counts the residual adds (alone or fused with the norm after them), so the test below knows
// the rebuild really ran.
class ResidualAddCounter final : public testing::ForwardingBackend {
 public:
  int count = 0;
  void add(const TensorView& x, const TensorView& b, const TensorView& out) override {
    ++count;
    ForwardingBackend::add(x, b, out);
  }
  void add_rmsnorm_forward(const TensorView& x, const TensorView& b, const TensorView& sum,
                           const TensorView& w, float eps, const TensorView& y, const TensorView& r,
                           AmaxSlot a = {}) override {
    ++count;
    ForwardingBackend::add_rmsnorm_forward(x, b, sum, w, eps, y, r, a);
  }
};

// Residual recompute rebuilds each block's sum after attention in the backward from the block's
// input and the kept attn.proj output, with the add the forward made it by (fused into ln2's
// rebuild under pointwise recompute): loss, evaluation loss and gradients are bit-identical to
// keeping the sums, in every policy with and without MLP and pointwise recompute, each backward
// adds once per block, and the peak falls by the plan's arithmetic: 4 - 2 bytes an element of
// [M, D] per block, less the one shared f32 sum. Four blocks, so that there is a saving; two
// accumulated micro-batches, so that the second finds the shared sum holding the first's.
TEST(GptModel, ResidualRecomputeGivesBitIdenticalGradientsAndLowerPeak) {
  const std::uint64_t seed = testing::fresh_seed();
  ModelConfig c = testing::fp8_model();
  c.n_layers = 4;
  const std::int64_t md = 2 * c.seq_len * c.d_model;
  const auto inputs = random_tokens(2 * c.seq_len, c.vocab_size, seed, 1);
  const auto targets = random_tokens(2 * c.seq_len, c.vocab_size, seed, 2);
  for (PrecisionConfig base : policies_with_and_without_mlp_recompute()) {
    for (bool pointwise : {false, true}) {
      base.pointwise_recompute = pointwise;
      const std::string label = precision_label(base) + (pointwise ? "+pointwise" : "");
      const OptionPair r = run_option_pair<ResidualAddCounter>(
          c, base, &PrecisionConfig::residual_recompute, seed, inputs, targets);
      testing::expect_bit_identical(r.off, r.on, label);
      EXPECT_EQ(r.ops_on - r.ops_off, 2 * c.n_layers) << label << ": one add per block, backward";
      EXPECT_EQ(r.off.peak_bytes - r.on.peak_bytes, c.n_layers * md * (4 - 2) - md * 4) << label;
    }
  }
}

// Counts the linear forwards, so the test below knows the qkv recompute really ran.
class LinearForwardCounter final : public testing::ForwardingBackend {
 public:
  int count = 0;
  std::unique_ptr<LinearContext> linear_forward(LinearMode m, const TensorView& x,
                                                const TensorView& w, const TensorView& y,
                                                std::string_view n, AmaxSlot xa = {},
                                                AmaxSlot wa = {}) override {
    ++count;
    return ForwardingBackend::linear_forward(m, x, w, y, n, xa, wa);
  }
};

// qkv recompute rebuilds each block's ln1 and q | k | v in the backward with the ops that made
// them: loss, evaluation loss and gradients are bit-identical to keeping them, in every policy
// with and without MLP and pointwise recompute (fp32 compute too), each backward runs one more
// qkv forward per block, and the peak falls by at least the per-block q | k | v it drops less
// the one shared buffer it adds. Two accumulated micro-batches: the second finds the shared
// buffer holding the first one's last block.
TEST(GptModel, QkvRecomputeGivesBitIdenticalGradientsAndLowerPeak) {
  const std::uint64_t seed = testing::fresh_seed();
  const ModelConfig c = testing::fp8_model();
  const std::int64_t m = 2 * c.seq_len;
  const auto inputs = random_tokens(m, c.vocab_size, seed, 1);
  const auto targets = random_tokens(m, c.vocab_size, seed, 2);
  std::vector<PrecisionConfig> cases = policies_with_and_without_mlp_recompute();
  cases.push_back(fp32_reference());
  for (PrecisionConfig base : cases) {
    for (bool pointwise : {false, true}) {
      base.pointwise_recompute = pointwise;
      const std::string label = precision_label(base) + (pointwise ? "+pointwise" : "");
      const OptionPair r = run_option_pair<LinearForwardCounter>(
          c, base, &PrecisionConfig::qkv_recompute, seed, inputs, targets);
      testing::expect_bit_identical(r.off, r.on, label);
      EXPECT_EQ(r.ops_on - r.ops_off, 2 * c.n_layers) << label << ": one per block, backward";
      const std::int64_t elem = base.compute == ComputeMode::fp32 ? 4 : 2;
      EXPECT_GE(r.off.peak_bytes - r.on.peak_bytes, (c.n_layers - 1) * m * 3 * c.d_model * elem)
          << label;
    }
  }
}

// Under fp32 compute the branch is f32 too: nothing to save, so the option is refused by name.
TEST(GptModel, ResidualRecomputeNeedsMixedCompute) {
  PrecisionConfig p = fp32_reference();
  p.residual_recompute = true;
  auto be = make_cpu_backend();
  const std::string message =
      testing::error_of([&] { GptModel model(testing::fp8_model(), p, 2, *be); }).message();
  EXPECT_NE(message.find("residual_recompute"), std::string::npos) << message;
  EXPECT_NE(message.find("compute mixed, not fp32"), std::string::npos) << message;
}

// Counts the AmaxSlots the model hands to the linears; and for the attention's slots, that the
// linear right after it gets the very slot the attention filled (the ops in between must not be
// handed it).
class SlotCounter final : public testing::ForwardingBackend {
 public:
  int x_slots = 0, dy_slots = 0;
  int attention_slots = 0, attention_slots_handed_on = 0;
  std::unique_ptr<LinearContext> linear_forward(LinearMode m, const TensorView& x,
                                                const TensorView& w, const TensorView& y,
                                                std::string_view n, AmaxSlot a = {},
                                                AmaxSlot wa = {}) override {
    x_slots += a ? 1 : 0;
    hand_on(a);
    return ForwardingBackend::linear_forward(m, x, w, y, n, a, wa);
  }
  void linear_backward(LinearContext& s, const TensorView& dy, const TensorView& dx,
                       const TensorView& dw, AmaxSlot a = {},
                       GradWrite write = GradWrite::accumulate) override {
    dy_slots += a ? 1 : 0;
    hand_on(a);
    ForwardingBackend::linear_backward(s, dy, dx, dw, a, write);
  }
  void attention_forward(const TensorView& q, int h, int t, const TensorView& o,
                         const TensorView& l, AmaxSlot a = {}) override {
    filled(a);
    ForwardingBackend::attention_forward(q, h, t, o, l, a);
  }
  void attention_backward(const TensorView& q, const TensorView& o, const TensorView& l,
                          const TensorView& d, int h, int t, const TensorView& dq,
                          AmaxSlot a = {}) override {
    filled(a);
    ForwardingBackend::attention_backward(q, o, l, d, h, t, dq, a);
  }

 private:
  const Fp8Meta* pending_ = nullptr;  // the slot an attention op filled last, until a linear runs
  void filled(AmaxSlot a) {
    attention_slots += a ? 1 : 0;
    pending_ = a.meta;
  }
  void hand_on(AmaxSlot a) {
    attention_slots_handed_on += pending_ != nullptr && a.meta == pending_ ? 1 : 0;
    pending_ = nullptr;
  }
};

// The producer-fused amax reaches every FP8 linear: each linear is handed the slot its producer
// filled, in both FP8 policies, with and without MLP recompute (which reuses the forward's slot
// for fc's input), and the attention's slots go to the linear right after it.
TEST(GptModel, FusedAmaxSlotsReachEveryFp8Linear) {
  const std::uint64_t seed = testing::fresh_seed();
  const ModelConfig c = testing::fp8_model();
  const std::int64_t m = 2 * c.seq_len;
  const auto inputs = random_tokens(m, c.vocab_size, seed, 1);
  const auto targets = random_tokens(m, c.vocab_size, seed, 2);
  for (PrecisionPolicy policy : {PrecisionPolicy::fp8_mlp, PrecisionPolicy::fp8_linears}) {
    for (bool recompute : {false, true}) {
      const std::string label = std::string(policy_name(policy)) + (recompute ? "+recompute" : "");
      SlotCounter be;
      PrecisionConfig p;
      p.policy = policy;
      p.mlp_recompute = recompute;
      GptModel model(c, p, 2, be);
      model.init_parameters(seed);
      model.zero_grads();
      model.forward_backward(inputs.data(), targets.data(), 1.f / m, -1, 16);
      model.evaluate(inputs.data(), targets.data(), -1, 16);
      // Per block, x: fc and mlp.proj (again in the recompute), qkv and attn.proj in
      // fp8-linears; dY: fc and mlp.proj, attn.proj and qkv in fp8-linears. Two forwards
      // (training, evaluation), one backward.
      const bool all = policy == PrecisionPolicy::fp8_linears;
      const std::int64_t per_forward = c.n_layers * (all ? 4 : 2);
      EXPECT_EQ(be.x_slots, 2 * per_forward + (recompute ? 2 * c.n_layers : 0)) << label;
      EXPECT_EQ(be.dy_slots, c.n_layers * (all ? 4 : 2)) << label;
      const std::int64_t attention_slots = all ? 3 * c.n_layers : 0;
      EXPECT_EQ(be.attention_slots, attention_slots) << label;
      EXPECT_EQ(be.attention_slots_handed_on, attention_slots) << label;
    }
  }
}

// Counts the fused RMSNorm ops and the separate residual adds they replace.
class NormOpCounter final : public testing::ForwardingBackend {
 public:
  int fused_forward = 0, fused_backward = 0, adds = 0;
  void add_rmsnorm_forward(const TensorView& x, const TensorView& b, const TensorView& sum,
                           const TensorView& w, float eps, const TensorView& y, const TensorView& r,
                           AmaxSlot a = {}) override {
    ++fused_forward;
    ForwardingBackend::add_rmsnorm_forward(x, b, sum, w, eps, y, r, a);
  }
  void rmsnorm_backward_and_convert(const TensorView& x, const TensorView& w, const TensorView& r,
                                    const TensorView& dy, const TensorView& dx,
                                    const TensorView& dw, const TensorView& copy,
                                    AmaxSlot a = {},
                                    GradWrite write = GradWrite::accumulate) override {
    ++fused_backward;
    ForwardingBackend::rmsnorm_backward_and_convert(x, w, r, dy, dx, dw, copy, a, write);
  }
  void add(const TensorView& a, const TensorView& b, const TensorView& out) override {
    ++adds;
    ForwardingBackend::add(a, b, out);
  }
};

// The residual adds run inside the norm after them, and the dY copies inside the norm backward
// before them: every policy (fp32 compute too), with and without MLP recompute, calls the fused
// ops for every norm but block 0's ln1 and no separate add. (The fused ops against the unfused
// sequence: tests/nn, tests/cuda/test_cuda_add_rmsnorm.cpp.)
TEST(GptModel, ResidualAddsRunInsideTheNorms) {
  const std::uint64_t seed = testing::fresh_seed();
  const ModelConfig c = testing::fp8_model();
  const std::int64_t m = 2 * c.seq_len, layers = c.n_layers;
  const auto inputs = random_tokens(m, c.vocab_size, seed, 1);
  const auto targets = random_tokens(m, c.vocab_size, seed, 2);
  std::vector<PrecisionConfig> cases = policies_with_and_without_mlp_recompute();
  cases.push_back(fp32_reference());
  for (const PrecisionConfig& precision : cases) {
    const std::string label = precision_label(precision);
    NormOpCounter be;
    GptModel model(c, precision, 2, be);
    testing::run_two_batches_and_evaluate(model, seed, inputs, targets, 16);
    // Per forward (three: two trainings, one evaluation) ln2 and the next ln1 / ln_f of each
    // block; per backward ln_f, each ln2 and the ln1 of every block but the first.
    EXPECT_EQ(be.fused_forward, 3 * 2 * layers) << label;
    EXPECT_EQ(be.adds, 0) << label;
    EXPECT_EQ(be.fused_backward, 2 * 2 * layers) << label;
  }
}

// zero_grads leaves the zeroing to the next backward (GradWrite::overwrite): every policy, with
// and without MLP recompute, gives the gradients of an explicit fill (model_ab_run.hpp).
TEST(GptModel, ZeroGradsWritesWhatAFillWould) {
  const std::uint64_t seed = testing::fresh_seed();
  const ModelConfig c = testing::fp8_model();
  const std::int64_t batch = 2, m = batch * c.seq_len;
  const auto inputs = random_tokens(m, c.vocab_size, seed, 1);
  const auto targets = random_tokens(m, c.vocab_size, seed, 2);
  for (const PrecisionConfig& p : policies_with_and_without_mlp_recompute()) {
    auto be = make_cpu_backend();
    GptModel model(c, p, batch, *be);
    // 16 rows per classifier chunk: two chunks, so the LM head's dW is written then added to.
    testing::expect_zero_grads_writes_what_a_fill_would(model, seed, inputs, targets, 16,
                                                        precision_label(p));
  }
  auto be = make_cpu_backend();
  GptModel model(c, fp32_reference(), batch, *be);
  testing::expect_zero_grads_writes_what_a_fill_would(model, seed, inputs, targets, 16, "fp32");
}

// Mixed precision (bf16 activations and working weights) stays close to the fp32 reference; the
// fp8 policies stay close to bf16. Bounds (measured ~0.0035 and ~0.045-0.05 relative Frobenius
// error of the gradient; losses agree to ~1e-4 relative) with headroom for fresh seeds.
TEST(GptModel, MixedPrecisionTracksTheFp32Reference) {
  const std::uint64_t seed = testing::fresh_seed();
  const ModelConfig c = testing::fp8_model();
  auto be = make_cpu_backend();
  const std::int64_t m = 2 * c.seq_len;
  const auto inputs = random_tokens(m, c.vocab_size, seed, 1);
  const auto targets = random_tokens(m, c.vocab_size, seed, 2);
  auto run = [&](PrecisionConfig p, double* loss) {
    GptModel model(c, p, 2, *be);
    model.init_parameters(seed);
    model.zero_grads();
    *loss = model.forward_backward(inputs.data(), targets.data(), 1.f / m, -1, 16).loss_sum / m;
    std::vector<float> g = model.get_gradients();
    return std::vector<double>(g.begin(), g.end());
  };
  double loss32, loss16, loss8mlp, loss8all;
  const auto g32 = run(fp32_reference(), &loss32);
  PrecisionConfig p;
  const auto g16 = run(p, &loss16);
  p.policy = PrecisionPolicy::fp8_mlp;
  const auto g8mlp = run(p, &loss8mlp);
  p.policy = PrecisionPolicy::fp8_linears;
  const auto g8all = run(p, &loss8all);
  std::fprintf(stderr,
               "loss fp32 %.6f bf16 %.6f fp8-mlp %.6f fp8-linears %.6f; grad rel err "
               "bf16/fp32 %.4f fp8-mlp/bf16 %.4f fp8-linears/bf16 %.4f\n",
               loss32, loss16, loss8mlp, loss8all, testing::relative_frobenius(g16, g32),
               testing::relative_frobenius(g8mlp, g16), testing::relative_frobenius(g8all, g16));
  EXPECT_NEAR(loss16, loss32, 1e-3 * loss32);
  EXPECT_LT(testing::relative_frobenius(g16, g32), 0.01);
  EXPECT_NEAR(loss8mlp, loss16, 5e-3 * loss16);
  EXPECT_NEAR(loss8all, loss16, 5e-3 * loss16);
  EXPECT_LT(testing::relative_frobenius(g8mlp, g16), 0.1);
  EXPECT_LT(testing::relative_frobenius(g8all, g16), 0.12);
  EXPECT_GT(testing::relative_frobenius(g8all, g16), 0.0);  // fp8 really ran
}

// Counts the converts that fill an amax slot and the linears handed the slot the convert right
// before them filled as their W slot.
class WeightSlotCounter final : public testing::ForwardingBackend {
 public:
  int filled = 0, handed_on = 0;
  void convert(const TensorView& src, const TensorView& dst, AmaxSlot a = {}) override {
    filled += a ? 1 : 0;
    pending_ = a.meta;
    ForwardingBackend::convert(src, dst, a);
  }
  std::unique_ptr<LinearContext> linear_forward(LinearMode m, const TensorView& x,
                                                const TensorView& w, const TensorView& y,
                                                std::string_view n, AmaxSlot a = {},
                                                AmaxSlot wa = {}) override {
    handed_on += pending_ != nullptr && wa.meta == pending_ ? 1 : 0;
    pending_ = nullptr;
    return ForwardingBackend::linear_forward(m, x, w, y, n, a, wa);
  }

 private:
  const Fp8Meta* pending_ = nullptr;
};

// precision.fp8_weights_from_master keeps no working copy of the FP8 block linears' weights:
// the parameters' memory falls by exactly their bf16 bytes, the activations gain one scratch the
// size of the largest, the weight a linear reads holds the working copy's bits, and the loss
// and gradients of two accumulated micro-batches are the working copy's, bit for bit.
TEST(GptModel, Fp8WeightsFromMasterDropTheirWorkingCopies) {
  const std::uint64_t seed = testing::fresh_seed();
  const ModelConfig c = testing::fp8_model();
  const std::int64_t batch = 2, m = batch * c.seq_len;
  const auto inputs = random_tokens(m, c.vocab_size, seed, 1);
  const auto targets = random_tokens(m, c.vocab_size, seed, 2);
  for (PrecisionPolicy policy : {PrecisionPolicy::fp8_mlp, PrecisionPolicy::fp8_linears}) {
    PrecisionConfig p;
    p.policy = policy;
    const std::string label = policy_name(policy);
    auto be_copy = make_cpu_backend(), be_master = make_cpu_backend();
    GptModel with_copy(c, p, batch, *be_copy);
    p.fp8_weights_from_master = true;
    GptModel from_master(c, p, batch, *be_master);
    std::int64_t dropped = 0, largest = 0;
    for (const ParamInfo& w : from_master.layout().params()) {
      const bool fp8_weight =
          w.role == ParamRole::matrix && w.name.find("blocks.") == 0 &&
          (policy == PrecisionPolicy::fp8_linears || w.name.find(".mlp.") != std::string::npos);
      EXPECT_EQ(from_master.working_copy(w).data == nullptr, fp8_weight) << label << " " << w.name;
      if (!fp8_weight) continue;
      dropped += w.numel();
      largest = std::max(largest, w.numel());
    }
    ASSERT_GT(dropped, 0);
    const MemoryStats a = be_copy->memory_stats(), b = be_master->memory_stats();
    EXPECT_EQ(a.current(MemoryKind::parameters) - b.current(MemoryKind::parameters), 2 * dropped)
        << label;
    EXPECT_EQ(b.current(MemoryKind::activations) - a.current(MemoryKind::activations), 2 * largest)
        << label;
    ModelRun runs[2];
    runs[0] = testing::run_two_batches_and_evaluate(with_copy, seed, inputs, targets, 16);
    runs[1] = testing::run_two_batches_and_evaluate(from_master, seed, inputs, targets, 16);
    testing::expect_bit_identical(runs[0], runs[1], label);
    // Tensorwise: the convert into the scratch fills W's amax slot and the linear takes it, in
    // each forward (two training, one evaluation) for every FP8 block linear.
    WeightSlotCounter counter;
    GptModel counted(c, p, batch, counter);
    testing::run_two_batches_and_evaluate(counted, seed, inputs, targets, 16);
    const int fp8_linears =
        static_cast<int>(c.n_layers) * (policy == PrecisionPolicy::fp8_linears ? 4 : 2);
    EXPECT_EQ(counter.filled, 3 * fp8_linears) << label;
    EXPECT_EQ(counter.handed_on, 3 * fp8_linears) << label;
    // The weight each FP8 linear reads: the working copy's bits.
    const ParamInfo& fc = from_master.layout().find("blocks.1.mlp.fc.weight");
    const TensorView copy = with_copy.working_copy(fc), cast = from_master.linear_weight(fc);
    ASSERT_EQ(cast.dtype, DType::bf16);
    ASSERT_EQ(cast.shape, fc.shape);
    std::vector<std::uint16_t> x(static_cast<std::size_t>(fc.numel())), y(x.size());
    be_copy->download(copy, x.data());
    be_master->download(cast, y.data());
    EXPECT_EQ(x, y) << label;
  }
}

}  // namespace
}  // namespace fp8lab
