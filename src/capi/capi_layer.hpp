// What the C ABI (fp8lab/linear_c.h) runs: one linear layer on one backend, with caller-owned
// buffers. linear_c.cpp checks the arguments that need no backend (nulls, dtype codes, sizes)
// and turns exceptions into statuses; a CapiLayer wraps the caller's pointers as TensorViews and
// calls fp8lab's own layer (linear_forward_cpu / linear_forward_cuda, the layers of the "cpu"
// and "cuda" backends). The public headers alone: the layer's files may move.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "fp8lab/fp8_scaling.hpp"
#include "fp8lab/linear.hpp"
#include "fp8lab/tensor.hpp"

namespace fp8lab::capi {

// A linear's fixed part: created once, used for every call.
struct LayerSpec {
  LinearPrecision precision = LinearPrecision::bf16;
  Fp8Options fp8{};
  std::int64_t in_features = 0, out_features = 0;
  std::string name = "linear";  // prefixes the layer's own error messages
};

// The casts' statistics of one forward (x, w) and its backward (dy).
struct CastStats {
  Fp8Scale x{0, 0, 0}, w{0, 0, 0}, dy{0, 0, 0};
  CastCounts x_counts, w_counts, dy_counts;
  bool x_nonfinite = false, w_nonfinite = false, dy_nonfinite = false;
};

// The caller's buffers of one call, already wrapped: dtype, shape and device are the layer's.
struct ForwardArgs {
  TensorView x, w, y;
};
struct BackwardArgs {
  TensorView dy, dx, dw;
  bool accumulate_dw = false;
};

// What a forward keeps for its backward (device or host memory, the backend's business).
class SavedState {
 public:
  virtual ~SavedState() = default;
  // Set by linear_c.cpp after the forward: its rows, the handle that made it (a backward
  // checks it is its own), and the recipe (which statistics it defines).
  std::int64_t rows = 0;
  const void* owner = nullptr;
  LinearPrecision precision = LinearPrecision::bf16;
  Fp8Options fp8{};
  // As the layer recorded them. Waits for the state's last call where they live on the device.
  virtual CastStats stats() const = 0;
};

class CapiLayer {
 public:
  explicit CapiLayer(LayerSpec spec) : spec_(std::move(spec)) {}
  virtual ~CapiLayer() = default;
  CapiLayer(const CapiLayer&) = delete;
  CapiLayer& operator=(const CapiLayer&) = delete;

  const LayerSpec& spec() const { return spec_; }
  virtual Device device() const = 0;
  // Throws ErrorKind::invalid_argument naming `what` when `p` is not memory this backend reads
  // (a host pointer on "cuda", a device pointer on "cpu").
  virtual void check_pointer(const void* p, const char* what) const = 0;
  virtual std::unique_ptr<SavedState> forward(const ForwardArgs& args, void* stream) = 0;
  virtual void backward(SavedState& saved, const BackwardArgs& args, void* stream) = 0;

 protected:
  LayerSpec spec_;
};

std::unique_ptr<CapiLayer> make_cpu_layer(LayerSpec spec);
// Throws ErrorKind::cuda when there is no usable GPU or fp8lab was built without CUDA.
std::unique_ptr<CapiLayer> make_cuda_layer(LayerSpec spec);

// Where `p` lives according to the CUDA runtime: cuda for device or managed memory of the
// current device, cpu for host memory; an ErrorKind::invalid_argument error naming `what` for
// device memory of another device. Unknown (no CUDA in this build or no driver): cpu.
Device cuda_pointer_device(const void* p, const char* what);

}  // namespace fp8lab::capi
