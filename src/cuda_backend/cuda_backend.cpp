// CudaBackend: memory (the pool, PoolBlock, lent memory), copies, error flags, op timing, the
// reductions and AdamW (see cuda_backend/cuda_backend.hpp). The elementwise ops are in
// cuda_backend_elementwise.cpp, the linear layers and the classifier in cuda_linear_op.cpp, the
// norm, attention, GELU and embedding dispatch in cuda_layer_ops.cpp.
#if defined(FP8LAB_HAVE_CUDA)
#include "cuda_backend/cuda_backend.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "core/cuda_check.hpp"
#include "gemm/gemm_cuda.hpp"
#include "fp8lab/linear_cuda.hpp"
#include "cuda_backend/cuda_backend_internal.hpp"
#include "cuda_kernels/cuda_ops_launch.hpp"
#include "nn/op_shapes.hpp"

namespace fp8lab {
namespace cuda {

// Written by the kernels, read at the synchronisation points. Reset values: bad_* 0 (none),
// first_nonfinite INT_MAX (none).
struct CudaBackend::DeviceFlags {
  int bad_token;
  int bad_target;
  int first_nonfinite;
  int all_finite;
  double loss_sum;
  long long counted;
  double sum_of_squares;
};

namespace {

constexpr std::size_t kPoolAlignment = 256;  // cuBLASLt and the 16-byte vector kernels need >= 16

std::size_t aligned(std::size_t bytes) {
  return (bytes + kPoolAlignment - 1) / kPoolAlignment * kPoolAlignment;
}

}  // namespace

// ---- PoolBlock ---------------------------------------------------------------------------------

PoolBlock::PoolBlock(CudaBackend* backend, std::size_t bytes, MemoryKind kind, const char* what)
    : backend_(backend), bytes_(aligned(bytes)), kind_(kind) {
  if (bytes_ == 0) return;
  if (kind == MemoryKind::workspace) ptr_ = backend_->lent_take(bytes_);
  lent_ = ptr_ != nullptr;
  if (!lent_) ptr_ = backend_->pool_allocate(bytes_, kind, what);
}
PoolBlock::PoolBlock(PoolBlock&& o) noexcept
    : backend_(o.backend_), ptr_(o.ptr_), bytes_(o.bytes_), kind_(o.kind_), lent_(o.lent_) {
  o.ptr_ = nullptr;
  o.bytes_ = 0;
}
PoolBlock& PoolBlock::operator=(PoolBlock&& o) noexcept {
  if (this != &o) {
    reset();
    backend_ = o.backend_;
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    kind_ = o.kind_;
    lent_ = o.lent_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}
PoolBlock::~PoolBlock() { reset(); }
void PoolBlock::reset() {
  if (ptr_ != nullptr) {
    if (lent_)
      backend_->lent_give(ptr_, bytes_);
    else
      backend_->pool_release(ptr_, bytes_, kind_);
  }
  ptr_ = nullptr;
  lent_ = false;
  bytes_ = 0;
}

// ---- construction and memory -------------------------------------------------------------------

std::string CudaBackend::device_name() const { return cuda_device_name(); }

CudaBackend::CudaBackend(const KernelOptions& kernels) : kernels_(kernels) {
  std::string why;
  FP8LAB_CHECK_KIND(ErrorKind::cuda, cuda_available(&why), "the CUDA backend cannot start: {}",
                    why);
  FP8LAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  FP8LAB_CUDA_CHECK(cudaGetDevice(&props.location.id));
  FP8LAB_CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
  // Keep freed memory in the pool: a step's scratch is reused by the next step, never returned.
  std::uint64_t keep = UINT64_MAX;
  FP8LAB_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
  gemm_ = std::make_unique<CublasLtGemm>();
  // cuBLASLt's one workspace
  account(static_cast<std::int64_t>(gemm_->workspace_bytes()), MemoryKind::workspace);
  overlap_ = std::make_unique<LinearCudaOverlap>();
  flags_block_ = PoolBlock(this, sizeof(DeviceFlags), MemoryKind::workspace, "error flags");
  flags_ = static_cast<DeviceFlags*>(flags_block_.get());
  const DeviceFlags initial{0, 0, INT_MAX, 1, 0.0, 0, 0.0};
  FP8LAB_CUDA_CHECK(
      cudaMemcpyAsync(flags_, &initial, sizeof(initial), cudaMemcpyHostToDevice, stream_));
  FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

CudaBackend::~CudaBackend() {
  cudaStreamSynchronize(stream_);
  for (const TimedOp& t : timed_ops_) {
    cudaEventDestroy(t.start);
    cudaEventDestroy(t.stop);
  }
  for (cudaEvent_t e : free_events_) cudaEventDestroy(e);
  flags_block_.reset();
  overlap_.reset();
  gemm_.reset();
  cudaStreamSynchronize(stream_);
  cudaMemPoolDestroy(pool_);
  cudaStreamDestroy(stream_);
}

void* CudaBackend::pool_allocate(std::size_t bytes, MemoryKind kind, const char* what) {
  void* ptr = nullptr;
  const cudaError_t status = cudaMallocFromPoolAsync(&ptr, bytes, pool_, stream_);
  if (status != cudaSuccess) {
    cudaGetLastError();
    const MemoryStats s = memory_stats();
    FP8LAB_FAIL(ErrorKind::cuda,
                "out of device memory: {} ({}) needs {:.1f} MiB with {:.1f} MiB in use "
                "(peak {:.1f} MiB): {}",
                what, memory_kind_name(kind), static_cast<double>(bytes) / 1048576.0,
                static_cast<double>(s.current_bytes) / 1048576.0,
                static_cast<double>(s.peak_bytes) / 1048576.0, cudaGetErrorString(status));
  }
  account(static_cast<std::int64_t>(bytes), kind);
  return ptr;
}

void CudaBackend::pool_release(void* ptr, std::size_t bytes, MemoryKind kind) {
  cudaFreeAsync(ptr, stream_);  // stream-ordered: kernels queued before it still see the memory
  account(-static_cast<std::int64_t>(bytes), kind);
}

// The loan is a stack: workspaces are placed at `top` and, given back in reverse order (as
// scoped workspaces are), pop it. Stream order keeps reuse safe: every kernel that uses a
// workspace is queued on stream_ (or joined back into it) before the next op's kernels. Ending a
// loan never throws (it runs in destructors): workspaces still placed in it are only counted,
// and a new loan while any lives is refused.
void CudaBackend::lend_idle(const TensorView& region) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (region.data == nullptr) {
    loan_.base = nullptr;
    loan_.capacity = loan_.top = 0;
    return;
  }
  FP8LAB_CHECK(loan_.live == 0, "lend_idle({}): {} workspace(s) still live in the previous loan",
               region.describe(), loan_.live);
  check_device(region, Device::cuda, "lent region");
  const auto addr = reinterpret_cast<std::uintptr_t>(region.data);
  const std::size_t skip = aligned(addr) - addr;
  const std::size_t bytes = region.nbytes();
  loan_.base = static_cast<char*>(region.data) + skip;
  loan_.capacity = bytes > skip ? bytes - skip : 0;
  loan_.top = 0;
}

void* CudaBackend::lent_take(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (loan_.base == nullptr || bytes > loan_.capacity - loan_.top) return nullptr;
  void* p = loan_.base + loan_.top;
  loan_.top += bytes;
  ++loan_.live;
  return p;
}

void CudaBackend::lent_give(void* ptr, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  --loan_.live;
  if (loan_.base != nullptr && static_cast<char*>(ptr) + bytes == loan_.base + loan_.top)
    loan_.top -= bytes;
  if (loan_.live == 0) loan_.top = 0;
}

void CudaBackend::account(std::int64_t delta, MemoryKind kind) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.current_bytes += delta;
  stats_.current_by_kind[static_cast<std::size_t>(kind)] += delta;
  if (stats_.current_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.current_bytes;
}

MemoryStats CudaBackend::memory_stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CudaBackend::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_bytes = stats_.current_bytes;
}

std::size_t CudaBackend::pool_reserved_peak() const {
  std::uint64_t high = 0;
  FP8LAB_CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemHigh, &high));
  return static_cast<std::size_t>(high);
}

Buffer CudaBackend::allocate(MemoryKind kind, DType dtype, const Shape& shape,
                             std::string_view name) {
  const TensorView probe{nullptr, dtype, shape, Device::cuda};
  const std::string what(name);
  auto block = std::make_shared<PoolBlock>(this, probe.nbytes(), kind, what.c_str());
  TensorView view{block->get(), dtype, shape, Device::cuda};
  return Buffer(view, [block]() mutable { block.reset(); });
}

void CudaBackend::upload(const TensorView& dst, const void* host_src) {
  check_device(dst, Device::cuda, "upload destination");
  if (dst.nbytes() == 0) return;
  FP8LAB_CUDA_CHECK(
      cudaMemcpyAsync(dst.data, host_src, dst.nbytes(), cudaMemcpyHostToDevice, stream_));
}

void CudaBackend::download(const TensorView& src, void* host_dst) {
  check_device(src, Device::cuda, "download source");
  if (src.nbytes() > 0)
    FP8LAB_CUDA_CHECK(
        cudaMemcpyAsync(host_dst, src.data, src.nbytes(), cudaMemcpyDeviceToHost, stream_));
  synchronize();
}

void CudaBackend::synchronize() {
  FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  check_flags();
}

int CudaBackend::nonfinite_id(const std::string& tensor_name) {
  auto it = nonfinite_ids_.find(tensor_name);
  if (it != nonfinite_ids_.end()) return it->second;
  const int id = static_cast<int>(nonfinite_names_.size());
  nonfinite_names_.push_back(tensor_name);
  nonfinite_ids_.emplace(tensor_name, id);
  return id;
}

void CudaBackend::check_flags() {
  DeviceFlags f{};
  FP8LAB_CUDA_CHECK(cudaMemcpyAsync(&f, flags_, sizeof(f), cudaMemcpyDeviceToHost, stream_));
  FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (f.bad_token == 0 && f.bad_target == 0 && f.first_nonfinite == INT_MAX) return;
  const DeviceFlags cleared{0, 0, INT_MAX, 1, 0.0, 0, 0.0};
  FP8LAB_CUDA_CHECK(
      cudaMemcpyAsync(flags_, &cleared, sizeof(cleared), cudaMemcpyHostToDevice, stream_));
  FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  FP8LAB_CHECK_KIND(ErrorKind::invalid_argument, f.bad_token == 0,
                    "embedding: the token at row {} is outside the vocabulary", f.bad_token - 1);
  FP8LAB_CHECK_KIND(ErrorKind::invalid_argument, f.bad_target == 0,
                    "cross_entropy: the target at row {} is outside the vocabulary and is not "
                    "ignore_index",
                    f.bad_target - 1);
  const std::string name =
      f.first_nonfinite >= 0 && f.first_nonfinite < static_cast<int>(nonfinite_names_.size())
          ? nonfinite_names_[static_cast<std::size_t>(f.first_nonfinite)]
          : "?";
  FP8LAB_FAIL(ErrorKind::non_finite, "non-finite amax (inf or NaN) in FP8 cast of '{}'", name);
}

// Device addresses of the flag fields, for the kernels that set them.
int* CudaBackend::flag_bad_token() { return &flags_->bad_token; }
int* CudaBackend::flag_bad_target() { return &flags_->bad_target; }
int* CudaBackend::flag_first_nonfinite() { return &flags_->first_nonfinite; }
double* CudaBackend::flag_loss_sum() { return &flags_->loss_sum; }
long long* CudaBackend::flag_counted() { return &flags_->counted; }

// ---- op timing ---------------------------------------------------------------------------------

cudaEvent_t CudaBackend::take_event() {
  if (!free_events_.empty()) {
    cudaEvent_t e = free_events_.back();
    free_events_.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  FP8LAB_CUDA_CHECK(cudaEventCreate(&e));
  return e;
}

OpTimer::OpTimer(CudaBackend& backend, const char* name) : backend_(backend), name_(name) {
  if (!backend_.op_timing_) return;
  start_ = backend_.take_event();
  FP8LAB_CUDA_CHECK(cudaEventRecord(start_, backend_.stream_));
  host_start_ = std::chrono::steady_clock::now();
}

OpTimer::~OpTimer() {
  if (start_ == nullptr) return;
  const std::chrono::duration<double, std::milli> host =
      std::chrono::steady_clock::now() - host_start_;
  cudaEvent_t stop = backend_.take_event();
  cudaEventRecord(stop, backend_.stream_);
  backend_.timed_ops_.push_back({name_, start_, stop, host.count()});
}

std::vector<OpTime> CudaBackend::take_op_times() {
  FP8LAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::vector<OpTime> out;
  for (const TimedOp& t : timed_ops_) {
    float ms = 0;
    FP8LAB_CUDA_CHECK(cudaEventElapsedTime(&ms, t.start, t.stop));
    auto it =
        std::find_if(out.begin(), out.end(), [&](const OpTime& o) { return o.name == t.name; });
    if (it == out.end()) it = out.insert(out.end(), OpTime{t.name, 0.0, 0.0, 0});
    it->ms += ms;
    it->host_ms += t.host_ms;
    ++it->calls;
    free_events_.push_back(t.start);
    free_events_.push_back(t.stop);
  }
  timed_ops_.clear();
  return out;
}

// ---- reductions and the optimizer --------------------------------------------------------------

double CudaBackend::sum_of_squares(const TensorView& t) {
  OpTimer timer(*this, "sum_of_squares");
  const cuda_ops::ElemType type = elem_type(t, "sum_of_squares input");  // f32 or bf16
  if (t.numel() == 0) return 0.0;
  PoolBlock scratch(this, cuda_ops::sum_of_squares_workspace_bytes(), MemoryKind::workspace,
                    "sum_of_squares partials");
  cuda_ops::sum_of_squares(t.data, type, t.numel(), &flags_->sum_of_squares, scratch.get(),
                           stream_);
  check_launch("sum_of_squares", __FILE__, __LINE__);
  double result = 0.0;
  FP8LAB_CUDA_CHECK(cudaMemcpyAsync(&result, &flags_->sum_of_squares, sizeof(result),
                                    cudaMemcpyDeviceToHost, stream_));
  synchronize();
  return result;
}

bool CudaBackend::all_finite(const TensorView& t) {
  OpTimer timer(*this, "all_finite");
  const cuda_ops::ElemType type = elem_type(t, "all_finite input");
  if (t.numel() == 0) return true;
  cuda_ops::all_finite(t.data, type, t.numel(), &flags_->all_finite, stream_);
  check_launch("all_finite", __FILE__, __LINE__);
  int result = 0;
  FP8LAB_CUDA_CHECK(cudaMemcpyAsync(&result, &flags_->all_finite, sizeof(result),
                                    cudaMemcpyDeviceToHost, stream_));
  synchronize();
  return result != 0;
}

void CudaBackend::adamw_update(const TensorView& param, const TensorView& grad, const TensorView& m,
                               const TensorView& v, const AdamWStep& s, const TensorView& working,
                               AmaxSlot working_amax) {
  OpTimer timer(*this, "adamw_update");
  check_f32(param, "adamw param");
  const cuda_ops::ElemType gtype = grad_type(grad, "adamw grad");
  if (working.data != nullptr) check_device(working, Device::cuda, "adamw working copy");
  nn::check_adamw_args(param, grad, m, v, working, working_amax);
  if (param.numel() == 0 && !working_amax) return;  // an empty tensor's amax (0) still counts
  const cuda_ops::AdamWArgs args{
      s.lr,        s.beta1, s.beta2, s.eps, s.weight_decay, s.bias_correction1, s.bias_correction2,
      s.grad_scale};
  const cuda_ops::ElemType moments = elem_type(m, "adamw m");
  (void)elem_type(v, "adamw v");  // the same dtype as m: check_adamw_args
  cuda_ops::adamw_update(param.as<float>(), grad.data, gtype, m.data, v.data, moments,
                         working.data != nullptr ? working.as<std::uint16_t>() : nullptr,
                         param.numel(), args, stream_, amax_out(working_amax));
  check_launch("adamw_update", __FILE__, __LINE__);
}

// ---- helpers shared by the op files (cuda_backend_internal.hpp) ------------------------------

cuda_ops::ElemType elem_type(const TensorView& t, const char* what) {
  check_device(t, Device::cuda, what);
  if (t.dtype == DType::f32) return cuda_ops::ElemType::f32;
  if (t.dtype == DType::bf16) return cuda_ops::ElemType::bf16;
  FP8LAB_FAIL(ErrorKind::dtype, "{} must be f32 or bf16, got {}", what, t.describe());
}

cuda_ops::ElemType grad_type(const TensorView& grad, const char* what) {
  check_device(grad, Device::cuda, what);
  nn::check_grad_dtype(grad, what);
  return grad.dtype == DType::bf16 ? cuda_ops::ElemType::bf16 : cuda_ops::ElemType::f32;
}

void check_f32(const TensorView& t, const char* what) {
  check_device(t, Device::cuda, what);
  check_dtype(t, DType::f32, what);
}

void check_bf16(const TensorView& t, const char* what) {
  check_device(t, Device::cuda, what);
  check_dtype(t, DType::bf16, what);
}

int to_int(std::int64_t v, const char* what) {
  FP8LAB_CHECK_KIND(ErrorKind::shape, v >= 0 && v <= INT_MAX, "{} = {} does not fit an int", what,
                    v);
  return static_cast<int>(v);
}

}  // namespace cuda

std::unique_ptr<Backend> make_cuda_backend(const KernelOptions& kernels) {
  return std::make_unique<cuda::CudaBackend>(kernels);
}

}  // namespace fp8lab

#else  // built without CUDA

#include "fp8lab/backend.hpp"
#include "fp8lab/error.hpp"

namespace fp8lab {
std::unique_ptr<Backend> make_cuda_backend(const KernelOptions&) {
  FP8LAB_FAIL(ErrorKind::cuda,
              "this fp8lab was built without CUDA (configure with -DFP8LAB_CUDA=ON and nvcc)");
}
}  // namespace fp8lab

#endif  // FP8LAB_HAVE_CUDA
