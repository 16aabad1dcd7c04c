// The Backend's default bodies of its fused ops (fp8lab/backend.hpp): the unfused ops in
// sequence, so a backend without its own kernels stays correct. They check the fused ops'
// contract too, so every backend refuses the same arguments.
#include "fp8lab/backend.hpp"
#include "nn/op_shapes.hpp"

namespace fp8lab {

void Backend::add_rmsnorm_forward(const TensorView& x, const TensorView& branch,
                                  const TensorView& sum_out, const TensorView& w, float eps,
                                  const TensorView& y, const TensorView& rstd, AmaxSlot amax) {
  nn::check_add_rmsnorm(x, branch, sum_out, y);
  add(x, branch, sum_out);
  rmsnorm_forward(sum_out, w, eps, y, rstd, amax);
}

void Backend::rmsnorm_backward_and_convert(const TensorView& x, const TensorView& w,
                                           const TensorView& rstd, const TensorView& dy,
                                           const TensorView& dx_accum, const TensorView& dw_accum,
                                           const TensorView& dx_copy, AmaxSlot copy_amax,
                                           GradWrite dw_write) {
  nn::check_norm_copy(x, dy, dx_accum, dx_copy);
  rmsnorm_backward(x, w, rstd, dy, dx_accum, dw_accum, dw_write);
  convert(dx_accum, dx_copy, copy_amax);
}

std::unique_ptr<LinearContext> Backend::linear_gelu_forward(
    LinearMode precision, const TensorView& x, const TensorView& w, const TensorView& pre,
    const TensorView& y, std::string_view name, AmaxSlot x_amax, AmaxSlot y_amax,
    AmaxSlot w_amax) {
  nn::check_linear_gelu(pre, y, name);
  auto ctx = linear_forward(precision, x, w, pre, name, x_amax, w_amax);
  gelu_forward(pre, y, y_amax);
  return ctx;
}

}  // namespace fp8lab
