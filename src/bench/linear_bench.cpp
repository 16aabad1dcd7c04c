// `fp8lab bench linear`: timing runs (see fp8lab/bench_linear.hpp).
//
// Per shape: inputs in `rotations` copies (x and dY; a step's input never sits in L2 from the
// previous repeat), each mode timed over fwd+bwd with CUDA events, its saved state and scratch
// taken from the arena so the arena's high-water mark is the mode's transient memory; then
// fp8-plain and fp8-fused run once more on the same inputs into separate outputs that are compared
// byte for byte; then each GEMM alone (BF16, FP8 precise, FP8 fast) with its float64 error.
#if defined(FP8LAB_HAVE_CUDA)
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>

#include "bench/bench_error.hpp"
#include "bench/bench_fill.hpp"
#include "bench/bench_timing.hpp"
#include "fp8lab/bench_linear.hpp"
#include "core/cuda_check.hpp"
#include "core/cuda_memory.hpp"
#include "gemm/gemm_cuda.hpp"

namespace fp8lab {
namespace {

struct Outputs {
  TensorView y, dx, dw;
};

struct ShapeBuffers {
  std::vector<TensorView> x, dy;
  TensorView w;
  Outputs timed, plain;  // `plain` keeps fp8-plain's outputs for the bitwise comparison
};

TensorView random_bf16(DeviceArena& arena, Shape shape, std::uint64_t seed, float stddev,
                       cudaStream_t s) {
  TensorView t = arena.tensor(DType::bf16, shape, "bench input");
  detail::launch_fill_normal_bf16(t.as<std::uint16_t>(), t.numel(), seed, stddev, cuda_sm_count(),
                                  s);
  FP8LAB_LAUNCH_CHECK("fill_normal_bf16_kernel");
  return t;
}

Outputs alloc_outputs(DeviceArena& arena, std::int64_t m, std::int64_t k, std::int64_t n) {
  return {arena.tensor(DType::bf16, {m, n}, "y"), arena.tensor(DType::bf16, {m, k}, "dx"),
          arena.tensor(DType::f32, {n, k}, "dw")};
}

ShapeBuffers alloc_buffers(DeviceArena& arena, const LinearBenchConfig& c, LinearBenchShape shape,
                           cudaStream_t s) {
  const std::int64_t m = c.tokens, k = shape.in, n = shape.out;
  ShapeBuffers b;
  for (int r = 0; r < c.rotations; ++r) {
    b.x.push_back(random_bf16(arena, {m, k}, c.seed * 7919 + 2 * r, 1.0f, s));
    b.dy.push_back(random_bf16(arena, {m, n}, c.seed * 7919 + 2 * r + 1, 1e-3f, s));
  }
  b.w = random_bf16(arena, {n, k}, c.seed * 7919 + 999, 1.0f / std::sqrt(static_cast<float>(k)), s);
  b.timed = alloc_outputs(arena, m, k, n);
  b.plain = alloc_outputs(arena, m, k, n);
  return b;
}

struct ModeRun {
  LinearCudaConfig config;
  LinearSavedCuda saved;
  LinearScratch scratch;
  void step(CublasLtGemm& g, const ShapeBuffers& b, int i, const Outputs& o, cudaStream_t s) {
    const std::size_t r = static_cast<std::size_t>(i) % b.x.size();
    linear_forward_cuda(g, config, b.x[r], b.w, o.y, saved, s);
    linear_backward_cuda(g, config, saved, b.dy[r], o.dx, o.dw, scratch, false, s);
  }
};

std::uint64_t mismatches(const Outputs& a, const Outputs& b, cudaStream_t s) {
  return count_byte_mismatches_cuda(a.y, b.y, s) + count_byte_mismatches_cuda(a.dx, b.dx, s) +
         count_byte_mismatches_cuda(a.dw, b.dw, s);
}

// Each GEMM of the layer alone, on the fused run's saved operands (x[0], dY[0]).
void bench_gemms(CublasLtGemm& g, const LinearBenchConfig& c, const ShapeBuffers& b,
                 const ModeRun& fused, LinearBenchShapeResult& res, cudaStream_t s) {
  const LinearSavedCuda& sv = fused.saved;
  const LinearScratch& sc = fused.scratch;
  const Fp8Meta* meta = sv.meta;
  const auto stats = read_linear_stats_cuda(sv, s);
  struct Spec {
    const char* name;
    GemmArg a8, b8, a16, b16;
    TensorView out;
    float inv_a, inv_b;
  };
  const Spec specs[] = {{"fwd",
                         {sv.xq, true, &meta[0].inv_scale},
                         {sv.wq, true, &meta[1].inv_scale},
                         {b.x[0], true},
                         {b.w, true},
                         b.timed.y,
                         stats.x.scale.inv_scale,
                         stats.w.scale.inv_scale},
                        {"dgrad",
                         {sc.dyq, true, &meta[2].inv_scale},
                         {sv.wq_t, true, &meta[1].inv_scale},
                         {b.dy[0], true},
                         {b.w, false},
                         b.timed.dx,
                         stats.dy.scale.inv_scale,
                         stats.w.scale.inv_scale},
                        {"wgrad",
                         {sc.dyq_t, true, &meta[2].inv_scale},
                         {sv.xq_t, true, &meta[0].inv_scale},
                         {b.dy[0], false},
                         {b.x[0], false},
                         b.timed.dw,
                         stats.dy.scale.inv_scale,
                         stats.x.scale.inv_scale}};
  for (const Spec& sp : specs) {
    GemmBench gb;
    gb.name = sp.name;
    gb.bf16_ms = bench::time_repeats(c.warmup, c.repeats, s, [&](int) {
                   g.matmul(sp.a16, sp.b16, sp.out, {}, s);
                 }).median_ms;
    const auto rows =
        bench::sample_rows(sp.out.shape[0], std::string(sp.name) == "wgrad" ? 8 : 16, c.seed);
    for (bool fast : {false, true}) {
      const double ms = bench::time_repeats(c.warmup, c.repeats, s, [&](int) {
                          g.matmul(sp.a8, sp.b8, sp.out, {.fast_accum = fast}, s);
                        }).median_ms;
      FP8LAB_CUDA_CHECK(cudaStreamSynchronize(s));
      const double err =
          bench::sampled_fp8_gemm_error(sp.a8.t, sp.inv_a, sp.b8.t, sp.inv_b, sp.out, rows);
      (fast ? gb.fp8_fast_ms : gb.fp8_precise_ms) = ms;
      (fast ? gb.err_fast : gb.err_precise) = err;
    }
    res.gemms.push_back(gb);
  }
}

// Each cast kernel alone on dY[0] (e5m2), into the fused run's scratch.
void bench_casts(const LinearBenchConfig& c, const ShapeBuffers& b, const ModeRun& fused,
                 LinearBenchShapeResult& res, cudaStream_t s) {
  const TensorView& dy = b.dy[0];
  const TensorView &q = fused.scratch.dyq, &qt = fused.scratch.dyq_t;
  Fp8Meta* meta = fused.saved.meta + 2;
  const double n = static_cast<double>(dy.numel());
  const auto time = [&](const char* name, double bytes, const std::function<void()>& f) {
    res.casts.push_back(
        {name, bench::time_repeats(c.warmup, c.repeats, s, [&](int) { f(); }).median_ms, bytes});
  };
  time("amax", 2 * n, [&] { amax_scale_cuda(dy, Fp8Format::e5m2, meta, s); });
  time("cast", 3 * n, [&] { quantize_cuda(dy, Fp8Format::e5m2, meta, q, s); });
  time("transpose", 2 * n, [&] { transpose_fp8_cuda(q, qt, s); });
  time("cast_transpose", 4 * n,
       [&] { quantize_transpose_cuda(dy, Fp8Format::e5m2, meta, q, qt, s); });
}

// A grouped recipe of the fused linear: fwd+bwd timed, then each GEMM alone on its casts.
RecipeBench bench_recipe(DeviceArena& arena, CublasLtGemm& g, const LinearBenchConfig& c,
                         const ShapeBuffers& b, Fp8Recipe recipe, double copy_gbps,
                         LinearCudaOverlap& overlap, cudaStream_t s) {
  const std::int64_t m = b.x[0].shape[0], k = b.x[0].shape[1], n = b.w.shape[0];
  RecipeBench rb;
  rb.recipe = recipe;
  const std::size_t mark = arena.mark();
  arena.reset_peak();
  ModeRun run;
  run.config.mode = LinearCudaMode::fp8_fused;
  run.config.name = fmt::format("bench.{}x{}.{}", k, n, fp8_recipe_name(recipe));
  run.config.fp8 = {recipe, false};
  if (c.w_overlap) run.config.overlap = &overlap;
  run.saved = alloc_linear_saved_cuda(arena, run.config.mode, m, k, n, s, run.config.fp8);
  run.scratch = alloc_linear_scratch_cuda(arena, run.config.mode, m, n, run.config.fp8);
  const bench::TimingStats t =
      bench::time_repeats(c.warmup, c.repeats, s, [&](int i) { run.step(g, b, i, b.timed, s); });
  linear_check_finite_cuda(run.config, run.saved, 0, s);
  rb.median_ms = t.median_ms;
  rb.spread_ms = t.p90_ms - t.p10_ms;
  rb.peak_transient_bytes = arena.peak() - mark;
  run.step(g, b, 0, b.timed, s);  // the casts of x[0] and dY[0] for the GEMMs below
  const LinearSavedCuda& sv = run.saved;
  const LinearScratch& sc = run.scratch;
  const OperandScaling xs = operand_scaling(recipe, Fp8Role::x);
  const OperandScaling ws = operand_scaling(recipe, Fp8Role::w);
  const OperandScaling ds = operand_scaling(recipe, Fp8Role::dy);
  const auto arg = [](const TensorView& q, const TensorView& inv, ScaleMode mode) {
    return GemmArg{q, true, inv.as<const float>(), mode};
  };
  const GemmArg pairs[3][2] = {{arg(sv.xq, sv.xq_inv, xs.q), arg(sv.wq, sv.wq_inv, ws.q)},
                               {arg(sc.dyq, sc.dyq_inv, ds.q), arg(sv.wq_t, sv.wq_t_inv, ws.qt)},
                               {arg(sc.dyq_t, sc.dyq_t_inv, ds.qt), arg(sv.xq_t, sv.xq_t_inv, xs.qt)}};
  const TensorView outs[3] = {b.timed.y, b.timed.dx, b.timed.dw};
  for (int i = 0; i < 3; ++i)
    rb.gemm_ms[i] = bench::time_repeats(c.warmup, c.repeats, s, [&](int) {
                      g.matmul(pairs[i][0], pairs[i][1], outs[i], {}, s);
                    }).median_ms;
  const double bytes_per_element = recipe == Fp8Recipe::rowwise ? 6.0 : 4.0;
  rb.cast_bytes = bytes_per_element * static_cast<double>(m * k + n * k + m * n);
  rb.cast_ms = rb.cast_bytes / (copy_gbps * 1e9) * 1e3;
  rb.limit_ms = rb.gemm_ms[0] + rb.gemm_ms[1] + rb.gemm_ms[2] + rb.cast_ms;
  arena.release(mark);
  return rb;
}

LinearBenchShapeResult bench_shape(DeviceArena& arena, CublasLtGemm& g, const LinearBenchConfig& c,
                                   LinearBenchShape shape, double copy_gbps, cudaStream_t s) {
  const std::int64_t m = c.tokens, k = shape.in, n = shape.out;
  LinearBenchShapeResult res;
  res.shape = shape;
  const std::size_t base = arena.mark();
  const ShapeBuffers b = alloc_buffers(arena, c, shape, s);
  bool ran_plain = false, ran_fused = false;
  LinearCudaOverlap overlap;
  ModeRun fused;
  std::size_t fused_mark = 0;
  for (LinearCudaMode mode : c.modes) {
    const std::size_t mark = arena.mark();
    arena.reset_peak();
    ModeRun run;
    run.config.mode = mode;
    run.config.name = fmt::format("bench.{}x{}", k, n);
    if (mode != LinearCudaMode::bf16 && c.w_overlap) run.config.overlap = &overlap;
    run.saved = alloc_linear_saved_cuda(arena, mode, m, k, n, s);
    run.scratch = alloc_linear_scratch_cuda(arena, mode, m, n);
    const bench::TimingStats t =
        bench::time_repeats(c.warmup, c.repeats, s, [&](int i) { run.step(g, b, i, b.timed, s); });
    linear_check_finite_cuda(run.config, run.saved, 0, s);  // the step boundary
    res.median_ms.emplace_back(mode, t.median_ms);
    res.spread_ms.emplace_back(mode, t.p90_ms - t.p10_ms);
    res.peak_transient_bytes.emplace_back(mode, arena.peak() - mark);
    if (mode == LinearCudaMode::fp8_plain) {
      run.step(g, b, 0, b.plain, s);
      ran_plain = true;
    }
    if (mode == LinearCudaMode::fp8_fused) {
      run.step(g, b, 0, b.timed, s);
      ran_fused = true;
      fused = run;
      fused_mark = mark;
      continue;  // keep its saved state for the GEMM benchmarks
    }
    arena.release(mark);
  }
  if (ran_plain && ran_fused) {
    res.fused_plain_mismatched_bytes = mismatches(b.timed, b.plain, s);
    res.fused_equals_plain = res.fused_plain_mismatched_bytes == 0;
  }
  if (ran_fused) {
    bench_gemms(g, c, b, fused, res, s);
    bench_casts(c, b, fused, res, s);
    double gemm_ms = 0;
    for (const GemmBench& gb : res.gemms) gemm_ms += gb.fp8_precise_ms;
    res.cast_bytes = 6.0 * static_cast<double>(m * k + n * k + m * n);
    res.cast_ms = res.cast_bytes / (copy_gbps * 1e9) * 1e3;
    res.limit_ms = gemm_ms + res.cast_ms;
    arena.release(fused_mark);
  }
  for (Fp8Recipe recipe : c.recipes)
    res.recipes.push_back(bench_recipe(arena, g, c, b, recipe, copy_gbps, overlap, s));
  arena.release(base);
  return res;
}

}  // namespace

double LinearBenchShapeResult::mode_ms(LinearCudaMode mode) const {
  for (const auto& [m, ms] : median_ms)
    if (m == mode) return ms;
  return std::numeric_limits<double>::quiet_NaN();
}

LinearBenchResult run_linear_bench(const LinearBenchConfig& config) {
  FP8LAB_CHECK(config.repeats >= 20, "bench linear: --repeats must be >= 20, got {}",
               config.repeats);
  FP8LAB_CHECK(config.rotations >= 1, "bench linear: --rotations must be >= 1");
  std::string why;
  FP8LAB_CHECK_KIND(ErrorKind::cuda, cuda_available(&why), "bench linear needs a GPU: {}", why);
  for (const LinearBenchShape& sh : config.shapes) {
    FP8LAB_CHECK_KIND(ErrorKind::shape,
                      sh.in % 16 == 0 && sh.out % 16 == 0 && config.tokens % 16 == 0,
                      "bench linear: shape {}->{} with {} tokens: FP8 GEMMs need multiples of 16",
                      sh.in, sh.out, config.tokens);
    for (Fp8Recipe r : config.recipes)
      check_fp8_linear_dims({r, false}, config.tokens, sh.in, sh.out,
                            fmt::format("bench {}x{}", sh.in, sh.out));
  }
  LinearBenchResult result;
  result.config = config;
  cudaDeviceProp prop{};
  FP8LAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  result.device = prop.name;
  result.hw_conversion = fp8_hw_conversion_exact();
  cudaStream_t s = nullptr;
  FP8LAB_CUDA_CHECK(cudaStreamCreate(&s));
  std::size_t free_bytes = 0, total = 0;
  FP8LAB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  DeviceArena arena(free_bytes / 10 * 7);
  CublasLtGemm gemm;
  result.copy_gbps = bench::copy_bandwidth_gbps(arena, std::size_t{1} << 30, 20, s);
  std::fprintf(stderr, "[bench linear] %s, copy %.0f GB/s, hw fp8 cvt %s\n", result.device.c_str(),
               result.copy_gbps, result.hw_conversion ? "yes" : "no");
  for (const LinearBenchShape& shape : config.shapes) {
    result.shapes.push_back(bench_shape(arena, gemm, config, shape, result.copy_gbps, s));
    const auto& r = result.shapes.back();
    std::fprintf(stderr, "[bench linear] %lld->%lld done: fused %.3f ms, limit %.3f ms\n",
                 static_cast<long long>(shape.in), static_cast<long long>(shape.out),
                 r.mode_ms(LinearCudaMode::fp8_fused), r.limit_ms);
  }
  FP8LAB_CUDA_CHECK(cudaStreamDestroy(s));
  return result;
}

}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
