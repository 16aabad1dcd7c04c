// Finite-difference gradient checks for the CPU ops (fp32): the analytic gradient of a scalar
// objective is compared with central differences at sampled elements of an input.
#pragma once

#include "fp8lab/tensor.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fp8lab::testing {

struct GradCheckResult {
  double max_abs_error = 0;
  double relative_error = 0;  // ||fd - analytic|| / ||fd|| over the sampled elements
  int checked = 0;
};

// input: the f32 host buffer the objective reads (perturbed in place and restored).
// analytic: d objective / d input, same length. Samples `samples` elements spread over the tensor
// (all of them when there are fewer).
inline GradCheckResult finite_difference_check(float* input, std::int64_t n,
                                               const std::vector<float>& analytic,
                                               const std::function<double()>& objective,
                                               int samples, double step) {
  GradCheckResult r;
  double diff2 = 0, ref2 = 0;
  const std::int64_t stride = n <= samples ? 1 : n / samples;
  for (std::int64_t i = (stride > 1 ? stride / 2 : 0); i < n; i += stride) {
    const float saved = input[i];
    input[i] = saved + static_cast<float>(step);
    const double plus = objective();
    input[i] = saved - static_cast<float>(step);
    const double minus = objective();
    input[i] = saved;
    // The perturbation actually applied is the float difference, not `step`.
    const double h = static_cast<double>(saved + static_cast<float>(step)) -
                     static_cast<double>(saved - static_cast<float>(step));
    const double fd = (plus - minus) / h;
    const double an = analytic[static_cast<std::size_t>(i)];
    diff2 += (fd - an) * (fd - an);
    ref2 += fd * fd;
    r.max_abs_error = std::max(r.max_abs_error, std::fabs(fd - an));
    ++r.checked;
  }
  r.relative_error = std::sqrt(diff2 / std::max(ref2, 1e-300));
  return r;
}

// sum_i out[i] * weights[i] in double: a scalar objective whose gradient w.r.t. out is `weights`.
inline double weighted_sum(const TensorView& out, const std::vector<float>& weights) {
  double s = 0;
  for (std::int64_t i = 0; i < out.numel(); ++i) {
    s += static_cast<double>(out.as<const float>()[i]) * weights[static_cast<std::size_t>(i)];
  }
  return s;
}

inline std::vector<float> copy_of(const TensorView& t) {
  const float* p = t.as<const float>();
  return std::vector<float>(p, p + t.numel());
}

}  // namespace fp8lab::testing
