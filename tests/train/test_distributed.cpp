// Communicators (the in-process test double), ZeRO-1 shards, launch variables, the unique-id
// rendezvous and the NCCL loader's errors. CPU only; the NCCL collectives themselves need GPUs.
#include "fp8lab/distributed.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/rng.hpp"
#include "common/error_of.hpp"
#include "train/train_fixtures.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

namespace fp8lab {
namespace {

using testing::TempDir;

TensorView flat(std::vector<float>& v) {
  return {v.data(), DType::f32, Shape{static_cast<std::int64_t>(v.size())}, Device::cpu};
}

std::vector<float> rank_data(int rank, std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  fill_normal(v.data(), n, 7, static_cast<std::uint64_t>(rank) + 1, 0.f, 1.f);
  return v;
}

TEST(Shard, EvenSplitCoversTheBufferInOrder) {
  for (std::int64_t total : {0, 1, 7, 8, 1481, 677 * 13}) {
    for (int world : {1, 2, 3, 4, 8}) {
      std::int64_t next = 0;
      for (int r = 0; r < world; ++r) {
        const Shard s = shard_of(total, r, world);
        EXPECT_EQ(s.begin, next) << total << " " << world << " " << r;
        EXPECT_TRUE(s.size() == total / world || s.size() == total / world + 1);
        next = s.end;
      }
      EXPECT_EQ(next, total);
    }
  }
  EXPECT_THROW(shard_of(10, 2, 2), Error);
}

// All-reduce over 1..4 ranks equals the sum in rank order (rank 0 + rank 1 + ...), computed
// here sequentially, bit for bit, on every rank, and the same on a second run.
TEST(LocalCommunicator, AllReduceIsTheRankOrderSumOnEveryRank) {
  const std::int64_t n = 1481;  // prime-ish: shards of unequal size
  for (int world = 1; world <= 4; ++world) {
    std::vector<float> expected = rank_data(0, n);
    for (int r = 1; r < world; ++r) {
      const std::vector<float> d = rank_data(r, n);
      for (std::size_t i = 0; i < expected.size(); ++i) expected[i] += d[i];
    }
    for (int run = 0; run < 2; ++run) {
      std::vector<std::vector<float>> out(static_cast<std::size_t>(world));
      run_local_ranks(world, [&](int rank, Communicator& comm) {
        EXPECT_EQ(comm.world_size(), world);
        EXPECT_EQ(comm.rank(), rank);
        std::vector<float> v = rank_data(rank, n);
        comm.all_reduce_sum(flat(v));
        out[static_cast<std::size_t>(rank)] = v;
      });
      for (int r = 0; r < world; ++r) {
        ASSERT_EQ(std::memcmp(out[static_cast<std::size_t>(r)].data(), expected.data(),
                              expected.size() * sizeof(float)),
                  0)
            << "world " << world << " rank " << r << " run " << run;
      }
    }
  }
}

TEST(LocalCommunicator, ReduceScatterAllGatherBroadcastAndHostScalars) {
  const std::int64_t n = 103;
  const int world = 3;
  std::vector<float> sum = rank_data(0, n);
  for (int r = 1; r < world; ++r) {
    const std::vector<float> d = rank_data(r, n);
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += d[i];
  }
  run_local_ranks(world, [&](int rank, Communicator& comm) {
    // reduce-scatter: this rank's shard holds the sum.
    std::vector<float> v = rank_data(rank, n);
    comm.reduce_scatter_sum(flat(v));
    const Shard s = shard_of(n, rank, world);
    for (std::int64_t i = s.begin; i < s.end; ++i) ASSERT_EQ(v[i], sum[i]) << rank << " " << i;
    // all-gather: every shard from its owner.
    std::vector<float> g(static_cast<std::size_t>(n), -1.f);
    for (std::int64_t i = s.begin; i < s.end; ++i) g[i] = static_cast<float>(rank * 1000 + i);
    comm.all_gather(flat(g));
    for (std::int64_t i = 0; i < n; ++i) {
      int owner = 0;
      while (shard_of(n, owner, world).end <= i) ++owner;
      ASSERT_EQ(g[i], static_cast<float>(owner * 1000 + i));
    }
    // broadcast from rank 2.
    std::vector<float> b(5, static_cast<float>(rank));
    comm.broadcast(flat(b), 2);
    for (float x : b) ASSERT_EQ(x, 2.f);
    std::vector<double> scalars{static_cast<double>(rank), 1.0};
    comm.all_reduce_sum_host(scalars);
    EXPECT_EQ(scalars[0], 3.0);  // 0 + 1 + 2
    EXPECT_EQ(scalars[1], 3.0);
    comm.barrier();
  });
}

TEST(LocalCommunicator, MismatchedTensorsAndFailedRanksGiveErrorsNotHangs) {
  try {
    run_local_ranks(2, [](int rank, Communicator& comm) {
      std::vector<float> v(static_cast<std::size_t>(10 + rank));
      comm.all_reduce_sum(flat(v));
    });
    FAIL() << "mismatched numel did not throw";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("every rank must pass the same"), std::string::npos)
        << e.message();
  }
  // Rank 1 fails before the collective: rank 0 must not wait forever, and the error reported
  // is rank 1's own.
  try {
    run_local_ranks(3, [](int rank, Communicator& comm) {
      if (rank == 1) throw std::runtime_error("rank 1 broke");
      std::vector<float> v(4);
      comm.all_reduce_sum(flat(v));
    });
    FAIL() << "a failed rank did not propagate";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "rank 1 broke");
  }
  std::vector<std::int32_t> ids(3);
  EXPECT_THROW(run_local_ranks(2,
                               [&](int, Communicator& comm) {
                                 comm.all_reduce_sum({ids.data(), DType::i32, Shape{3}});
                               }),
               Error);
}

// ---- launch variables ---------------------------------------------------------------------

EnvLookup env_of(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

using testing::error_of;

TEST(DistributedEnv, TorchrunOpenMpiPmiAndSingleProcess) {
  DistributedEnv e = read_distributed_env(env_of({}));
  EXPECT_EQ(e.world_size, 1);
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.launcher, "none");

  e = read_distributed_env(env_of({{"RANK", "3"},
                                   {"WORLD_SIZE", "8"},
                                   {"LOCAL_RANK", "3"},
                                   {"MASTER_ADDR", "node0"},
                                   {"MASTER_PORT", "29500"}}));
  EXPECT_EQ(e.launcher, "torchrun");
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.world_size, 8);
  EXPECT_EQ(e.local_rank, 3);
  EXPECT_EQ(e.master_addr, "node0");
  EXPECT_EQ(e.master_port, 29500);

  e = read_distributed_env(env_of({{"OMPI_COMM_WORLD_RANK", "5"},
                                   {"OMPI_COMM_WORLD_SIZE", "16"},
                                   {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                   {"FP8LAB_RENDEZVOUS_FILE", "/shared/id"}}));
  EXPECT_EQ(e.launcher, "openmpi");
  EXPECT_EQ(e.rank, 5);
  EXPECT_EQ(e.world_size, 16);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.rendezvous_file, "/shared/id");

  e = read_distributed_env(env_of({{"PMI_RANK", "1"},
                                   {"PMI_SIZE", "2"},
                                   {"MPI_LOCALRANKID", "1"},
                                   {"MASTER_ADDR", "127.0.0.1"},
                                   {"MASTER_PORT", "1234"}}));
  EXPECT_EQ(e.launcher, "pmi");
  EXPECT_EQ(e.local_rank, 1);
}

TEST(DistributedEnv, ErrorsNameTheVariableAndValue) {
  const std::map<std::string, std::string> ok{{"RANK", "1"},
                                              {"WORLD_SIZE", "2"},
                                              {"LOCAL_RANK", "1"},
                                              {"MASTER_ADDR", "h"},
                                              {"MASTER_PORT", "29500"}};
  auto with = [&](const std::string& k, const std::string& v) {
    auto m = ok;
    m[k] = v;
    return error_of([&] { read_distributed_env(env_of(m)); });
  };
  auto without = [&](const std::string& k) {
    auto m = ok;
    m.erase(k);
    return error_of([&] { read_distributed_env(env_of(m)); });
  };
  EXPECT_NE(with("RANK", "x1").find("RANK='x1' is not an integer"), std::string::npos);
  EXPECT_NE(with("RANK", "2").find("RANK=2 is not below WORLD_SIZE=2"), std::string::npos);
  EXPECT_NE(with("RANK", "-1").find("RANK=-1 is outside"), std::string::npos);
  EXPECT_NE(with("WORLD_SIZE", "0").find("WORLD_SIZE=0 is outside"), std::string::npos);
  EXPECT_NE(with("WORLD_SIZE", "2 ").find("WORLD_SIZE='2 '"), std::string::npos);
  EXPECT_NE(with("MASTER_PORT", "70000").find("MASTER_PORT=70000 is outside"), std::string::npos);
  EXPECT_NE(with("LOCAL_RANK", "").find("LOCAL_RANK='' is not an integer"), std::string::npos);
  EXPECT_NE(without("WORLD_SIZE").find("RANK is set but WORLD_SIZE is not"), std::string::npos);
  EXPECT_NE(without("LOCAL_RANK").find("LOCAL_RANK is not set"), std::string::npos);
  EXPECT_NE(without("MASTER_ADDR").find("MASTER_ADDR is not set"), std::string::npos);
  EXPECT_NE(without("MASTER_PORT").find("MASTER_PORT is not set"), std::string::npos);
  auto m = ok;
  m.erase("MASTER_ADDR");
  m.erase("MASTER_PORT");
  m["FP8LAB_RENDEZVOUS_FILE"] = "/tmp/x";
  EXPECT_NO_THROW(read_distributed_env(env_of(m)));
}

// ---- rendezvous -----------------------------------------------------------------------------

// A port nobody listens on now (the kernel's choice for an ephemeral bind).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

UniqueId some_id(std::uint8_t salt) {
  UniqueId id;
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<std::uint8_t>(i * 31 + salt);
  return id;
}

// Every rank runs the exchange on its own thread; returns what each received.
std::vector<UniqueId> exchange_on_threads(DistributedEnv base, int world,
                                          std::chrono::milliseconds timeout) {
  std::vector<UniqueId> got(static_cast<std::size_t>(world));
  std::vector<std::string> errors(static_cast<std::size_t>(world));
  std::vector<std::thread> threads;
  for (int r = world - 1; r >= 0; --r) {  // rank 0 last: the others must retry until it listens
    threads.emplace_back([&, r] {
      DistributedEnv e = base;
      e.rank = r;
      e.world_size = world;
      try {
        got[static_cast<std::size_t>(r)] =
            exchange_unique_id(e, r == 0 ? some_id(42) : some_id(0), timeout);
      } catch (const Error& err) {
        errors[static_cast<std::size_t>(r)] = err.message();
      }
    });
    if (r == world - 1) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r) EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << r;
  return got;
}

TEST(Rendezvous, TcpOnLocalhostGivesEveryRankRankZerosId) {
  DistributedEnv e;
  e.master_addr = "localhost";
  e.master_port = free_port();
  for (const UniqueId& id : exchange_on_threads(e, 4, std::chrono::seconds(20)))
    EXPECT_EQ(id, some_id(42));
}

TEST(Rendezvous, SharedFileGivesEveryRankRankZerosIdAndRefusesAStaleFile) {
  TempDir dir;
  DistributedEnv e;
  e.rendezvous_file = (dir.path() / "nccl_id").string();
  for (const UniqueId& id : exchange_on_threads(e, 3, std::chrono::seconds(20)))
    EXPECT_EQ(id, some_id(42));
  e.rank = 0;
  e.world_size = 3;
  EXPECT_NE(error_of([&] { exchange_unique_id(e, some_id(1)); }).find("already exists"),
            std::string::npos);
  e.rank = 1;
  e.world_size = 2;  // the file says 3
  EXPECT_NE(error_of([&] { exchange_unique_id(e, some_id(1)); }).find("world size 3"),
            std::string::npos);
}

TEST(Rendezvous, TimeoutsNameWhatWasAwaited) {
  DistributedEnv e;
  e.master_addr = "127.0.0.1";
  e.master_port = free_port();
  e.world_size = 2;
  e.rank = 1;  // nobody listens
  std::string msg = error_of([&] { exchange_unique_id(e, {}, std::chrono::milliseconds(300)); });
  EXPECT_NE(msg.find("rank 1 could not get the id from rank 0 at 127.0.0.1:"), std::string::npos)
      << msg;
  e.rank = 0;  // nobody connects
  msg = error_of([&] { exchange_unique_id(e, {}, std::chrono::milliseconds(300)); });
  EXPECT_NE(msg.find("only 1 of 2 ranks connected"), std::string::npos) << msg;
  TempDir dir;
  e.rendezvous_file = (dir.path() / "never").string();
  e.rank = 1;
  msg = error_of([&] { exchange_unique_id(e, {}, std::chrono::milliseconds(200)); });
  EXPECT_NE(msg.find("waited 200 ms for rank 0 to write"), std::string::npos) << msg;
}

// Without CUDA (or nccl.h) the NCCL communicator says so; with it, the library either loads
// (and reports a 2.x version) or the error names the library names tried.
TEST(Nccl, LoadsOrSaysClearlyWhyNot) {
  try {
    const int v = nccl_version();
    EXPECT_GE(v, 20000);
    std::printf("NCCL version %d\n", v);
  } catch (const Error& e) {
    const std::string m = e.message();
    EXPECT_TRUE(m.find("built without") != std::string::npos ||
                m.find("libnccl.so.2") != std::string::npos)
        << m;
    std::printf("NCCL unavailable: %s\n", m.c_str());
  }
}

}  // namespace
}  // namespace fp8lab
