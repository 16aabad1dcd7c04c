// The C functions of fp8lab/linear_c.h: argument checks that name the bad value, the caller's
// pointers wrapped as TensorViews, and every exception turned into a status plus a per-thread
// message (no exception may unwind into a C or Python caller).
#include "fp8lab/linear_c.h"

#include <fmt/format.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "capi/capi_layer.hpp"
#include "fp8lab/error.hpp"

struct fp8lab_linear {
  std::unique_ptr<fp8lab::capi::CapiLayer> layer;
};

struct fp8lab_linear_saved {
  std::unique_ptr<fp8lab::capi::SavedState> state;
};

namespace fp8lab::capi {
namespace {

thread_local std::string t_last_error;

int status_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::shape: return FP8LAB_LINEAR_E_SHAPE;
    case ErrorKind::dtype: return FP8LAB_LINEAR_E_DTYPE;
    case ErrorKind::non_finite: return FP8LAB_LINEAR_E_NON_FINITE;
    case ErrorKind::cuda: return FP8LAB_LINEAR_E_CUDA;
    case ErrorKind::out_of_memory: return FP8LAB_LINEAR_E_OUT_OF_MEMORY;
    case ErrorKind::internal: return FP8LAB_LINEAR_E_INTERNAL;
    default: return FP8LAB_LINEAR_E_INVALID_ARGUMENT;
  }
}

int fail(int status, std::string message) {
  t_last_error = std::move(message);
  return status;
}

// Runs `body`, turning whatever it throws into a status and t_last_error.
template <typename Body>
int guarded(Body&& body) noexcept {
  try {
    body();
    return FP8LAB_LINEAR_OK;
  } catch (const Error& e) {
    return fail(status_for(e.kind()),
                fmt::format("{}: {}", error_kind_name(e.kind()), e.message()));
  } catch (const std::bad_alloc&) {
    return fail(FP8LAB_LINEAR_E_OUT_OF_MEMORY, "out of memory: a host allocation failed");
  } catch (const std::exception& e) {
    return fail(FP8LAB_LINEAR_E_INTERNAL, fmt::format("internal error: {}", e.what()));
  } catch (...) {
    return fail(FP8LAB_LINEAR_E_INTERNAL, "internal error: an unknown exception");
  }
}

void check_not_null(const void* p, const char* what) {
  FP8LAB_CHECK(p != nullptr, "{} is NULL", what);
}

// "bf16" -> the bf16 policy; an FP8 recipe's name -> the fp8 policy under that recipe.
LayerSpec spec_for_recipe(std::string_view recipe) {
  LayerSpec spec;
  if (recipe == "bf16") return spec;
  for (const Fp8Recipe r : {Fp8Recipe::tensorwise, Fp8Recipe::rowwise, Fp8Recipe::blockwise}) {
    if (recipe == fp8_recipe_name(r)) {
      spec.precision = LinearPrecision::fp8;
      spec.fp8.recipe = r;
      return spec;
    }
  }
  FP8LAB_FAIL(ErrorKind::invalid_argument,
              "unknown recipe '{}' (bf16, tensorwise, rowwise, blockwise)", recipe);
}

// Whether the layer must refuse dimensions its recipe cannot tile (fp8_recipe_alignment):
// every FP8 recipe on both backends (the CPU GEMM keeps cuBLASLt's multiples of 16).
bool checks_fp8_dims(const LayerSpec& spec) { return spec.precision == LinearPrecision::fp8; }

DType dtype_of_code(int code, const char* what) {
  switch (code) {
    case FP8LAB_LINEAR_F32: return DType::f32;
    case FP8LAB_LINEAR_BF16: return DType::bf16;
    default:
      FP8LAB_FAIL(ErrorKind::dtype, "{}_dtype {} is not a dtype code ({} f32, {} bf16)", what, code,
                  FP8LAB_LINEAR_F32, FP8LAB_LINEAR_BF16);
  }
}

// The caller's buffer `what` as a view of `shape`, after checking it is non-null, holds
// `expected` (said by its dtype code), is aligned and lives where the backend computes.
TensorView wrap(const CapiLayer& layer, const void* p, int dtype_code, DType expected,
                const Shape& shape, const char* what) {
  check_not_null(p, what);
  const DType dtype = dtype_of_code(dtype_code, what);
  FP8LAB_CHECK_KIND(ErrorKind::dtype, dtype == expected, "{}_dtype {} ({}): {} must be {}", what,
                    dtype_code, dtype_name(dtype), what, dtype_name(expected));
  // Element alignment everywhere; cuBLASLt's kernels and the vector loads want 16 bytes.
  const std::size_t alignment = layer.device() == Device::cuda ? 16 : dtype_size(dtype);
  FP8LAB_CHECK(reinterpret_cast<std::uintptr_t>(p) % alignment == 0,
               "{} ({}) is not aligned to {} bytes (backend {}, {})", what, p, alignment,
               device_name(layer.device()), dtype_name(dtype));
  layer.check_pointer(p, what);
  return {const_cast<void*>(p), dtype, shape, layer.device()};
}

// The statistics of `saved` as fp8lab/linear_c.h defines them: none under bf16, and under the
// grouped recipes the amax alone (their scales are per group, in the saved layouts).
CastStats checked_stats(const fp8lab_linear_saved* saved, const void* out, std::int64_t n) {
  check_not_null(saved, "saved");
  check_not_null(out, "out");
  FP8LAB_CHECK_KIND(ErrorKind::shape, n >= FP8LAB_LINEAR_STATS_LEN,
                    "n {} is too small: out needs {} entries", n, FP8LAB_LINEAR_STATS_LEN);
  const SavedState& state = *saved->state;
  if (state.precision != LinearPrecision::fp8) return {};
  CastStats s = state.stats();
  if (state.fp8.recipe != Fp8Recipe::tensorwise)
    for (Fp8Scale* f : {&s.x, &s.w, &s.dy}) f->scale = f->inv_scale = 0.f;
  return s;
}

}  // namespace
}  // namespace fp8lab::capi

using namespace fp8lab;
using namespace fp8lab::capi;

extern "C" {

int fp8lab_linear_abi_version(void) { return FP8LAB_LINEAR_ABI_VERSION; }

const char* fp8lab_linear_last_error(void) { return t_last_error.c_str(); }

int fp8lab_linear_create(const char* backend, const char* recipe, int64_t in_features,
                         int64_t out_features, fp8lab_linear** out) {
  return guarded([&] {
    check_not_null(out, "out");
    *out = nullptr;
    check_not_null(backend, "backend");
    check_not_null(recipe, "recipe");
    const std::string_view b = backend;
    FP8LAB_CHECK(b == "cpu" || b == "cuda", "unknown backend '{}' (cpu, cuda)", b);
    LayerSpec spec = spec_for_recipe(recipe);
    FP8LAB_CHECK_KIND(ErrorKind::shape, in_features > 0, "in_features {} must be positive",
                      in_features);
    FP8LAB_CHECK_KIND(ErrorKind::shape, out_features > 0, "out_features {} must be positive",
                      out_features);
    spec.in_features = in_features;
    spec.out_features = out_features;
    // With a legal row count: what in and out alone cannot do fails now, not at a forward.
    if (checks_fp8_dims(spec))
      check_fp8_linear_dims(spec.fp8, fp8_recipe_alignment(spec.fp8.recipe), in_features,
                            out_features, spec.name);
    auto handle = std::make_unique<fp8lab_linear>();
    handle->layer = b == "cpu" ? make_cpu_layer(std::move(spec)) : make_cuda_layer(std::move(spec));
    *out = handle.release();
  });
}

int fp8lab_linear_destroy(fp8lab_linear* linear) {
  return guarded([&] { delete linear; });
}

int fp8lab_linear_forward(fp8lab_linear* linear, int64_t rows, const void* x, int x_dtype,
                          const void* w, int w_dtype, void* y, int y_dtype, void* stream,
                          fp8lab_linear_saved** saved) {
  return guarded([&] {
    check_not_null(saved, "saved");
    *saved = nullptr;
    check_not_null(linear, "linear");
    const CapiLayer& layer = *linear->layer;
    const std::int64_t k = layer.spec().in_features, n = layer.spec().out_features;
    FP8LAB_CHECK_KIND(ErrorKind::shape, rows > 0, "rows {} must be positive", rows);
    if (checks_fp8_dims(layer.spec()))
      check_fp8_linear_dims(layer.spec().fp8, rows, k, n, layer.spec().name);
    const ForwardArgs args{wrap(layer, x, x_dtype, DType::bf16, {rows, k}, "x"),
                           wrap(layer, w, w_dtype, DType::bf16, {n, k}, "w"),
                           wrap(layer, y, y_dtype, DType::bf16, {rows, n}, "y")};
    auto result = std::make_unique<fp8lab_linear_saved>();
    result->state = linear->layer->forward(args, stream);
    result->state->rows = rows;
    result->state->owner = linear;
    result->state->precision = layer.spec().precision;
    result->state->fp8 = layer.spec().fp8;
    *saved = result.release();
  });
}

int fp8lab_linear_backward(fp8lab_linear* linear, fp8lab_linear_saved* saved, int64_t rows,
                           const void* dy, int dy_dtype, void* dx, int dx_dtype, void* dw,
                           int dw_dtype, int accumulate_dw, void* stream) {
  return guarded([&] {
    check_not_null(linear, "linear");
    check_not_null(saved, "saved");
    FP8LAB_CHECK(saved->state->owner == linear,
                 "saved ({}) was made by another linear's forward, not by linear ({})",
                 static_cast<const void*>(saved), static_cast<const void*>(linear));
    FP8LAB_CHECK_KIND(ErrorKind::shape, rows == saved->state->rows,
                      "rows {} differs from the forward's {} rows", rows, saved->state->rows);
    const CapiLayer& layer = *linear->layer;
    const std::int64_t k = layer.spec().in_features, n = layer.spec().out_features;
    // dW: f32 or bf16, overwritten or accumulated (a bf16 dW gets the sum in fp32, rounded once).
    const DType dw_type = dtype_of_code(dw_dtype, "dw");
    const BackwardArgs args{wrap(layer, dy, dy_dtype, DType::bf16, {rows, n}, "dy"),
                            wrap(layer, dx, dx_dtype, DType::bf16, {rows, k}, "dx"),
                            wrap(layer, dw, dw_dtype, dw_type, {n, k}, "dw"), accumulate_dw != 0};
    linear->layer->backward(*saved->state, args, stream);
  });
}

int fp8lab_linear_saved_destroy(fp8lab_linear_saved* saved) {
  return guarded([&] { delete saved; });
}

int fp8lab_linear_scales(const fp8lab_linear_saved* saved, float* out, int64_t n) {
  return guarded([&] {
    const CastStats s = checked_stats(saved, out, n);
    float* next = out;
    for (const Fp8Scale& f : {s.x, s.w, s.dy}) {
      *next++ = f.amax;
      *next++ = f.scale;
      *next++ = f.inv_scale;
    }
  });
}

int fp8lab_linear_counts(const fp8lab_linear_saved* saved, int64_t* out, int64_t n) {
  return guarded([&] {
    const CastStats s = checked_stats(saved, out, n);
    const std::pair<CastCounts, bool> per_tensor[] = {
        {s.x_counts, s.x_nonfinite}, {s.w_counts, s.w_nonfinite}, {s.dy_counts, s.dy_nonfinite}};
    int64_t* next = out;
    for (const auto& [counts, nonfinite] : per_tensor) {
      *next++ = counts.saturated;
      *next++ = counts.underflow;
      *next++ = nonfinite ? 1 : 0;
    }
  });
}

}  // extern "C"
