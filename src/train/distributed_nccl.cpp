// The NCCL communicator. NCCL is not linked: libnccl.so.2 is dlopen()ed on first use and called
// through function pointers typed from nccl.h (found at configure time: FP8LAB_HAVE_NCCL_H), so
// fp8lab builds and runs single-GPU without NCCL installed.
//
// Async all-reduces (gradient buckets during the backward) run on a stream of their own, made
// on first use: an event recorded on the caller's `after_stream` orders each after the compute
// that produced its bucket, and an event recorded after it is what wait() synchronises on. The
// blocking collectives keep running on the stream given at construction and refuse to start
// while an async one is pending (NCCL needs the collectives of one communicator in one order).
#include "core/shared_library.hpp"
#include "fp8lab/distributed.hpp"
#include "fp8lab/environment.hpp"
#include "fp8lab/error.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#if defined(FP8LAB_HAVE_CUDA) && defined(FP8LAB_HAVE_NCCL_H)
#include <cuda_bf16.h>  // before nccl.h: NCCL 2.10-2.18 declare ncclBfloat16 only after it
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <cstdlib>
#include <deque>
#include <mutex>
#endif

namespace fp8lab {

#if defined(FP8LAB_HAVE_CUDA) && defined(FP8LAB_HAVE_NCCL_H)
namespace {

// Every NCCL entry point fp8lab calls, resolved once.
struct NcclApi {
  decltype(&::ncclGetVersion) get_version = nullptr;
  decltype(&::ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&::ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&::ncclCommDestroy) comm_destroy = nullptr;
  decltype(&::ncclCommAbort) comm_abort = nullptr;
  decltype(&::ncclGetErrorString) get_error_string = nullptr;
  decltype(&::ncclAllReduce) all_reduce = nullptr;
  decltype(&::ncclReduce) reduce = nullptr;
  decltype(&::ncclBroadcast) broadcast = nullptr;
  decltype(&::ncclGroupStart) group_start = nullptr;
  decltype(&::ncclGroupEnd) group_end = nullptr;
};

const NcclApi& nccl() {
  static std::once_flag once;
  static NcclApi api;
  static std::string error;
  std::call_once(once, [] {
    const OpenedLibrary lib = open_first_library(
        library_candidates(environment().nccl_library, {"libnccl.so.2", "libnccl.so"}),
        RTLD_NOW | RTLD_GLOBAL);
    void* handle = lib.handle;
    if (handle == nullptr) {
      error = fmt::format(
          "cannot load the NCCL library; tried:{}\n(install it, e.g. the nvidia-nccl-cu13 wheel, "
          "and put its lib/ directory on LD_LIBRARY_PATH, or set FP8LAB_NCCL_LIBRARY to the "
          "file)",
          lib.tried);
      return;
    }
    auto resolve = [&](auto& fn, const char* symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(handle, symbol));
      if (fn == nullptr && error.empty())
        error = fmt::format("the NCCL library has no symbol {} (too old?)", symbol);
    };
    resolve(api.get_version, "ncclGetVersion");
    resolve(api.get_unique_id, "ncclGetUniqueId");
    resolve(api.comm_init_rank, "ncclCommInitRank");
    resolve(api.comm_destroy, "ncclCommDestroy");
    resolve(api.comm_abort, "ncclCommAbort");
    resolve(api.get_error_string, "ncclGetErrorString");
    resolve(api.all_reduce, "ncclAllReduce");
    resolve(api.reduce, "ncclReduce");
    resolve(api.broadcast, "ncclBroadcast");
    resolve(api.group_start, "ncclGroupStart");
    resolve(api.group_end, "ncclGroupEnd");
  });
  FP8LAB_CHECK_KIND(ErrorKind::io, error.empty(), "{}", error);
  return api;
}

void check_nccl(ncclResult_t r, const char* what) {
  FP8LAB_CHECK_KIND(ErrorKind::cuda, r == ncclSuccess, "NCCL {} failed: {} ({})", what,
                    nccl().get_error_string(r), static_cast<int>(r));
}

void check_cuda(cudaError_t e, const char* what) {
  FP8LAB_CHECK_KIND(ErrorKind::cuda, e == cudaSuccess, "{} failed: {}", what,
                    cudaGetErrorString(e));
}

// bf16 sums (the bf16 gradients, PrecisionConfig::grads) need ncclBfloat16: NCCL 2.10 or newer,
// both the header built against and the library loaded at run time.
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 10, 0) && defined(__CUDA_BF16_TYPES_EXIST__)
#define FP8LAB_NCCL_HAS_BF16 1
constexpr int kNcclBf16Version = NCCL_VERSION(2, 10, 0);

ncclDataType_t nccl_bf16(const char* what) {
  static const int loaded = [] {
    int v = 0;
    check_nccl(nccl().get_version(&v), "ncclGetVersion");
    return v;
  }();
  FP8LAB_CHECK_KIND(ErrorKind::dtype, loaded >= kNcclBf16Version,
                    "NCCL {}: bf16 sums need NCCL 2.10 or newer, the loaded library is version "
                    "code {}",
                    what, loaded);
  return ncclBfloat16;
}
#endif

ncclDataType_t nccl_type(const TensorView& t, const char* what, bool sum) {
  switch (t.dtype) {
    case DType::f32:
      return ncclFloat32;
    case DType::f64:
      return ncclFloat64;
    case DType::bf16:
#if defined(FP8LAB_NCCL_HAS_BF16)
      if (sum) return nccl_bf16(what);
#else
      FP8LAB_CHECK_KIND(ErrorKind::dtype, !sum,
                        "NCCL {}: bf16 sums need nccl.h of NCCL 2.10 or newer with CUDA's bf16 "
                        "type; this fp8lab was built against NCCL version code {}",
                        what, NCCL_VERSION_CODE);
#endif
      break;
    default:
      break;
  }
  FP8LAB_CHECK_KIND(ErrorKind::dtype, !sum, "NCCL {}: sums f32, f64 or bf16 tensors, got {}", what,
                    t.describe());
  return ncclUint8;  // copies move bytes
}

class NcclComm final : public Communicator {
 public:
  NcclComm(const DistributedEnv& env, const UniqueId& id, cudaStream_t stream)
      : rank_(env.rank), world_(env.world_size), stream_(stream) {
    ncclUniqueId nid;
    static_assert(sizeof nid.internal == std::tuple_size_v<UniqueId>);
    std::memcpy(nid.internal, id.data(), id.size());
    check_nccl(nccl().comm_init_rank(&comm_, world_, nid, rank_), "ncclCommInitRank");
    check_cuda(cudaMalloc(&scalars_, kScalarBytes), "cudaMalloc (NCCL scalars)");
  }
  ~NcclComm() override {
    // Collectives still in flight would write freed memory: finish them (errors cannot leave
    // a destructor; a broken communicator is aborted below by its destroy).
    if (async_stream_ != nullptr) cudaStreamSynchronize(async_stream_);
    for (const Pending& p : pending_) cudaEventDestroy(p.done);
    for (cudaEvent_t e : free_events_) cudaEventDestroy(e);
    if (ready_event_ != nullptr) cudaEventDestroy(ready_event_);
    if (async_stream_ != nullptr) cudaStreamDestroy(async_stream_);
    if (scalars_ != nullptr) cudaFree(scalars_);
    if (comm_ != nullptr) nccl().comm_destroy(comm_);
  }
  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  std::string name() const override { return "nccl"; }

  void all_reduce_sum(const TensorView& t) override {
    require_idle("all_reduce_sum");
    check_device(t, Device::cuda, "NCCL all_reduce_sum");
    const ncclDataType_t type = nccl_type(t, "all_reduce_sum", true);
    check_nccl(nccl().all_reduce(t.data, t.data, static_cast<std::size_t>(t.numel()), type,
                                 ncclSum, comm_, stream_),
               "all_reduce");
    wait();
  }

  // Shards differ in size by one element, which ncclReduceScatter cannot express: one ncclReduce
  // per shard to its owner, fused into one group.
  void reduce_scatter_sum(const TensorView& t) override {
    require_idle("reduce_scatter_sum");
    check_device(t, Device::cuda, "NCCL reduce_scatter_sum");
    const ncclDataType_t type = nccl_type(t, "reduce_scatter_sum", true);
    check_nccl(nccl().group_start(), "group_start");
    for (int r = 0; r < world_; ++r) {
      const Shard s = shard_of(t.numel(), r, world_);
      void* p = static_cast<std::uint8_t*>(t.data) +
                static_cast<std::size_t>(s.begin) * dtype_size(t.dtype);
      check_nccl(nccl().reduce(p, p, static_cast<std::size_t>(s.size()), type, ncclSum, r, comm_,
                               stream_),
                 "reduce");
    }
    check_nccl(nccl().group_end(), "group_end");
    wait();
  }

  // Likewise one ncclBroadcast per shard from its owner.
  void all_gather(const TensorView& t) override {
    require_idle("all_gather");
    check_device(t, Device::cuda, "NCCL all_gather");
    const std::size_t esz = dtype_size(t.dtype);
    check_nccl(nccl().group_start(), "group_start");
    for (int r = 0; r < world_; ++r) {
      const Shard s = shard_of(t.numel(), r, world_);
      void* p = static_cast<std::uint8_t*>(t.data) + static_cast<std::size_t>(s.begin) * esz;
      check_nccl(nccl().broadcast(p, p, static_cast<std::size_t>(s.size()) * esz, ncclUint8, r,
                                  comm_, stream_),
                 "broadcast");
    }
    check_nccl(nccl().group_end(), "group_end");
    wait();
  }

  void broadcast(const TensorView& t, int root) override {
    require_idle("broadcast");
    check_device(t, Device::cuda, "NCCL broadcast");
    check_nccl(nccl().broadcast(t.data, t.data, t.nbytes(), ncclUint8, root, comm_, stream_),
               "broadcast");
    wait();
  }

  void barrier() override {
    require_idle("barrier");
    // A one-element all-reduce is NCCL's barrier.
    check_nccl(nccl().all_reduce(scalars_, scalars_, 1, ncclFloat64, ncclSum, comm_, stream_),
               "barrier");
    wait();
  }

  void all_reduce_sum_host(std::vector<double>& values) override {
    require_idle("all_reduce_sum_host");
    const std::size_t bytes = values.size() * sizeof(double);
    FP8LAB_CHECK(bytes <= kScalarBytes, "all_reduce_sum_host: {} values, at most {}",
                 values.size(), kScalarBytes / sizeof(double));
    if (values.empty()) return;
    check_cuda(cudaMemcpyAsync(scalars_, values.data(), bytes, cudaMemcpyHostToDevice, stream_),
               "cudaMemcpyAsync");
    check_nccl(nccl().all_reduce(scalars_, scalars_, values.size(), ncclFloat64, ncclSum, comm_,
                                 stream_),
               "all_reduce (host scalars)");
    check_cuda(cudaMemcpyAsync(values.data(), scalars_, bytes, cudaMemcpyDeviceToHost, stream_),
               "cudaMemcpyAsync");
    wait();
  }

  Ticket all_reduce_sum_async(const TensorView& t, void* after_stream) override {
    check_device(t, Device::cuda, "NCCL all_reduce_sum_async");
    const ncclDataType_t type = nccl_type(t, "all_reduce_sum_async", true);
    if (async_stream_ == nullptr) {
      check_cuda(cudaStreamCreateWithFlags(&async_stream_, cudaStreamNonBlocking),
                 "cudaStreamCreateWithFlags (NCCL async)");
      check_cuda(cudaEventCreateWithFlags(&ready_event_, cudaEventDisableTiming),
                 "cudaEventCreateWithFlags");
    }
    if (after_stream != nullptr) {
      // The event captures the compute enqueued so far; it may be re-recorded at once, since
      // cudaStreamWaitEvent takes the state at this call.
      check_cuda(cudaEventRecord(ready_event_, static_cast<cudaStream_t>(after_stream)),
                 "cudaEventRecord (bucket ready)");
      check_cuda(cudaStreamWaitEvent(async_stream_, ready_event_, 0), "cudaStreamWaitEvent");
    }
    check_nccl(nccl().all_reduce(t.data, t.data, static_cast<std::size_t>(t.numel()), type,
                                 ncclSum, comm_, async_stream_),
               "all_reduce (async)");
    cudaEvent_t done = nullptr;
    if (free_events_.empty()) {
      check_cuda(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate");
    } else {
      done = free_events_.back();
      free_events_.pop_back();
    }
    check_cuda(cudaEventRecord(done, async_stream_), "cudaEventRecord (bucket reduced)");
    pending_.push_back({++issued_, done});
    return issued_;
  }

  void wait(Ticket t) override {
    FP8LAB_CHECK(t <= issued_, "wait: ticket {} was never issued (last {})", t, issued_);
    // In order on one stream: t done means every earlier one is done.
    while (!pending_.empty() && pending_.front().ticket <= t) {
      const Pending p = pending_.front();
      pending_.pop_front();
      free_events_.push_back(p.done);
      if (p.ticket == t || pending_.empty() || pending_.front().ticket > t)
        check_cuda(cudaEventSynchronize(p.done), "cudaEventSynchronize (NCCL async)");
    }
  }

  void wait_all() override { wait(issued_); }
  std::int64_t pending() const override { return static_cast<std::int64_t>(pending_.size()); }

 private:
  static constexpr std::size_t kScalarBytes = 4096;
  struct Pending {
    Ticket ticket;
    cudaEvent_t done;
  };
  void require_idle(const char* what) const {
    FP8LAB_CHECK(pending_.empty(),
                 "NCCL {} on rank {}: {} async all-reduce(s) not yet waited for (wait for them "
                 "first)",
                 what, rank_, pending_.size());
  }
  void wait() { check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (NCCL)"); }

  int rank_, world_;
  cudaStream_t stream_;
  ncclComm_t comm_ = nullptr;
  void* scalars_ = nullptr;
  cudaStream_t async_stream_ = nullptr;  // the async all-reduces' own stream
  cudaEvent_t ready_event_ = nullptr;    // re-recorded on the caller's stream for each bucket
  std::deque<Pending> pending_;          // started, not yet waited for, in order
  std::vector<cudaEvent_t> free_events_;
  Ticket issued_ = 0;
};

}  // namespace

int nccl_version() {
  int v = 0;
  check_nccl(nccl().get_version(&v), "ncclGetVersion");
  return v;
}

UniqueId nccl_unique_id() {
  ncclUniqueId nid;
  check_nccl(nccl().get_unique_id(&nid), "ncclGetUniqueId");
  UniqueId id;
  std::memcpy(id.data(), nid.internal, id.size());
  return id;
}

void use_local_cuda_device(const DistributedEnv& env) {
  int count = 0;
  check_cuda(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  FP8LAB_CHECK_KIND(ErrorKind::cuda, env.local_rank < count,
                    "local rank {} has no GPU: this host shows {} (CUDA_VISIBLE_DEVICES?)",
                    env.local_rank, count);
  check_cuda(cudaSetDevice(env.local_rank), "cudaSetDevice");
}

std::unique_ptr<Communicator> make_nccl_communicator(const DistributedEnv& env, const UniqueId& id,
                                                     void* stream) {
  return std::make_unique<NcclComm>(env, id, static_cast<cudaStream_t>(stream));
}

#else  // no CUDA or no nccl.h at build time

namespace {
#if defined(FP8LAB_HAVE_CUDA)
constexpr const char* kMissing = "nccl.h";
#else
constexpr const char* kMissing = "CUDA";
#endif
[[noreturn]] void no_nccl() {
  FP8LAB_FAIL(ErrorKind::invalid_argument,
              "this fp8lab was built without {}: the NCCL communicator is unavailable "
              "(rebuild with the CUDA toolkit and nccl.h; see docs/distributed.md)",
              kMissing);
}
}  // namespace

int nccl_version() { no_nccl(); }
UniqueId nccl_unique_id() { no_nccl(); }
void use_local_cuda_device(const DistributedEnv&) { no_nccl(); }
std::unique_ptr<Communicator> make_nccl_communicator(const DistributedEnv&, const UniqueId&,
                                                     void*) {
  no_nccl();
}

#endif

std::unique_ptr<Communicator> make_nccl_communicator_from_env(const DistributedEnv& env) {
  UniqueId id{};
  if (env.rank == 0) id = nccl_unique_id();
  id = exchange_unique_id(env, id);
  auto comm = make_nccl_communicator(env, id);
  // Every rank has joined (ncclCommInitRank is collective): the id file may go.
  if (env.rank == 0 && !env.rendezvous_file.empty()) std::remove(env.rendezvous_file.c_str());
  return comm;
}

}  // namespace fp8lab
