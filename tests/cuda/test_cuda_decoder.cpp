// Generation on the CUDA backend against the CPU reference: the cached attention and the logits
// op on their own, the decoder against the CUDA model's forward, and greedy text from a trained
// checkpoint, which must be the CPU's token for token.
#if defined(FP8LAB_HAVE_CUDA)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/test_data.hpp"
#include "cuda/cuda_test_util.hpp"
#include "cuda/model_ab.hpp"
#include "fp8lab/decoder.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/inference_checkpoint.hpp"
#include "fp8lab/model.hpp"
#include "fp8lab/trainer.hpp"
#include "model/model_fixtures.hpp"
#include "train/train_fixtures.hpp"

namespace fp8lab {
namespace {

// A host tensor's bytes in a fresh buffer of `be`.
Buffer upload(Backend& be, const HostTensor& h, const char* name) {
  Buffer b = be.allocate(MemoryKind::activations, h.dtype(), h.shape(), name);
  be.upload(b, h.view().data);
  return b;
}

HostTensor download(Backend& be, const TensorView& t) {
  HostTensor h(t.dtype, t.shape);
  be.download(t, h.view().data);
  return h;
}

double rel_error(const HostTensor& got, const HostTensor& ref) {
  return testing::relative_frobenius(got.view(), ref.view());
}

struct CachedCase {
  int heads, head_dim, context;
  std::int64_t pos, rows;
};

TEST(CudaDecoder, CachedAttentionMatchesTheCpu) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  auto cpu = make_cpu_backend();
  auto gpu = make_cuda_backend();
  // One row after a long prefix (generation), a prefill from 0, an odd head_dim, the last row.
  for (const CachedCase k : {CachedCase{4, 32, 128, 97, 1}, CachedCase{2, 64, 96, 0, 37},
                             CachedCase{3, 40, 50, 11, 13}, CachedCase{8, 64, 2048, 2047, 1}}) {
    const std::int64_t d = static_cast<std::int64_t>(k.heads) * k.head_dim;
    const HostTensor qkv = testing::random_normal(DType::bf16, {k.rows, 3 * d}, seed, 1);
    const HostTensor k0 = testing::random_normal(DType::bf16, {k.context, d}, seed, 2);
    const HostTensor v0 = testing::random_normal(DType::bf16, {k.context, d}, seed, 3);
    HostTensor out_cpu = testing::poisoned(DType::bf16, {k.rows, d});
    HostTensor kc = download(*cpu, upload(*cpu, k0, "k"));  // a copy the CPU op may write
    HostTensor vc = download(*cpu, upload(*cpu, v0, "v"));
    cpu->attention_cached_forward(qkv, k.heads, k.pos, kc, vc, out_cpu);
    Buffer g_qkv = upload(*gpu, qkv, "qkv"), g_k = upload(*gpu, k0, "k"),
           g_v = upload(*gpu, v0, "v"),
           g_out = upload(*gpu, testing::poisoned(DType::bf16, {k.rows, d}), "out");
    gpu->attention_cached_forward(g_qkv, k.heads, k.pos, g_k, g_v, g_out);
    const std::string what =
        fmt::format("H{} hd{} pos{} rows{}", k.heads, k.head_dim, k.pos, k.rows);
    // The caches: the new rows' k and v stored, every other row untouched, as on the CPU.
    const testing::ByteDiff dk = testing::byte_diff(download(*gpu, g_k).view(), kc.view());
    const testing::ByteDiff dv = testing::byte_diff(download(*gpu, g_v).view(), vc.view());
    EXPECT_EQ(dk.count + dv.count, 0) << what << ": caches differ from byte " << dk.first;
    // The same order of every sum; only expf against std::exp may move a last bit (measured: see
    // the line printed), then a bf16 rounding.
    const double e = rel_error(download(*gpu, g_out), out_cpu);
    std::fprintf(stderr, "[measured] cached attention %s: rel error %.3g\n", what.c_str(), e);
    EXPECT_LT(e, 1e-3) << what;
  }
}

TEST(CudaDecoder, LogitsMatchTheCpu) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  auto cpu = make_cpu_backend();
  auto gpu = make_cuda_backend();
  // The decoder pads its rows to a multiple of 8 (gpt_decoder.cpp): the GEMM's contract.
  for (const std::int64_t m : {8, 24}) {
    const HostTensor x = testing::random_normal(DType::bf16, {m, 128}, seed, 4);
    const HostTensor w = testing::random_normal(DType::bf16, {50304, 128}, seed, 5, 0.1f);
    HostTensor ref = testing::poisoned(DType::f32, {m, 50304});
    cpu->lm_head_logits(x, w, ref);
    Buffer gx = upload(*gpu, x, "x"), gw = upload(*gpu, w, "w"),
           gl = upload(*gpu, testing::poisoned(DType::f32, {m, 50304}), "logits");
    gpu->lm_head_logits(gx, gw, gl);
    const double e = rel_error(download(*gpu, gl), ref);
    std::fprintf(stderr, "[measured] logits M=%lld: rel error %.3g\n", static_cast<long long>(m),
                 e);
    EXPECT_LT(e, 1e-5);  // fp32 sums of 128 exact bf16 products, in another order
  }
  // One unpadded row is refused with the dimensions named, not computed wrong.
  const HostTensor x1 = testing::random_normal(DType::bf16, {1, 128}, seed, 6);
  const HostTensor w1 = testing::random_normal(DType::bf16, {50304, 128}, seed, 7, 0.1f);
  Buffer gx = upload(*gpu, x1, "x"), gw = upload(*gpu, w1, "w"),
         gl = upload(*gpu, testing::poisoned(DType::f32, {1, 50304}), "logits");
  try {
    gpu->lm_head_logits(gx, gw, gl);
    ADD_FAILURE() << "an lm_head_logits over one row was not refused";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("M=1 N=50304 K=128 must be multiples of 8"), std::string::npos)
        << e.message();
  }
}

// The decoder on the GPU against the GPU model's own forward (head_dim 64 for its attention).
TEST(CudaDecoder, TokenByTokenTracksTheCudaModelForward) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  ModelConfig c;
  c.vocab_size = 320, c.d_model = 128, c.n_layers = 2, c.n_heads = 2, c.seq_len = 64;
  c.init_std = 0.1f;
  // The model's fc and GELU as separate ops, as the decoder runs them.
  testing::SeparateGeluCudaBackend gpu;
  GptModel model(c, PrecisionConfig{}, 1, gpu);
  model.init_parameters(seed);
  const auto in = testing::random_tokens(c.seq_len, c.vocab_size, seed, 1);
  const auto tgt = testing::random_tokens(c.seq_len, c.vocab_size, seed, 2);
  GptDecoder decoder(model);
  double worst = 0;
  for (std::int64_t t = 0; t < c.seq_len; ++t) {
    std::vector<std::int32_t> one(static_cast<std::size_t>(c.seq_len), -1);
    one[static_cast<std::size_t>(t)] = tgt[static_cast<std::size_t>(t)];
    const double ref = model.evaluate(in.data(), one.data(), -1, 64).loss_sum;
    const std::vector<float> l = decoder.feed(std::span(&in[static_cast<std::size_t>(t)], 1));
    const double mx = *std::max_element(l.begin(), l.end());
    double sum = 0;
    for (float v : l) sum += std::exp(v - mx);
    const double got =
        mx + std::log(sum) - l[static_cast<std::size_t>(tgt[static_cast<std::size_t>(t)])];
    worst = std::max(worst, std::abs(got - ref) / std::max(1.0, ref));
  }
  std::fprintf(stderr, "[measured] CUDA decoder vs CUDA model forward: worst nll gap %.3g\n",
               worst);
  // Another attention kernel and row count: bf16 roundings may differ (the CPU's bound).
  EXPECT_LT(worst, 1e-2);
}

// A checkpoint trained on the CPU; greedy text from it on both backends.
TEST(CudaDecoder, GreedyTextIsTheCpusOnATrainedCheckpoint) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  testing::TempDir dir;
  RunConfig rc = testing::small_run(seed);
  rc.model.vocab_size = 256, rc.model.d_model = 64, rc.model.seq_len = 64;
  rc.train.micro_batch = 8, rc.train.grad_accum = 1, rc.train.steps = 80;
  rc.optim.warmup_steps = 8, rc.optim.decay_steps = 80, rc.optim.lr = 3e-3f;
  rc.optim.clip_grad_norm = 1.f;
  {
    auto cpu = make_cpu_backend();
    Trainer trainer(rc, dir.path(), *cpu, testing::quiet());
    trainer.run();
  }
  const InferenceCheckpoint ckpt = open_inference_checkpoint(dir.path());
  const std::vector<std::int32_t> prompt = testing::random_tokens(6, 256, seed, 3);
  GenerateOptions o;
  o.max_new_tokens = 48;
  o.sampler.temperature = 0;
  auto greedy = [&](Backend& be, std::vector<std::vector<float>>& logits) {
    const auto model = load_inference_model(ckpt, be);
    GptDecoder decoder(*model);
    std::vector<std::int32_t> seq = prompt;
    const auto out = generate(decoder, prompt, o, [](std::int32_t) {});
    // The logits of every step again, for the report below.
    seq.insert(seq.end(), out.begin(), out.end());
    GptDecoder again(*model);
    const std::vector<float> rows = again.feed(std::span(seq).first(seq.size() - 1), true);
    for (std::size_t s = 0; s < out.size(); ++s) {
      const auto* r = rows.data() + (prompt.size() - 1 + s) * 256;
      logits.emplace_back(r, r + 256);
    }
    return out;
  };
  auto cpu = make_cpu_backend();
  auto gpu = make_cuda_backend();
  std::vector<std::vector<float>> cpu_logits, gpu_logits;
  const auto on_cpu = greedy(*cpu, cpu_logits);
  const auto on_gpu = greedy(*gpu, gpu_logits);
  ASSERT_EQ(on_cpu.size(), 48u);
  const auto first =
      std::mismatch(on_cpu.begin(), on_cpu.end(), on_gpu.begin()).first - on_cpu.begin();
  if (first < static_cast<std::ptrdiff_t>(on_cpu.size())) {
    std::vector<float> l = cpu_logits[static_cast<std::size_t>(first)];
    std::sort(l.rbegin(), l.rend());
    ADD_FAILURE() << "greedy text differs from step " << first << ": cpu " << on_cpu[first]
                  << ", cuda " << on_gpu[first] << "; the cpu's top two logits there are " << l[0]
                  << " and " << l[1] << " (a near tie?)";
  }
  double worst = 0;
  for (std::size_t s = 0; s < cpu_logits.size(); ++s) {
    worst = std::max(worst, testing::relative_frobenius(
                                std::vector<double>(gpu_logits[s].begin(), gpu_logits[s].end()),
                                std::vector<double>(cpu_logits[s].begin(), cpu_logits[s].end())));
  }
  std::fprintf(stderr,
               "[measured] greedy from a trained checkpoint: %zu tokens equal, worst "
               "logits rel error %.3g\n",
               static_cast<std::size_t>(first), worst);
  EXPECT_LT(worst, 2e-2);
}

}  // namespace
}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
