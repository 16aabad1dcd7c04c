// Data-parallel communication: one process (or, in tests, one thread) per rank.
//
// A Communicator runs collectives over the ranks of one group. Every rank must call the same
// collectives in the same order with tensors of the same numel and dtype (the usual NCCL/MPI
// contract); a rank that skips one leaves the others waiting. All calls but
// all_reduce_sum_async are blocking: when one returns, its output is in place and its inputs may
// be reused. The async all-reduce (gradient buckets during the backward) completes at wait().
//
// Two implementations:
// - make_local_communicators(n): n communicators over threads and shared memory, for host (CPU
//   backend) tensors. The CPU test double: sums run in a fixed order (rank 0 + rank 1 + ...), so
//   results are identical run to run and on every rank.
// - make_nccl_communicator(env, id): NCCL over device (CUDA backend) tensors. NCCL is not linked;
//   libnccl.so.2 is loaded at run time (FP8LAB_NCCL_LIBRARY overrides the name).
//
// Launching (docs/distributed.md): read_distributed_env() reads torchrun-style or mpirun
// variables; rank 0 makes the NCCL unique id and exchange_unique_id() hands it to the others
// through a TCP rendezvous on MASTER_ADDR:MASTER_PORT or a shared file (FP8LAB_RENDEZVOUS_FILE).
#pragma once

#include "fp8lab/environment.hpp"  // EnvLookup
#include "fp8lab/tensor.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fp8lab {

// The slice [begin, end) of a flat buffer of `total` elements that rank `rank` of `world` owns
// under ZeRO-1: an even split, the first total % world ranks one element larger. Shards of
// consecutive ranks are adjacent and cover the buffer.
struct Shard {
  std::int64_t begin = 0, end = 0;
  std::int64_t size() const { return end - begin; }
  bool operator==(const Shard&) const = default;
};
Shard shard_of(std::int64_t total, int rank, int world);

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual std::string name() const = 0;  // "local" or "nccl"

  // t (f32, f64, or bf16 gradients) becomes the elementwise sum over ranks, the same bytes on
  // every rank (bf16: the local communicator sums in fp32 and rounds once, NCCL rounds as its
  // ring or tree adds).
  virtual void all_reduce_sum(const TensorView& t) = 0;
  // In place over a flat buffer t (f32, f64 or bf16): afterwards this rank's shard_of(t.numel(),
  // rank, world) holds the sum over ranks of that slice; the rest of t is unspecified.
  virtual void reduce_scatter_sum(const TensorView& t) = 0;
  // In place over a flat buffer t (any dtype): afterwards every rank's t equals, on each rank's
  // shard_of() slice, what that rank held there.
  virtual void all_gather(const TensorView& t) = 0;
  // t on every rank becomes root's t (any dtype).
  virtual void broadcast(const TensorView& t, int root) = 0;
  virtual void barrier() = 0;

  // Host scalars (loss sums, flags): a convenience over all_reduce_sum for backends whose
  // tensors live on the device. Same sum order as all_reduce_sum.
  virtual void all_reduce_sum_host(std::vector<double>& values) = 0;

  // ---- asynchronous all-reduce (gradient buckets overlapped with the backward) --------------
  // Starts all_reduce_sum(t) and returns at once with a ticket; the result is the same bytes as
  // the blocking call on the same tensor. `after_stream` (a cudaStream_t, NCCL only) is the
  // stream whose work enqueued so far produces t: the collective starts after it, through an
  // event, on the communicator's own stream. nullptr: t is complete when this is called.
  // Rules (the NCCL contract, checked where cheap):
  // - every rank starts the same async all-reduces (same numel, same dtype) in the same order,
  //   and they run in that order, one after the other;
  // - neither t's memory nor any other collective may be touched until the ticket has been
  //   waited for: a blocking collective while an async one is pending is an error.
  // The local communicators run them on one background thread per rank, so the host computes
  // while they sum; NCCL runs them on a dedicated stream.
  using Ticket = std::uint64_t;
  virtual Ticket all_reduce_sum_async(const TensorView& t, void* after_stream = nullptr) = 0;
  // Returns when ticket t and every earlier one are complete (on the host: their results may be
  // read and the next collective called). Rethrows the failure of any of them.
  virtual void wait(Ticket t) = 0;
  virtual void wait_all() = 0;  // every started async all-reduce (no-op when none)
  virtual std::int64_t pending() const = 0;  // async all-reduces started but not waited for
};

// n communicators of one in-process group (rank i = element i), each to be used by one thread.
// If a rank fails, call abort() on its communicator: every rank waiting in (or later entering) a
// collective then throws fp8lab::Error instead of waiting forever.
class LocalCommunicator : public Communicator {
 public:
  virtual void abort() = 0;
};
std::vector<std::unique_ptr<LocalCommunicator>> make_local_communicators(int n);

// Runs fn(rank, comm) on n threads with local communicators and rethrows the first failure
// (aborting the group so the other ranks stop). The harness for data-parallel tests.
void run_local_ranks(int n, const std::function<void(int rank, Communicator& comm)>& fn);

// ---- launch -------------------------------------------------------------------------------

struct DistributedEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;        // the GPU this process uses on its host
  std::string master_addr;   // TCP rendezvous (empty when FP8LAB_RENDEZVOUS_FILE is used)
  int master_port = 0;
  std::string rendezvous_file;  // FP8LAB_RENDEZVOUS_FILE, empty for TCP
  std::string launcher;         // "torchrun", "openmpi", "pmi" or "none"
};

// Reads RANK, WORLD_SIZE, LOCAL_RANK (torchrun-style), else OMPI_COMM_WORLD_RANK,
// OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK (Open MPI), else PMI_RANK, PMI_SIZE with
// MPI_LOCALRANKID or PMI_LOCAL_RANK (MPICH/Hydra); with none of them, a single process. When
// world_size > 1, either FP8LAB_RENDEZVOUS_FILE or MASTER_ADDR and MASTER_PORT must be set.
// Throws fp8lab::Error naming the offending variable and its value. `lookup` reads the
// variables (the CLI passes std::getenv; the library reads no environment itself).
DistributedEnv read_distributed_env(const EnvLookup& lookup);

// The NCCL unique id is 128 opaque bytes.
using UniqueId = std::array<std::uint8_t, 128>;

// Rank 0 passes the id it made; the others pass anything and get rank 0's id back. TCP: rank 0
// listens on MASTER_PORT (all interfaces) and sends the id to each of the world_size - 1 ranks
// that connect to MASTER_ADDR:MASTER_PORT (they retry until rank 0 listens). File: rank 0
// writes the id atomically to FP8LAB_RENDEZVOUS_FILE (refusing a file that already exists: it
// may be a stale id), the others poll for it. Throws fp8lab::Error (ErrorKind::io) on timeout,
// naming the address or file, the rank and what it was waiting for.
UniqueId exchange_unique_id(const DistributedEnv& env, const UniqueId& id_on_rank0,
                            std::chrono::milliseconds timeout = std::chrono::minutes(5));

// ---- NCCL ---------------------------------------------------------------------------------

// The NCCL library loaded at run time; throws fp8lab::Error naming every name tried (and
// dlerror()) when it cannot be loaded, or saying fp8lab was built without CUDA or nccl.h.
// Returns the version NCCL reports, e.g. 22807.
int nccl_version();
UniqueId nccl_unique_id();  // call on rank 0 only

// cudaSetDevice(env.local_rank); call before the CUDA backend is made.
void use_local_cuda_device(const DistributedEnv& env);

// A communicator over device tensors. `stream` is the cudaStream_t collectives run on (nullptr:
// the legacy default stream); each call waits for its stream, so the caller must make sure its
// own work on the tensors is complete first (Backend::synchronize()).
std::unique_ptr<Communicator> make_nccl_communicator(const DistributedEnv& env, const UniqueId& id,
                                                     void* stream = nullptr);

// The whole launch: env, (rank 0) id, rendezvous, communicator. For world_size 1 it still makes
// a one-rank NCCL communicator.
std::unique_ptr<Communicator> make_nccl_communicator_from_env(const DistributedEnv& env);

}  // namespace fp8lab
