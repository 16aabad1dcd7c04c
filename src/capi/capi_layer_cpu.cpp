// The C ABI's "cpu" layer: the CPU reference linear (fp8lab/linear.hpp), the layer the "cpu"
// backend runs, on the caller's host buffers. The FP8 operands the forward saves live in the
// saved state's host tensors; the backward's dY casts in scratch of its own call.
#include <memory>
#include <optional>

#include "capi/capi_layer.hpp"

namespace fp8lab::capi {
namespace {

class CpuSaved final : public SavedState {
 public:
  CpuSaved(const LayerSpec& spec, std::int64_t m)
      : host(spec.precision, m, spec.in_features, spec.out_features, spec.fp8) {}
  LinearSavedHost host;
  std::optional<LinearBackwardStats> backward;  // the last backward's dY cast

  CastStats stats() const override {
    const LinearSaved& s = host.saved;
    CastStats out;
    out.x = s.x_scale;
    out.w = s.w_scale;
    out.x_counts = s.x_counts;
    out.w_counts = s.w_counts;
    if (backward) {
      out.dy = backward->dy_scale;
      out.dy_counts = backward->dy_counts;
    }
    return out;  // the CPU layer throws on non-finite input: no flags to report
  }
};

class CpuLayer final : public CapiLayer {
 public:
  explicit CpuLayer(LayerSpec spec)
      : CapiLayer(std::move(spec)), config_{spec_.precision, spec_.name, spec_.fp8} {}

  Device device() const override { return Device::cpu; }

  void check_pointer(const void* p, const char* what) const override {
    FP8LAB_CHECK(cuda_pointer_device(p, what) == Device::cpu,
                 "{} ({}) is CUDA device memory; backend cpu takes host pointers", what, p);
  }

  std::unique_ptr<SavedState> forward(const ForwardArgs& a, void* /*stream*/) override {
    auto saved = std::make_unique<CpuSaved>(spec_, a.x.shape[0]);
    linear_forward_cpu(config_, a.x, a.w, a.y, saved->host.saved);
    return saved;
  }

  void backward(SavedState& state, const BackwardArgs& a, void* /*stream*/) override {
    auto& saved = dynamic_cast<CpuSaved&>(state);
    LinearScratchHost scratch(spec_.precision, a.dy.shape[0], a.dy.shape[1], spec_.fp8);
    saved.backward = linear_backward_cpu(config_, saved.host.saved, a.dy, a.dx, a.dw,
                                         scratch.scratch, a.accumulate_dw);
  }

 private:
  LinearConfig config_;
};

}  // namespace

std::unique_ptr<CapiLayer> make_cpu_layer(LayerSpec spec) {
  return std::make_unique<CpuLayer>(std::move(spec));
}

}  // namespace fp8lab::capi
