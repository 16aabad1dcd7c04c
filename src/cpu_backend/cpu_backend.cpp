// CPU backend: memory accounting, elementwise ops, reductions, AdamW and the BLAS helpers.
#include "cpu_backend/cpu_backend.hpp"

#include <cblas.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "fp8lab/fp8_scaling.hpp"
#include "cpu_backend/cpu_rows.hpp"
#include "nn/op_shapes.hpp"

namespace fp8lab {

const char* memory_kind_name(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::parameters:
      return "parameters";
    case MemoryKind::gradients:
      return "gradients";
    case MemoryKind::optimizer:
      return "optimizer";
    case MemoryKind::activations:
      return "activations";
    case MemoryKind::workspace:
      return "workspace";
  }
  return "?";
}

const char* linear_mode_name(LinearMode p) {
  switch (p) {
    case LinearMode::f32:
      return "f32";
    case LinearMode::bf16:
      return "bf16";
    case LinearMode::fp8:
      return "fp8";
  }
  return "?";
}

Buffer::Buffer(TensorView view, std::function<void()> release)
    : view_(std::move(view)), release_(std::move(release)) {}
Buffer::Buffer(Buffer&& other) noexcept : view_(other.view_), release_(std::move(other.release_)) {
  other.release_ = nullptr;
  other.view_ = {};
}
Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    reset();
    view_ = other.view_;
    release_ = std::move(other.release_);
    other.release_ = nullptr;
    other.view_ = {};
  }
  return *this;
}
Buffer::~Buffer() {
  reset();
}
void Buffer::reset() {
  if (release_) release_();
  release_ = nullptr;
  view_ = {};
}

Buffer allocate_amax_slots(Backend& backend, int count, MemoryKind kind, std::string_view name) {
  FP8LAB_CHECK(count > 0, "allocate_amax_slots: count must be positive, got {}", count);
  Buffer slots =
      backend.allocate(kind, DType::u8, {count * static_cast<std::int64_t>(sizeof(Fp8Meta))}, name);
  backend.fill_zero(slots);  // the device amax's scratch words start at 0
  return slots;
}

std::vector<float> download_as_f32(Backend& backend, const TensorView& t) {
  FP8LAB_CHECK(t.dtype == DType::f32 || t.dtype == DType::bf16,
               "download_as_f32: an f32 or bf16 tensor, got {}", t.describe());
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  if (t.dtype == DType::f32) {
    backend.download(t, out.data());
    return out;
  }
  std::vector<std::uint16_t> bits(out.size());
  backend.download(t, bits.data());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = bf16_to_float(bits[i]);
  return out;
}

void upload_from_f32(Backend& backend, const TensorView& t, const float* values) {
  FP8LAB_CHECK(t.dtype == DType::f32 || t.dtype == DType::bf16,
               "upload_from_f32: an f32 or bf16 tensor, got {}", t.describe());
  if (t.dtype == DType::f32) return backend.upload(t, values);
  std::vector<std::uint16_t> bits(static_cast<std::size_t>(t.numel()));
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = float_to_bf16(values[i]);
  backend.upload(t, bits.data());
  backend.synchronize();  // `bits` dies here
}

AmaxSlot amax_slot(const Buffer& slots, int index, Fp8Format format) {
  const TensorView& v = slots.view();
  const std::int64_t count = v.numel() / static_cast<std::int64_t>(sizeof(Fp8Meta));
  FP8LAB_CHECK(v.dtype == DType::u8 && index >= 0 && index < count,
               "amax_slot: slot {} of {} (a buffer of {})", index, count, v.describe());
  return {static_cast<Fp8Meta*>(v.data) + index, format};
}

void check_amax_slot_format(AmaxSlot slot, Fp8Format cast, std::string_view tensor) {
  FP8LAB_CHECK(slot.format == cast, "{}: its amax slot holds a scale for {}, the cast is {}",
               tensor, dtype_name(fp8_dtype(slot.format)), dtype_name(fp8_dtype(cast)));
}

std::unique_ptr<Backend> make_cpu_backend() {
  return std::make_unique<cpu::CpuBackend>();
}

std::unique_ptr<Backend> make_backend(std::string_view name, const KernelOptions& kernels) {
  if (name == "cpu") return make_cpu_backend();
  if (name == "cuda") return make_cuda_backend(kernels);
  if (name == "auto") return make_backend(choose_backend(name).name, kernels);
  FP8LAB_FAIL(ErrorKind::invalid_argument, "unknown backend '{}' (available: auto, cpu, cuda)",
              name);
}

namespace cpu {

// The reference computes the amax in a second pass over y: the definition itself (amax_cpu of
// the stored tensor), which the CUDA kernels' fused reduction must equal bit for bit.
void store_output_amax(const TensorView& y, AmaxSlot slot) {
  if (!slot) return;
  store_amax_meta_cpu(amax_cpu(y), slot.format, *slot.meta);
}

void check_activation(const TensorView& t, const char* what) {
  FP8LAB_CHECK_KIND(ErrorKind::dtype, t.dtype == DType::f32 || t.dtype == DType::bf16,
                    "{} must be f32 or bf16, got {}", what, t.describe());
  FP8LAB_CHECK_KIND(ErrorKind::invalid_argument, t.device == Device::cpu,
                    "{} must be host memory for the CPU backend, got {}", what, t.describe());
}

// The ops parallelise with OpenMP; OpenBLAS's own thread pool would spin against the OpenMP
// threads for the same cores. Measured on the shared 2-core machine (tiny preset, 10 steps, with
// OMP_WAIT_POLICY=passive): BLAS on 2 threads 4491 tokens/s, on 1 thread 6320 tokens/s.
CpuBackend::CpuBackend() { openblas_set_num_threads(1); }

// "<model name> (<n> threads)" from /proc/cpuinfo and OpenMP; "CPU (<n> threads)" where the
// kernel does not say the model (not Linux, or an emulator).
std::string CpuBackend::device_name() const {
  std::string model;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; model.empty() && std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto first = line.find_first_not_of(" \t", colon + 1);
    if (first != std::string::npos) model = line.substr(first);
  }
  return fmt::format("{} ({} threads)", model.empty() ? "CPU" : model, omp_get_max_threads());
}

Buffer CpuBackend::allocate(MemoryKind kind, DType dtype, const Shape& shape,
                            std::string_view name) {
  auto tensor = std::make_shared<HostTensor>(dtype, shape);
  const auto bytes = static_cast<std::int64_t>(tensor->nbytes());
  account(bytes, kind);
  (void)name;
  return Buffer(tensor->view(), [this, tensor, bytes, kind]() mutable {
    tensor.reset();
    account(-bytes, kind);
  });
}

void CpuBackend::account(std::int64_t delta, MemoryKind kind) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.current_bytes += delta;
  stats_.current_by_kind[static_cast<std::size_t>(kind)] += delta;
  if (stats_.current_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.current_bytes;
}

MemoryStats CpuBackend::memory_stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CpuBackend::upload(const TensorView& dst, const void* host_src) {
  if (dst.nbytes()) std::memcpy(dst.data, host_src, dst.nbytes());
}
void CpuBackend::download(const TensorView& src, void* host_dst) {
  if (src.nbytes()) std::memcpy(host_dst, src.data, src.nbytes());
}

void CpuBackend::fill_zero(const TensorView& t) {
  if (t.nbytes()) std::memset(t.data, 0, t.nbytes());
}

void CpuBackend::convert(const TensorView& src, const TensorView& dst, AmaxSlot amax) {
  check_activation(src, "convert source");
  check_activation(dst, "convert destination");
  FP8LAB_CHECK_KIND(ErrorKind::shape, src.numel() == dst.numel(),
                    "convert: {} and {} differ in element count", src.describe(), dst.describe());
  const std::int64_t n = src.numel();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) store_at(dst, i, load_at(src, i));
  store_output_amax(dst, amax);
}

void CpuBackend::add_inplace(const TensorView& dst, const TensorView& src) {
  check_activation(src, "add source");
  check_activation(dst, "add destination");
  FP8LAB_CHECK_KIND(ErrorKind::shape, src.numel() == dst.numel(),
                    "add: {} += {} differ in element count", dst.describe(), src.describe());
  const std::int64_t n = src.numel();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) store_at(dst, i, load_at(dst, i) + load_at(src, i));
}

void CpuBackend::scale_inplace(const TensorView& t, float factor) {
  check_dtype(t, DType::f32, "scaled tensor");
  float* p = t.as<float>();
  const std::int64_t n = t.numel();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) p[i] *= factor;
}

double CpuBackend::sum_of_squares(const TensorView& t) {
  nn::check_grad_dtype(t, "sum_of_squares input");  // f32, or bf16 gradients widened
  const std::int64_t n = t.numel();
  double sum = 0.0;
  // A fixed static split and a reduction over a fixed thread count would still reorder sums
  // between machines; blocks of 4096 summed in order keep the result independent of threads.
  const std::int64_t blocks = (n + 4095) / 4096;
  std::vector<double> partial(static_cast<std::size_t>(blocks), 0.0);
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    double s = 0.0;
    const std::int64_t end = std::min(n, (b + 1) * 4096);
    for (std::int64_t i = b * 4096; i < end; ++i) {
      const double x = load_at(t, i);
      s += x * x;
    }
    partial[static_cast<std::size_t>(b)] = s;
  }
  for (double s : partial) sum += s;
  return sum;
}

bool CpuBackend::all_finite(const TensorView& t) {
  check_activation(t, "all_finite input");
  const std::int64_t n = t.numel();
  int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad)
  for (std::int64_t i = 0; i < n; ++i) bad |= std::isfinite(load_at(t, i)) ? 0 : 1;
  return bad == 0;
}

void CpuBackend::adamw_update(const TensorView& param, const TensorView& grad, const TensorView& m,
                              const TensorView& v, const AdamWStep& s, const TensorView& working,
                              AmaxSlot working_amax) {
  nn::check_adamw_args(param, grad, m, v, working, working_amax);
  float* p = param.as<float>();
  std::uint16_t* w = working.data != nullptr ? working.as<std::uint16_t>() : nullptr;
  const std::int64_t n = param.numel();
  // The moments in fp32 or bf16 (OptimConfig::moments): the update computes in fp32 from the
  // stored values and rounds the new ones once, after computing the step from them unrounded.
  auto update = [&](auto* mm, auto* vv, auto load, auto store) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      // A bf16 gradient (PrecisionConfig::grads) widened exactly; then one rounding, as
      // scale_inplace before the update would round.
      const float gi = load_at(grad, i) * s.grad_scale;
      const float mi = s.beta1 * load(mm[i]) + (1.f - s.beta1) * gi;
      const float vi = s.beta2 * load(vv[i]) + (1.f - s.beta2) * gi * gi;
      const float m_hat = mi / s.bias_correction1;
      const float v_hat = vi / s.bias_correction2;
      // Decoupled weight decay (Loshchilov & Hutter): shrink the weight, not the gradient.
      p[i] -= s.lr * (m_hat / (std::sqrt(v_hat) + s.eps) + s.weight_decay * p[i]);
      mm[i] = store(mi);
      vv[i] = store(vi);
      if (w != nullptr) w[i] = float_to_bf16(p[i]);
    }
  };
  if (m.dtype == DType::f32) {
    update(m.as<float>(), v.as<float>(), [](float x) { return x; }, [](float x) { return x; });
  } else {
    update(m.as<std::uint16_t>(), v.as<std::uint16_t>(),
           [](std::uint16_t x) { return bf16_to_float(x); },
           [](float x) { return float_to_bf16(x); });
  }
  cpu::store_output_amax(working, working_amax);
}

void sgemm_nt(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
              float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, alpha, a, lda, b, ldb, beta, c,
              ldc);
}
void sgemm_nn(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
              float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c,
              ldc);
}
void sgemm_tn(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
              float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c,
              ldc);
}

}  // namespace cpu
}  // namespace fp8lab
