// Bucketed gradient all-reduce during the backward (see grad_buckets.hpp).
#include "train/grad_buckets.hpp"

#include "fp8lab/error.hpp"

#if defined(FP8LAB_HAVE_CUDA)
#include "cuda_backend/cuda_backend.hpp"
#endif

namespace fp8lab {
namespace {

// The stream the backend's kernels run on, for the NCCL buckets to wait on through an event;
// nullptr for host backends, whose ops are complete when they return.
void* compute_stream_of(Backend& backend) {
#if defined(FP8LAB_HAVE_CUDA)
  if (auto* cuda = dynamic_cast<cuda::CudaBackend*>(&backend)) return cuda->stream();
#endif
  (void)backend;
  return nullptr;
}

}  // namespace

std::vector<GradBucket> plan_gradient_buckets(const std::vector<std::int64_t>& ready_points,
                                              std::int64_t total, std::int64_t min_elements) {
  FP8LAB_CHECK(!ready_points.empty() && ready_points.back() == 0,
               "gradient buckets: the ready points must end at 0 (got {} points)",
               ready_points.size());
  std::vector<GradBucket> buckets;
  std::int64_t end = total;  // the bucket being filled is [point, end)
  for (std::int64_t point : ready_points) {
    FP8LAB_CHECK(point <= end, "gradient buckets: ready point {} after {} (they must descend)",
                 point, end);
    if (end - point >= min_elements || point == 0) {
      if (end > point) buckets.push_back({point, end});
      end = point;
    }
  }
  return buckets;
}

OverlappedGradReduce::OverlappedGradReduce(Communicator& comm, Backend& backend,
                                           const TensorView& grads,
                                           std::vector<GradBucket> buckets)
    : comm_(comm),
      backend_(backend),
      grads_(grads),
      buckets_(std::move(buckets)),
      stream_(compute_stream_of(backend)) {
  FP8LAB_CHECK(grads_.dtype == DType::f32 || grads_.dtype == DType::bf16,
               "gradient buckets: f32 or bf16 gradients, got {}", grads_.describe());
  std::int64_t end = grads_.numel();
  for (const GradBucket& b : buckets_) {
    FP8LAB_CHECK(b.end == end && b.begin < b.end,
                 "gradient buckets must descend contiguously from {}: got [{}, {})",
                 grads_.numel(), b.begin, b.end);
    end = b.begin;
  }
  FP8LAB_CHECK(end == 0, "gradient buckets leave [0, {}) uncovered", end);
}

OverlappedGradReduce::~OverlappedGradReduce() {
  try {
    comm_.wait_all();
  } catch (...) {  // the step already failed (or is failing) with its own error
  }
}

void OverlappedGradReduce::arm() {
  armed_ = true;
  next_ = 0;
}

void OverlappedGradReduce::on_ready(std::int64_t begin) {
  if (!armed_) return;
  while (next_ < buckets_.size() && buckets_[next_].begin >= begin) start_next();
}

void OverlappedGradReduce::start_next() {
  const GradBucket& b = buckets_[next_];
  const TensorView slice{static_cast<char*>(grads_.data) +
                             static_cast<std::size_t>(b.begin) * dtype_size(grads_.dtype),
                         grads_.dtype, Shape{b.end - b.begin}, grads_.device};
  // Without a stream to order on, the bucket must be complete before the collective sees it
  // (a no-op on the CPU backend, whose ops finish before they return).
  if (stream_ == nullptr) backend_.synchronize();
  comm_.all_reduce_sum_async(slice, stream_);
  ++next_;
}

void OverlappedGradReduce::finish() {
  if (!armed_) next_ = 0;  // this rank never reached its last backward (an earlier failure)
  while (next_ < buckets_.size()) start_next();
  armed_ = false;
  comm_.wait_all();
}

}  // namespace fp8lab
