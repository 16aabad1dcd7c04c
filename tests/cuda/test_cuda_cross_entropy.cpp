// cuda_ops::cross_entropy_rows and loss_reduce against a plain host computation in double.
//
// Inputs: logits ~ N(0, 3^2) (f32, or bf16-rounded), a few planted spikes (+20 at the first, the
// last and a middle element of some rows: the first and last land in the kernel's scalar
// head/tail, so dropping either from the sum moves that row's loss by ~7), ignored rows, and
// vocab sizes that put rows at every alignment (50304 = gpt2 padded, 50257, 1000, 37, 5).
// bf16 rows up to ~113K values take the single-pass shared-memory kernel; 120011 is too wide for
// it (240 KB > the 227 KB opt-in limit), so it checks the streaming kernel on bf16 too (f32
// always streams).
//
// Bounds (f32 kernel arithmetic vs exact):
//   loss: |got - ref| <= 2e-5 + 1e-6 |lse|. lse is m + log(s) in f32: rounding of lse and of
//         lse - x[t] is ~6e-8 |lse|; s sums ~vocab/512 exps per thread (<= ~100 terms, worst
//         case ~6e-6 relative, typically ~1e-6), which log(s) turns into an absolute error.
//   grad: |got - ref| <= 2^-8 |ref| + 1.01 * scale * (5e-5 p + 2^-23), p the exact softmax.
//         2^-8 is bf16's unit roundoff (round to nearest even); p carries the f32 error of
//         exp(x - lse) (|x - lse| up to ~40 turns lse's error into ~3e-5 relative, worst case);
//         2^-23 scale covers the f32 subtraction p*scale - scale at the target.
//   loss_reduce: the f64 sum of the f32 losses, |diff| <= 1e-12 |sum| (order only), count exact.
// Determinism: two runs give identical bytes (loss, gradient, reduced sum and count); the loss
// without a gradient and the in-place (aliased bf16) gradient are byte-identical to the normal
// run.
#if defined(FP8LAB_HAVE_CUDA)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "cuda_test_util.hpp"
#include "cuda_kernels/cuda_ops_launch.hpp"

namespace fp8lab {
namespace {

using testing::expect_same_bytes;
using testing::poisoned_device;

constexpr int kIgnore = -1;  // TrainConfig's default ignore_index
constexpr float kLogitStd = 3.0f;

struct Problem {
  HostTensor logits;   // [rows, vocab] f32 or bf16
  HostTensor targets;  // [rows] i32
  std::int64_t rows = 0;
  int vocab = 0;
  std::int64_t counted = 0;
};

void set_logit(HostTensor& t, std::int64_t i, float v) {
  if (t.dtype() == DType::f32)
    t.as<float>()[i] = v;
  else
    t.as<std::uint16_t>()[i] = float_to_bf16(v);
}

Problem make_problem(DType dtype, std::int64_t rows, int vocab, std::uint64_t seed) {
  Problem p;
  p.rows = rows;
  p.vocab = vocab;
  p.logits = testing::random_normal(dtype, {rows, vocab}, seed, 1, kLogitStd);
  p.targets = HostTensor(DType::i32, {rows});
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::uint32_t u = random_u32(seed, 2, static_cast<std::uint64_t>(r));
    p.targets.as<std::int32_t>()[r] =
        static_cast<std::int32_t>(u % static_cast<std::uint32_t>(vocab));
  }
  // Spikes where a forgotten head, tail or body element would show.
  set_logit(p.logits, 0 * vocab + 0, 20.0f);
  if (rows > 1) set_logit(p.logits, 1 * vocab + (vocab - 1), 20.0f);
  if (rows > 2) set_logit(p.logits, 2 * vocab + vocab / 2, 20.0f);
  if (rows > 4) p.targets.as<std::int32_t>()[4] = 0;  // the target at the row's first element
  if (rows > 5) p.targets.as<std::int32_t>()[5] = vocab - 1;  // ... and at its last
  // Ignored rows: one in the middle and the last.
  if (rows > 3) p.targets.as<std::int32_t>()[3] = kIgnore;
  p.targets.as<std::int32_t>()[rows - 1] = kIgnore;
  for (std::int64_t r = 0; r < rows; ++r) p.counted += p.targets.as<std::int32_t>()[r] != kIgnore;
  return p;
}

struct Reference {
  std::vector<double> loss;  // per row, 0 for ignored
  std::vector<double> lse;
  std::vector<double> prob;  // [rows, vocab] softmax (unset for ignored rows)
};

Reference reference(const Problem& p) {
  Reference ref;
  const std::int64_t n = p.rows * p.vocab;
  ref.loss.assign(static_cast<std::size_t>(p.rows), 0.0);
  ref.lse.assign(static_cast<std::size_t>(p.rows), 0.0);
  ref.prob.assign(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const std::int32_t t = p.targets.as<const std::int32_t>()[r];
    if (t == kIgnore) continue;
    double mx = -INFINITY;
    for (int j = 0; j < p.vocab; ++j) {
      mx = std::max(mx, testing::element_as_double(p.logits.view(), r * p.vocab + j));
    }
    double sum = 0.0;
    for (int j = 0; j < p.vocab; ++j) {
      sum += std::exp(testing::element_as_double(p.logits.view(), r * p.vocab + j) - mx);
    }
    const double lse = mx + std::log(sum);
    ref.lse[static_cast<std::size_t>(r)] = lse;
    ref.loss[static_cast<std::size_t>(r)] =
        lse - testing::element_as_double(p.logits.view(), r * p.vocab + t);
    for (int j = 0; j < p.vocab; ++j) {
      const std::int64_t i = r * p.vocab + j;
      ref.prob[static_cast<std::size_t>(i)] =
          std::exp(testing::element_as_double(p.logits.view(), i) - lse);
    }
  }
  return ref;
}

// Worst error / bound ratio over the rows (and elements), with where it happened.
struct Worst {
  double ratio = 0.0;
  std::int64_t index = -1;
  double got = 0.0, want = 0.0;
  std::int64_t failures = 0;
  void see(double g, double w, double tol, std::int64_t i) {
    const double err = std::fabs(g - w);
    const double r = err / tol;
    if (!(err <= tol)) ++failures;  // NaN (an unwritten, poisoned element) fails too
    if (!(r <= ratio)) {
      ratio = std::isnan(r) ? INFINITY : r;
      index = i;
      got = g;
      want = w;
    }
  }
};

void check_loss(const Problem& p, const Reference& ref, const HostTensor& loss, const char* what) {
  Worst w;
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const double got = loss.as<const float>()[r];
    if (p.targets.as<const std::int32_t>()[r] == kIgnore) {
      EXPECT_EQ(float_bits(static_cast<float>(got)), 0u) << what << ": ignored row " << r;
      continue;
    }
    const double tol = 2e-5 + 1e-6 * std::fabs(ref.lse[static_cast<std::size_t>(r)]);
    w.see(got, ref.loss[static_cast<std::size_t>(r)], tol, r);
  }
  std::fprintf(stderr,
               "[cross_entropy] %s rows %lld vocab %d: loss worst err/bound "
               "%.3g at row %lld "
               "(got %.9g want %.9g)\n",
               what, static_cast<long long>(p.rows), p.vocab, w.ratio,
               static_cast<long long>(w.index), w.got, w.want);
  EXPECT_EQ(w.failures, 0) << what << ": " << w.failures << " rows outside the loss bound; worst "
                           << w.ratio << "x the bound at row " << w.index << " (got " << w.got
                           << ", want " << w.want << ")";
}

void check_grad(const Problem& p, const Reference& ref, float scale, const HostTensor& dlogits,
                const char* what) {
  Worst w;
  std::int64_t nonzero_ignored = 0;
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const std::int32_t t = p.targets.as<const std::int32_t>()[r];
    for (int j = 0; j < p.vocab; ++j) {
      const std::int64_t i = r * p.vocab + j;
      const std::uint16_t bits = dlogits.as<const std::uint16_t>()[i];
      if (t == kIgnore) {
        nonzero_ignored += bits != 0;
        continue;
      }
      const double prob = ref.prob[static_cast<std::size_t>(i)];
      const double want = static_cast<double>(scale) * (prob - (j == t ? 1.0 : 0.0));
      const double tol = std::ldexp(std::fabs(want), -8) +
                         1.01 * static_cast<double>(scale) * (5e-5 * prob + std::ldexp(1.0, -23));
      w.see(bf16_to_float(bits), want, tol, i);
    }
  }
  std::fprintf(stderr,
               "[cross_entropy] %s rows %lld vocab %d: grad worst err/bound %.3g at "
               "[%lld, %lld] (got %.9g want %.9g)\n",
               what, static_cast<long long>(p.rows), p.vocab, w.ratio,
               static_cast<long long>(w.index / p.vocab), static_cast<long long>(w.index % p.vocab),
               w.got, w.want);
  EXPECT_EQ(nonzero_ignored, 0) << what << ": ignored rows must have an all-zero gradient";
  EXPECT_EQ(w.failures, 0) << what << ": " << w.failures << " gradient elements outside the bound;"
                           << " worst " << w.ratio << "x the bound at [" << w.index / p.vocab
                           << ", " << w.index % p.vocab << "] (got " << w.got << ", want " << w.want
                           << ")";
}

cuda_ops::ElemType elem_type(DType d) {
  return d == DType::f32 ? cuda_ops::ElemType::f32 : cuda_ops::ElemType::bf16;
}

struct DeviceScalars {  // loss_reduce's outputs and the bad-target flag
  DeviceTensor sum{DType::f64, {1}};
  DeviceTensor count{DType::f64, {1}};  // 8 bytes, used as a long long
  DeviceTensor bad{DType::i32, {1}};
  double* sum_ptr() const { return static_cast<double*>(sum.view().data); }
  long long* count_ptr() const { return static_cast<long long*>(count.view().data); }
  int* bad_ptr() const { return static_cast<int*>(bad.view().data); }
  void set(double s, long long c) const {
    FP8LAB_CUDA_CHECK(cudaMemcpy(sum_ptr(), &s, sizeof s, cudaMemcpyHostToDevice));
    FP8LAB_CUDA_CHECK(cudaMemcpy(count_ptr(), &c, sizeof c, cudaMemcpyHostToDevice));
    FP8LAB_CUDA_CHECK(cudaMemset(bad_ptr(), 0, sizeof(int)));
  }
  double get_sum() const {
    double s = 0;
    FP8LAB_CUDA_CHECK(cudaMemcpy(&s, sum_ptr(), sizeof s, cudaMemcpyDeviceToHost));
    return s;
  }
  long long get_count() const {
    long long c = 0;
    FP8LAB_CUDA_CHECK(cudaMemcpy(&c, count_ptr(), sizeof c, cudaMemcpyDeviceToHost));
    return c;
  }
  int get_bad() const {
    int b = 0;
    FP8LAB_CUDA_CHECK(cudaMemcpy(&b, bad_ptr(), sizeof b, cudaMemcpyDeviceToHost));
    return b;
  }
};

// One launch of cross_entropy_rows (dlogits may be null or alias the logits) and loss_reduce.
void run_rows(const Problem& p, const DeviceTensor& logits, const DeviceTensor& targets,
              float scale, std::uint16_t* dlogits, const DeviceTensor& loss,
              const DeviceScalars& sc) {
  cuda_ops::cross_entropy_rows(logits.view().data, elem_type(p.logits.dtype()),
                               targets.view().as<const std::int32_t>(), kIgnore, scale, dlogits,
                               loss.view().as<float>(), p.rows, p.vocab, sc.bad_ptr(), nullptr);
  FP8LAB_LAUNCH_CHECK("cross_entropy_rows");
  cuda_ops::loss_reduce(loss.view().as<const float>(), targets.view().as<const std::int32_t>(),
                        kIgnore, p.rows, sc.sum_ptr(), sc.count_ptr(), nullptr);
  FP8LAB_LAUNCH_CHECK("loss_reduce");
  FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
}

// A problem's logits and targets on the device, a poisoned loss and gradient, zeroed scalars;
// run() is run_rows with the gradient written.
struct DeviceRun {
  DeviceTensor logits, targets, loss, grad;
  DeviceScalars sc;
  explicit DeviceRun(const Problem& p)
      : logits(to_device(p.logits.view())),
        targets(to_device(p.targets.view())),
        loss(poisoned_device(DType::f32, {p.rows})),
        grad(poisoned_device(DType::bf16, {p.rows, p.vocab})) {
    sc.set(0.0, 0);
  }
  void run(const Problem& p, float scale) const {
    run_rows(p, logits, targets, scale, grad.view().as<std::uint16_t>(), loss, sc);
  }
};

using CeParam = std::tuple<DType, int>;  // logits dtype, vocab

class CudaCrossEntropy : public ::testing::TestWithParam<CeParam> {};

TEST_P(CudaCrossEntropy, MatchesDoubleReferenceDeterministicallyAndInPlace) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const auto [dtype, vocab] = GetParam();
  const std::uint64_t seed = testing::fresh_seed();
  const std::int64_t rows = 13;  // odd: with odd vocab, rows start at every alignment
  const Problem p = make_problem(dtype, rows, vocab, seed);
  const Reference ref = reference(p);
  const float scale = 1.0f / static_cast<float>(p.counted);

  const DeviceTensor d_logits = to_device(p.logits.view());
  const DeviceTensor d_targets = to_device(p.targets.view());
  DeviceTensor d_loss = poisoned_device(DType::f32, {rows});
  DeviceTensor d_grad = poisoned_device(DType::bf16, {rows, vocab});
  const DeviceScalars sc;
  const double sum0 = 0.5;  // loss_reduce adds into what is there
  const long long count0 = 7;
  sc.set(sum0, count0);
  run_rows(p, d_logits, d_targets, scale, d_grad.view().as<std::uint16_t>(), d_loss, sc);
  EXPECT_EQ(sc.get_bad(), 0) << "no bad targets in this problem";

  const HostTensor loss = to_host(d_loss.view());
  const HostTensor grad = to_host(d_grad.view());
  check_loss(p, ref, loss, "loss");
  check_grad(p, ref, scale, grad, "grad");

  // loss_reduce: the f64 sum of exactly the f32 losses it was given, and the count.
  double host_sum = 0.0, ref_sum = 0.0, ref_tol = 0.0;
  for (std::int64_t r = 0; r < rows; ++r) {
    if (p.targets.as<const std::int32_t>()[r] == kIgnore) continue;
    host_sum += loss.as<const float>()[r];
    ref_sum += ref.loss[static_cast<std::size_t>(r)];
    ref_tol += 2e-5 + 1e-6 * std::fabs(ref.lse[static_cast<std::size_t>(r)]);
  }
  const double got_sum = sc.get_sum() - sum0;
  EXPECT_EQ(sc.get_count(), count0 + p.counted);
  EXPECT_NEAR(got_sum, host_sum, 1e-12 * std::fabs(host_sum)) << "loss_reduce sum";
  EXPECT_NEAR(got_sum, ref_sum, ref_tol) << "loss_reduce sum vs the double reference";

  // Determinism: a second run into fresh poison gives the same bytes everywhere.
  {
    DeviceTensor loss2 = poisoned_device(DType::f32, {rows});
    DeviceTensor grad2 = poisoned_device(DType::bf16, {rows, vocab});
    const DeviceScalars sc2;
    sc2.set(sum0, count0);
    run_rows(p, d_logits, d_targets, scale, grad2.view().as<std::uint16_t>(), loss2, sc2);
    expect_same_bytes(loss.view(), loss2.view(), "loss, second run");
    expect_same_bytes(grad.view(), grad2.view(), "dlogits, second run");
    const double s1 = sc.get_sum(), s2 = sc2.get_sum();
    EXPECT_EQ(std::memcmp(&s1, &s2, sizeof s1), 0) << "loss_reduce sum, second run";
    EXPECT_EQ(sc2.get_count(), sc.get_count());
  }
  // Loss only (dlogits null): the same loss bytes.
  {
    DeviceTensor loss3 = poisoned_device(DType::f32, {rows});
    const DeviceScalars sc3;
    sc3.set(0.0, 0);
    run_rows(p, d_logits, d_targets, scale, nullptr, loss3, sc3);
    expect_same_bytes(loss.view(), loss3.view(), "loss without dlogits");
  }
  // In place: bf16 logits overwritten by their own gradient.
  if (dtype == DType::bf16) {
    DeviceTensor inplace = to_device(p.logits.view());
    DeviceTensor loss4 = poisoned_device(DType::f32, {rows});
    const DeviceScalars sc4;
    sc4.set(0.0, 0);
    run_rows(p, inplace, d_targets, scale, inplace.view().as<std::uint16_t>(), loss4, sc4);
    expect_same_bytes(loss.view(), loss4.view(), "loss, dlogits aliasing logits");
    expect_same_bytes(grad.view(), inplace.view(), "dlogits aliasing logits");
  }
}

std::string ce_name(const ::testing::TestParamInfo<CeParam>& info) {
  return std::string(dtype_name(std::get<0>(info.param))) + "_V" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Vocabs, CudaCrossEntropy,
                         ::testing::Combine(::testing::Values(DType::f32, DType::bf16),
                                            ::testing::Values(50304, 50257, 1000, 37, 5, 120011)),
                         ce_name);

TEST(CudaCrossEntropyTargets, BadTargetsAreRecordedAndTheirRowsZeroed) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  const int vocab = 1000;
  const std::int64_t rows = 9;
  Problem p = make_problem(DType::bf16, rows, vocab, seed);
  p.targets.as<std::int32_t>()[6] = vocab;  // one past the end
  p.targets.as<std::int32_t>()[2] = -7;     // negative, and not ignore_index
  const Reference ref = reference(p);       // rows 2 and 6 are checked separately below
  const DeviceRun d(p);
  d.run(p, 0.125f);
  EXPECT_EQ(d.sc.get_bad(), 3) << "min(bad row) + 1: rows 2 and 6 are bad";

  const HostTensor loss = to_host(d.loss.view());
  const HostTensor grad = to_host(d.grad.view());
  for (std::int64_t r : {2, 6}) {
    EXPECT_TRUE(std::isnan(loss.as<const float>()[r])) << "a bad row's loss is NaN, row " << r;
    std::int64_t nonzero = 0;
    for (int j = 0; j < vocab; ++j) nonzero += grad.as<const std::uint16_t>()[r * vocab + j] != 0;
    EXPECT_EQ(nonzero, 0) << "a bad row's gradient is zero, row " << r;
  }
  // The other rows are unaffected.
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int32_t t = p.targets.as<const std::int32_t>()[r];
    if (r == 2 || r == 6 || t == kIgnore) continue;
    EXPECT_NEAR(loss.as<const float>()[r], ref.loss[static_cast<std::size_t>(r)],
                2e-5 + 1e-6 * std::fabs(ref.lse[static_cast<std::size_t>(r)]))
        << "row " << r;
  }
}

// Masked (-inf) logits, covering whole vectors of every thread at a row's head, and NaN logits,
// in both row kernels (bf16: the shared-memory kernel; f32: the streaming kernel, whose online
// maximum then starts from -inf).
TEST(CudaCrossEntropySpecials, MaskedLogitsMatchTheReferenceAndANaNMakesTheLossNaN) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  const std::int64_t rows = 6;  // make_problem: row 3 and row 5 ignored, row 4's target at 0
  for (DType dtype : {DType::bf16, DType::f32}) {
    for (int vocab : {50304, 50257}) {
      const std::string what = std::string(dtype_name(dtype)) + " V" + std::to_string(vocab);
      Problem p = make_problem(dtype, rows, vocab, seed);
      auto* targets = p.targets.as<std::int32_t>();
      // Row 0: its first 6000 logits masked (whole first vectors of every thread); row 1: every
      // even logit; row 2: the last 5000. Targets where the logits are not masked.
      for (int j = 0; j < 6000; ++j) set_logit(p.logits, j, -INFINITY);
      for (int j = 0; j < vocab; j += 2) set_logit(p.logits, std::int64_t{vocab} + j, -INFINITY);
      for (int j = vocab - 5000; j < vocab; ++j)
        set_logit(p.logits, 2 * std::int64_t{vocab} + j, -INFINITY);
      targets[0] = 7000;
      targets[1] = 1;
      targets[2] = 10;
      const Reference ref = reference(p);
      const float scale = 1.0f / static_cast<float>(p.counted);
      const DeviceRun masked(p);
      masked.run(p, scale);
      check_loss(p, ref, to_host(masked.loss.view()), (what + " masked loss").c_str());
      check_grad(p, ref, scale, to_host(masked.grad.view()), (what + " masked grad").c_str());

      // A NaN at a row's first, middle and last logit (rows 0, 1 and 2; row 1's middle is
      // odd for both vocabs, so not a masked one): NaN loss there, row 4 unchanged.
      set_logit(p.logits, 0, NAN);
      set_logit(p.logits, std::int64_t{vocab} + (vocab / 2 | 1), NAN);
      set_logit(p.logits, 2 * std::int64_t{vocab} + vocab - 1, NAN);
      const DeviceRun with_nan(p);
      with_nan.run(p, scale);
      const HostTensor loss2 = to_host(with_nan.loss.view());
      for (std::int64_t r : {0, 1, 2})
        EXPECT_TRUE(std::isnan(loss2.as<const float>()[r])) << what << ": NaN row " << r;
      EXPECT_NEAR(loss2.as<const float>()[4], ref.loss[4], 2e-5 + 1e-6 * std::fabs(ref.lse[4]))
          << what << ": row 4 has no NaN";
    }
  }
}

TEST(CudaLossReduce, ManyRowsDeterministicAndExact) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  const std::int64_t n = 300001;  // more than one stride of the reduction, odd
  HostTensor loss = testing::random_normal(DType::f32, {n}, seed, 3, 4.0f);
  HostTensor targets(DType::i32, {n});
  double want = 0.0;
  long long count = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const bool ignored = i % 11 == 3;
    targets.as<std::int32_t>()[i] = ignored ? kIgnore : static_cast<std::int32_t>(i % 50304);
    if (ignored) {
      loss.as<float>()[i] = 1e30f;  // must not be counted
      continue;
    }
    want += loss.as<const float>()[i];
    ++count;
  }
  const DeviceTensor d_loss = to_device(loss.view());
  const DeviceTensor d_targets = to_device(targets.view());
  double sums[2];
  for (int run = 0; run < 2; ++run) {
    const DeviceScalars sc;
    sc.set(0.0, 0);
    cuda_ops::loss_reduce(d_loss.view().as<const float>(),
                          d_targets.view().as<const std::int32_t>(), kIgnore, n, sc.sum_ptr(),
                          sc.count_ptr(), nullptr);
    FP8LAB_LAUNCH_CHECK("loss_reduce");
    FP8LAB_CUDA_CHECK(cudaDeviceSynchronize());
    sums[run] = sc.get_sum();
    EXPECT_EQ(sc.get_count(), count);
    // f64 sums of 3e5 f32 values of size ~4 differ from another order by ~1e-16 * n * 4.
    EXPECT_NEAR(sums[run], want, 1e-9) << "run " << run;
  }
  EXPECT_EQ(std::memcmp(&sums[0], &sums[1], sizeof(double)), 0) << "loss_reduce is deterministic";
}

}  // namespace
}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
