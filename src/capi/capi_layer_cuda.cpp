// The C ABI's "cuda" layer: the CUDA linear (fp8lab/linear_cuda.hpp) in the modes the "cuda"
// backend runs (bf16; fp8-fused for the FP8 recipes), on the caller's device buffers and stream.
//
// Stream: everything is enqueued on the caller's stream, so no event pairs with a stream of our
// own are needed and the caller's stream order holds by construction. Memory: the saved state
// is allocated stream-ordered (cudaMallocFromPoolAsync) on that stream, in two blocks as the
// backend keeps it: what the backward reads (Xqᵀ, Wqᵀ, their scales, the three Fp8Metas) lives with
// the saved state, the forward GEMM's own operands (Xq, Wq) are freed as soon as it is queued.
#include "capi/capi_layer.hpp"

#if defined(FP8LAB_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/carver.hpp"
#include "core/cuda_check.hpp"
#include "fp8lab/fp8_cuda.hpp"
#include "gemm/gemm_cuda.hpp"
#include "fp8lab/linear_cuda.hpp"

namespace fp8lab::capi {
namespace {

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

// The pool of the saved states on the current device, made once and kept for the process's
// life. Not the device's default pool: that one hands its memory back to the driver at every
// synchronisation (release threshold 0), so a training loop that synchronises each step would
// map fresh pages for every forward. This one keeps what it has, as a caching allocator does.
cudaMemPool_t saved_state_pool() {
  static std::mutex mutex;
  static std::map<int, cudaMemPool_t> pools;
  int device = 0;
  FP8LAB_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard lock(mutex);
  if (const auto it = pools.find(device); it != pools.end()) return it->second;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  FP8LAB_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
  std::uint64_t keep_all = UINT64_MAX;
  FP8LAB_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
  pools.emplace(device, pool);
  return pool;
}

// One stream-ordered device allocation from saved_state_pool(); freed on `stream` (the stream
// of its last use).
class StreamBlock {
 public:
  StreamBlock() = default;
  StreamBlock(std::size_t bytes, cudaStream_t on, const std::string& what) : stream(on) {
    if (bytes == 0) return;
    const cudaError_t status = cudaMallocFromPoolAsync(&base_, bytes, saved_state_pool(), on);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      FP8LAB_FAIL(ErrorKind::out_of_memory, "{}: cudaMallocFromPoolAsync of {} bytes failed", what,
                  bytes);
    }
    FP8LAB_CUDA_CHECK(status);
  }
  ~StreamBlock() {
    if (base_ != nullptr) (void)cudaFreeAsync(base_, stream);  // no throwing from a destructor
  }
  StreamBlock(const StreamBlock&) = delete;
  StreamBlock& operator=(const StreamBlock&) = delete;

  void* get() const { return base_; }
  cudaStream_t stream = nullptr;

 private:
  void* base_ = nullptr;
};

// The views of the saved state's two blocks (see the top of the file).
void carve_kept(Carver& c, const LinearFp8Sizes& z, std::int64_t m, std::int64_t k, std::int64_t n,
                LinearSavedCuda& s) {
  s.meta = static_cast<Fp8Meta*>(c.take(3 * sizeof(Fp8Meta)));
  if (z.xq_t) s.xq_t = c.tensor(DType::e4m3, {k, m});
  s.wq_t = c.tensor(DType::e4m3, {k, n});
  s.xq_t_inv = c.scales(z.xq_t_inv);
  s.wq_t_inv = c.scales(z.wq_t_inv);
}

void carve_transient(Carver& c, const LinearFp8Sizes& z, std::int64_t m, std::int64_t k,
                     std::int64_t n, LinearSavedCuda& s) {
  s.xq = c.tensor(DType::e4m3, {m, k});
  s.xq_inv = c.scales(z.xq_inv);
  s.wq = c.tensor(DType::e4m3, {n, k});
  s.wq_inv = c.scales(z.wq_inv);
}

void carve_scratch(Carver& c, const LinearFp8Sizes& z, std::int64_t m, std::int64_t n,
                   LinearScratch& s) {
  s.dyq = c.tensor(DType::e5m2, {m, n});
  if (z.dyq_t) s.dyq_t = c.tensor(DType::e5m2, {n, m});
  s.dyq_inv = c.scales(z.dyq_inv);
  s.dyq_t_inv = c.scales(z.dyq_t_inv);
}

// Measures with `carve`, allocates that much on `stream`, carves the views for real.
template <typename Carve>
std::unique_ptr<StreamBlock> allocate_carved(cudaStream_t stream, const std::string& what,
                                             Carve&& carve) {
  Carver measure(nullptr);
  carve(measure);
  auto block = std::make_unique<StreamBlock>(measure.used(), stream, what);
  Carver real(block->get());
  carve(real);
  return block;
}

class CudaSaved final : public SavedState {
 public:
  LinearSavedCuda saved;
  std::unique_ptr<StreamBlock> kept;  // fp8 modes
  cudaStream_t last_stream = nullptr;

  CastStats stats() const override {
    CastStats out;
    if (saved.meta == nullptr) return out;  // bf16: no casts
    const LinearCastStatsCuda s = read_linear_stats_cuda(saved, last_stream);
    out.x = s.x.scale;
    out.w = s.w.scale;
    out.dy = s.dy.scale;
    out.x_counts = s.x.counts;
    out.w_counts = s.w.counts;
    out.dy_counts = s.dy.counts;
    out.x_nonfinite = s.x.nonfinite;
    out.w_nonfinite = s.w.nonfinite;
    out.dy_nonfinite = s.dy.nonfinite;
    return out;
  }

  // Later frees follow the stream the state was last used on.
  void use_on(cudaStream_t stream) {
    last_stream = stream;
    if (kept) kept->stream = stream;
  }
};

class CudaLayer final : public CapiLayer {
 public:
  explicit CudaLayer(LayerSpec spec) : CapiLayer(std::move(spec)) {
    config_.mode =
        spec_.precision == LinearPrecision::fp8 ? LinearCudaMode::fp8_fused : LinearCudaMode::bf16;
    config_.name = spec_.name;
    config_.fp8 = spec_.fp8;
  }

  Device device() const override { return Device::cuda; }

  void check_pointer(const void* p, const char* what) const override {
    FP8LAB_CHECK(cuda_pointer_device(p, what) == Device::cuda,
                 "{} ({}) is host memory; backend cuda takes device pointers of the current "
                 "device",
                 what, p);
  }

  std::unique_ptr<SavedState> forward(const ForwardArgs& a, void* stream_arg) override {
    const cudaStream_t stream = as_stream(stream_arg);
    auto state = std::make_unique<CudaSaved>();
    LinearSavedCuda& s = state->saved;
    s.mode = config_.mode;
    s.fp8 = config_.fp8;
    state->use_on(stream);
    if (config_.mode == LinearCudaMode::bf16) {
      linear_forward_cuda(gemm_, config_, a.x, a.w, a.y, s, stream);
      return state;
    }
    const std::int64_t m = a.x.shape[0], k = spec_.in_features, n = spec_.out_features;
    const LinearFp8Sizes z = linear_fp8_sizes(config_.fp8, m, k, n);
    state->kept = allocate_carved(stream, config_.name + " saved FP8 operands",
                                  [&](Carver& c) { carve_kept(c, z, m, k, n, s); });
    const auto transient = allocate_carved(stream, config_.name + " forward Xq, Wq",
                                           [&](Carver& c) { carve_transient(c, z, m, k, n, s); });
    FP8LAB_CUDA_CHECK(cudaMemsetAsync(s.meta, 0, 3 * sizeof(Fp8Meta), stream));
    linear_forward_cuda(gemm_, config_, a.x, a.w, a.y, s, stream);
    s.xq = s.xq_inv = s.wq = s.wq_inv = {};  // freed with `transient`, after the GEMM in order
    return state;
  }

  void backward(SavedState& state_arg, const BackwardArgs& a, void* stream_arg) override {
    const cudaStream_t stream = as_stream(stream_arg);
    auto& state = dynamic_cast<CudaSaved&>(state_arg);
    state.use_on(stream);
    LinearScratch scratch;
    std::unique_ptr<StreamBlock> block;
    const bool stage_f32 = linear_wgrad_stages_f32(config_, a.dw.dtype, a.accumulate_dw);
    if (config_.mode != LinearCudaMode::bf16) {
      const std::int64_t m = a.dy.shape[0], n = a.dy.shape[1];
      const LinearFp8Sizes z = linear_fp8_sizes(config_.fp8, m, 1, n);
      block = allocate_carved(stream, config_.name + " backward dYq, dYqᵀ", [&](Carver& c) {
        carve_scratch(c, z, m, n, scratch);
        if (stage_f32) scratch.dw_f32 = c.tensor(DType::f32, a.dw.shape);
      });
    }
    linear_backward_cuda(gemm_, config_, state.saved, a.dy, a.dx, a.dw, scratch, a.accumulate_dw,
                         stream);
  }

 private:
  CublasLtGemm gemm_;
  LinearCudaConfig config_;
};

}  // namespace

std::unique_ptr<CapiLayer> make_cuda_layer(LayerSpec spec) {
  std::string why;
  FP8LAB_CHECK_KIND(ErrorKind::cuda, cuda_available(&why), "backend cuda cannot run: {}", why);
  return std::make_unique<CudaLayer>(std::move(spec));
}

Device cuda_pointer_device(const void* p, const char* what) {
  // Asked once: without a driver or a device every pointer is host memory.
  static const bool have_device = [] {
    int count = 0;
    const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    (void)cudaGetLastError();
    return ok;
  }();
  if (!have_device) return Device::cpu;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return Device::cpu;
  }
  if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged) return Device::cpu;
  int current = 0;
  FP8LAB_CUDA_CHECK(cudaGetDevice(&current));
  FP8LAB_CHECK(attr.device == current,
               "{} ({}) is memory of CUDA device {}, the layer runs on the current device {}", what,
               p, attr.device, current);
  return Device::cuda;
}

}  // namespace fp8lab::capi

#else  // no CUDA in this build

namespace fp8lab::capi {

std::unique_ptr<CapiLayer> make_cuda_layer(LayerSpec /*spec*/) {
  FP8LAB_FAIL(ErrorKind::cuda, "backend cuda: this fp8lab was built without CUDA");
}

Device cuda_pointer_device(const void* /*p*/, const char* /*what*/) { return Device::cpu; }

}  // namespace fp8lab::capi
#endif
