// The gradient all-reduce overlapped with the backward (docs/distributed.md, "Overlap").
//
// Buckets are contiguous slices of the flat gradient buffer, cut at the points where the model's
// backward reports gradients final (GptModel::gradient_ready_points: one per block, last block
// first, then the embeddings). During the LAST micro-batch's backward of a step, the model's
// hook calls on_ready() and every bucket that has become final starts its all-reduce at once
// (Communicator::all_reduce_sum_async); the trainer waits for all before the gradient norm.
// Each element is summed over the same ranks in the same order as by one all-reduce of the
// whole buffer, so the result does not depend on bucketing on the local communicators (tested);
// for NCCL see docs/distributed.md.
//
// Every rank starts the same buckets in the same order (they come from the layout, not from
// timing); a rank whose backward failed (a non-finite value, to be agreed on and skipped)
// starts the ones it did not reach in finish(), so no rank waits for a collective that never
// comes.
#pragma once

#include "fp8lab/backend.hpp"
#include "fp8lab/distributed.hpp"

#include <cstdint>
#include <vector>

namespace fp8lab {

struct GradBucket {
  std::int64_t begin = 0, end = 0;
  bool operator==(const GradBucket&) const = default;
};

// ready_points: descending range begins, the last one 0, as the backward reports them; the first
// range ends at `total`. Consecutive ranges merge until a bucket holds at least min_elements
// (0: one bucket per range); the last bucket (ending at 0) takes whatever is left. The buckets
// descend and cover [0, total) exactly once.
std::vector<GradBucket> plan_gradient_buckets(const std::vector<std::int64_t>& ready_points,
                                              std::int64_t total, std::int64_t min_elements);

class OverlappedGradReduce {
 public:
  // grads: the model's flat gradient buffer (f32 or bf16); buckets from plan_gradient_buckets over
  // it.
  OverlappedGradReduce(Communicator& comm, Backend& backend, const TensorView& grads,
                       std::vector<GradBucket> buckets);
  ~OverlappedGradReduce();  // waits for what is still in flight (errors cannot leave it)
  OverlappedGradReduce(const OverlappedGradReduce&) = delete;
  OverlappedGradReduce& operator=(const OverlappedGradReduce&) = delete;

  // The next backward is this rank's last of the step: its hook calls start buckets.
  void arm();
  // The model's gradient-ready hook: [begin, ...) is final for this backward. Ignored unless
  // armed.
  void on_ready(std::int64_t begin);
  // Starts every bucket not started yet (normally none), waits for all, disarms. After it the
  // gradient buffer holds the sum over ranks.
  void finish();

  const std::vector<GradBucket>& buckets() const { return buckets_; }
  std::size_t started() const { return next_; }  // buckets started in this step so far

 private:
  void start_next();

  Communicator& comm_;
  Backend& backend_;
  TensorView grads_;
  std::vector<GradBucket> buckets_;
  void* stream_ = nullptr;  // the CUDA backend's compute stream; nullptr on the host
  bool armed_ = false;
  std::size_t next_ = 0;  // buckets_[0, next_) started this step
};

}  // namespace fp8lab
