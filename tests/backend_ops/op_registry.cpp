// The registry's shared machinery: sessions, bounds (op_registry.hpp).
#include "backend_ops/op_registry.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "common/test_data.hpp"
#include "fp8lab/error.hpp"

namespace fp8lab::testing {

std::string Bound::describe() const {
  switch (kind) {
    case Kind::exact:
      return "exact";
    case Kind::ulp:
      return fmt::format("{} ulp", value);
    case Kind::relative:
      return fmt::format("relative {:.0e}", value);
  }
  return "?";
}

TensorView OpSession::in(const HostTensor& host) {
  // The allocation holds offset_ elements before the tensor, poisoned like an output.
  buffers_.push_back(backend_.allocate(MemoryKind::activations, host.dtype(),
                                       Shape{host.numel() + offset_}, "op input"));
  const TensorView all = buffers_.back().view();
  if (offset_ > 0) backend_.upload(all, poisoned(host.dtype(), all.shape).view().data);
  const TensorView view{
      static_cast<char*>(all.data) + static_cast<std::size_t>(offset_) * dtype_size(host.dtype()),
      host.dtype(), host.shape(), all.device};
  backend_.upload(view, host.view().data);
  backend_.synchronize();  // the uploads read host memory that dies here
  return view;
}

TensorView OpSession::out(DType dtype, const Shape& shape) { return in(poisoned(dtype, shape)); }

HostTensor OpSession::get(const TensorView& t) {
  backend_.synchronize();
  HostTensor host(t.dtype, t.shape);
  backend_.download(t, host.view().data);
  return host;
}

namespace {

// Float bits mapped to integers in the order of the values they encode (-0 next to +0), so the
// distance of two of them counts the representable values between: units in the last place.
std::int64_t ordered(const TensorView& t, std::int64_t i) {
  if (t.dtype == DType::f32) {
    std::int32_t bits;
    std::memcpy(&bits, t.as<const float>() + i, 4);
    return bits < 0 ? std::int64_t{std::numeric_limits<std::int32_t>::min()} - bits : bits;
  }
  const std::int16_t bits = static_cast<std::int16_t>(t.as<const std::uint16_t>()[i]);
  return bits < 0 ? std::int64_t{std::numeric_limits<std::int16_t>::min()} - bits : bits;
}

bool is_nan(const TensorView& t, std::int64_t i) { return std::isnan(element_as_double(t, i)); }

}  // namespace

std::string bound_violation(const HostTensor& got, const HostTensor& ref, const Bound& bound) {
  if (got.dtype() != ref.dtype() || got.shape() != ref.shape())
    return fmt::format("{} against the reference's {}", got.view().describe(),
                       ref.view().describe());
  const TensorView g = got.view(), r = ref.view();
  const bool floating = g.dtype == DType::f32 || g.dtype == DType::bf16 || g.dtype == DType::f64;
  if (bound.kind == Bound::Kind::exact || !floating) {
    const auto* a = static_cast<const unsigned char*>(g.data);
    const auto* b = static_cast<const unsigned char*>(r.data);
    for (std::size_t i = 0; i < got.nbytes(); ++i)
      if (a[i] != b[i])
        return fmt::format("byte {} (element {}) differs: {:#04x} against {:#04x}", i,
                           i / dtype_size(g.dtype), a[i], b[i]);
    return {};
  }
  if (bound.kind == Bound::Kind::ulp) {
    if (g.dtype == DType::f64) return "an ulp bound is for f32 and bf16 outputs";
    for (std::int64_t i = 0; i < g.numel(); ++i) {
      const bool gn = is_nan(g, i), rn = is_nan(r, i);
      const std::int64_t d = std::llabs(ordered(g, i) - ordered(r, i));
      if (gn != rn || (!gn && static_cast<double>(d) > bound.value))
        return fmt::format("element {}: {} against {} ({} ulp, bound {})", i,
                           element_as_double(g, i), element_as_double(r, i), gn || rn ? -1 : d,
                           bound.value);
    }
    return {};
  }
  const double e = relative_frobenius(g, r);
  if (!(e <= bound.value))  // NaN fails
    return fmt::format("relative Frobenius error {:.3e}, bound {:.0e}", e, bound.value);
  return {};
}

const std::vector<OpRow>& op_registry() {
  static const std::vector<OpRow> rows = [] {
    std::vector<OpRow> r;
    add_elementwise_rows(r);
    add_layer_rows(r);
    add_linear_and_loss_rows(r);
    // The memory-bound elementwise ops again with every tensor one element into its allocation:
    // their kernels' scalar paths (vector loads need 16-byte alignment).
    const std::set<std::string> unaligned = {"convert",       "add_inplace",    "add",
                                             "scale_inplace", "sum_of_squares", "all_finite",
                                             "gelu_forward",  "gelu_backward",  "adamw_update"};
    const std::size_t aligned_rows = r.size();
    for (std::size_t i = 0; i < aligned_rows; ++i) {
      if (unaligned.count(r[i].op) == 0) continue;
      OpRow twin = r[i];
      twin.name += "_offset1";
      twin.unaligned = true;
      r.push_back(std::move(twin));
    }
    return r;
  }();
  return rows;
}

}  // namespace fp8lab::testing
