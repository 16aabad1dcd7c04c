// The single-pass cross-entropy row kernel for bf16 logits (contract:
// cuda_cross_entropy.cu). The row is read from global memory once, into shared
// memory, taking its maximum on the way; sum(exp(x - max)) and the gradient
// then read shared memory, so the global traffic is one read and one write of
// the row. gpt2's padded 50304-wide row takes 98 KiB: two blocks per SM, so one
// block's loads overlap the other's exps.
#include "cuda_kernels/cross_entropy_rows.cuh"

namespace fp8lab::cuda_ops::ce_rows {
namespace {

constexpr int kSmemThreads = 512;
constexpr int kSmemWarps = kSmemThreads / 32;
constexpr int kSmemUnroll = 4;  // 16-byte loads in flight per thread before any is stored

// Reduces v over the block with op (max or +) in a fixed shape: a butterfly
// within each warp, then the warp results in index order. Every thread returns
// the total. `scratch` holds kSmemWarps+1.
template <typename Op>
__device__ __forceinline__ float block_reduce(float v, float *scratch, Op op) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v = op(v, __shfl_xor_sync(0xFFFFFFFFu, v, offset));
  const int tid = static_cast<int>(threadIdx.x);
  if ((tid & 31) == 0) scratch[tid >> 5] = v;
  __syncthreads();
  if (tid == 0) {
    float total = scratch[0];
    for (int w = 1; w < kSmemWarps; ++w) total = op(total, scratch[w]);
    scratch[kSmemWarps] = total;
  }
  __syncthreads();
  return scratch[kSmemWarps];
}

constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// Two floats to bf16 (round to nearest even) in one instruction; lo lands in the low half.
__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  std::uint32_t d;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}

// Bytes of dynamic shared memory for one row: the row plus up to 7 elements of
// padding that aligns its vector body to 16 bytes, rounded up to whole vectors.
std::size_t smem_row_bytes(int vocab) { return (static_cast<std::size_t>(vocab) + 8 + 7) / 8 * 16; }

__global__ void __launch_bounds__(kSmemThreads, 2)
    cross_entropy_smem_kernel(const std::uint16_t *logits, const std::int32_t *targets,
                              int ignore_index, float grad_scale, std::uint16_t *dlogits,
                              float *loss, int vocab, int *bad_target) {
  constexpr int k = 8;  // bf16 elements per 16-byte vector
  extern __shared__ uint4 smem_vectors[];
  __shared__ float scratch[kSmemWarps + 1];

  const std::int64_t row = blockIdx.x;
  const int tid = static_cast<int>(threadIdx.x);
  const std::uint16_t *x = logits + row * vocab;
  std::uint16_t *drow = dlogits != nullptr ? dlogits + row * vocab : nullptr;
  const std::int32_t target = targets[row];
  if (!row_is_scored<kSmemThreads>(target, ignore_index, vocab, row, loss, drow, bad_target))
    return;
  const float x_target = tid == 0 ? bf16_to_float(x[target]) : 0.0f;

  // Element j of the row lives at s[j]; the padding makes s + head 16-byte
  // aligned like x + head.
  const RowSplit sp = split_row(x, vocab);
  std::uint16_t *s = reinterpret_cast<std::uint16_t *>(smem_vectors) + ((k - sp.head) & (k - 1));
  uint4 *s_body = reinterpret_cast<uint4 *>(s + sp.head);
  const uint4 *x_body = reinterpret_cast<const uint4 *>(x + sp.head);
  const bool head_elem = tid < sp.head;
  const bool tail_elem = sp.tail_start + tid < vocab;
  const std::int64_t tail_j = sp.tail_start + tid;

  // ---- the one global read: row -> shared memory, and the row maximum ----
  float m = -INFINITY;
  if (head_elem) {
    s[tid] = x[tid];
    m = bf16_to_float(s[tid]);
  }
  for (std::int64_t v = tid; v < sp.nvec; v += kSmemUnroll * kSmemThreads) {
    uint4 a[kSmemUnroll];
#pragma unroll
    for (int u = 0; u < kSmemUnroll; ++u) {
      const std::int64_t vi = v + static_cast<std::int64_t>(u) * kSmemThreads;
      if (vi < sp.nvec) a[u] = x_body[vi];
    }
#pragma unroll
    for (int u = 0; u < kSmemUnroll; ++u) {
      const std::int64_t vi = v + static_cast<std::int64_t>(u) * kSmemThreads;
      if (vi >= sp.nvec) break;
      s_body[vi] = a[u];
      float f[k];
      unpack_bf16x8(a[u], f);
#pragma unroll
      for (int e = 0; e < k; ++e) m = fmaxf(m, f[e]);
    }
  }
  if (tail_elem) {
    s[tail_j] = x[tail_j];
    m = fmaxf(m, bf16_to_float(s[tail_j]));
  }
  const float row_max = block_reduce(m, scratch, [](float a, float b) { return fmaxf(a, b); });

  // ---- sum of exp(x - max) from shared memory (a NaN anywhere makes it NaN)
  // ----
  // exp(x - c) as 2^(x log2e - c log2e): one FMA and one MUFU.EX2 (ftz: a p below 2^-126
  // becomes 0); two of these per logit are the kernel's arithmetic, so the accurate expf's
  // extra range reduction would make it compute-bound.
  const float max_l2 = row_max * kLog2e;
  float sum = 0.0f;
  if (head_elem) sum += exp2_approx(fmaf(bf16_to_float(s[tid]), kLog2e, -max_l2));
  for (std::int64_t vi = tid; vi < sp.nvec; vi += kSmemThreads) {
    float f[k];
    unpack_bf16x8(s_body[vi], f);
#pragma unroll
    for (int e = 0; e < k; ++e) sum += exp2_approx(fmaf(f[e], kLog2e, -max_l2));
  }
  if (tail_elem) sum += exp2_approx(fmaf(bf16_to_float(s[tail_j]), kLog2e, -max_l2));
  const float row_sum = block_reduce(sum, scratch, [](float a, float b) { return a + b; });
  const float lse = row_max + logf(row_sum);
  if (tid == 0) loss[row] = lse - x_target;
  if (drow == nullptr) return;

  // ---- grad_scale * (softmax - onehot), bf16, from shared memory ----
  // As the CPU reference: p * scale, minus scale at the target, in f32; then round to bf16
  // (cvt.rn.bf16x2: nearest even, NaN -> 0x7FFF, the same bits as float_to_bf16).
  const float lse_l2 = lse * kLog2e;
  auto grad = [&](float xv) { return exp2_approx(fmaf(xv, kLog2e, -lse_l2)) * grad_scale; };
  auto grad_at = [&](float xv, std::int64_t j) {
    const float g = grad(xv);
    return j == target ? g - grad_scale : g;
  };
  if (head_elem) drow[tid] = float_to_bf16(grad_at(bf16_to_float(s[tid]), tid));
  const bool vec_store = (reinterpret_cast<std::uintptr_t>(drow + sp.head) & 15u) == 0;
  const std::int64_t target_vec = target >= sp.head ? (target - sp.head) / k : -1;
  for (std::int64_t vi = tid; vi < sp.nvec; vi += kSmemThreads) {
    const std::int64_t j0 = sp.head + vi * k;
    float f[k];
    unpack_bf16x8(s_body[vi], f);
#pragma unroll
    for (int e = 0; e < k; ++e) f[e] = grad(f[e]);
    if (vi == target_vec) f[target - j0] -= grad_scale;  // one compare per vector
    std::uint32_t packed[k / 2];
#pragma unroll
    for (int e = 0; e < k / 2; ++e) packed[e] = pack_bf16x2(f[2 * e], f[2 * e + 1]);
    if (vec_store) {
      *reinterpret_cast<uint4 *>(drow + j0) =
          make_uint4(packed[0], packed[1], packed[2], packed[3]);
    } else {
#pragma unroll
      for (int e = 0; e < k / 2; ++e) {
        drow[j0 + 2 * e] = static_cast<std::uint16_t>(packed[e] & 0xFFFFu);
        drow[j0 + 2 * e + 1] = static_cast<std::uint16_t>(packed[e] >> 16);
      }
    }
  }
  if (tail_elem) drow[tail_j] = float_to_bf16(grad_at(bf16_to_float(s[tail_j]), tail_j));
}

// Whether a bf16 row fits this kernel on the current device. The first time a
// size is needed on a device the kernel's dynamic shared memory limit is raised
// to it. A failing query only means "use the streaming kernel": its error is
// cleared so no later launch check reports it.
bool smem_row_fits(int vocab) {
  constexpr int kMaxDevices = 64;
  static thread_local std::size_t raised_to[kMaxDevices] = {};
  int device = 0, optin = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
          cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  const std::size_t bytes = smem_row_bytes(vocab);
  const std::size_t static_bytes = (kSmemWarps + 1) * sizeof(float);
  if (bytes + static_bytes > static_cast<std::size_t>(optin)) return false;
  if (bytes > raised_to[device]) {
    if (cudaFuncSetAttribute(cross_entropy_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(bytes)) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    raised_to[device] = bytes;
  }
  return true;
}

}  // namespace

bool launch_cross_entropy_smem(const std::uint16_t *logits, const std::int32_t *targets,
                               int ignore_index, float grad_scale, std::uint16_t *dlogits,
                               float *loss, std::int64_t rows, int vocab, int *bad_target,
                               cudaStream_t stream) {
  if (!smem_row_fits(vocab)) return false;
  cross_entropy_smem_kernel<<<dim3(static_cast<unsigned>(rows)), kSmemThreads,
                              smem_row_bytes(vocab), stream>>>(
      logits, targets, ignore_index, grad_scale, dlogits, loss, vocab, bad_target);
  return true;
}

}  // namespace fp8lab::cuda_ops::ce_rows
