// The producer-fused amax on the CUDA backend (AmaxSlot in fp8lab/backend.hpp):
// - each producer op (RMSNorm, GELU forward and backward, convert, attention forward and backward,
//   AdamW's bf16 working copy) leaves in its slot the very Fp8Meta bytes that amax_scale_cuda
//   writes reading the op's stored output back: amax, scale, inv_scale, the non-finite flag, zeroed
//   counters and scratch words; with a NaN and with an inf in the output too; on prime shapes,
//   unaligned views (the scalar paths) and tensors large enough that every thread loops; and the
//   output bytes do not change. A deferred slot (AmaxSlot::deferred) gets only the keys, no ticket,
//   and a cast reading it writes the bytes and meta of a cast handed the finalised slot. The
//   attention backward's d_qkv comes from two kernels under every algorithm (two-pass, wgmma,
//   wgmma-ws; cuDNN's, with the dispatch's amax pass after it): each is checked, with inputs that
//   put the largest value in each of dq, dk and dv;
// - an FP8 linear handed the slot reports a non-finite input with the same error, naming
//   "<name>.x" / "<name>.dy";
// - the whole model with W's amax from AdamW's update gives the loss bits, gradient bytes and
//   weights of a run whose W casts read W for their own amax.
#if defined(FP8LAB_HAVE_CUDA)
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cuda/cuda_test_util.hpp"
#include "cuda/linear_nonfinite_report.hpp"
#include "cuda/model_ab.hpp"
#include "cuda_kernels/cuda_ops_launch.hpp"
#include "fp8lab/backend.hpp"
#include "fp8lab/fp8_cuda.hpp"
#include "fp8lab/model.hpp"
#include "fp8lab/optimizer.hpp"
#include "model/model_fixtures.hpp"

namespace fp8lab {
namespace {

using testing::describe;
using testing::DeviceView;
using testing::read_meta;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

struct Case {
  Shape shape;
  std::int64_t offset;  // elements: 1 makes every view unaligned (the scalar kernels)
  DType out;            // the producer's output dtype
};

std::string poison_tag(float poison) {
  return poison == 0.f ? "" : std::isnan(poison) ? " with NaN" : " with inf";
}

std::string label(const Case& c, const char* op, float poison) {
  return std::string(op) + " " + c.shape.str() + " offset " + std::to_string(c.offset) + " -> " +
         std::string(dtype_name(c.out)) + poison_tag(poison);
}

class CudaFusedAmax : public ::testing::Test {
 protected:
  void SetUp() override {
    FP8LAB_SKIP_WITHOUT_GPU();
    gpu = make_cuda_backend();
    slots = allocate_amax_slots(*gpu, 2, MemoryKind::workspace, "test slots");
    reference = DeviceTensor(DType::u8, Shape{static_cast<std::int64_t>(sizeof(Fp8Meta))});
    fill_bytes_cuda(reference.view(), 0);
  }
  void TearDown() override { slots = Buffer(); }

  // produce(out, slot) with and without a slot: same output bytes, and the slot's bytes equal
  // what amax_scale_cuda writes for the output. Returns the output.
  HostTensor check(const std::string& what, const Case& c, Fp8Format format,
                   const std::function<void(const TensorView&, AmaxSlot)>& produce) {
    DeviceView plain(c.out, c.shape, c.offset), fused(c.out, c.shape, c.offset);
    const AmaxSlot slot = amax_slot(slots, 0, format);
    produce(plain.view, {});
    produce(fused.view, slot);
    // The whole device: a producer may run on another backend's stream (the cuDNN one).
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    const HostTensor a = to_host(plain.view);
    HostTensor b = to_host(fused.view);
    EXPECT_EQ(std::memcmp(a.view().data, b.view().data, a.nbytes()), 0) << what << ": output";
    auto* ref = static_cast<Fp8Meta*>(reference.view().data);
    amax_scale_cuda(fused.view, format, ref, nullptr);
    const Fp8Meta want = read_meta(ref), got = read_meta(slot.meta);
    EXPECT_EQ(std::memcmp(&want, &got, sizeof(Fp8Meta)), 0)
        << what << "\n  fused     " << describe(got) << "\n  reference " << describe(want);
    checked_nonfinite += want.nonfinite;
    check_deferred(what, c, format, produce, a, slot);
    return b;
  }

  // The deferred protocol on a zeroed slot: the same output bytes; the slot holds the largest
  // key (the amax's bits when finite) and took no ticket; a cast reading it writes the FP8
  // bytes and the meta of a cast handed `finalised` (the slot the finalising producer filled).
  void check_deferred(const std::string& what, const Case& c, Fp8Format format,
                      const std::function<void(const TensorView&, AmaxSlot)>& produce,
                      const HostTensor& plain_out, AmaxSlot finalised) {
    AmaxSlot deferred = amax_slot(slots, 1, format);
    deferred.deferred = true;
    gpu->fill_zero({deferred.meta, DType::u8, {sizeof(Fp8Meta)}, Device::cuda});
    DeviceView out(c.out, c.shape, c.offset);
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());  // the zeroed slot, before another stream reads it
    produce(out.view, deferred);
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    const HostTensor o = to_host(out.view);
    EXPECT_EQ(std::memcmp(plain_out.view().data, o.view().data, o.nbytes()), 0)
        << what << ": output (deferred)";
    const Fp8Meta keys = read_meta(deferred.meta), want = read_meta(finalised.meta);
    EXPECT_EQ(keys.blocks_done, 0u) << what << ": a deferred producer takes no ticket";
    if (want.nonfinite == 0u) {
      EXPECT_EQ(keys.amax_bits_accum, float_bits(want.amax)) << what << ": deferred keys";
    } else {
      EXPECT_GE(keys.amax_bits_accum, 0x7F800000u) << what << ": deferred keys of a non-finite";
    }
    // Both casts into zeroed metas, the one reading keys, the other the finalised scale.
    const DType q_dtype = fp8_dtype(format);
    DeviceTensor metas(DType::u8, Shape{2 * static_cast<std::int64_t>(sizeof(Fp8Meta))});
    fill_bytes_cuda(metas.view(), 0);
    DeviceTensor q_keys(q_dtype, c.shape), q_final(q_dtype, c.shape);
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    auto* m = static_cast<Fp8Meta*>(metas.view().data);
    quantize_cuda(out.view, format, m, q_keys.view(), nullptr,
                  {.given = deferred.meta, .given_deferred = true});
    quantize_cuda(out.view, format, m + 1, q_final.view(), nullptr, {.given = finalised.meta});
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    const HostTensor qa = to_host(q_keys.view()), qb = to_host(q_final.view());
    EXPECT_EQ(std::memcmp(qa.view().data, qb.view().data, qa.nbytes()), 0)
        << what << ": the cast of the deferred slot";
    const Fp8Meta from_keys = read_meta(m), from_final = read_meta(m + 1);
    EXPECT_EQ(std::memcmp(&from_keys, &from_final, sizeof(Fp8Meta)), 0)
        << what << ": cast meta\n  from keys      " << describe(from_keys) << "\n  from finalised "
        << describe(from_final);
    ++checked_deferred;
  }

  std::unique_ptr<Backend> gpu;
  Buffer slots;
  DeviceTensor reference;
  int checked_nonfinite = 0;
  int checked_deferred = 0;
};

// Poisons element i (and a later one) of a host tensor with `v`.
void poison_at(const HostTensor& t, float v) {
  for (std::int64_t i : {t.numel() / 3, t.numel() - 1}) {
    if (t.dtype() == DType::f32)
      t.as<float>()[i] = v;
    else
      t.as<std::uint16_t>()[i] = float_to_bf16(v);
  }
}

TEST_F(CudaFusedAmax, ProducersWriteTheMetaAmaxScaleWouldWrite) {
  const std::uint64_t seed = testing::fresh_seed();
  const std::vector<Case> cases = {
      {{1481, 677}, 0, DType::bf16},  {{1481, 677}, 1, DType::bf16}, {{1, 3221}, 0, DType::bf16},
      {{256, 512}, 0, DType::bf16},   {{256, 512}, 0, DType::f32},   {{1481, 677}, 1, DType::f32},
      {{40007, 64}, 0, DType::bf16},   // more rows than the RMSNorm grid: warps loop
      {{2053, 4099}, 0, DType::bf16},  // more elements than the elementwise grid covers at once
  };
  for (const Case& c : cases) {
    for (float poison : {0.f, kNaN, kInf}) {
      const std::int64_t rows = c.shape[0], d = c.shape[1];
      HostTensor x = testing::random_normal(DType::bf16, c.shape, seed, 1, 3.f);
      HostTensor g = testing::random_normal(DType::bf16, c.shape, seed, 2);
      HostTensor resid = testing::random_normal(DType::f32, c.shape, seed, 3, 1e-3f);
      HostTensor w = testing::random_normal(DType::f32, {d}, seed, 4);
      if (poison != 0.f) {
        poison_at(x, poison);
        poison_at(g, poison);
        poison_at(resid, poison);
      }
      const DeviceView dx(x, c.offset), dg(g, c.offset), dresid(resid, c.offset), dw(w, c.offset);
      DeviceView rstd(DType::f32, {rows}, 0);
      check(label(c, "rmsnorm", poison), c, Fp8Format::e4m3, [&](const TensorView& y, AmaxSlot s) {
        gpu->rmsnorm_forward(dx.view, dw.view, 1e-5f, y, rstd.view, s);
      });
      check(label(c, "gelu", poison), c, Fp8Format::e4m3,
            [&](const TensorView& y, AmaxSlot s) { gpu->gelu_forward(dx.view, y, s); });
      check(label(c, "gelu backward", poison), c, Fp8Format::e5m2,
            [&](const TensorView& y, AmaxSlot s) { gpu->gelu_backward(dx.view, dg.view, y, s); });
      check(label(c, "convert", poison), c, Fp8Format::e5m2,
            [&](const TensorView& y, AmaxSlot s) { gpu->convert(dresid.view, y, s); });
      if (c.out != DType::bf16) continue;
      // AdamW's bf16 working copy (an FP8 linear's W), from fresh state on every call: the
      // update writes param, m and v in place.
      HostTensor p = testing::random_normal(DType::f32, c.shape, seed, 5, 2.f);
      HostTensor m = testing::random_normal(DType::f32, c.shape, seed, 6, 1e-2f);
      HostTensor v = testing::random_normal(DType::f32, c.shape, seed, 7, 1e-2f);
      for (std::int64_t i = 0; i < v.numel(); ++i) v.as<float>()[i] *= v.as<float>()[i];
      if (poison != 0.f) poison_at(p, poison);
      AdamWStep step;
      step.lr = 1e-2f, step.weight_decay = 0.1f, step.grad_scale = 0.5f;
      step.bias_correction1 = 0.1f, step.bias_correction2 = 0.001f;
      check(label(c, "adamw working copy", poison), c, Fp8Format::e4m3,
            [&](const TensorView& working, AmaxSlot s) {
              const DeviceView dp(p, c.offset), dm(m, c.offset), dv(v, c.offset);
              gpu->adamw_update(dp.view, dresid.view, dm.view, dv.view, step, working, s);
              gpu->synchronize();  // before the state's memory goes
            });
    }
  }
  EXPECT_GT(checked_nonfinite, 0) << "the NaN/inf cases must reach the outputs";
}

// ---- attention --------------------------------------------------------------------------

using testing::AttentionShape;

// The attention's inputs on the device, and its forward's out and lse (the backward's inputs).
struct AttentionInputs {
  AttentionShape a;
  DeviceTensor qkv, dout, out, lse;
  AttentionInputs(Backend& gpu, const AttentionShape& c, const HostTensor& h_qkv,
                  const HostTensor& h_dout)
      : a(c),
        qkv(to_device(h_qkv.view())),
        dout(to_device(h_dout.view())),
        out(DType::bf16, {c.rows(), c.d_model()}),
        lse(DType::f32, {c.batch, c.heads, c.seq}) {
    gpu.attention_forward(qkv.view(), c.heads, c.seq, out.view(), lse.view());
    gpu.synchronize();  // the launchers below run on the legacy stream
  }

  // The backward of an explicit kernel family (the backend runs its KernelOptions' family).
  void backward(AttentionKernels algo, const TensorView& dqkv, AmaxSlot slot) const {
    const DeviceTensor workspace(DType::u8,
                                 {static_cast<std::int64_t>(cuda_ops::attention_workspace_bytes(
                                     false, algo, a.batch, a.seq, a.heads, a.head_dim))});
    cuda_ops::attention_backward(qkv.view().data, out.view().data, lse.view().as<const float>(),
                                 dout.view().data, dqkv.data, a.batch, a.seq, a.heads, a.head_dim,
                                 workspace.view().data, nullptr, algo,
                                 {slot.meta, slot.format, slot.deferred});
    FP8LAB_LAUNCH_CHECK("attention_backward");
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());  // before the workspace is freed
  }
};

// Where the wgmma kernels are not built (hd 32) they would run the two-pass kernels again.
// cuDNN's backward writes no amax itself: the dispatch's amax pass over its dqkv is checked here
// (where the library is missing, the own kernels run instead).
std::vector<AttentionKernels> backward_algos(int head_dim) {
  if (head_dim == 32) return {AttentionKernels::mma_sync, AttentionKernels::cudnn};
  return {AttentionKernels::mma_sync, AttentionKernels::wgmma, AttentionKernels::wgmma_ws,
          AttentionKernels::cudnn};
}

// out (attn.proj's x) and d_qkv (qkv's dY) through the backend and through every backward
// algorithm. A NaN or inf in v of the first token reaches every out row of its sequence (the
// first and last keys' v are poisoned); in dout it reaches dv and, through dP, dq and dk.
TEST_F(CudaFusedAmax, AttentionWritesTheMetaAmaxScaleWouldWrite) {
  const std::uint64_t seed = testing::fresh_seed();
  std::vector<AttentionShape> cases;
  for (int hd : {32, 64, 128}) {
    cases.push_back({2, 3, 200, hd});  // tails of every query and key tile
    cases.push_back({1, 2, 129, hd});
    cases.push_back({3, 1, 1, hd});
  }
  // More (batch, head) pairs than grid.y holds: the grid's z rounding adds CTAs that return at
  // once and must not be counted among the committing ones.
  cases.push_back({65543, 1, 1, 32});
  cases.push_back({65543, 1, 1, 64});
  const std::unique_ptr<Backend> cudnn_gpu =
      make_cuda_backend(KernelOptions{AttentionKernels::cudnn});
  for (const AttentionShape& a : cases) {
    for (float poison : {0.f, kNaN, kInf}) {
      const std::int64_t m = a.rows(), d = a.d_model();
      HostTensor qkv = testing::random_normal(DType::bf16, {m, 3 * d}, seed, 1);
      HostTensor dout = testing::random_normal(DType::bf16, {m, d}, seed, 2);
      if (poison != 0.f) {
        const auto bf = float_to_bf16(poison);
        qkv.as<std::uint16_t>()[2 * d + 1] = bf;                    // v, token 0, head 0
        qkv.as<std::uint16_t>()[(m - 1) * 3 * d + 3 * d - 1] = bf;  // v, last token and head
        dout.as<std::uint16_t>()[(m / 2) * d + d / 2] = bf;
      }
      const AttentionInputs in(*gpu, a, qkv, dout);
      const std::string tag = a.describe() + poison_tag(poison);
      const Case out_case{{m, d}, 0, DType::bf16}, dqkv_case{{m, 3 * d}, 0, DType::bf16};
      check("attention forward " + tag, out_case, Fp8Format::e4m3,
            [&](const TensorView& out, AmaxSlot s) {
              gpu->attention_forward(in.qkv.view(), a.heads, a.seq, out, in.lse.view(), s);
            });
      // cuDNN's forward (the own kernels where its library is missing): the dispatch's amax pass.
      check("attention forward cudnn " + tag, out_case, Fp8Format::e4m3,
            [&](const TensorView& out, AmaxSlot s) {
              cudnn_gpu->attention_forward(in.qkv.view(), a.heads, a.seq, out, in.lse.view(), s);
            });
      check("attention backward (backend) " + tag, dqkv_case, Fp8Format::e5m2,
            [&](const TensorView& dqkv, AmaxSlot s) {
              gpu->attention_backward(in.qkv.view(), in.out.view(), in.lse.view(), in.dout.view(),
                                      a.heads, a.seq, dqkv, s);
            });
      for (AttentionKernels algo : backward_algos(a.head_dim)) {
        check(std::string("attention backward ") + attention_kernels_name(algo) + " " + tag,
              dqkv_case, Fp8Format::e5m2,
              [&](const TensorView& dqkv, AmaxSlot s) { in.backward(algo, dqkv, s); });
      }
    }
  }
  EXPECT_GT(checked_nonfinite, 0) << "the NaN/inf cases must reach the outputs";
}

// max |v| over columns [part * d, (part + 1) * d) of a bf16 [m, 3d] tensor.
float part_amax(const HostTensor& t, int part, std::int64_t d) {
  float mx = 0.f;
  for (std::int64_t r = 0; r < t.shape()[0]; ++r)
    for (std::int64_t c = part * d; c < (part + 1) * d; ++c)
      mx = std::fmax(mx, std::fabs(bf16_to_float(t.as<const std::uint16_t>()[r * 3 * d + c])));
  return mx;
}

// Multiplies columns [part * d, (part + 1) * d) of bf16 qkv by `factor` (0 or a power of two:
// exact).
void scale_part(const HostTensor& qkv, int part, std::int64_t d, float factor) {
  auto* v = qkv.as<std::uint16_t>();
  for (std::int64_t r = 0; r < qkv.shape()[0]; ++r)
    for (std::int64_t c = part * d; c < (part + 1) * d; ++c)
      v[r * 3 * d + c] = float_to_bf16(bf16_to_float(v[r * 3 * d + c]) * factor);
}

// The d_qkv amax must cover the stores of every kernel: inputs that put the largest value in
// dv (v = 0: dP = 0, so dS, dq and dk vanish), in dq (q = 0: dk = dS^T q vanishes, and k x 64
// scales dq = dS k without changing P) and in dk (k = 0, q x 64, likewise).
TEST_F(CudaFusedAmax, AttentionBackwardAmaxCoversDqDkAndDv) {
  const std::uint64_t seed = testing::fresh_seed();
  constexpr int kQ = 0, kK = 1, kV = 2;
  struct Setup {
    int largest;       // the part that must hold the largest value
    int zero, scaled;  // qkv parts zeroed and multiplied by 64 (-1: none)
  };
  const Setup setups[] = {{kV, kV, -1}, {kQ, kQ, kK}, {kK, kK, kQ}};
  for (int hd : {32, 64, 128}) {
    const AttentionShape a{2, 2, 150, hd};
    const std::int64_t m = a.rows(), d = a.d_model();
    for (const Setup& setup : setups) {
      HostTensor qkv = testing::random_normal(DType::bf16, {m, 3 * d}, seed, 1);
      const HostTensor dout = testing::random_normal(DType::bf16, {m, d}, seed, 2);
      scale_part(qkv, setup.zero, d, 0.f);
      if (setup.scaled >= 0) scale_part(qkv, setup.scaled, d, 64.f);
      const AttentionInputs in(*gpu, a, qkv, dout);
      for (AttentionKernels algo : backward_algos(hd)) {
        const std::string what = std::string("attention backward ") + attention_kernels_name(algo) +
                                 " " + a.describe() + ", largest in part " +
                                 std::to_string(setup.largest);
        const HostTensor dqkv =
            check(what, {{m, 3 * d}, 0, DType::bf16}, Fp8Format::e5m2,
                  [&](const TensorView& out, AmaxSlot s) { in.backward(algo, out, s); });
        const float largest = part_amax(dqkv, setup.largest, d);
        for (int part : {kQ, kK, kV}) {
          if (part != setup.largest) {
            EXPECT_GT(largest, part_amax(dqkv, part, d)) << what << ": part " << part;
          }
        }
      }
    }
  }
}

TEST_F(CudaFusedAmax, AnEmptyOutputStillGetsItsScale) {
  const Case c{{0, 64}, 0, DType::bf16};
  const DeviceView x(DType::bf16, c.shape, 0), w(DType::f32, {64}, 0), rstd(DType::f32, {0}, 0);
  check("rmsnorm of no rows", c, Fp8Format::e4m3, [&](const TensorView& y, AmaxSlot s) {
    gpu->rmsnorm_forward(x.view, w.view, 1e-5f, y, rstd.view, s);
  });
  check("gelu of nothing", c, Fp8Format::e4m3,
        [&](const TensorView& y, AmaxSlot s) { gpu->gelu_forward(x.view, y, s); });
  // Attention over a batch of no sequences (64 = one head of 64).
  const DeviceView qkv(DType::bf16, {0, 3 * 64}, 0), out(DType::bf16, {0, 64}, 0);
  const DeviceView lse(DType::f32, {0, 1, 8}, 0);
  check("attention of no rows", c, Fp8Format::e4m3, [&](const TensorView& y, AmaxSlot s) {
    gpu->attention_forward(qkv.view, 1, 8, y, lse.view, s);
  });
  check("attention backward of no rows", {{0, 3 * 64}, 0, DType::bf16}, Fp8Format::e5m2,
        [&](const TensorView& y, AmaxSlot s) {
          gpu->attention_backward(qkv.view, out.view, lse.view, out.view, 1, 8, y, s);
        });
}

// A non-finite input that reached the producer is reported by the linear as before.
TEST_F(CudaFusedAmax, NonFiniteInputsAreReportedAsWithoutTheSlot) {
  const std::uint64_t seed = testing::fresh_seed();
  const std::int64_t m = 64, k = 128, n = 64;
  HostTensor x = testing::random_normal(DType::f32, {m, k}, seed, 1);
  x.as<float>()[7 * k + 3] = kNaN;
  HostTensor dresid = testing::random_normal(DType::f32, {m, n}, seed, 2);
  dresid.as<float>()[5] = kInf;
  const DeviceTensor dx_in = to_device(x), ddresid = to_device(dresid);
  const DeviceTensor norm_w = to_device(testing::random_normal(DType::f32, {k}, seed, 4));
  const DeviceTensor rstd(DType::f32, {m});
  // The unfused arm hands no slot: the linear reads the tensor for its own amax.
  testing::expect_nonfinite_reported_alike(
      {m, k, n}, seed, testing::UnfusedArmSlot::none,
      [&](Backend& be, bool /*fused*/, const AmaxSlot& xs, const TensorView& ln) {
        be.rmsnorm_forward(dx_in, norm_w, 1e-5f, ln, rstd, xs);
      },
      [&](Backend& be, bool /*fused*/, const AmaxSlot& dys, const TensorView& dy) {
        be.convert(ddresid, dy, dys);
      });
}

struct ModelCase {
  PrecisionPolicy policy;
  bool recompute;
  PrecisionConfig precision() const {
    PrecisionConfig p;
    p.policy = policy;
    p.mlp_recompute = recompute;
    return p;
  }
};

class CudaFusedAmaxModel : public ::testing::TestWithParam<ModelCase> {};

// W's amax from the update that writes the working weights (GptModel::weight_amax_slot):
// AdamW's deferred keys against each W cast's own pass (the working copy refreshed by a plain
// convert after each update, the same bytes), over two updates and the forwards after them
// (MLP recompute casts W again in the backward).
TEST_P(CudaFusedAmaxModel, WeightAmaxFromTheUpdateIsBitIdentical) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const PrecisionConfig p = GetParam().precision();
  const std::uint64_t seed = testing::fresh_seed();
  const ModelConfig c = testing::ab_model(2);
  const std::int64_t m = testing::kAbBatch * c.seq_len;
  const auto inputs = testing::random_tokens(m, c.vocab_size, seed, 1);
  const auto targets = testing::random_tokens(m, c.vocab_size, seed, 2);
  OptimConfig o;
  o.weight_decay = 0.1f;
  double losses[2] = {0, 0}, eval_losses[2];
  std::vector<float> grads[2], weights[2];
  for (int on = 0; on < 2; ++on) {
    auto gpu = make_cuda_backend();
    GptModel model(c, p, testing::kAbBatch, *gpu);
    model.init_parameters(seed);
    AdamW adam(o, model);
    for (int step = 0; step < 3; ++step) {
      model.zero_grads();
      const auto& a = step % 2 == 0 ? inputs : targets;
      const auto& b = step % 2 == 0 ? targets : inputs;
      losses[on] += model.forward_backward(a.data(), b.data(), 1.f / m, -1, 64).loss_sum;
      if (step == 2) break;  // the last forward's gradients are compared, not applied
      adam.step(1e-2f, 0.7f);
      if (on == 0) model.refresh_working_weights();  // each W cast reads W for its amax
      EXPECT_EQ(model.weight_amax_current(), on == 1) << "after update " << step;
    }
    grads[on] = model.get_gradients();
    weights[on] = model.get_parameters();
    eval_losses[on] = model.evaluate(inputs.data(), targets.data(), -1, 64).loss_sum;
  }
  EXPECT_EQ(std::memcmp(&losses[0], &losses[1], sizeof(double)), 0)
      << losses[0] << " vs " << losses[1];
  EXPECT_EQ(std::memcmp(&eval_losses[0], &eval_losses[1], sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(grads[0].data(), grads[1].data(), grads[0].size() * 4), 0);
  EXPECT_EQ(weights[0], weights[1]);
}

INSTANTIATE_TEST_SUITE_P(Policies, CudaFusedAmaxModel,
                         ::testing::Values(ModelCase{PrecisionPolicy::fp8_mlp, false},
                                           ModelCase{PrecisionPolicy::fp8_mlp, true},
                                           ModelCase{PrecisionPolicy::fp8_linears, false},
                                           ModelCase{PrecisionPolicy::fp8_linears, true}),
                         [](const auto& param_info) {
                           return testing::policy_case_name(param_info.param.policy,
                                                            param_info.param.recompute);
                         });

}  // namespace
}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
