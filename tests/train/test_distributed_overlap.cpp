// The gradient all-reduce overlapped with the backward (docs/distributed.md, "Overlap"):
// - the model's gradient-ready hook covers every gradient element exactly once per backward, in
//   descending ranges that start at gradient_ready_points(), and a range it reports is final
//   (its bytes do not change during the rest of the backward);
// - bucket plans; async all-reduces on the local communicators equal the blocking one bit for
//   bit, and a blocking collective while one is pending is refused;
// - training with overlap equals training without it bit for bit (losses, gradient norms,
//   weights) at worlds 2 and 4, one and two micro-batches per rank, bf16 and fp8-mlp, with one
//   bucket per block and with merged buckets; exactly one all-reduce per bucket per step;
// - a rank whose backward fails part-way (a non-finite value) still starts every bucket, so the
//   ranks agree to skip the step instead of hanging.
#include "common/test_data.hpp"
#include "fp8lab/distributed.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/rng.hpp"
#include "fp8lab/trainer.hpp"
#include "model/model_fixtures.hpp"
#include "train/grad_buckets.hpp"
#include "train/train_fixtures.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace fp8lab {
namespace {

namespace fs = std::filesystem;
using testing::quiet;
using testing::TempDir;

// ---- the model's hook ------------------------------------------------------------------------

// Counts, per gradient element, the hook calls that covered it, and snapshots the element's
// value at the call; after the backward the snapshot must equal the final gradient.
struct CountingHook {
  explicit CountingHook(GptModel& m)
      : model(m),
        count(static_cast<std::size_t>(m.parameter_count()), 0),
        snapshot(static_cast<std::size_t>(m.parameter_count()), 0.f) {}
  void operator()(std::int64_t begin, std::int64_t end) {
    begins.push_back(begin);
    EXPECT_LT(begin, end);
    EXPECT_EQ(end, last_begin) << "ranges must descend contiguously";
    last_begin = begin;
    const float* g = model.grads().as<float>();  // CPU backend: host memory
    for (std::int64_t i = begin; i < end; ++i) {
      ++count[static_cast<std::size_t>(i)];
      snapshot[static_cast<std::size_t>(i)] = g[i];
    }
  }
  GptModel& model;
  std::vector<int> count;
  std::vector<float> snapshot;
  std::vector<std::int64_t> begins;
  std::int64_t last_begin = 0;
};

TEST(GradientReadyHook, CoversEveryElementOncePerBackwardWithFinalValues) {
  const std::uint64_t seed = testing::fresh_seed();
  for (PrecisionPolicy policy : {PrecisionPolicy::bf16, PrecisionPolicy::fp8_mlp}) {
    for (bool recompute : {false, true}) {
      ModelConfig mc = testing::fp8_model();
      mc.n_layers = 3;
      PrecisionConfig pc;
      pc.policy = policy;
      pc.mlp_recompute = recompute;
      auto be = make_cpu_backend();
      const std::int64_t batch = 2, m = batch * mc.seq_len;
      GptModel model(mc, pc, batch, *be);
      model.init_parameters(seed);
      model.zero_grads();
      const std::vector<std::int64_t> points = model.gradient_ready_points();
      ASSERT_EQ(points.size(), static_cast<std::size_t>(mc.n_layers + 1));
      for (int micro = 0; micro < 2; ++micro) {  // accumulation: each backward covers all once
        CountingHook hook(model);
        hook.last_begin = model.parameter_count();
        model.set_gradient_ready_hook([&](std::int64_t b, std::int64_t e) { hook(b, e); });
        const auto in = testing::random_tokens(m, mc.vocab_size, seed, 10 + micro);
        const auto tg = testing::random_tokens(m, mc.vocab_size, seed, 20 + micro);
        model.forward_backward(in.data(), tg.data(), 1.f / static_cast<float>(m), -1, 7);
        const std::string where = std::string(policy_name(policy)) +
                                  (recompute ? " recompute" : "") + " micro " +
                                  std::to_string(micro);
        EXPECT_EQ(hook.begins, points) << where;
        EXPECT_EQ(hook.last_begin, 0) << where;
        const std::vector<float> final_grads = model.get_gradients();
        std::int64_t wrong_count = 0, changed = 0;
        for (std::size_t i = 0; i < final_grads.size(); ++i) {
          wrong_count += hook.count[i] != 1;
          changed += std::memcmp(&hook.snapshot[i], &final_grads[i], sizeof(float)) != 0;
        }
        EXPECT_EQ(wrong_count, 0) << where << ": elements not covered exactly once";
        EXPECT_EQ(changed, 0) << where << ": elements changed after the hook called them final";
      }
      model.set_gradient_ready_hook(nullptr);  // no hook: still trains
      const auto in = testing::random_tokens(m, mc.vocab_size, seed, 30);
      model.forward_backward(in.data(), in.data(), 1.f, -1, 7);
    }
  }
}

// ---- bucket plans and async all-reduce ----------------------------------------------------

TEST(GradientBuckets, PlanMergesRangesUpToTheMinimumAndCoversTheBuffer) {
  const std::vector<std::int64_t> points{100, 60, 20, 0};
  EXPECT_EQ(plan_gradient_buckets(points, 130, 0),
            (std::vector<GradBucket>{{100, 130}, {60, 100}, {20, 60}, {0, 20}}));
  EXPECT_EQ(plan_gradient_buckets(points, 130, 50),
            (std::vector<GradBucket>{{60, 130}, {0, 60}}));
  EXPECT_EQ(plan_gradient_buckets(points, 130, 1000), (std::vector<GradBucket>{{0, 130}}));
  EXPECT_EQ(plan_gradient_buckets(points, 130, 40),
            (std::vector<GradBucket>{{60, 130}, {20, 60}, {0, 20}}));
  EXPECT_THROW(plan_gradient_buckets({100, 20}, 130, 0), Error);     // must end at 0
  EXPECT_THROW(plan_gradient_buckets({20, 100, 0}, 130, 0), Error);  // must descend
}

TensorView slice(std::vector<float>& v, std::int64_t begin, std::int64_t end) {
  return {v.data() + begin, DType::f32, Shape{end - begin}, Device::cpu};
}

TEST(LocalCommunicator, AsyncAllReducesOfSlicesEqualOneBlockingAllReduce) {
  const std::uint64_t seed = testing::fresh_seed();
  const std::int64_t n = 1481;
  for (int world : {1, 2, 3, 4}) {
    run_local_ranks(world, [&](int rank, Communicator& comm) {
      std::vector<float> whole(static_cast<std::size_t>(n));
      fill_normal(whole.data(), n, seed, static_cast<std::uint64_t>(rank) + 1, 0.f, 1.f);
      std::vector<float> buckets = whole;
      comm.all_reduce_sum(slice(whole, 0, n));
      EXPECT_EQ(comm.pending(), 0);
      const Communicator::Ticket t1 = comm.all_reduce_sum_async(slice(buckets, 1000, n));
      const Communicator::Ticket t2 = comm.all_reduce_sum_async(slice(buckets, 7, 1000));
      comm.all_reduce_sum_async(slice(buckets, 0, 7));
      EXPECT_LT(t1, t2);
      // Collectives run one at a time: a blocking one now is refused, on every rank alike.
      EXPECT_THROW(comm.barrier(), Error);
      comm.wait(t2);
      EXPECT_EQ(comm.pending(), 1);
      comm.wait_all();
      EXPECT_EQ(comm.pending(), 0);
      comm.wait_all();  // nothing pending: returns
      EXPECT_EQ(std::memcmp(whole.data(), buckets.data(), whole.size() * sizeof(float)), 0)
          << "world " << world << " rank " << rank;
      comm.barrier();  // idle again: allowed
    });
  }
}

TEST(LocalCommunicator, AsyncAllReduceRefusesBadTensorsInTheCallersThread) {
  run_local_ranks(2, [&](int, Communicator& comm) {
    std::vector<std::int32_t> ints(4);
    EXPECT_THROW(comm.all_reduce_sum_async(
                     TensorView{ints.data(), DType::i32, Shape{4}, Device::cpu}),
                 Error);
    EXPECT_EQ(comm.pending(), 0);
  });
}

// ---- training ---------------------------------------------------------------------------------

// Delegates to a local communicator; counts the async all-reduces and can make one of them
// throw a non-finite error (as a failing backward op would) before it is started.
class CountingComm final : public Communicator {
 public:
  explicit CountingComm(Communicator& inner) : inner_(inner) {}
  std::int64_t async_calls = 0, blocking_all_reduces = 0;
  std::int64_t fail_async_call = -1;  // 0-based index of the async call that throws

  int rank() const override { return inner_.rank(); }
  int world_size() const override { return inner_.world_size(); }
  std::string name() const override { return inner_.name(); }
  void all_reduce_sum(const TensorView& t) override {
    ++blocking_all_reduces;
    inner_.all_reduce_sum(t);
  }
  void reduce_scatter_sum(const TensorView& t) override { inner_.reduce_scatter_sum(t); }
  void all_gather(const TensorView& t) override { inner_.all_gather(t); }
  void broadcast(const TensorView& t, int root) override { inner_.broadcast(t, root); }
  void barrier() override { inner_.barrier(); }
  void all_reduce_sum_host(std::vector<double>& v) override { inner_.all_reduce_sum_host(v); }
  Ticket all_reduce_sum_async(const TensorView& t, void* after_stream) override {
    if (async_calls++ == fail_async_call)
      FP8LAB_FAIL(ErrorKind::non_finite, "injected: non-finite value in a backward op");
    return inner_.all_reduce_sum_async(t, after_stream);
  }
  void wait(Ticket t) override { inner_.wait(t); }
  void wait_all() override { inner_.wait_all(); }
  std::int64_t pending() const override { return inner_.pending(); }

 private:
  Communicator& inner_;
};

struct RunResult {
  std::vector<double> losses, grad_norms;
  std::vector<bool> skipped;
  std::string params_sha256;
  std::int64_t async_calls = 0, blocking_all_reduces = 0;
};

struct Arm {
  bool overlap = true;
  std::int64_t bucket_elements = 0;
  int fail_rank = -1;  // this rank's `fail_call`-th async all-reduce throws
  std::int64_t fail_call = -1;
};

// Trains `steps` steps at `world` ranks; every rank must report the same losses and weights.
RunResult train(const RunConfig& c, int world, int steps, const Arm& arm) {
  TempDir dir;
  std::vector<RunResult> per_rank(static_cast<std::size_t>(world));
  run_local_ranks(world, [&](int rank, Communicator& local) {
    CountingComm comm(local);
    if (rank == arm.fail_rank) comm.fail_async_call = arm.fail_call;
    auto be = make_cpu_backend();
    TrainerOptions o = quiet();
    o.comm = &comm;
    o.overlap_grad_reduce = arm.overlap;
    o.grad_bucket_elements = arm.bucket_elements;
    Trainer t(c, dir.path(), *be, o);
    RunResult& r = per_rank[static_cast<std::size_t>(rank)];
    for (int s = 0; s < steps; ++s) {
      const StepRecord rec = t.train_step();
      r.losses.push_back(rec.loss);
      r.grad_norms.push_back(rec.grad_norm);
      r.skipped.push_back(rec.skipped);
    }
    r.params_sha256 = t.model().parameter_sha256();
    r.async_calls = comm.async_calls;
    r.blocking_all_reduces = comm.blocking_all_reduces;
  });
  for (std::size_t r = 1; r < per_rank.size(); ++r) {
    EXPECT_EQ(per_rank[r].losses, per_rank[0].losses) << "rank " << r << " disagrees";
    EXPECT_EQ(per_rank[r].skipped, per_rank[0].skipped) << "rank " << r;
    EXPECT_EQ(per_rank[r].params_sha256, per_rank[0].params_sha256) << "rank " << r;
  }
  return per_rank[0];
}

// 3 blocks: points blocks.2, blocks.1, blocks.0, 0. Per block 12352 elements (d 32), wte + wpe
// 2560, ln_f 32: bucket minimum 0 gives 4 buckets; 15000 gives [blocks.1, end) and [0, blocks.1).
RunConfig overlap_run(std::uint64_t seed, PrecisionPolicy policy, int world, int per_rank) {
  RunConfig c = testing::small_run(seed);
  c.model.n_layers = 3;
  c.precision.policy = policy;
  c.train.grad_accum = world * per_rank;
  return c;
}

TEST(OverlappedGradReduce, BitIdenticalToAllReduceAfterBackward) {
  const std::uint64_t seed = testing::fresh_seed();
  const int steps = 3;
  for (PrecisionPolicy policy : {PrecisionPolicy::bf16, PrecisionPolicy::fp8_mlp}) {
    for (int world : {2, 4}) {
      for (int per_rank : {1, 2}) {
        const RunConfig c = overlap_run(seed, policy, world, per_rank);
        const RunResult after = train(c, world, steps, Arm{.overlap = false});
        EXPECT_EQ(after.async_calls, 0);
        EXPECT_EQ(after.blocking_all_reduces, steps);  // the one gradient all-reduce per step
        for (std::int64_t bucket : {std::int64_t{0}, std::int64_t{15000}}) {
          const RunResult overlapped =
              train(c, world, steps, Arm{.overlap = true, .bucket_elements = bucket});
          const std::string where = std::string(policy_name(policy)) + " world " +
                                    std::to_string(world) + " micro-batches/rank " +
                                    std::to_string(per_rank) + " bucket min " +
                                    std::to_string(bucket) + " seed " + std::to_string(seed);
          EXPECT_EQ(overlapped.losses, after.losses) << where;
          EXPECT_EQ(overlapped.grad_norms, after.grad_norms) << where;
          EXPECT_EQ(overlapped.params_sha256, after.params_sha256) << where;
          // One async all-reduce per bucket per step: only the last micro-batch's backward
          // starts them (the first one's hook calls are ignored), and no blocking gradient sum.
          EXPECT_EQ(overlapped.async_calls, steps * (bucket == 0 ? 4 : 2)) << where;
          EXPECT_EQ(overlapped.blocking_all_reduces, 0) << where;
          std::printf("%s: losses %.9f %.9f %.9f, grad norms %.9f %.9f %.9f: identical\n",
                      where.c_str(), overlapped.losses[0], overlapped.losses[1],
                      overlapped.losses[2], overlapped.grad_norms[0], overlapped.grad_norms[1],
                      overlapped.grad_norms[2]);
        }
      }
    }
  }
}

TEST(OverlappedGradReduce, ARankFailingMidBackwardStillStartsEveryBucketAndAllSkip) {
  const std::uint64_t seed = testing::fresh_seed();
  RunConfig c = overlap_run(seed, PrecisionPolicy::bf16, 2, 2);
  c.train.nonfinite = "skip";
  // Rank 1's 6th async call (step 2's second bucket, after one bucket already started) throws.
  const RunResult failed = train(c, 2, 3, Arm{.overlap = true, .fail_rank = 1, .fail_call = 5});
  EXPECT_EQ(failed.skipped, (std::vector<bool>{false, true, false}));
  EXPECT_EQ(failed.async_calls, 3 * 4);  // rank 0: every bucket of every step
  // The skipped step left the weights alone: steps 1 and 3 match a run that skips nothing
  // only at step 1 (step 3 continues from step 1's weights), and nothing hung.
  const RunResult clean = train(c, 2, 1, Arm{.overlap = true});
  EXPECT_EQ(failed.losses[0], clean.losses[0]);
}

}  // namespace
}  // namespace fp8lab
