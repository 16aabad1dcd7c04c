// The checked host API of the CUDA casts (fp8lab/fp8_cuda.hpp): validate views, launch, check.
#if defined(FP8LAB_HAVE_CUDA)
#include "fp8lab/fp8_cuda.hpp"

#include "fp8_launch.hpp"
#include "core/cuda_check.hpp"
#include "core/cuda_memory.hpp"

namespace fp8lab {
namespace {

detail::ElemType cast_input_type(const TensorView& x, const char* what) {
  check_device(x, Device::cuda, what);
  if (x.dtype == DType::bf16) return detail::ElemType::bf16;
  if (x.dtype == DType::f32) return detail::ElemType::f32;
  FP8LAB_FAIL(ErrorKind::dtype, "{} must be f32 or bf16, got {}", what, x.describe());
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

// The 64x64 tiled kernels need whole 16-byte runs in both layouts.
bool tiled_ok(std::int64_t rows, std::int64_t cols, const void* a, const void* b, const void* c) {
  return rows % 16 == 0 && cols % 16 == 0 && aligned16(a) && aligned16(b) && aligned16(c);
}

void check_grid_rows(std::int64_t rows, std::int64_t cols, const char* what) {
  FP8LAB_CHECK_KIND(ErrorKind::shape, (rows + 31) / 32 <= 65535 && (cols + 31) / 32 <= 2147483647,
                    "{} of [{}, {}]: more rows than one launch covers ({} max)", what, rows, cols,
                    65535LL * 32);
}

void check_meta(const Fp8Meta* meta, const char* what) {
  FP8LAB_CHECK(meta != nullptr, "{}: the Fp8Meta pointer is null", what);
}

bool has_meta_work(const CastMetaWork& work) {
  return work.given != nullptr || work.first_nonfinite != nullptr;
}

}  // namespace

Fp8Meta* alloc_fp8_meta(DeviceArena& arena, int count, cudaStream_t stream) {
  FP8LAB_CHECK(count > 0, "alloc_fp8_meta: count must be positive, got {}", count);
  auto* metas = static_cast<Fp8Meta*>(arena.allocate(sizeof(Fp8Meta) * count, "fp8 metas"));
  FP8LAB_CUDA_CHECK(cudaMemsetAsync(metas, 0, sizeof(Fp8Meta) * count, stream));
  return metas;
}

void amax_scale_cuda(const TensorView& x, Fp8Format format, Fp8Meta* meta, cudaStream_t stream) {
  const detail::ElemType type = cast_input_type(x, "amax input");
  check_meta(meta, "amax_scale_cuda");
  detail::launch_amax_scale(x.data, type, x.numel(), format, meta, cuda_sm_count(), stream);
  FP8LAB_LAUNCH_CHECK("amax_scale_kernel");
}

void quantize_cuda(const TensorView& x, Fp8Format format, Fp8Meta* meta, const TensorView& q,
                   cudaStream_t stream, const CastMetaWork& work) {
  const detail::ElemType type = cast_input_type(x, "quantize input");
  check_device(q, Device::cuda, "quantize output");
  check_dtype(q, fp8_dtype(format), "quantize output");
  check_shape(q, x.shape, "quantize output");
  check_meta(meta, "quantize_cuda");
  if (x.numel() == 0 && !has_meta_work(work)) return;  // else one block does just the meta work
  detail::launch_quantize(x.data, type, x.numel(), format, fp8_hw_conversion_exact(), meta, work,
                          q.as<std::uint8_t>(), cuda_sm_count(), stream);
  FP8LAB_LAUNCH_CHECK("quantize_kernel");
}

void transpose_fp8_cuda(const TensorView& q, const TensorView& qt, cudaStream_t stream) {
  check_device(q, Device::cuda, "fp8 transpose input");
  check_device(qt, Device::cuda, "fp8 transpose output");
  check_rank(q, 2, "fp8 transpose input");
  check_shape(qt, Shape{q.shape[1], q.shape[0]}, "fp8 transpose output");
  FP8LAB_CHECK_KIND(ErrorKind::dtype, is_fp8(q.dtype) && qt.dtype == q.dtype,
                    "fp8 transpose needs fp8 tensors of one dtype, got {} and {}", q.describe(),
                    qt.describe());
  const std::int64_t rows = q.shape[0], cols = q.shape[1];
  if (rows == 0 || cols == 0) return;
  check_grid_rows(rows, cols, "fp8 transpose");
  detail::launch_transpose_fp8(q.as<const std::uint8_t>(), rows, cols,
                               tiled_ok(rows, cols, q.data, qt.data, qt.data),
                               qt.as<std::uint8_t>(), stream);
  FP8LAB_LAUNCH_CHECK("transpose_fp8");
}

void quantize_transpose_cuda(const TensorView& x, Fp8Format format, Fp8Meta* meta,
                             const TensorView& q, const TensorView& qt, cudaStream_t stream,
                             const CastMetaWork& work) {
  const detail::ElemType type = cast_input_type(x, "cast-transpose input");
  check_rank(x, 2, "cast-transpose input");
  check_device(q, Device::cuda, "cast-transpose row-major output");
  check_device(qt, Device::cuda, "cast-transpose transposed output");
  check_shape(q, x.shape, "cast-transpose row-major output");
  check_shape(qt, Shape{x.shape[1], x.shape[0]}, "cast-transpose transposed output");
  check_dtype(q, fp8_dtype(format), "cast-transpose row-major output");
  check_dtype(qt, fp8_dtype(format), "cast-transpose transposed output");
  check_meta(meta, "quantize_transpose_cuda");
  const std::int64_t rows = x.shape[0], cols = x.shape[1];
  if (rows == 0 || cols == 0) {
    if (has_meta_work(work)) {  // the plain cast of nothing: one block, just the meta work
      detail::launch_quantize(x.data, type, 0, format, false, meta, work, nullptr, 1, stream);
      FP8LAB_LAUNCH_CHECK("quantize_kernel (meta work of an empty cast-transpose)");
    }
    return;
  }
  check_grid_rows(rows, cols, "cast-transpose");
  detail::launch_cast_transpose(x.data, type, rows, cols, format, fp8_hw_conversion_exact(),
                                tiled_ok(rows, cols, x.data, q.data, qt.data), meta, work,
                                q.as<std::uint8_t>(), qt.as<std::uint8_t>(), stream);
  FP8LAB_LAUNCH_CHECK("cast_transpose");
}

std::vector<Fp8MetaHost> read_fp8_meta(const Fp8Meta* metas, int count, cudaStream_t stream) {
  std::vector<Fp8Meta> raw(static_cast<std::size_t>(count));
  FP8LAB_CUDA_CHECK(cudaMemcpyAsync(raw.data(), metas, sizeof(Fp8Meta) * raw.size(),
                                    cudaMemcpyDeviceToHost, stream));
  FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<Fp8MetaHost> out;
  for (const Fp8Meta& m : raw) {
    Fp8MetaHost h;
    h.scale = Fp8Scale{m.amax, m.scale, m.inv_scale};
    h.counts.saturated = static_cast<std::int64_t>(m.saturated);
    h.counts.underflow = static_cast<std::int64_t>(m.underflow);
    h.nonfinite = m.nonfinite != 0;
    out.push_back(h);
  }
  return out;
}

void check_fp8_meta_finite(const Fp8Meta* metas, const std::vector<std::string>& names,
                           std::int64_t step, cudaStream_t stream) {
  const auto host = read_fp8_meta(metas, static_cast<int>(names.size()), stream);
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (host[i].nonfinite)
      FP8LAB_FAIL(ErrorKind::non_finite, "non-finite amax ({}) in tensor '{}' at step {}",
                  host[i].scale.amax, names[i], step);
  }
}

Fp8CvtProbe probe_fp8_hw_conversion() {
  unsigned long long* d = nullptr;
  FP8LAB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&d), 3 * sizeof(unsigned long long)));
  FP8LAB_CUDA_CHECK(cudaMemset(d, 0, 3 * sizeof(unsigned long long)));
  detail::launch_conversion_probe(d, reinterpret_cast<std::uint32_t*>(d + 2), cuda_sm_count());
  FP8LAB_LAUNCH_CHECK("probe_kernel");
  unsigned long long h[3] = {};
  const cudaError_t status = cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
  cudaFree(d);
  FP8LAB_CUDA_CHECK(status);
  Fp8CvtProbe p;
  p.mismatches_e4m3 = h[0];
  p.mismatches_e5m2 = h[1];
  p.first_mismatch_bits = static_cast<std::uint32_t>(h[2]);
  return p;
}

bool fp8_hw_conversion_exact() {
  static const bool exact = [] {
    const Fp8CvtProbe p = probe_fp8_hw_conversion();
    return p.mismatches_e4m3 == 0 && p.mismatches_e5m2 == 0;
  }();
  return exact;
}

std::uint64_t count_byte_mismatches_cuda(const TensorView& a, const TensorView& b,
                                         cudaStream_t stream) {
  check_device(a, Device::cuda, "first compared tensor");
  check_device(b, Device::cuda, "second compared tensor");
  FP8LAB_CHECK(a.nbytes() == b.nbytes(), "bitwise comparison of {} and {}: sizes differ",
               a.describe(), b.describe());
  unsigned long long* d = nullptr;
  FP8LAB_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&d), sizeof(*d), stream));
  FP8LAB_CUDA_CHECK(cudaMemsetAsync(d, 0, sizeof(*d), stream));
  detail::launch_byte_mismatch(a.as<const std::uint8_t>(), b.as<const std::uint8_t>(), a.nbytes(),
                               d, cuda_sm_count(), stream);
  FP8LAB_LAUNCH_CHECK("byte_mismatch_kernel");
  unsigned long long h = 0;
  FP8LAB_CUDA_CHECK(cudaMemcpyAsync(&h, d, sizeof(h), cudaMemcpyDeviceToHost, stream));
  FP8LAB_CUDA_CHECK(cudaFreeAsync(d, stream));
  FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h;
}

}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
