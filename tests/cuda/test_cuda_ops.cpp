// The CUDA backend's elementwise, reduction, AdamW, RMSNorm (plain and fused with the residual
// add or the dY convert) and embedding launchers (src/cuda_kernels/cuda_ops_launch.hpp) against the
// CPU reference backend on the same inputs.
//
// Bounds, from the arithmetic of the two implementations:
// - bit-exact: convert, add, scale, AdamW (every operation IEEE-rounded in the same order on both
//   sides, no FMA), the embedding forward, and the embedding backward (each token's rows summed in
//   row order onto the old value, the CPU's order).
// - GELU: the CUDA kernels compute v * sigmoid(2u) with hardware exp2 and reciprocal (~2^-22
//   relative each); the CPU computes 1 - 2 / (exp(2u) + 1) with a rounding after every
//   operation, whose error (~1e-7 absolute in tanh, 1 + tanh cancelling for negative v)
//   dominates the difference; the bounds follow a 1e-6 tanh error through the formula.
// - RMSNorm: the f64 sums run in another order, so rstd (and what depends on it) may differ by
//   an ulp; dw sums fp32 partials in another order (bounded by 2^-16 of the sum of |terms|).
// - bf16 outputs: the fp32 values may land on either side of a bf16 rounding boundary: one bf16
//   ulp (<= 2^-7 relative).
// Reductions and the embedding backward must give identical bytes on a second run.
#if defined(FP8LAB_HAVE_CUDA)
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_backend/cuda_backend.hpp"
#include "cuda_kernels/cuda_ops_launch.hpp"
#include "cuda_test_util.hpp"
#include "fp8lab/backend.hpp"
#include "fp8lab/fp8_format.hpp"

namespace fp8lab {
namespace {

using cuda_ops::ElemType;

ElemType elem(DType t) { return t == DType::f32 ? ElemType::f32 : ElemType::bf16; }

// A device copy of a host tensor placed `offset` elements into its allocation, so offset 1
// exercises the kernels' unaligned (scalar) paths. The rest of the allocation is poisoned.
class DevBuf {
 public:
  DevBuf(const HostTensor& h, std::int64_t offset = 0)
      : dtype_(h.dtype()),
        shape_(h.shape()),
        offset_(offset),
        storage_(h.dtype(), Shape{h.numel() + offset + 1}) {
    fill_bytes_cuda(storage_.view(), 0xFF);
    FP8LAB_CUDA_CHECK(cudaMemcpy(ptr(), h.view().data, h.nbytes(), cudaMemcpyHostToDevice));
  }
  void* ptr() const {
    return static_cast<char*>(storage_.view().data) +
           static_cast<std::size_t>(offset_) * dtype_size(dtype_);
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr());
  }
  HostTensor read() const {
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    HostTensor h(dtype_, shape_);
    FP8LAB_CUDA_CHECK(cudaMemcpy(h.view().data, ptr(), h.nbytes(), cudaMemcpyDeviceToHost));
    return h;
  }

 private:
  DType dtype_;
  Shape shape_;
  std::int64_t offset_;
  DeviceTensor storage_;
};

void finish(const char* what) {
  FP8LAB_CUDA_CHECK(cudaGetLastError());
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
  (void)what;
}

HostTensor copy_of(const HostTensor& h) {
  HostTensor c(h.dtype(), h.shape());
  std::memcpy(c.view().data, h.view().data, h.nbytes());
  return c;
}

double value_at(const HostTensor& t, std::int64_t i) { return testing::element_as_double(t, i); }

// An f32 or bf16 tensor as f32 (exact).
HostTensor widen(const HostTensor& h) {
  HostTensor f(DType::f32, h.shape());
  for (std::int64_t i = 0; i < h.numel(); ++i)
    f.as<float>()[i] = static_cast<float>(value_at(h, i));
  return f;
}

// An f32 tensor rounded to bf16 (to nearest even).
HostTensor rounded_to_bf16(const HostTensor& f) {
  HostTensor h(DType::bf16, f.shape());
  for (std::int64_t i = 0; i < f.numel(); ++i)
    h.as<std::uint16_t>()[i] = float_to_bf16(f.as<float>()[i]);
  return h;
}

void expect_bytes_equal(const HostTensor& got, const HostTensor& want, const std::string& what) {
  const testing::ByteDiff d = testing::byte_diff(got.view(), want.view());
  if (d.count == 0) return;
  const std::int64_t elem_index = d.first / static_cast<std::int64_t>(dtype_size(want.dtype()));
  ADD_FAILURE() << what << ": " << d.count << " of " << want.nbytes()
                << " bytes differ; first at element " << elem_index << " of " << want.numel()
                << " (" << want.view().describe() << "): got " << value_at(got, elem_index)
                << ", want " << value_at(want, elem_index);
}

// |got - want| <= tol(i) for every element (NaN only where want is NaN). Reports the number of
// violations, the worst |err| / tol with its index and values, and how many are bit-identical.
void expect_close(const HostTensor& got, const HostTensor& want,
                  const std::function<double(std::int64_t)>& tol, const std::string& what) {
  ASSERT_EQ(got.numel(), want.numel()) << what;
  std::int64_t bad = 0, identical = 0, worst_i = -1;
  double worst_ratio = 0.0;
  const std::size_t esize = dtype_size(want.dtype());
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const auto* g =
        static_cast<const char*>(got.view().data) + i * static_cast<std::int64_t>(esize);
    const auto* w =
        static_cast<const char*>(want.view().data) + i * static_cast<std::int64_t>(esize);
    if (std::memcmp(g, w, esize) == 0) {
      ++identical;
      continue;
    }
    const double a = value_at(got, i), b = value_at(want, i);
    double ratio;
    if (std::isnan(a) || std::isnan(b)) {
      ratio = std::isnan(a) && std::isnan(b) ? 0.0 : std::numeric_limits<double>::infinity();
    } else {
      const double t = tol(i);
      ratio = std::fabs(a - b) / (t > 0 ? t : std::numeric_limits<double>::min());
    }
    if (!(ratio <= 1.0)) ++bad;
    if (!(ratio <= worst_ratio)) {
      worst_ratio = ratio;
      worst_i = i;
    }
  }
  std::fprintf(stderr, "[measured] %s: %lld of %lld bit-identical, worst err/tol %.3g at %lld\n",
               what.c_str(), static_cast<long long>(identical),
               static_cast<long long>(want.numel()), worst_ratio, static_cast<long long>(worst_i));
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << want.numel()
                    << " elements outside the bound; worst at " << worst_i << ": got "
                    << (worst_i >= 0 ? value_at(got, worst_i) : 0.0) << ", want "
                    << (worst_i >= 0 ? value_at(want, worst_i) : 0.0) << ", tol "
                    << (worst_i >= 0 ? tol(worst_i) : 0.0) << " (err/tol " << worst_ratio << ")";
}

enum class Specials { none, all, no_nan };

// Random normal values with a few specials (bf16 ties, infinities, NaN, a subnormal) when asked.
// Arithmetic tests leave NaN out: the GPU returns the canonical NaN 0x7FFFFFFF from an operation
// on a NaN, x86 the input NaN, so their bytes differ though both are NaN.
HostTensor random_tensor(DType dtype, Shape shape, std::uint64_t seed, std::uint64_t stream,
                         float stddev = 1.0f, Specials specials = Specials::none) {
  HostTensor t = testing::random_normal(dtype, shape, seed, stream, stddev);
  if (specials != Specials::none && dtype == DType::f32) {
    const std::int64_t n = t.numel();
    float* p = t.as<float>();
    const float values[] = {
        std::numeric_limits<float>::infinity(),
        -std::numeric_limits<float>::infinity(),
        specials == Specials::all ? std::numeric_limits<float>::quiet_NaN() : 0.0f,
        bits_float(0x3F808000u),  // a bf16 tie, rounds to even (down)
        bits_float(0x3F818000u),  // a bf16 tie, rounds up
        bits_float(0x7F7FFFFFu),  // fp32 max: rounds to bf16 inf
        1e-40f};                  // subnormal
    for (std::int64_t k = 0; k < 7 && k < n; ++k) p[(k * 7919) % n] = values[k];
  }
  return t;
}

std::string label(const char* op, DType a, DType b, std::int64_t n, std::int64_t offset) {
  std::ostringstream s;
  s << op << " " << dtype_name(a) << "->" << dtype_name(b) << " n=" << n << " offset=" << offset;
  return s.str();
}

const std::int64_t kSizes[] = {1, 7, 8, 9, 1000, 4099, (1 << 20) + 3};

// ---- convert, add, scale -------------------------------------------------------------------

TEST(CudaOps, ConvertBitExact) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  auto cpu = make_cpu_backend();
  const std::pair<DType, DType> pairs[] = {{DType::f32, DType::bf16},
                                           {DType::f32, DType::f32},
                                           {DType::bf16, DType::f32},
                                           {DType::bf16, DType::bf16}};
  for (const auto& [st, dt] : pairs) {
    for (std::int64_t n : kSizes) {
      for (std::int64_t offset : {0, 1}) {
        const HostTensor src = random_tensor(st, {n}, seed, 1, 1.0f, Specials::all);
        HostTensor want = testing::poisoned(dt, {n});
        cpu->convert(src.view(), want.view());
        const DevBuf dsrc(src, offset), ddst(testing::poisoned(dt, {n}), offset);
        cuda_ops::convert(dsrc.ptr(), elem(st), ddst.ptr(), elem(dt), n, nullptr);
        finish("convert");
        expect_bytes_equal(ddst.read(), want, label("convert", st, dt, n, offset));
      }
    }
  }
}

TEST(CudaOps, AddInplaceBitExact) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  auto cpu = make_cpu_backend();
  const std::pair<DType, DType> pairs[] = {{DType::f32, DType::bf16},  // dst, src
                                           {DType::f32, DType::f32},
                                           {DType::bf16, DType::bf16},
                                           {DType::bf16, DType::f32}};
  for (const auto& [dt, st] : pairs) {
    for (std::int64_t n : kSizes) {
      for (std::int64_t offset : {0, 1}) {
        const HostTensor src = random_tensor(st, {n}, seed, 2);
        const HostTensor dst0 = random_tensor(dt, {n}, seed, 3);
        HostTensor want = copy_of(dst0);
        cpu->add_inplace(want.view(), src.view());
        const DevBuf dsrc(src, offset), ddst(dst0, offset);
        cuda_ops::add_inplace(ddst.ptr(), elem(dt), dsrc.ptr(), elem(st), n, nullptr);
        finish("add_inplace");
        expect_bytes_equal(ddst.read(), want, label("add_inplace", st, dt, n, offset));
      }
    }
  }
}

TEST(CudaOps, ScaleBitExact) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  auto cpu = make_cpu_backend();
  for (std::int64_t n : kSizes) {
    for (std::int64_t offset : {0, 1}) {
      const HostTensor t0 = random_tensor(DType::f32, {n}, seed, 4, 1.0f, Specials::no_nan);
      HostTensor want = copy_of(t0);
      cpu->scale_inplace(want.view(), 0.37f);
      const DevBuf dt(t0, offset);
      cuda_ops::scale_inplace_f32(dt.as<float>(), 0.37f, n, nullptr);
      finish("scale");
      expect_bytes_equal(dt.read(), want, label("scale", DType::f32, DType::f32, n, offset));
    }
  }
}

// ---- reductions ------------------------------------------------------------------------------

// f32, and bf16 (the bf16 gradients, PrecisionConfig::grads): each element widened exactly, then
// the f32 path's order, so a bf16 tensor sums to the bits of its f32 widening.
TEST(CudaOps, SumOfSquaresMatchesCpuAndIsDeterministic) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  auto cpu = make_cpu_backend();
  DeviceTensor workspace(DType::u8,
                         {static_cast<std::int64_t>(cuda_ops::sum_of_squares_workspace_bytes())});
  DeviceTensor out(DType::f64, {4});
  for (DType type : {DType::f32, DType::bf16}) {
    for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{3}, std::int64_t{4097},
                           std::int64_t{(1 << 22) + 5}}) {
      const HostTensor t = random_tensor(type, {n}, seed, 5, 3.0f);
      const double want = cpu->sum_of_squares(t.view());
      const DevBuf aligned(t, 0), shifted(t, 1), wide(widen(t), 0);
      double* o = out.view().as<double>();
      void* ws = workspace.view().data;
      cuda_ops::sum_of_squares(aligned.ptr(), elem(type), n, o, ws, nullptr);
      cuda_ops::sum_of_squares(aligned.ptr(), elem(type), n, o + 1, ws, nullptr);
      cuda_ops::sum_of_squares(shifted.ptr(), elem(type), n, o + 2, ws, nullptr);
      cuda_ops::sum_of_squares(wide.ptr(), ElemType::f32, n, o + 3, ws, nullptr);
      finish("sum_of_squares");
      const HostTensor got = to_host(out.view());
      const double* g = got.as<double>();
      const std::string what = std::string(dtype_name(type)) + " n=" + std::to_string(n);
      // Positive terms, exact f64 products: each order's relative error is below n * 2^-53.
      const double tol = want * static_cast<double>(n + 1) * std::ldexp(1.0, -52);
      EXPECT_LE(std::fabs(g[0] - want), tol) << what << ": got " << g[0] << " want " << want;
      EXPECT_EQ(std::memcmp(&g[0], &g[1], sizeof(double)), 0)
          << what << ": two runs differ: " << g[0] << " vs " << g[1];
      // The element-to-thread assignment does not depend on alignment: same bits unaligned.
      EXPECT_EQ(std::memcmp(&g[0], &g[2], sizeof(double)), 0)
          << what << ": aligned " << g[0] << " vs unaligned " << g[2];
      // Nor on the element type: the same values as f32 give the same bits.
      EXPECT_EQ(std::memcmp(&g[0], &g[3], sizeof(double)), 0)
          << what << ": " << g[0] << " vs its f32 widening " << g[3];
    }
  }
}

TEST(CudaOps, AllFiniteFlags) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  DeviceTensor flag(DType::i32, {1});
  for (DType dt : {DType::f32, DType::bf16}) {
    for (std::int64_t n : kSizes) {
      for (std::int64_t offset : {0, 1}) {
        // -1: all finite; else the index of the one bad element (inf or NaN).
        const std::int64_t cases[] = {-1, 0, n - 1, n / 2};
        for (std::int64_t bad_at : cases) {
          for (int kind = 0; kind < 2; ++kind) {
            HostTensor t = random_tensor(dt, {n}, seed, 6, 100.0f);
            const float bad = kind == 0 ? std::numeric_limits<float>::infinity()
                                        : std::numeric_limits<float>::quiet_NaN();
            if (bad_at >= 0) {
              if (dt == DType::f32)
                t.as<float>()[bad_at] = bad;
              else
                t.as<std::uint16_t>()[bad_at] = float_to_bf16(bad);
            }
            const DevBuf d(t, offset);
            const int garbage = 7;
            FP8LAB_CUDA_CHECK(
                cudaMemcpy(flag.view().data, &garbage, sizeof(int), cudaMemcpyHostToDevice));
            cuda_ops::all_finite(d.ptr(), elem(dt), n, flag.view().as<int>(), nullptr);
            finish("all_finite");
            int got = -1;
            FP8LAB_CUDA_CHECK(
                cudaMemcpy(&got, flag.view().data, sizeof(int), cudaMemcpyDeviceToHost));
            EXPECT_EQ(got, bad_at < 0 ? 1 : 0)
                << dtype_name(dt) << " n=" << n << " offset=" << offset << " bad at " << bad_at
                << (kind == 0 ? " (inf)" : " (NaN)");
          }
        }
      }
    }
  }
}

// ---- GELU ------------------------------------------------------------------------------------

constexpr double kTanhSlack = 1e-6;  // > the few 1e-7 the two tanh evaluations differ by

double bf16_slack(DType t) { return t == DType::bf16 ? std::ldexp(1.0, -7) : 0.0; }

// kSizes, and for bf16 one size past what the largest grid covers in one sweep (4096 blocks of
// 256 threads, 16 elements each): the GELU kernels' grid-stride loop over warp steps then runs
// twice for some warps, and 77 single elements follow.
std::vector<std::int64_t> gelu_sizes(DType t) {
  std::vector<std::int64_t> sizes(std::begin(kSizes), std::end(kSizes));
  if (t == DType::bf16) sizes.push_back((std::int64_t{1} << 24) + 3 * 512 + 77);
  return sizes;
}

TEST(CudaOps, GeluForwardMatchesCpu) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  auto cpu = make_cpu_backend();
  const std::pair<DType, DType> pairs[] = {{DType::bf16, DType::bf16}, {DType::f32, DType::f32}};
  for (const auto& [xt, yt] : pairs) {
    for (std::int64_t n : gelu_sizes(xt)) {
      for (std::int64_t offset : {0, 1}) {
        const HostTensor x = random_tensor(xt, {n}, seed, 7, 3.0f);
        HostTensor want = testing::poisoned(yt, {n});
        cpu->gelu_forward(x.view(), want.view());
        const DevBuf dx(x, offset), dy(testing::poisoned(yt, {n}), offset);
        cuda_ops::gelu_forward(dx.ptr(), elem(xt), dy.ptr(), elem(yt), n, nullptr);
        finish("gelu_forward");
        const double slack = bf16_slack(yt);
        // y = 0.5 x (1 + tanh): a tanh error e moves y by 0.5 |x| e; then y's own roundings.
        auto tol = [&](std::int64_t i) {
          return kTanhSlack * std::fabs(value_at(x, i)) +
                 (std::ldexp(1.0, -21) + slack) * std::fabs(value_at(want, i));
        };
        expect_close(dy.read(), want, tol, label("gelu_forward", xt, yt, n, offset));
      }
    }
  }
}

TEST(CudaOps, GeluBackwardMatchesCpu) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  auto cpu = make_cpu_backend();
  for (DType t : {DType::bf16, DType::f32}) {
    for (std::int64_t n : gelu_sizes(t)) {
      for (std::int64_t offset : {0, 1}) {
        const HostTensor x = random_tensor(t, {n}, seed, 8, 3.0f);
        const HostTensor dy = random_tensor(t, {n}, seed, 9);
        HostTensor want = testing::poisoned(t, {n});
        cpu->gelu_backward(x.view(), dy.view(), want.view());
        const DevBuf dxin(x, offset), ddy(dy, offset), ddx(testing::poisoned(t, {n}), offset);
        cuda_ops::gelu_backward(dxin.ptr(), elem(t), ddy.ptr(), elem(t), ddx.ptr(), elem(t), n,
                                nullptr);
        finish("gelu_backward");
        const double slack = bf16_slack(t);
        // grad = 0.5 (1 + tanh) + 0.5 x (1 - tanh^2) du: a tanh error e moves it by up to
        // (0.5 + |x| du) e (the 1 - tanh^2 term cancels near |tanh| = 1).
        auto tol = [&](std::int64_t i) {
          const double v = value_at(x, i);
          const double du = 0.7978845608 * (1.0 + 3 * 0.044715 * v * v);
          return kTanhSlack * (1.0 + 2.0 * std::fabs(v) * du) * std::fabs(value_at(dy, i)) +
                 (std::ldexp(1.0, -21) + slack) * std::fabs(value_at(want, i));
        };
        expect_close(ddx.read(), want, tol, label("gelu_backward", t, t, n, offset));
      }
    }
  }
}

// ---- AdamW -----------------------------------------------------------------------------------

// With the clip folded in (grad_scale, 1 on some steps) and the bf16 working copy written by
// the same pass: param, m, v and the working copy as the CPU backend computes them.
// With bf16 gradients (PrecisionConfig::grads) the kernel widens each one exactly before the same
// arithmetic: bit for bit the CPU's, and the update its f32 widening would give.
TEST(CudaOps, AdamwMatchesCpuOverSeveralSteps) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  auto cpu = make_cpu_backend();
  auto gpu = make_cuda_backend();  // through CudaBackend: its checks and its launch
  // 2^23 + 4099: more than one sweep of the kernel's largest grid (4096 blocks x 256 threads x
  // 8 elements), then a tail that is not a whole warp step of 256.
  for (DType gt : {DType::f32, DType::bf16}) {
    for (std::int64_t n :
         {std::int64_t{13}, std::int64_t{1000003}, std::int64_t{(1 << 23) + 4099}}) {
      for (std::int64_t offset : {0, 1}) {
        HostTensor p = random_tensor(DType::f32, {n}, seed, 10, 0.02f);
        HostTensor m(DType::f32, {n}), v(DType::f32, {n});
        std::memset(m.view().data, 0, m.nbytes());
        std::memset(v.view().data, 0, v.nbytes());
        HostTensor w = testing::poisoned(DType::bf16, {n});
        const DevBuf dp(p, offset), dm(m, offset), dv(v, offset), dw(w, offset);
        // bf16 gradients: a twin run on their f32 widening must end with the same bytes.
        const bool twin = gt == DType::bf16;
        std::optional<DevBuf> tp, tm, tv, tw;
        if (twin) {
          tp.emplace(p, offset);
          tm.emplace(m, offset);
          tv.emplace(v, offset);
          tw.emplace(w, offset);
        }
        const float beta1 = 0.9f, beta2 = 0.95f;
        for (int step = 1; step <= 5; ++step) {
          // Gradients of varied scale, some tiny, so sqrt(v) + eps matters somewhere.
          const HostTensor g = random_tensor(gt, {n}, seed, 100 + static_cast<std::uint64_t>(step),
                                             step == 3 ? 1e-9f : 0.5f);
          AdamWStep s;
          s.lr = 6e-4f * static_cast<float>(step);
          s.beta1 = beta1;
          s.beta2 = beta2;
          s.eps = 1e-8f;
          s.weight_decay = step % 2 ? 0.1f : 0.f;
          s.bias_correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(beta1), step));
          s.bias_correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(beta2), step));
          s.grad_scale = step % 2 ? 0.3f : 1.f;
          // The working copy on steps 2 and 5 only: the other steps leave it alone.
          const bool with_working = step == 2 || step == 5;
          cpu->adamw_update(p.view(), g.view(), m.view(), v.view(), s,
                            with_working ? w.view() : TensorView{});
          const DevBuf dg(g, offset);
          std::optional<DevBuf> dwide;
          if (twin) dwide.emplace(widen(g), offset);
          // A pageable cudaMemcpy may return before its DMA lands, and the backend runs on its
          // own non-blocking stream: wait for the upload (the first run read 0xFF tails as NaN).
          FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
          auto dev = [n](const DevBuf& b, DType t) {
            return TensorView{b.ptr(), t, Shape{n}, Device::cuda};
          };
          gpu->adamw_update(dev(dp, DType::f32), dev(dg, gt), dev(dm, DType::f32),
                            dev(dv, DType::f32), s,
                            with_working ? dev(dw, DType::bf16) : TensorView{});
          if (twin)
            gpu->adamw_update(dev(*tp, DType::f32), dev(*dwide, DType::f32), dev(*tm, DType::f32),
                              dev(*tv, DType::f32), s,
                              with_working ? dev(*tw, DType::bf16) : TensorView{});
          finish("adamw_update");
        }
        // Expected bit-exact (same IEEE operations in the same order); the bound allows 1e-6.
        auto rel = [](const HostTensor& want) {
          return [&want](std::int64_t i) { return 1e-6 * std::fabs(value_at(want, i)) + 1e-37; };
        };
        const std::string what = "adamw grad " + std::string(dtype_name(gt)) +
                                 " n=" + std::to_string(n) + " offset=" + std::to_string(offset);
        expect_close(dp.read(), p, rel(p), what + " param");
        expect_close(dm.read(), m, rel(m), what + " m");
        expect_close(dv.read(), v, rel(v), what + " v");
        // The working copy: the bf16 of the final param, bit for bit as the CPU wrote it.
        const HostTensor got_w = dw.read();
        EXPECT_EQ(std::memcmp(got_w.view().data, w.view().data, w.nbytes()), 0)
            << what << " working copy";
        for (std::int64_t i = 0; i < n; i += 9973)
          ASSERT_EQ(w.as<std::uint16_t>()[i], float_to_bf16(p.as<float>()[i])) << what << " @" << i;
        if (!twin) continue;
        expect_bytes_equal(dp.read(), tp->read(), what + " param vs its f32-widened twin");
        expect_bytes_equal(dm.read(), tm->read(), what + " m vs its f32-widened twin");
        expect_bytes_equal(dv.read(), tv->read(), what + " v vs its f32-widened twin");
        expect_bytes_equal(dw.read(), tw->read(), what + " working vs its f32-widened twin");
      }
    }
  }
}

// ---- RMSNorm ---------------------------------------------------------------------------------

struct NormShape {
  std::int64_t rows;
  int d;
};
// d % 8 == 0 takes the vector kernels (backward: teams of 1, 2, 4, 8 warps per row for
// d <= 512, 1024, 2048, 4096 with two 8-column groups per thread, d <= 8192 four groups); other d
// the scalar ones. Row counts cover more rows than the backward's 1024 chunks, teams left idle in
// a chunk's last step, and several steps per team (4099 x 2048: 5 rows per chunk, 2 teams;
// 12000 x 512: 12 rows per chunk, 8 one-warp teams, the second step half idle).
const NormShape kNormShapes[] = {{1, 8},    {37, 768}, {130, 2048}, {1500, 64},   {9, 100},
                                 {5, 2056}, {3, 4104}, {700, 13},   {4099, 2048}, {12000, 512}};

// rstd: f64 sums in another order, then one f32 rounding: at most an ulp apart. y: rstd's ulp
// through two products, and one bf16 rounding either side of a boundary.
void expect_norm_close(const HostTensor& got_r, const HostTensor& want_r, const HostTensor& got_y,
                       const HostTensor& want_y, const std::string& what) {
  expect_close(
      got_r, want_r, [&](std::int64_t i) { return std::ldexp(1.0, -23) * value_at(want_r, i); },
      what + " rstd");
  const double slack = bf16_slack(want_y.dtype());
  expect_close(
      got_y, want_y,
      [&](std::int64_t i) {
        return (std::ldexp(1.0, -21) + slack) * std::fabs(value_at(want_y, i));
      },
      what + " y");
}

TEST(CudaOps, RmsnormForwardMatchesCpu) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  auto cpu = make_cpu_backend();
  const std::pair<DType, DType> pairs[] = {
      {DType::f32, DType::bf16}, {DType::f32, DType::f32}, {DType::bf16, DType::bf16}};
  for (const auto& [xt, yt] : pairs) {
    for (const NormShape& s : kNormShapes) {
      const HostTensor x = random_tensor(xt, {s.rows, s.d}, seed, 11, 2.0f);
      const HostTensor w = random_tensor(DType::f32, {s.d}, seed, 12, 1.0f);
      HostTensor want_y = testing::poisoned(yt, {s.rows, s.d});
      HostTensor want_r = testing::poisoned(DType::f32, {s.rows});
      cpu->rmsnorm_forward(x.view(), w.view(), 1e-5f, want_y.view(), want_r.view());
      const DevBuf dx(x), dw(w), dy(testing::poisoned(yt, {s.rows, s.d})),
          dr(testing::poisoned(DType::f32, {s.rows}));
      cuda_ops::rmsnorm_forward(dx.ptr(), elem(xt), dw.as<const float>(), 1e-5f, dy.ptr(), elem(yt),
                                dr.as<float>(), s.rows, s.d, nullptr);
      finish("rmsnorm_forward");
      std::ostringstream what;
      what << "rmsnorm_forward " << dtype_name(xt) << "->" << dtype_name(yt) << " [" << s.rows
           << ", " << s.d << "]";
      expect_norm_close(dr.read(), want_r, dy.read(), want_y, what.str());
    }
  }
}

// The residual add fused in front (add_rmsnorm_forward): the sum bit-exact (one fp32 add on
// both sides), rstd and y as the plain forward; offset 1 puts every view off its 16-byte
// alignment (the scalar kernel).
TEST(CudaOps, AddRmsnormForwardMatchesCpu) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  auto cpu = make_cpu_backend();
  const std::pair<DType, DType> pairs[] = {
      {DType::bf16, DType::bf16}, {DType::f32, DType::f32}, {DType::bf16, DType::f32}};
  for (const auto& [bt, yt] : pairs) {
    for (const NormShape& s : kNormShapes) {
      for (std::int64_t offset : {0, 1}) {
        const Shape shape{s.rows, s.d};
        const HostTensor x = random_tensor(DType::f32, shape, seed, 21, 2.0f, Specials::no_nan);
        const HostTensor b = random_tensor(bt, shape, seed, 22, 1.0f);
        const HostTensor w = random_tensor(DType::f32, {s.d}, seed, 23, 1.0f);
        HostTensor want_sum(DType::f32, shape), want_y(yt, shape), want_r(DType::f32, {s.rows});
        cpu->add_rmsnorm_forward(x.view(), b.view(), want_sum.view(), w.view(), 1e-5f,
                                 want_y.view(), want_r.view());
        const DevBuf dx(x, offset), db(b, offset), dw(w, offset);
        const DevBuf dsum(testing::poisoned(DType::f32, shape), offset),
            dy(testing::poisoned(yt, shape), offset), dr(testing::poisoned(DType::f32, {s.rows}));
        cuda_ops::add_rmsnorm_forward(dx.as<const float>(), db.ptr(), elem(bt), dsum.as<float>(),
                                      dw.as<const float>(), 1e-5f, dy.ptr(), elem(yt),
                                      dr.as<float>(), s.rows, s.d, nullptr);
        finish("add_rmsnorm_forward");
        std::ostringstream what;
        what << "add_rmsnorm_forward b " << dtype_name(bt) << " -> " << dtype_name(yt) << " ["
             << s.rows << ", " << s.d << "] offset " << offset;
        expect_bytes_equal(dsum.read(), want_sum, what.str() + " sum");
        expect_norm_close(dr.read(), want_r, dy.read(), want_y, what.str());
      }
    }
  }
}

// n copies of `value` as `dtype` (f32, or bf16 rounded to nearest even).
HostTensor filled(DType dtype, std::int64_t n, float value) {
  HostTensor t(dtype, {n});
  for (std::int64_t i = 0; i < n; ++i) {
    if (dtype == DType::f32)
      t.as<float>()[i] = value;
    else
      t.as<std::uint16_t>()[i] = float_to_bf16(value);
  }
  return t;
}

// With `fused`, rmsnorm_backward_and_convert: dx and dw as rmsnorm_backward, and its bf16 copy
// of dx within dx's bound plus one bf16 rounding of the CPU's. dw is f32 or bf16 (the bf16
// gradients, PrecisionConfig::grads): a bf16 dw is the f32 path's sum (old value included)
// rounded once, so it must equal the rounding of an f32 run on its widening, bit for bit.
TEST(CudaOps, RmsnormBackwardMatchesCpuAndIsDeterministic) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  auto cpu = make_cpu_backend();
  for (bool fused : {false, true}) {
    for (const auto& [dxt, dwt] : {std::pair{DType::f32, DType::f32},
                                   {DType::bf16, DType::f32},
                                   {DType::f32, DType::bf16},
                                   {DType::bf16, DType::bf16}}) {
      for (const NormShape& s : kNormShapes) {
        const DType xt = DType::f32, gt = DType::bf16;
        const Shape shape{s.rows, s.d};
        const HostTensor x = random_tensor(xt, shape, seed, 13, 2.0f);
        const HostTensor w = random_tensor(DType::f32, {s.d}, seed, 14, 1.0f);
        const HostTensor dy = random_tensor(gt, shape, seed, 15, 1.0f);
        const HostTensor dx0 = random_tensor(dxt, shape, seed, 16, 0.5f);  // accumulate onto
        const HostTensor dw0 = random_tensor(dwt, {s.d}, seed, 17, 0.5f);
        HostTensor y(DType::f32, shape), rstd(DType::f32, {s.rows});
        cpu->rmsnorm_forward(x.view(), w.view(), 1e-5f, y.view(), rstd.view());
        HostTensor want_dx = copy_of(dx0), want_dw = copy_of(dw0), want_copy(DType::bf16, shape);
        if (fused) {
          cpu->rmsnorm_backward_and_convert(x.view(), w.view(), rstd.view(), dy.view(),
                                            want_dx.view(), want_dw.view(), want_copy.view());
        } else {
          cpu->rmsnorm_backward(x.view(), w.view(), rstd.view(), dy.view(), want_dx.view(),
                                want_dw.view());
        }

        const DevBuf dx(x), dw(w), dr(rstd), ddy(dy);
        DeviceTensor workspace(
            DType::u8,
            {static_cast<std::int64_t>(cuda_ops::rmsnorm_backward_workspace_bytes(s.rows, s.d)) +
             1});
        // Runs 0 and 1 accumulate onto dw0; run 2 accumulates onto zeros and run 3 writes over
        // NaNs (GradWrite::overwrite): those two must store the same values. A bf16 dw adds run
        // 4: an f32 dw accumulating onto dw0 widened.
        HostTensor got_dx[5], got_dw[5], got_copy[5];
        const HostTensor zeros = filled(dwt, s.d, 0.f),
                         nans = filled(dwt, s.d, std::numeric_limits<float>::quiet_NaN());
        const HostTensor dw0_f32 = widen(dw0);
        const int runs = dwt == DType::bf16 ? 5 : 4;
        for (int run = 0; run < runs; ++run) {
          const DType run_dwt = run == 4 ? DType::f32 : dwt;
          const DevBuf gdx(dx0),
              gdw(run < 2    ? dw0
                  : run == 2 ? zeros
                  : run == 3 ? nans
                             : dw0_f32),
              gcopy(testing::poisoned(DType::bf16, shape));
          const bool accumulate = run != 3;
          fill_bytes_cuda(workspace.view(), 0xFF);  // partials must be written, not assumed zero
          if (fused) {
            cuda_ops::rmsnorm_backward_and_convert(
                dx.ptr(), elem(xt), dw.as<const float>(), dr.as<const float>(), ddy.ptr(), elem(gt),
                gdx.ptr(), elem(dxt), gdw.ptr(), elem(run_dwt), accumulate, gcopy.ptr(),
                ElemType::bf16, s.rows, s.d, workspace.view().data, nullptr);
          } else {
            cuda_ops::rmsnorm_backward(dx.ptr(), elem(xt), dw.as<const float>(),
                                       dr.as<const float>(), ddy.ptr(), elem(gt), gdx.ptr(),
                                       elem(dxt), gdw.ptr(), elem(run_dwt), accumulate, s.rows, s.d,
                                       workspace.view().data, nullptr);
          }
          finish("rmsnorm_backward");
          got_dx[run] = gdx.read();
          got_dw[run] = gdw.read();
          got_copy[run] = gcopy.read();
        }
        for (std::int64_t j = 0; j < s.d; ++j)
          ASSERT_EQ(value_at(got_dw[3], j), value_at(got_dw[2], j))
              << "dw " << dtype_name(dwt) << " written against dw added to zeros, column " << j
              << " [" << s.rows << ", " << s.d << "]";
        std::ostringstream what;
        what << (fused ? "rmsnorm_backward_and_convert" : "rmsnorm_backward") << " dx "
             << dtype_name(dxt) << " dw " << dtype_name(dwt) << " [" << s.rows << ", " << s.d
             << "]";
        expect_bytes_equal(got_dx[1], got_dx[0], what.str() + " dx run 2 vs run 1");
        expect_bytes_equal(got_dw[1], got_dw[0], what.str() + " dw run 2 vs run 1");
        if (dwt == DType::bf16)
          expect_bytes_equal(got_dw[0], rounded_to_bf16(got_dw[4]),
                             what.str() + " bf16 dw vs its f32 run rounded");

        // Per-element scale of dx's terms and per-column sum of |dw terms|, in f64.
        std::vector<double> coef(static_cast<std::size_t>(s.rows)),
            dw_abs(static_cast<std::size_t>(s.d));
        for (std::int64_t m = 0; m < s.rows; ++m) {
          double dot = 0;
          const double r = value_at(rstd, m);
          for (int j = 0; j < s.d; ++j) {
            const std::int64_t i = m * s.d + j;
            dot += value_at(dy, i) * value_at(w, j) * value_at(x, i);
            dw_abs[static_cast<std::size_t>(j)] += std::fabs(value_at(dy, i) * value_at(x, i) * r);
          }
          coef[static_cast<std::size_t>(m)] = dot * r * r * r / s.d;
        }
        auto dx_terms = [&](std::int64_t i) {
          const std::int64_t m = i / s.d, j = i % s.d;
          const double r = value_at(rstd, m);
          return std::fabs(value_at(dx0, i)) + std::fabs(r * value_at(w, j) * value_at(dy, i)) +
                 std::fabs(coef[static_cast<std::size_t>(m)] * value_at(x, i));
        };
        const double slack = bf16_slack(dxt);
        expect_close(
            got_dx[0], want_dx,
            [&](std::int64_t i) {
              return std::ldexp(dx_terms(i), -20) + slack * std::fabs(value_at(want_dx, i));
            },
            what.str() + " dx");
        // The f32 sums' reordering, then (bf16 dw) each side's one rounding: neighbours at most,
        // one bf16 ulp (<= 2^-7 relative) apart.
        const double dw_slack = bf16_slack(dwt);
        expect_close(
            got_dw[0], want_dw,
            [&](std::int64_t j) {
              return std::ldexp(dw_abs[static_cast<std::size_t>(j)] + std::fabs(value_at(dw0, j)),
                                -16) +
                     dw_slack * std::fabs(value_at(want_dw, j));
            },
            what.str() + " dw");
        if (fused) {
          expect_bytes_equal(got_copy[1], got_copy[0], what.str() + " copy run 2 vs run 1");
          expect_close(
              got_copy[0], want_copy,
              [&](std::int64_t i) {
                return std::ldexp(dx_terms(i), -20) +
                       (slack + std::ldexp(1.0, -7)) * std::fabs(value_at(want_copy, i));
              },
              what.str() + " copy");
        }
      }
    }
  }
}

// ---- embedding -------------------------------------------------------------------------------

struct EmbedShape {
  std::int64_t batch;
  int seq, d, vocab;
};
// d % 4 == 0 takes the vector kernels; d = 30 the scalar ones.
const EmbedShape kEmbedShapes[] = {
    {3, 5, 64, 50}, {2, 7, 30, 11}, {4, 16, 128, 50304}, {8, 1024, 768, 50304}, {1, 1, 4, 3}};

// Tokens with many repeats (a few hot ids), a long run of one id, and spread ids.
HostTensor make_tokens(std::int64_t rows, int vocab, std::uint64_t seed) {
  HostTensor t(DType::i32, {rows});
  std::mt19937_64 rng(seed);
  std::int32_t* p = t.as<std::int32_t>();
  for (std::int64_t i = 0; i < rows; ++i) {
    const auto u = rng();
    if (u % 4 == 0)
      p[i] = static_cast<std::int32_t>((u >> 8) % static_cast<std::uint64_t>(vocab));
    else
      p[i] = static_cast<std::int32_t>((u >> 8) % 7 % static_cast<std::uint64_t>(vocab));
  }
  for (std::int64_t i = rows / 3; i < rows / 3 + rows / 4; ++i) p[i] = vocab - 1;
  return t;
}

TEST(CudaOps, EmbeddingForwardBitExactAndBadToken) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  auto cpu = make_cpu_backend();
  DeviceTensor bad(DType::i32, {1});
  for (DType ot : {DType::f32, DType::bf16}) {
    for (const EmbedShape& s : kEmbedShapes) {
      const std::int64_t rows = s.batch * s.seq;
      const HostTensor tokens = make_tokens(rows, s.vocab, seed);
      const HostTensor wte = random_tensor(DType::f32, {s.vocab, s.d}, seed, 20, 0.02f);
      const HostTensor wpe = random_tensor(DType::f32, {s.seq, s.d}, seed, 21, 0.02f);
      HostTensor want = testing::poisoned(ot, {rows, s.d});
      cpu->embedding_forward(tokens.view(), wte.view(), wpe.view(), want.view());
      const DevBuf dt(tokens), dwte(wte), dwpe(wpe), dout(testing::poisoned(ot, {rows, s.d}));
      FP8LAB_CUDA_CHECK(cudaMemset(bad.view().data, 0, sizeof(int)));
      cuda_ops::embedding_forward(dt.as<const std::int32_t>(), dwte.as<const float>(),
                                  dwpe.as<const float>(), dout.ptr(), elem(ot), rows, s.seq, s.d,
                                  s.vocab, bad.view().as<int>(), nullptr);
      finish("embedding_forward");
      std::ostringstream what;
      what << "embedding_forward " << dtype_name(ot) << " B=" << s.batch << " T=" << s.seq
           << " D=" << s.d << " V=" << s.vocab;
      expect_bytes_equal(dout.read(), want, what.str());
      int flag = -1;
      FP8LAB_CUDA_CHECK(cudaMemcpy(&flag, bad.view().data, sizeof(int), cudaMemcpyDeviceToHost));
      EXPECT_EQ(flag, 0) << what.str() << ": no bad token, but bad_token = " << flag;

      if (rows < 3) continue;
      // Bad ids at two rows: those rows become zeros, the rest is unchanged, and bad_token names
      // the first (row + 1).
      HostTensor bad_tokens = copy_of(tokens);
      const std::int64_t first = rows / 2, second = rows - 1;
      bad_tokens.as<std::int32_t>()[second] = -1;
      bad_tokens.as<std::int32_t>()[first] = s.vocab;
      HostTensor want_bad = copy_of(want);
      std::memset(static_cast<char*>(want_bad.view().data) +
                      first * s.d * static_cast<std::int64_t>(dtype_size(ot)),
                  0, static_cast<std::size_t>(s.d) * dtype_size(ot));
      std::memset(static_cast<char*>(want_bad.view().data) +
                      second * s.d * static_cast<std::int64_t>(dtype_size(ot)),
                  0, static_cast<std::size_t>(s.d) * dtype_size(ot));
      const DevBuf dbt(bad_tokens), dout2(testing::poisoned(ot, {rows, s.d}));
      FP8LAB_CUDA_CHECK(cudaMemset(bad.view().data, 0, sizeof(int)));
      cuda_ops::embedding_forward(dbt.as<const std::int32_t>(), dwte.as<const float>(),
                                  dwpe.as<const float>(), dout2.ptr(), elem(ot), rows, s.seq, s.d,
                                  s.vocab, bad.view().as<int>(), nullptr);
      finish("embedding_forward (bad tokens)");
      expect_bytes_equal(dout2.read(), want_bad, what.str() + " with bad tokens");
      FP8LAB_CUDA_CHECK(cudaMemcpy(&flag, bad.view().data, sizeof(int), cudaMemcpyDeviceToHost));
      EXPECT_EQ(flag, first + 1) << what.str() << ": bad ids at rows " << first << " and "
                                 << second;
    }
  }
}

// dwte and dwpe f32, or bf16 (the bf16 gradients, PrecisionConfig::grads): each element's rows
// added in fp32 in row order onto the widened old value and rounded once, as the CPU does; so a
// bf16 result must also be the rounding of an f32 run on the widened old values, bit for bit.
TEST(CudaOps, EmbeddingBackwardBitExactAndDeterministic) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  auto cpu = make_cpu_backend();
  for (DType wt : {DType::f32, DType::bf16}) {
    for (DType gt : {DType::bf16, DType::f32}) {
      for (const EmbedShape& s : kEmbedShapes) {
        const std::int64_t rows = s.batch * s.seq;
        const HostTensor tokens = make_tokens(rows, s.vocab, seed + 1);
        const HostTensor dout = random_tensor(gt, {rows, s.d}, seed, 22, 1.0f);
        const HostTensor dwte0 = random_tensor(wt, {s.vocab, s.d}, seed, 23, 0.1f);
        const HostTensor dwpe0 = random_tensor(wt, {s.seq, s.d}, seed, 24, 0.1f);
        HostTensor want_te = copy_of(dwte0), want_pe = copy_of(dwpe0);
        cpu->embedding_backward(tokens.view(), dout.view(), want_te.view(), want_pe.view());

        const DevBuf dt(tokens), ddout(dout);
        DeviceTensor workspace(DType::u8,
                               {static_cast<std::int64_t>(
                                   cuda_ops::embedding_backward_workspace_bytes(rows, s.vocab))});
        // Runs 0 and 1: the gradients' own type; a bf16 one adds run 2, f32 onto the widening.
        const int runs = wt == DType::bf16 ? 3 : 2;
        HostTensor got_te[3], got_pe[3];
        for (int run = 0; run < runs; ++run) {
          const bool widened = run == 2;
          const DevBuf gte(widened ? widen(dwte0) : copy_of(dwte0)),
              gpe(widened ? widen(dwpe0) : copy_of(dwpe0));
          fill_bytes_cuda(workspace.view(), 0xFF);
          cuda_ops::embedding_backward(dt.as<const std::int32_t>(), ddout.ptr(), elem(gt),
                                       gte.ptr(), gpe.ptr(), widened ? ElemType::f32 : elem(wt),
                                       rows, s.seq, s.d, s.vocab, workspace.view().data, nullptr);
          finish("embedding_backward");
          got_te[run] = gte.read();
          got_pe[run] = gpe.read();
        }
        std::ostringstream what;
        what << "embedding_backward dout " << dtype_name(gt) << " grads " << dtype_name(wt)
             << " B=" << s.batch << " T=" << s.seq << " D=" << s.d << " V=" << s.vocab;
        expect_bytes_equal(got_te[0], want_te, what.str() + " dwte vs cpu");
        expect_bytes_equal(got_pe[0], want_pe, what.str() + " dwpe vs cpu");
        expect_bytes_equal(got_te[1], got_te[0], what.str() + " dwte run 2 vs run 1");
        expect_bytes_equal(got_pe[1], got_pe[0], what.str() + " dwpe run 2 vs run 1");
        if (runs < 3) continue;
        expect_bytes_equal(got_te[0], rounded_to_bf16(got_te[2]),
                           what.str() + " dwte vs its f32 run rounded");
        expect_bytes_equal(got_pe[0], rounded_to_bf16(got_pe[2]),
                           what.str() + " dwpe vs its f32 run rounded");
      }
    }
  }
}

// Op timing's host column: an op that waits for the GPU inside its call (sum_of_squares reads
// its result back) shows that wait as host time, at least its GPU time less the two event
// records' slack; without a host clock around the call it would read 0.
TEST(CudaOps, OpTimesCountTheHostTimeInsideAnOp) {
  FP8LAB_SKIP_WITHOUT_GPU();
  auto gpu = make_cuda_backend();
  auto* cuda = dynamic_cast<cuda::CudaBackend*>(gpu.get());
  ASSERT_NE(cuda, nullptr);
  DeviceTensor t(DType::f32, {std::int64_t{1} << 28});  // 1 GiB: a read of about 0.3 ms
  gpu->fill_zero(t.view());
  gpu->synchronize();
  cuda->set_op_timing(true);
  EXPECT_EQ(gpu->sum_of_squares(t.view()), 0.0);
  cuda->set_op_timing(false);
  const std::vector<cuda::OpTime> ops = cuda->take_op_times();
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].name, "sum_of_squares");
  EXPECT_EQ(ops[0].calls, 1);
  EXPECT_GT(ops[0].ms, 0.1) << "a 1 GiB read takes longer on any GPU";
  EXPECT_GE(ops[0].host_ms + 0.05, ops[0].ms)
      << "the host waited for the sum inside the op: GPU " << ops[0].ms << " ms, host "
      << ops[0].host_ms << " ms";
}

}  // namespace
}  // namespace fp8lab
#else
#include <gtest/gtest.h>
TEST(CudaOps, SkippedWithoutCudaBackend) {
  GTEST_SKIP()
      << "no CUDA GPU: fp8lab was built without the CUDA backend (FP8LAB_CUDA=OFF or no nvcc)";
}
#endif
