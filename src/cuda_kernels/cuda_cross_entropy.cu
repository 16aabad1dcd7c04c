// The tied LM head's loss on the GPU: per-row cross-entropy with its gradient,
// and the loss sum.
//
// Two row kernels, one CTA per row, chosen by cross_entropy_rows:
//
// cross_entropy_smem_kernel (bf16 rows that fit in shared memory: gpt2's
// 50304-wide row is 98 KiB, so two CTAs share an SM): the row is read from
// global memory once, into shared memory, taking the row maximum on the way;
// then sum(exp(x - max)) and the gradient both read shared memory. Global
// traffic is one read and one write of the row, the least a separate softmax
// can do.
//
// cross_entropy_kernel (f32 rows, and bf16 rows too wide for shared memory):
// the row is streamed twice:
//   pass 1: an online max / sum-of-exp per thread (16-byte vector loads,
//   rescaling the running
//           sum whenever the maximum grows), merged across the block in a fixed
//           order;
//   pass 2: grad_scale * (softmax - onehot(target)) rounded to bf16 (nearest
//   even), each thread
//           re-reading and writing exactly the elements it read.
//
// Both: each thread owns the same elements in every pass, so dlogits may alias
// bf16 logits: every element is read by its owner before that owner overwrites
// it, the target logit is read by thread 0 before the barrier that precedes the
// gradient pass, and no pointer is __restrict__ (the compiler must assume they
// alias). The split of a row into thread work is fixed by vocab, the row's
// address and the block size, so the results are the same bits run after run.
// The gradient is expf(x - lse) * grad_scale (minus grad_scale at the target)
// in both. A row holding NaN gets a NaN loss; so does a row whose maximum is
// +inf in the shared-memory kernel (inf - inf), where the streaming kernel may
// report +inf instead.
//
// Rows whose target is ignore_index: loss 0 and a zero gradient row. A target
// outside [0, vocab) that is not ignore_index: min(row)+1 is recorded in
// *bad_target, the row's loss is NaN (so a caller that forgets to check cannot
// report a plausible loss) and its gradient row is zero.
//
// loss_reduce: one CTA (no workspace in the contract, and a chunk of rows is
// small): fixed per-thread strided partials in f64, a fixed-shape tree in
// shared memory, then thread 0 adds the total to sums[0] / counts[0].
// Deterministic for a given n.
#include "cuda_kernels/cross_entropy_rows.cuh"

namespace fp8lab::cuda_ops {
namespace {

using namespace ce_rows;  // NOLINT(google-build-using-namespace): this file's
                          // own helpers

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;
constexpr int kUnroll = 4;  // body vectors loaded before any is reduced (loads in flight)
constexpr int kReduceThreads = 1024;

// (comparisons with NaN are false, so it lands in the second branch).
struct OnlineLse {
  float m = -INFINITY;
  float s = 0.0f;

  __device__ __forceinline__ void add(float x) {
    if (x > m) {
      s = s * expf(m - x) + 1.0f;  // m = -inf on the first element: expf(-inf) = 0
      m = x;
    } else if (x != -INFINITY) {
      s += expf(x - m);
    }
  }

  __device__ __forceinline__ void merge(float m2, float s2) {
    const float mx = fmaxf(m, m2);
    if (mx == -INFINITY) return;  // both empty
    const float a = m == -INFINITY ? 0.0f : s * expf(m - mx);
    const float b = m2 == -INFINITY ? 0.0f : s2 * expf(m2 - mx);
    s = a + b;
    m = mx;
  }
};

template <typename T>
__global__ void __launch_bounds__(kThreads)
    cross_entropy_kernel(const T *logits, const std::int32_t *targets, int ignore_index,
                         float grad_scale, std::uint16_t *dlogits, float *loss, int vocab,
                         int *bad_target) {
  constexpr int k = Vec<T>::kElems;
  __shared__ float warp_m[kWarps];
  __shared__ float warp_s[kWarps];
  __shared__ float row_lse;

  const std::int64_t row = blockIdx.x;
  const int tid = static_cast<int>(threadIdx.x);
  const T *x = logits + row * vocab;
  std::uint16_t *drow = dlogits != nullptr ? dlogits + row * vocab : nullptr;
  const std::int32_t target = targets[row];
  if (!row_is_scored<kThreads>(target, ignore_index, vocab, row, loss, drow, bad_target)) return;

  // Thread 0 reads the target logit now: in the aliased case pass 2 overwrites
  // it, and every pass-2 write comes after the two barriers below.
  const float x_target = tid == 0 ? to_float(x[target]) : 0.0f;

  // ---- pass 1: online max and sum of exp ----
  const RowSplit sp = split_row(x, vocab);
  OnlineLse acc;
  if (tid < sp.head) acc.add(to_float(x[tid]));
  for (std::int64_t v = tid; v < sp.nvec; v += kUnroll * kThreads) {
    float vals[kUnroll][k];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t vi = v + static_cast<std::int64_t>(u) * kThreads;
      if (vi < sp.nvec) {
        Vec<T>::load(x + sp.head + vi * k, vals[u]);
      } else {
#pragma unroll
        for (int e = 0; e < k; ++e) vals[u][e] = -INFINITY;  // adds nothing
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int e = 0; e < k; ++e) acc.add(vals[u][e]);
    }
  }
  if (sp.tail_start + tid < vocab) acc.add(to_float(x[sp.tail_start + tid]));

  // Fixed-order merge: down the warp, then the warps in index order by thread
  // 0.
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float m2 = __shfl_down_sync(0xFFFFFFFFu, acc.m, offset);
    const float s2 = __shfl_down_sync(0xFFFFFFFFu, acc.s, offset);
    acc.merge(m2, s2);
  }
  if ((tid & 31) == 0) {
    warp_m[tid >> 5] = acc.m;
    warp_s[tid >> 5] = acc.s;
  }
  __syncthreads();
  if (tid == 0) {
    OnlineLse total;
    for (int w = 0; w < kWarps; ++w) total.merge(warp_m[w], warp_s[w]);
    const float lse = total.m + logf(total.s);
    row_lse = lse;
    loss[row] = lse - x_target;
  }
  __syncthreads();
  if (drow == nullptr) return;

  // ---- pass 2: grad_scale * (softmax - onehot), bf16 ----
  const float lse = row_lse;
  auto grad = [&](float xv, std::int64_t j) {
    float g = expf(xv - lse) * grad_scale;
    if (j == target) g -= grad_scale;  // as the CPU reference: p * scale - scale, in f32
    return float_to_bf16(g);
  };
  if (tid < sp.head) drow[tid] = grad(to_float(x[tid]), tid);
  // Vector stores when dlogits' row is aligned like the logits' body (always so
  // when aliased).
  constexpr unsigned kStoreBytes = k * 2u;
  const bool vec_store =
      (reinterpret_cast<std::uintptr_t>(drow + sp.head) & (kStoreBytes - 1u)) == 0;
  for (std::int64_t v = tid; v < sp.nvec; v += kThreads) {
    const std::int64_t j0 = sp.head + v * k;
    float vals[k];
    Vec<T>::load(x + j0, vals);
    std::uint32_t packed[k / 2];
#pragma unroll
    for (int e = 0; e < k / 2; ++e) {
      const std::uint32_t lo = grad(vals[2 * e], j0 + 2 * e);
      const std::uint32_t hi = grad(vals[2 * e + 1], j0 + 2 * e + 1);
      packed[e] = lo | (hi << 16);
    }
    if (vec_store) {
      if constexpr (k == 8) {
        *reinterpret_cast<uint4 *>(drow + j0) =
            make_uint4(packed[0], packed[1], packed[2], packed[3]);
      } else {
        *reinterpret_cast<uint2 *>(drow + j0) = make_uint2(packed[0], packed[1]);
      }
    } else {
#pragma unroll
      for (int e = 0; e < k / 2; ++e) {
        drow[j0 + 2 * e] = static_cast<std::uint16_t>(packed[e] & 0xFFFFu);
        drow[j0 + 2 * e + 1] = static_cast<std::uint16_t>(packed[e] >> 16);
      }
    }
  }
  if (sp.tail_start + tid < vocab) {
    const std::int64_t j = sp.tail_start + tid;
    drow[j] = grad(to_float(x[j]), j);
  }
}

__global__ void __launch_bounds__(kReduceThreads)
    loss_reduce_kernel(const float *loss, const std::int32_t *targets, int ignore_index,
                       std::int64_t n, double *sums, long long *counts) {
  __shared__ double part_sum[kReduceThreads];
  __shared__ long long part_count[kReduceThreads];
  const int tid = static_cast<int>(threadIdx.x);
  double s = 0.0;
  long long c = 0;
  for (std::int64_t i = tid; i < n; i += kReduceThreads) {
    if (targets[i] == ignore_index) continue;
    s += static_cast<double>(loss[i]);
    ++c;
  }
  part_sum[tid] = s;
  part_count[tid] = c;
  __syncthreads();
  for (int half = kReduceThreads / 2; half > 0; half >>= 1) {
    if (tid < half) {
      part_sum[tid] += part_sum[tid + half];
      part_count[tid] += part_count[tid + half];
    }
    __syncthreads();
  }
  if (tid == 0) {
    sums[0] += part_sum[0];
    counts[0] += part_count[0];
  }
}

}  // namespace

void cross_entropy_rows(const void *logits, ElemType logits_type, const std::int32_t *targets,
                        int ignore_index, float grad_scale, std::uint16_t *dlogits, float *loss,
                        std::int64_t rows, int vocab, int *bad_target, cudaStream_t stream) {
  if (rows <= 0 || vocab <= 0) return;
  const dim3 grid(static_cast<unsigned>(rows));
  if (logits_type == ElemType::bf16 &&
      launch_cross_entropy_smem(static_cast<const std::uint16_t *>(logits), targets, ignore_index,
                                grad_scale, dlogits, loss, rows, vocab, bad_target, stream))
    return;
  if (logits_type == ElemType::f32) {
    cross_entropy_kernel<float><<<grid, kThreads, 0, stream>>>(static_cast<const float *>(logits),
                                                               targets, ignore_index, grad_scale,
                                                               dlogits, loss, vocab, bad_target);
  } else {
    cross_entropy_kernel<std::uint16_t>
        <<<grid, kThreads, 0, stream>>>(static_cast<const std::uint16_t *>(logits), targets,
                                        ignore_index, grad_scale, dlogits, loss, vocab, bad_target);
  }
}

void loss_reduce(const float *loss, const std::int32_t *targets, int ignore_index, std::int64_t n,
                 double *sums, long long *counts, cudaStream_t stream) {
  if (n <= 0) return;
  loss_reduce_kernel<<<1, kReduceThreads, 0, stream>>>(loss, targets, ignore_index, n, sums,
                                                       counts);
}

}  // namespace fp8lab::cuda_ops
