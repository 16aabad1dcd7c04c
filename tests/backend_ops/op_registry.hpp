// The backend op registry, in the style of ggml's test-backend-ops: one row per case of every
// Backend op (include/fp8lab/backend.hpp), each with its shapes, dtypes and the bound its
// outputs must meet against the CPU reference backend. test_backend_ops.cpp runs every row on
// every backend variant there is here (a second CPU backend; the CUDA backend under each
// attention kernel family where a GPU is present) and fails when a Backend op has no row.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "fp8lab/backend.hpp"
#include "fp8lab/tensor.hpp"

namespace fp8lab::testing {

// How close an output must be to the CPU reference's.
struct Bound {
  enum class Kind { exact, ulp, relative };
  Kind kind = Kind::exact;
  double value = 0;  // ulp: the most units in the last place any element may differ by;
                     // relative: the largest relative Frobenius error ||got - ref|| / ||ref||
  static Bound exact() { return {Kind::exact, 0}; }
  static Bound ulp(double n) { return {Kind::ulp, n}; }
  static Bound relative(double r) { return {Kind::relative, r}; }
  std::string describe() const;
};

struct OpOutput {
  std::string name;
  HostTensor value;
  Bound bound;
};

// The tensors of one run of a row on one backend: inputs uploaded, outputs poisoned (every byte
// 0xFF, NaN in the float dtypes) so an element an op forgets to write fails its bound.
class OpSession {
 public:
  // offset: every tensor of the session starts that many elements into its allocation, so an
  // offset of 1 takes the kernels' unaligned (scalar) paths.
  explicit OpSession(Backend& backend, std::int64_t offset = 0)
      : backend_(backend), offset_(offset) {}
  Backend& backend() { return backend_; }
  TensorView in(const HostTensor& host);
  TensorView out(DType dtype, const Shape& shape);
  // A view's contents, downloaded (after a synchronize).
  HostTensor get(const TensorView& t);

 private:
  Backend& backend_;
  std::int64_t offset_;
  std::vector<Buffer> buffers_;
};

// The outputs of a case, moved in (HostTensor does not copy).
template <typename... Outputs>
std::vector<OpOutput> outputs(Outputs&&... out) {
  std::vector<OpOutput> v;
  v.reserve(sizeof...(out));
  (v.push_back(std::move(out)), ...);
  return v;
}

// Runs one case: inputs from `seed` (the same on every backend), the op, its outputs.
using OpRun = std::function<std::vector<OpOutput>(OpSession&, std::uint64_t seed)>;

struct OpRow {
  OpRow(std::string op_name, std::string case_name, OpRun run_case, bool per_family = false,
        std::string refuses = {})
      : op(std::move(op_name)),
        name(std::move(case_name)),
        run(std::move(run_case)),
        per_attention_family(per_family),
        cuda_refuses(std::move(refuses)) {}
  std::string op;    // the Backend member function it runs
  std::string name;  // the case: shapes and dtypes, e.g. "M37_D96_bf16"
  OpRun run;
  bool per_attention_family = false;  // on CUDA, once per AttentionKernels family
  // The tensors one element into their allocations (OpSession's offset): unaligned views.
  bool unaligned = false;
  // Non-empty: the CUDA backend refuses the case (an fp8lab::Error whose message holds this).
  std::string cuda_refuses;
};

// Every row (op_rows_*.cpp).
const std::vector<OpRow>& op_registry();
void add_elementwise_rows(std::vector<OpRow>& rows);
void add_layer_rows(std::vector<OpRow>& rows);
void add_linear_and_loss_rows(std::vector<OpRow>& rows);

// Why `got` misses `ref` by more than `bound`; empty when it meets it.
std::string bound_violation(const HostTensor& got, const HostTensor& ref, const Bound& bound);

}  // namespace fp8lab::testing
