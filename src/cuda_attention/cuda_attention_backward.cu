// The backward of the causal flash attention (see cuda_attention_forward.cu for the design):
// D_i = rowsum(dO_i * O_i) into the workspace, then the warp-specialised or plain wgmma kernels
// (cuda_attention_backward_ws.cu, cuda_attention_backward_wgmma.cu, hd 64 and 128) or the
// two-pass kernels here, the reference and the fallback for other head dims: a dK/dV
// kernel (one CTA per K/V tile, over the Q tiles from the diagonal on) and a dQ kernel (one CTA
// per Q tile, over the K tiles up to the diagonal), both recomputing P from q, k and lse: each
// output row is owned by one warp, so the result is deterministic without float atomics.
// With an amax (AmaxOut) both two-pass kernels commit their CTAs' keys into the one meta, whose
// ticket count spans the two grids: the last CTA of the dQ kernel finalises it.
#include "cuda_attention/attention_backward_step.cuh"
#include "cuda_attention/attention_kernels.hpp"

namespace fp8lab::cuda_ops {
namespace {

// ---- backward ----------------------------------------------------------------------------
// With P = exp(S * scale - lse) and Di = rowsum(dO_i * O_i):
//   dV = P^T dO,  dP = dO V^T,  dS = P * (dP - Di),  dK = scale * dS^T Q,  dQ = scale * dS K.

// Di = sum_c dO[i, c] * O[i, c] in fp32; rows are (token, head) pairs, HD / 8 lanes per row.
template <int HD>
__global__ void attention_backward_rowdot_kernel(const bf16_bits* __restrict__ out,
                                                 const bf16_bits* __restrict__ dout,
                                                 float* __restrict__ row_dot, std::int64_t rows,
                                                 int seq_len, int n_heads) {
  constexpr int kLanes = HD / 8;
  const std::int64_t tid = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t r = tid / kLanes;
  const int part = static_cast<int>(tid % kLanes);
  float acc = 0.f;
  if (r < rows) {
    const uint4 ov = *reinterpret_cast<const uint4*>(out + r * HD + part * 8);
    const uint4 dv = *reinterpret_cast<const uint4*>(dout + r * HD + part * 8);
    const std::uint32_t o32[4] = {ov.x, ov.y, ov.z, ov.w};
    const std::uint32_t d32[4] = {dv.x, dv.y, dv.z, dv.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      acc = fmaf(__uint_as_float(o32[i] << 16), __uint_as_float(d32[i] << 16), acc);
      acc = fmaf(__uint_as_float(o32[i] & 0xFFFF0000u), __uint_as_float(d32[i] & 0xFFFF0000u), acc);
    }
  }
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset >>= 1)
    acc += __shfl_xor_sync(0xFFFFFFFFu, acc, offset);
  if (r < rows && part == 0) {
    const std::int64_t token = r / n_heads, h = r % n_heads;
    const std::int64_t b = token / seq_len, t = token % seq_len;
    row_dot[(b * n_heads + h) * seq_len + t] = acc;
  }
}

// dK, dV: one CTA per kBc keys (16 per warp), walking the query tiles from the diagonal down.
template <int HD>
struct BwdKvTiles {
  static constexpr int kWarps = 4;
  static constexpr int kBc = 16 * kWarps;         // keys per CTA
  static constexpr int kBr = HD <= 64 ? 64 : 32;  // query rows per step (hd 128: dK+dV = 128 regs)
  static constexpr int kThreads = 32 * kWarps;
  using Buffers = KeyTileBuffers<HD, kBr, kBc, kThreads>;
};

template <int HD>
__global__ void __launch_bounds__(BwdKvTiles<HD>::kThreads) attention_backward_dkdv_kernel(
    FP8LAB_ATTENTION_BACKWARD_PARAMS(const bf16_bits* __restrict__)) {
  using C = BwdKvTiles<HD>;
  constexpr int S = C::Buffers::S, Br = C::kBr, Bc = C::kBc;
  extern __shared__ uint4 smem_raw[];
  typename C::Buffers tiles(smem_raw);

  const int bh = block_bh();
  if (bh >= batch_heads) return;
  const int k0 = static_cast<int>(blockIdx.x) * Bc;  // low keys see the most queries: first
  const auto [hv, d_model, qs] = key_tile_head<HD>(qkv, dout, lse, row_dot, bh, seq_len, n_heads);
  const int i_begin = k0 / Br, i_end = (seq_len - 1) / Br + 1;
  tiles.load_keys(qs, d_model, k0, seq_len);
  tiles.load_queries(qs, i_begin, 0, seq_len);
  cp_async_commit();

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int key_w0 = k0 + warp * 16;  // this warp's first key
  const KeyRowsInSmem<HD, S> keys{tiles.k + warp * 16 * S, tiles.v + warp * 16 * S};
  float dk[HD / 8][4] = {}, dv[HD / 8][4] = {};

  for (int i = i_begin; i < i_end; ++i) {
    const int buf = (i - i_begin) & 1;
    tile_walk_barrier();  // tile i landed; every warp is done with the buffer refilled below
    if (i + 1 < i_end) {
      tiles.load_queries(qs, i + 1, buf ^ 1, seq_len);
      cp_async_commit();
    }
    const int q0 = i * Br;
    if (key_w0 >= seq_len || q0 + Br - 1 < key_w0) continue;  // every query precedes our keys
    float ds[Br / 8][4];  // dS^T, unused here: the dQ kernel recomputes it
    tiles.key_rows_step(dk, dv, ds, keys, buf, q0, key_w0, seq_len, scale_log2, lane);
  }

  dqkv_amax(tiles.store_key_grads(dk, dv, scale, dqkv + hv.qkv_head + d_model, d_model,
                                  hv.qkv_stride, warp, key_w0, seq_len, lane));
}

// dQ: one CTA per kBr queries (16 per warp), walking the key tiles up to the diagonal.
template <int HD>
struct BwdQTiles {
  static constexpr int kWarps = 4;
  static constexpr int kBr = 16 * kWarps;         // query rows per CTA
  static constexpr int kBc = HD <= 64 ? 64 : 32;  // keys per step
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kS = HD + 8;
  static constexpr int kSmemBytes = (2 * kBr + 4 * kBc) * kS * 2;
};

template <int HD>
__global__ void __launch_bounds__(BwdQTiles<HD>::kThreads)
    attention_backward_dq_kernel(FP8LAB_ATTENTION_BACKWARD_PARAMS(const bf16_bits* __restrict__)) {
  using C = BwdQTiles<HD>;
  constexpr int S = C::kS, Br = C::kBr, Bc = C::kBc;
  extern __shared__ uint4 smem_raw[];
  bf16_bits* s_q = reinterpret_cast<bf16_bits*>(smem_raw);
  bf16_bits* s_do = s_q + Br * S;
  bf16_bits* s_k = s_do + Br * S;     // [2][Bc][S]
  bf16_bits* s_v = s_k + 2 * Bc * S;  // [2][Bc][S]

  const int bh = block_bh();
  if (bh >= batch_heads) return;
  const int q0 =
      (static_cast<int>(gridDim.x) - 1 - static_cast<int>(blockIdx.x)) * Br;  // long rows first
  const HeadView hv = head_view(bh, seq_len, n_heads, HD);
  const std::int64_t d_model = static_cast<std::int64_t>(n_heads) * HD;
  const bf16_bits* q_head = qkv + hv.qkv_head;
  const bf16_bits* k_head = q_head + d_model;
  const bf16_bits* v_head = q_head + 2 * d_model;
  const int n_tiles = (min(q0 + Br, seq_len) - 1) / Bc + 1;

  load_tile<HD, S, Br, C::kThreads>(s_q, q_head, hv.qkv_stride, q0, seq_len);
  load_tile<HD, S, Br, C::kThreads>(s_do, dout + hv.out_head, d_model, q0, seq_len);
  load_tile<HD, S, Bc, C::kThreads>(s_k, k_head, hv.qkv_stride, 0, seq_len);
  load_tile<HD, S, Bc, C::kThreads>(s_v, v_head, hv.qkv_stride, 0, seq_len);
  cp_async_commit();

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane >> 2, c = lane & 3;
  const int row_w0 = q0 + warp * 16;
  float lse_log2[2], dot[2];  // this lane's rows g and g + 8
  lane_row_stats(lse, row_dot, bh, seq_len, row_w0, g, lse_log2, dot);
  float dq[HD / 8][4] = {};

  for (int j = 0; j < n_tiles; ++j) {
    cp_async_wait_all();
    __syncthreads();  // tile j landed; every warp is done with the buffer refilled below
    if (j + 1 < n_tiles) {
      const int nb = (j + 1) & 1;
      load_tile<HD, S, Bc, C::kThreads>(s_k + nb * Bc * S, k_head, hv.qkv_stride, (j + 1) * Bc,
                                        seq_len);
      load_tile<HD, S, Bc, C::kThreads>(s_v + nb * Bc * S, v_head, hv.qkv_stride, (j + 1) * Bc,
                                        seq_len);
      cp_async_commit();
    }
    const int k0 = j * Bc;
    if (row_w0 >= seq_len || k0 > row_w0 + 15) continue;  // no row of this warp sees it
    const bf16_bits* k_tile = s_k + (j & 1) * Bc * S;
    const bf16_bits* v_tile = s_v + (j & 1) * Bc * S;
    const bool need_mask = k0 + Bc - 1 > row_w0;

    float p[Bc / 8][4] = {};  // S, then P, then dS: [16 queries x Bc keys]
    mma_a_smem_b_nk<S, HD / 16, Bc / 8>(p, s_q, warp * 16, k_tile, lane);
    probs(
        p, scale_log2, need_mask,
        [&](int nt, int e) { return k0 + nt * 8 + 2 * c + (e & 1) > row_w0 + g + (e >> 1) * 8; },
        [&](int, int e) { return lse_log2[e >> 1]; });
    float dp[Bc / 8][4] = {};  // dP = dO V^T
    mma_a_smem_b_nk<S, HD / 16, Bc / 8>(dp, s_do, warp * 16, v_tile, lane);
#pragma unroll
    for (int nt = 0; nt < Bc / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) p[nt][e] *= dp[nt][e] - dot[e >> 1];
    mma_p_b_kn<S, Bc / 8, HD / 8>(dq, p, k_tile, lane);  // dQ += dS K (scaled on store)
  }

  dqkv_amax(store_dq_rows<HD, S>(dq, scale, s_q + warp * 16 * S, dqkv + hv.qkv_head, hv.qkv_stride,
                                 row_w0, seq_len, lane));
}

template <int HD>
void launch_row_dot(const void* out, const void* dout, float* row_dot, int batch, int seq_len,
                    int n_heads, cudaStream_t stream) {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * seq_len * n_heads;
  constexpr int kDotThreads = 256;
  const std::int64_t dot_blocks = (rows * (HD / 8) + kDotThreads - 1) / kDotThreads;
  attention_backward_rowdot_kernel<HD>
      <<<static_cast<unsigned>(dot_blocks), kDotThreads, 0, stream>>>(
          static_cast<const bf16_bits*>(out), static_cast<const bf16_bits*>(dout), row_dot, rows,
          seq_len, n_heads);
}

template <int HD>
void launch_two_pass(const void* qkv, const float* lse, const void* dout, const float* row_dot,
                     void* dqkv, int batch, int seq_len, int n_heads, cudaStream_t stream,
                     AmaxOut amax) {
  using Kv = BwdKvTiles<HD>;
  using Q = BwdQTiles<HD>;
  launch_attention_backward(
      TileLaunch{attention_backward_dkdv_kernel<HD>, Kv::kBc, Kv::kThreads, Kv::Buffers::kBytes},
      TileLaunch{attention_backward_dq_kernel<HD>, Q::kBr, Q::kThreads, Q::kSmemBytes},
      static_cast<const bf16_bits*>(qkv), lse, static_cast<const bf16_bits*>(dout), row_dot, dqkv,
      batch, seq_len, n_heads, HD, stream, amax);
}

}  // namespace

void attention_backward_row_dot(const void* out, const void* dout, float* row_dot, int batch,
                                int seq_len, int n_heads, int head_dim, cudaStream_t stream) {
  switch (head_dim) {
    case 32:
      return launch_row_dot<32>(out, dout, row_dot, batch, seq_len, n_heads, stream);
    case 64:
      return launch_row_dot<64>(out, dout, row_dot, batch, seq_len, n_heads, stream);
    case 128:
      return launch_row_dot<128>(out, dout, row_dot, batch, seq_len, n_heads, stream);
    default:
      return;
  }
}

bool attention_backward_two_pass(const void* qkv, const float* lse, const void* dout,
                                 const float* row_dot, void* dqkv, int batch, int seq_len,
                                 int n_heads, int head_dim, cudaStream_t stream, AmaxOut amax) {
  switch (head_dim) {
    case 32:
      launch_two_pass<32>(qkv, lse, dout, row_dot, dqkv, batch, seq_len, n_heads, stream, amax);
      return true;
    case 64:
      launch_two_pass<64>(qkv, lse, dout, row_dot, dqkv, batch, seq_len, n_heads, stream, amax);
      return true;
    case 128:
      launch_two_pass<128>(qkv, lse, dout, row_dot, dqkv, batch, seq_len, n_heads, stream, amax);
      return true;
    default:
      return false;
  }
}

}  // namespace fp8lab::cuda_ops
