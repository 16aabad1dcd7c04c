// The checked host API of the grouped CUDA casts (src/fp8/fp8_grouped_cuda.hpp).
#if defined(FP8LAB_HAVE_CUDA)
#include "fp8/fp8_grouped_cuda.hpp"

#include "core/cuda_check.hpp"
#include "fp8lab/fp8_cuda.hpp"
#include "fp8lab/fp8_grouped.hpp"
#include "fp8lab/fp8_scaling.hpp"
#include "grouped_launch.hpp"

namespace fp8lab {
namespace {

void check_codes(const TensorView& q, Fp8Format format, const Shape& shape, const char* what) {
  check_device(q, Device::cuda, what);
  check_dtype(q, fp8_dtype(format), what);
  check_shape(q, shape, what);
}

void check_scales(const TensorView& inv, const ScaleLayout& layout, const char* what) {
  check_device(inv, Device::cuda, what);
  check_dtype(inv, DType::f32, what);
  FP8LAB_CHECK_KIND(ErrorKind::shape, inv.numel() == layout.count(),
                    "{} {} must hold {} floats for the groups of a [{}, {}] operand", what,
                    inv.describe(), layout.count(), layout.rows, layout.cols);
}

}  // namespace

void quantize_grouped_cuda(const TensorView& x, Fp8Format format, OperandScaling scaling,
                           const GroupedCastCuda& out, Fp8Meta* meta, cudaStream_t stream,
                           int* first_nonfinite, int nonfinite_id) {
  check_device(x, Device::cuda, "grouped cast input");
  check_dtype(x, DType::bf16, "grouped cast input");
  check_rank(x, 2, "grouped cast input");
  FP8LAB_CHECK_KIND(ErrorKind::invalid_argument,
                    scaling.q != ScaleMode::tensor && scaling.q == scaling.qt,
                    "quantize_grouped_cuda casts row, vec128 or block128 groups with the same "
                    "mode in both layouts, not {} / {}",
                    scale_mode_name(scaling.q), scale_mode_name(scaling.qt));
  FP8LAB_CHECK(meta != nullptr, "quantize_grouped_cuda: the Fp8Meta pointer is null");
  const std::int64_t rows = x.rows(), cols = x.cols();
  FP8LAB_CHECK_KIND(ErrorKind::shape, (rows + 127) / 128 <= 65535,
                    "grouped cast of {}: more rows than one launch covers ({} max)", x.describe(),
                    65535LL * 128);
  detail::GroupedCastArgs a;
  a.x = x.as<const std::uint16_t>();
  a.rows = rows;
  a.cols = cols;
  a.q_layout = {scaling.q, rows, cols};
  check_codes(out.q, format, x.shape, "grouped cast q");
  check_scales(out.q_inv, a.q_layout, "grouped cast q scales");
  a.q = out.q.as<std::uint8_t>();
  a.q_inv = out.q_inv.as<float>();
  if (out.qt.data != nullptr) {
    a.qt_layout = {scaling.qt, cols, rows};
    check_codes(out.qt, format, {cols, rows}, "grouped cast qt");
    check_scales(out.qt_inv, a.qt_layout, "grouped cast qt scales");
    a.qt = out.qt.as<std::uint8_t>();
    a.qt_inv = out.qt_inv.as<float>();
  }
  a.meta = meta;
  a.first_nonfinite = first_nonfinite;
  a.nonfinite_id = nonfinite_id;
  FP8LAB_CUDA_CHECK(cudaMemsetAsync(meta, 0, sizeof(Fp8Meta), stream));
  if (rows == 0 || cols == 0) return;
  if (scaling.q == ScaleMode::row) {  // the rows' and columns' amax keys first
    FP8LAB_CUDA_CHECK(cudaMemsetAsync(a.q_inv, 0, out.q_inv.nbytes(), stream));
    if (a.qt) FP8LAB_CUDA_CHECK(cudaMemsetAsync(a.qt_inv, 0, out.qt_inv.nbytes(), stream));
    detail::launch_grouped_row_col_keys(a, stream);
    FP8LAB_LAUNCH_CHECK("grouped_row_col_keys");
  }
  detail::launch_grouped_cast(a, scaling.q, format, fp8_hw_conversion_exact(), stream);
  FP8LAB_LAUNCH_CHECK("grouped_cast_tile");
  if (scaling.q == ScaleMode::row) {
    detail::launch_keys_to_inverse_scales(a.q_inv, out.q_inv.numel(), format, stream);
    if (a.qt) detail::launch_keys_to_inverse_scales(a.qt_inv, out.qt_inv.numel(), format, stream);
    FP8LAB_LAUNCH_CHECK("keys_to_inverse_scales");
  }
}

}  // namespace fp8lab
#endif  // FP8LAB_HAVE_CUDA
