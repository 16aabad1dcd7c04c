// In-process communicators over threads and shared memory (the CPU test double), and shard_of.
//
// Every collective is two barriers: at the first each rank publishes its tensor's pointer; between
// them each rank works on a disjoint part of the group's buffers; the second says all work is
// done. An all-reduce is a reduce-scatter (rank k sums slice k over ranks 0, 1, ... in that
// order) whose result rank k also writes into the other ranks' slice k, so every element is
// summed by exactly one thread in a fixed order and the result is the same bytes everywhere.
//
// Async all-reduces run the same collective on a background thread per rank (started on first
// use), in issue order: the bytes are those of the blocking call, and the rank's own thread
// computes meanwhile (the gradient buckets of the backward). Because the rank's thread may not
// call a collective while one is pending (checked), only one thread per rank is ever inside the
// group's barriers.
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>

#include "fp8lab/distributed.hpp"
#include "fp8lab/error.hpp"
#include "fp8lab/fp8_format.hpp"

namespace fp8lab {

Shard shard_of(std::int64_t total, int rank, int world) {
  FP8LAB_CHECK(world >= 1 && rank >= 0 && rank < world && total >= 0,
               "shard_of: rank {} of world {} over {} elements", rank, world, total);
  const std::int64_t base = total / world, extra = total % world;
  const std::int64_t begin = rank * base + std::min<std::int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

namespace {

constexpr const char* kPeerFailed = "another rank of the local group failed (see its error)";

struct Group {
  explicit Group(int n)
      : size(n), pointers(static_cast<std::size_t>(n)), views(static_cast<std::size_t>(n)) {}
  const int size;
  std::mutex mutex;
  std::condition_variable cv;
  int arrived = 0;
  std::uint64_t generation = 0;
  bool aborted = false;
  std::vector<void*> pointers;  // each rank's tensor in the current collective
  std::vector<TensorView> views;

  // Blocks until every rank has arrived (or the group is aborted: then throws).
  void wait_all(int rank) {
    std::unique_lock lock(mutex);
    FP8LAB_CHECK_KIND(ErrorKind::internal, !aborted,
                      "rank {}: {}", rank, kPeerFailed);
    const std::uint64_t gen = generation;
    if (++arrived == size) {
      arrived = 0;
      ++generation;
      cv.notify_all();
      return;
    }
    cv.wait(lock, [&] { return generation != gen || aborted; });
    FP8LAB_CHECK_KIND(ErrorKind::internal, generation != gen, "rank {}: {}", rank, kPeerFailed);
  }
};

// Sums element i over the ranks' buffers in rank order, as Acc: f32 and f64 in their own type,
// bf16 (the gradients of PrecisionConfig::grads) widened to fp32 and rounded once.
template <typename T, typename Acc>
void sum_slice(const std::vector<void*>& bufs, std::int64_t begin, std::int64_t end, bool to_all,
               int self) {
  auto load = [&](std::size_t r, std::int64_t i) -> Acc {
    const T v = static_cast<const T*>(bufs[r])[i];
    if constexpr (std::is_same_v<T, std::uint16_t>) {
      return bf16_to_float(v);
    } else {
      return v;
    }
  };
  auto store = [&](void* b, std::int64_t i, Acc v) {
    if constexpr (std::is_same_v<T, std::uint16_t>) {
      static_cast<T*>(b)[i] = float_to_bf16(v);
    } else {
      static_cast<T*>(b)[i] = v;
    }
  };
  for (std::int64_t i = begin; i < end; ++i) {
    Acc s = load(0, i);
    for (std::size_t r = 1; r < bufs.size(); ++r) s += load(r, i);
    if (to_all) {
      for (void* b : bufs) store(b, i, s);
    } else {
      store(bufs[static_cast<std::size_t>(self)], i, s);
    }
  }
}

// The dtypes a sum takes: f32, f64, and bf16 gradients.
void check_summable(const TensorView& t, const char* what) {
  FP8LAB_CHECK_KIND(ErrorKind::dtype,
                    t.dtype == DType::f32 || t.dtype == DType::f64 || t.dtype == DType::bf16,
                    "{}: sums f32, f64 or bf16 tensors, got {}", what, t.describe());
}

class LocalComm final : public LocalCommunicator {
 public:
  LocalComm(std::shared_ptr<Group> group, int rank) : group_(std::move(group)), rank_(rank) {}
  ~LocalComm() override {
    bool busy = false;
    {
      std::lock_guard lock(async_mutex_);
      busy = completed_ != issued_;
      stopping_ = true;
    }
    // Leaving with collectives in flight is a failure path: release the peers (and our worker,
    // which may wait for them) instead of hanging.
    if (busy) abort();
    async_cv_.notify_all();
    if (worker_.joinable()) worker_.join();
  }
  int rank() const override { return rank_; }
  int world_size() const override { return group_->size; }
  std::string name() const override { return "local"; }

  void all_reduce_sum(const TensorView& t) override {
    require_idle("all_reduce_sum");
    reduce(t, "all_reduce_sum", true);
  }
  void reduce_scatter_sum(const TensorView& t) override {
    require_idle("reduce_scatter_sum");
    reduce(t, "reduce_scatter_sum", false);
  }

  Ticket all_reduce_sum_async(const TensorView& t, void* /*after_stream: host tensors*/) override {
    // The checks the worker would make, here, so that a bad call fails in the caller's thread.
    check_device(t, Device::cpu, "all_reduce_sum_async");
    check_summable(t, "all_reduce_sum_async");
    std::lock_guard lock(async_mutex_);
    if (!worker_.joinable()) worker_ = std::thread([this] { worker_loop(); });
    const Ticket ticket = ++issued_;
    queue_.push_back({ticket, t});
    async_cv_.notify_all();
    return ticket;
  }

  void wait(Ticket t) override {
    std::unique_lock lock(async_mutex_);
    FP8LAB_CHECK(t <= issued_, "wait: ticket {} was never issued (last {})", t, issued_);
    async_cv_.wait(lock, [&] { return completed_ >= t; });
    waited_ = std::max(waited_, t);
    if (async_error_) std::rethrow_exception(async_error_);
  }

  void wait_all() override {
    Ticket last = 0;
    {
      std::lock_guard lock(async_mutex_);
      last = issued_;
    }
    wait(last);
  }

  std::int64_t pending() const override {
    std::lock_guard lock(async_mutex_);
    return static_cast<std::int64_t>(issued_ - waited_);
  }

  void all_gather(const TensorView& t) override {
    require_idle("all_gather");
    collective(t, "all_gather", [&](const std::vector<void*>& bufs) {
      const Shard s = shard_of(t.numel(), rank_, group_->size);
      const std::size_t esz = dtype_size(t.dtype);
      const auto* mine = static_cast<const std::uint8_t*>(bufs[static_cast<std::size_t>(rank_)]);
      for (std::size_t r = 0; r < bufs.size(); ++r) {
        if (static_cast<int>(r) == rank_ || s.size() == 0) continue;
        std::memcpy(static_cast<std::uint8_t*>(bufs[r]) + s.begin * esz, mine + s.begin * esz,
                    static_cast<std::size_t>(s.size()) * esz);
      }
    });
  }

  void broadcast(const TensorView& t, int root) override {
    require_idle("broadcast");
    FP8LAB_CHECK(root >= 0 && root < group_->size, "broadcast: root {} outside world {}", root,
                 group_->size);
    collective(t, "broadcast", [&](const std::vector<void*>& bufs) {
      if (rank_ != root && t.nbytes() > 0)
        std::memcpy(bufs[static_cast<std::size_t>(rank_)], bufs[static_cast<std::size_t>(root)],
                    t.nbytes());
    });
  }

  void barrier() override {
    require_idle("barrier");
    group_->wait_all(rank_);
  }

  void all_reduce_sum_host(std::vector<double>& values) override {
    all_reduce_sum(TensorView{values.data(), DType::f64,
                              Shape{static_cast<std::int64_t>(values.size())}, Device::cpu});
  }

  void abort() override {
    std::lock_guard lock(group_->mutex);
    group_->aborted = true;
    group_->cv.notify_all();
  }

 private:
  struct AsyncJob {
    Ticket ticket;
    TensorView t;
  };

  void require_idle(const char* what) const {
    const std::int64_t n = pending();
    FP8LAB_CHECK(n == 0,
                 "{} on rank {}: {} async all-reduce(s) not yet waited for (wait for them first: "
                 "collectives run one at a time, in the same order on every rank)",
                 what, rank_, n);
  }

  void worker_loop() {
    for (;;) {
      AsyncJob job;
      {
        std::unique_lock lock(async_mutex_);
        async_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        job = queue_.front();
        queue_.pop_front();
      }
      // After a failure the group is aborted, so the later jobs fail at once too (no hang).
      std::exception_ptr error;
      try {
        reduce(job.t, "all_reduce_sum_async", true);
      } catch (...) {
        error = std::current_exception();
      }
      {
        std::lock_guard lock(async_mutex_);
        if (error && !async_error_) async_error_ = error;
        completed_ = job.ticket;
      }
      async_cv_.notify_all();
    }
  }

  void reduce(const TensorView& t, const char* what, bool to_all) {
    check_summable(t, what);
    collective(t, what, [&](const std::vector<void*>& bufs) {
      const Shard s = shard_of(t.numel(), rank_, group_->size);
      if (t.dtype == DType::f32) {
        sum_slice<float, float>(bufs, s.begin, s.end, to_all, rank_);
      } else if (t.dtype == DType::bf16) {
        sum_slice<std::uint16_t, float>(bufs, s.begin, s.end, to_all, rank_);
      } else {
        sum_slice<double, double>(bufs, s.begin, s.end, to_all, rank_);
      }
    });
  }

  // Publishes t, checks that every rank passed the same kind of tensor, runs work on the group's
  // buffers, and waits until every rank's work is done.
  template <typename Work>
  void collective(const TensorView& t, const char* what, Work work) {
    check_device(t, Device::cpu, what);
    Group& g = *group_;
    {
      std::lock_guard lock(g.mutex);
      g.pointers[static_cast<std::size_t>(rank_)] = t.data;
      g.views[static_cast<std::size_t>(rank_)] = t;
    }
    g.wait_all(rank_);
    for (int r = 0; r < g.size; ++r) {
      const TensorView& o = g.views[static_cast<std::size_t>(r)];
      FP8LAB_CHECK(o.dtype == t.dtype && o.numel() == t.numel(),
                   "{}: rank {} passed {} but rank {} passed {} (every rank must pass the same "
                   "dtype and numel)",
                   what, rank_, t.describe(), r, o.describe());
    }
    work(g.pointers);
    g.wait_all(rank_);
  }

  std::shared_ptr<Group> group_;
  int rank_;
  // The async all-reduces (guarded by async_mutex_): tickets 1, 2, ... in issue order.
  mutable std::mutex async_mutex_;
  std::condition_variable async_cv_;
  std::deque<AsyncJob> queue_;
  Ticket issued_ = 0, completed_ = 0, waited_ = 0;
  std::exception_ptr async_error_;
  bool stopping_ = false;
  std::thread worker_;  // last member: started after, joined before the state above goes
};

}  // namespace

std::vector<std::unique_ptr<LocalCommunicator>> make_local_communicators(int n) {
  FP8LAB_CHECK(n >= 1, "make_local_communicators: need at least one rank, got {}", n);
  auto group = std::make_shared<Group>(n);
  std::vector<std::unique_ptr<LocalCommunicator>> out;
  for (int r = 0; r < n; ++r) out.push_back(std::make_unique<LocalComm>(group, r));
  return out;
}

void run_local_ranks(int n, const std::function<void(int, Communicator&)>& fn) {
  auto comms = make_local_communicators(n);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        fn(r, *comms[static_cast<std::size_t>(r)]);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
        comms[static_cast<std::size_t>(r)]->abort();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  // The first failure that is not merely "another rank failed".
  std::exception_ptr first, fallback;
  for (const std::exception_ptr& e : errors) {
    if (!e) continue;
    if (!fallback) fallback = e;
    try {
      std::rethrow_exception(e);
    } catch (const Error& err) {
      if (err.message().find(kPeerFailed) == std::string::npos && !first) first = e;
    } catch (...) {
      if (!first) first = e;
    }
  }
  if (first) std::rethrow_exception(first);
  if (fallback) std::rethrow_exception(fallback);
}

}  // namespace fp8lab
