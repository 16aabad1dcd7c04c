// CudaBackend: the elementwise ops (see cuda_backend/cuda_backend.hpp); the launchers are in
// cuda_elementwise.cu and cuda_backend_kernels.cu.
#if defined(FP8LAB_HAVE_CUDA)
#include "core/cuda_check.hpp"
#include "cuda_backend/cuda_backend.hpp"
#include "cuda_backend/cuda_backend_internal.hpp"
#include "cuda_kernels/cuda_ops_launch.hpp"

namespace fp8lab::cuda {

// ---- elementwise -------------------------------------------------------------------------------

void CudaBackend::fill_zero(const TensorView& t) {
  OpTimer timer(*this, "fill_zero");
  check_device(t, Device::cuda, "fill_zero tensor");
  if (t.nbytes()) FP8LAB_CUDA_CHECK(cudaMemsetAsync(t.data, 0, t.nbytes(), stream_));
}

void CudaBackend::convert(const TensorView& src, const TensorView& dst, AmaxSlot amax) {
  OpTimer timer(*this, "convert");
  const cuda_ops::ElemType st = elem_type(src, "convert source");
  const cuda_ops::ElemType dt = elem_type(dst, "convert destination");
  FP8LAB_CHECK_KIND(ErrorKind::shape, src.numel() == dst.numel(),
                    "convert: {} and {} differ in element count", src.describe(), dst.describe());
  // With an amax the kernel copies same-dtype tensors too, reducing as it goes (a bf16 NaN then
  // becomes the canonical one, as in the CPU's convert).
  if (!amax) {
    if (src.numel() == 0) return;
    if (st == dt) {
      FP8LAB_CUDA_CHECK(
          cudaMemcpyAsync(dst.data, src.data, src.nbytes(), cudaMemcpyDeviceToDevice, stream_));
      return;
    }
  }
  cuda_ops::convert(src.data, st, dst.data, dt, src.numel(), stream_, amax_out(amax));
  check_launch("convert", __FILE__, __LINE__);
}

void CudaBackend::add_inplace(const TensorView& dst, const TensorView& src) {
  OpTimer timer(*this, "add_inplace");
  const cuda_ops::ElemType st = elem_type(src, "add source");
  const cuda_ops::ElemType dt = elem_type(dst, "add destination");
  FP8LAB_CHECK_KIND(ErrorKind::shape, src.numel() == dst.numel(),
                    "add: {} += {} differ in element count", dst.describe(), src.describe());
  if (src.numel() == 0) return;
  cuda_ops::add_inplace(dst.data, dt, src.data, st, src.numel(), stream_);
  check_launch("add_inplace", __FILE__, __LINE__);
}

void CudaBackend::add(const TensorView& a, const TensorView& b, const TensorView& out) {
  if (a.dtype != DType::f32 || out.dtype != DType::f32) {
    Backend::add(a, b, out);  // only the f32 residual stream has a fused kernel
    return;
  }
  OpTimer timer(*this, "add");
  check_f32(a, "add a");
  check_f32(out, "add out");
  const cuda_ops::ElemType bt = elem_type(b, "add b");
  FP8LAB_CHECK_KIND(ErrorKind::shape, a.numel() == b.numel() && a.numel() == out.numel(),
                    "add: {} + {} -> {} differ in element count", a.describe(), b.describe(),
                    out.describe());
  if (a.numel() == 0) return;
  cuda_ops::add_f32(a.as<const float>(), b.data, bt, out.as<float>(), a.numel(), stream_);
  check_launch("add", __FILE__, __LINE__);
}

void CudaBackend::scale_inplace(const TensorView& t, float factor) {
  OpTimer timer(*this, "scale_inplace");
  check_f32(t, "scaled tensor");
  if (t.numel() == 0) return;
  cuda_ops::scale_inplace_f32(t.as<float>(), factor, t.numel(), stream_);
  check_launch("scale_inplace", __FILE__, __LINE__);
}

}  // namespace fp8lab::cuda

#endif  // FP8LAB_HAVE_CUDA
