// The NCCL communicator on GPUs: one rank on one GPU (every collective's call path), and, on a
// machine with several GPUs, one thread per GPU against the rank-order sums of the CPU test double,
// and data-parallel training on the CUDA backend against world 1. NCCL must load (libnccl.so.2 on
// LD_LIBRARY_PATH, or FP8LAB_NCCL_LIBRARY): with a GPU present, a missing NCCL is a failure.
#if defined(FP8LAB_HAVE_CUDA)
#include "cuda_test_util.hpp"
#include "fp8lab/distributed.hpp"
#include "fp8lab/rng.hpp"
#include "fp8lab/trainer.hpp"
#include "train/train_fixtures.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

namespace fp8lab {
namespace {

std::vector<float> rank_data(int rank, std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  fill_normal(v.data(), n, 11, static_cast<std::uint64_t>(rank) + 1, 0.f, 1.f);
  return v;
}

HostTensor host_of(const std::vector<float>& v) {
  HostTensor t(DType::f32, Shape{static_cast<std::int64_t>(v.size())});
  std::memcpy(t.as<float>(), v.data(), v.size() * sizeof(float));
  return t;
}

int gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

// Runs fn(rank, comm) on one thread per GPU (ranks 0..world-1 on devices 0..world-1).
void on_gpus(int world, const std::function<void(int, Communicator&)>& fn) {
  const UniqueId id = nccl_unique_id();
  std::vector<std::string> errors(static_cast<std::size_t>(world));
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        DistributedEnv env;
        env.rank = r;
        env.world_size = world;
        env.local_rank = r;
        use_local_cuda_device(env);
        auto comm = make_nccl_communicator(env, id);
        fn(r, *comm);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r) EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
}

TEST(Nccl, OneRankOnOneGpuRunsEveryCollective) {
  FP8LAB_SKIP_WITHOUT_GPU();
  std::printf("NCCL version %d\n", nccl_version());
  const std::int64_t n = 1481;
  const std::vector<float> data = rank_data(0, n);
  on_gpus(1, [&](int, Communicator& comm) {
    EXPECT_EQ(comm.name(), "nccl");
    DeviceTensor d = to_device(host_of(data));
    comm.all_reduce_sum(d.view());
    comm.reduce_scatter_sum(d.view());
    comm.all_gather(d.view());
    comm.broadcast(d.view(), 0);
    comm.barrier();
    const HostTensor back = to_host(d.view());
    EXPECT_EQ(std::memcmp(back.as<float>(), data.data(), data.size() * sizeof(float)), 0)
        << "a one-rank collective changed the data";
    std::vector<double> scalars{1.5, -2.0};
    comm.all_reduce_sum_host(scalars);
    EXPECT_EQ(scalars, (std::vector<double>{1.5, -2.0}));
  });
}

// NCCL's sum order is its own (ring or tree), so sums match the rank-order sum within a bound;
// every rank must still get the same bytes.
TEST(Nccl, SeveralGpusMatchTheRankOrderSums) {
  FP8LAB_SKIP_WITHOUT_GPU();
  const int world = std::min(gpu_count(), 8);
  if (world < 2) GTEST_SKIP() << "needs 2 or more GPUs, this machine has " << world;
  const std::int64_t n = 100003;  // shards of unequal size
  std::vector<float> sum = rank_data(0, n), abs_sum(sum.size());
  for (std::size_t i = 0; i < sum.size(); ++i) abs_sum[i] = std::abs(sum[i]);
  for (int r = 1; r < world; ++r) {
    const std::vector<float> d = rank_data(r, n);
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += d[i], abs_sum[i] += std::abs(d[i]);
  }
  std::vector<std::vector<float>> reduced(static_cast<std::size_t>(world));
  on_gpus(world, [&](int rank, Communicator& comm) {
    DeviceTensor d = to_device(host_of(rank_data(rank, n)));
    comm.all_reduce_sum(d.view());
    const HostTensor h = to_host(d.view());
    reduced[static_cast<std::size_t>(rank)].assign(h.as<float>(), h.as<float>() + n);
    // reduce-scatter: this rank's shard holds the sum.
    DeviceTensor rs = to_device(host_of(rank_data(rank, n)));
    comm.reduce_scatter_sum(rs.view());
    const HostTensor rsh = to_host(rs.view());
    const Shard s = shard_of(n, rank, world);
    double worst = 0;
    for (std::int64_t i = s.begin; i < s.end; ++i)
      worst = std::max(worst, std::abs(double(rsh.as<float>()[i]) - sum[i]) / (abs_sum[i] + 1e-30));
    EXPECT_LE(worst, 1e-6) << "reduce_scatter rank " << rank;
    // all-gather and broadcast move bytes exactly.
    std::vector<float> g(static_cast<std::size_t>(n), -1.f);
    for (std::int64_t i = s.begin; i < s.end; ++i) g[i] = static_cast<float>(rank);
    DeviceTensor gd = to_device(host_of(g));
    comm.all_gather(gd.view());
    const HostTensor gh = to_host(gd.view());
    for (int r = 0; r < world; ++r) {
      const Shard o = shard_of(n, r, world);
      for (std::int64_t i = o.begin; i < o.end; ++i)
        ASSERT_EQ(gh.as<float>()[i], static_cast<float>(r)) << "all_gather rank " << rank;
    }
    std::vector<double> scalars{static_cast<double>(rank)};
    comm.all_reduce_sum_host(scalars);
    EXPECT_EQ(scalars[0], world * (world - 1) / 2.0);
  });
  double worst = 0;
  for (std::size_t i = 0; i < sum.size(); ++i)
    worst = std::max(worst, std::abs(double(reduced[0][i]) - sum[i]) / (abs_sum[i] + 1e-30));
  std::printf("world %d: all_reduce worst |nccl - rank-order sum| / sum|x| = %.3g\n", world, worst);
  EXPECT_LE(worst, 1e-6);
  for (int r = 1; r < world; ++r)
    EXPECT_EQ(reduced[static_cast<std::size_t>(r)], reduced[0]) << "rank " << r << " differs";
}

// The data-parallel equality check on GPUs: world N (one GPU each) against world 1, same global
// batch, bounds of docs/distributed.md.
TEST(Nccl, DataParallelTrainingMatchesWorldOne) {
  FP8LAB_SKIP_WITHOUT_GPU();
  int world = std::min(gpu_count(), 4);
  if (world < 2) GTEST_SKIP() << "needs 2 or more GPUs";
  if (world == 3) world = 2;  // grad_accum 4 must divide by the world size
  RunConfig c = testing::small_run(testing::fresh_seed());
  c.backend = "cuda";
  c.precision.policy = PrecisionPolicy::fp8_mlp;
  c.train.grad_accum = 4;
  const int steps = 5;
  std::vector<double> one;
  {
    testing::TempDir dir;
    DistributedEnv env;
    use_local_cuda_device(env);
    auto be = make_cuda_backend();
    Trainer t(c, dir.path(), *be, testing::quiet());
    for (int s = 0; s < steps; ++s) one.push_back(t.train_step().loss);
  }
  std::vector<std::vector<double>> losses(static_cast<std::size_t>(world));
  testing::TempDir dir;
  on_gpus(world, [&](int rank, Communicator& comm) {
    auto be = make_cuda_backend();
    TrainerOptions o = testing::quiet();
    o.comm = &comm;
    Trainer t(c, dir.path(), *be, o);
    for (int s = 0; s < steps; ++s) losses[static_cast<std::size_t>(rank)].push_back(t.train_step().loss);
  });
  for (int r = 1; r < world; ++r) EXPECT_EQ(losses[static_cast<std::size_t>(r)], losses[0]);
  ASSERT_EQ(losses[0].size(), one.size());
  for (int s = 0; s < steps; ++s) {
    const double rel = std::abs(losses[0][s] - one[s]) / one[s];
    std::printf("world %d step %d loss %.9f vs world 1 %.9f rel %.3g\n", world, s + 1,
                losses[0][s], one[s], rel);
    EXPECT_LE(rel, s == 0 ? 1e-6 : 1e-3) << "step " << s + 1;
  }
}

}  // namespace
}  // namespace fp8lab

#endif  // FP8LAB_HAVE_CUDA
