// The one place that decides which attention kernel runs: a table per direction of the kernel
// families (fp8lab/kernel_options.hpp), each row with the head dimensions its kernels are built
// for and whether they need TMA. A request names a family; `automatic` is the first row. A row
// that cannot run (head dimension, no TMA, or a tensor map the driver rejects) passes the call
// down to the next one, so the mma.sync family, built for every supported head dimension, is
// the reference and the last fallback. Measured order: docs/cuda-backend.md, "Attention".
// cuDNN's attention stands before the table: asked for by name only (its bits are not the own
// families'), it runs where its library loads and builds the graph, and otherwise the call
// goes to the table as `automatic` (cudnn_attention.cpp prints why, once). `cudnn_forward`
// asks for it in the forward alone: every entry point first maps the request to its
// direction's family (attention_kernels_for).
#include <array>

#include "cuda_attention/attention_kernels.hpp"
#include "cuda_attention/attention_tiles.cuh"  // amax_of_no_output
#include "cuda_attention/tensor_map.hpp"

namespace fp8lab::cuda_ops {
namespace {

using ForwardLaunch = bool (*)(const void* qkv, void* out, float* lse, int batch, int seq_len,
                               int n_heads, int head_dim, cudaStream_t stream, AmaxOut amax);
using BackwardLaunch = bool (*)(const void* qkv, const float* lse, const void* dout,
                                const float* row_dot, void* dqkv, int batch, int seq_len,
                                int n_heads, int head_dim, cudaStream_t stream, AmaxOut amax);

template <typename Launch>
struct KernelRow {
  AttentionKernels family;
  std::array<int, 3> head_dims;  // 0: unused entry
  bool needs_tma;
  Launch launch;

  bool built_for(int head_dim) const {
    for (int hd : head_dims)
      if (hd != 0 && hd == head_dim) return true;
    return false;
  }
};

// Fastest first: wgmma-ws beat wgmma and wgmma beat mma.sync on the H200 at every head
// dimension each is built for (docs/cuda-backend.md, "Attention").
constexpr KernelRow<ForwardLaunch> kForward[] = {
    {AttentionKernels::wgmma_ws, {128, 0, 0}, true, attention_forward_ws},
    {AttentionKernels::wgmma, {64, 128, 0}, false, attention_forward_wgmma},
    {AttentionKernels::mma_sync, {32, 64, 128}, false, attention_forward_mma_sync},
};
constexpr KernelRow<BackwardLaunch> kBackward[] = {
    {AttentionKernels::wgmma_ws, {64, 128, 0}, true, attention_backward_ws},
    {AttentionKernels::wgmma, {64, 128, 0}, false, attention_backward_wgmma},
    {AttentionKernels::mma_sync, {32, 64, 128}, false, attention_backward_two_pass},
};

// The rows a request may run, in order: from the requested family's row to the end.
template <typename Launch, std::size_t N>
std::size_t first_row(const KernelRow<Launch> (&table)[N], AttentionKernels requested) {
  if (requested == AttentionKernels::automatic) return 0;
  for (std::size_t i = 0; i < N; ++i)
    if (table[i].family == requested) return i;
  return N;
}

template <typename Launch, std::size_t N>
bool can_run(const KernelRow<Launch> (&table)[N], std::size_t i, int head_dim) {
  return table[i].built_for(head_dim) && (!table[i].needs_tma || tma_available());
}

template <typename Launch, std::size_t N>
AttentionKernels resolve(const KernelRow<Launch> (&table)[N], AttentionKernels requested,
                         int head_dim) {
  for (std::size_t i = first_row(table, requested); i < N; ++i)
    if (can_run(table, i, head_dim)) return table[i].family;
  return AttentionKernels::automatic;  // no family: attention_supports_head_dim is false
}

// Runs the first row from `requested` on that can run and launches; false when none did.
template <typename Launch, std::size_t N, typename... Args>
bool dispatch(const KernelRow<Launch> (&table)[N], AttentionKernels requested, int head_dim,
              Args... args) {
  for (std::size_t i = first_row(table, requested); i < N; ++i)
    if (can_run(table, i, head_dim) && table[i].launch(args...)) return true;
  return false;
}

// The own backward's workspace: Di = rowsum(dO_i * O_i), [B, H, T] f32, the same for every
// own family.
std::size_t row_dot_bytes(int batch, int seq_len, int n_heads) {
  return static_cast<std::size_t>(batch) * static_cast<std::size_t>(n_heads) *
         static_cast<std::size_t>(seq_len) * sizeof(float);
}

// The head dimensions the cudnn family takes (cuDNN takes any multiple of 8 up to 256; these
// are the ones the model checks for, attention_supports_head_dim).
bool cudnn_takes(int head_dim) { return head_dim == 32 || head_dim == 64 || head_dim == 128; }

// Whether the cudnn family may run at head_dim in this process (its library loaded).
bool cudnn_here(int head_dim) {
  return cudnn_takes(head_dim) && cudnn_attention_unavailable().empty();
}

template <typename Launch, std::size_t N>
AttentionKernels resolve_with_cudnn(const KernelRow<Launch> (&table)[N], AttentionKernels requested,
                                    int head_dim) {
  if (requested != AttentionKernels::cudnn) return resolve(table, requested, head_dim);
  if (cudnn_here(head_dim)) return requested;
  return resolve(table, AttentionKernels::automatic, head_dim);
}

std::int64_t elements(int rows_of_batch, int seq_len, std::int64_t width) {
  return static_cast<std::int64_t>(rows_of_batch) * seq_len * width;
}

}  // namespace

bool attention_supports_head_dim(int head_dim) {
  return resolve(kForward, AttentionKernels::automatic, head_dim) != AttentionKernels::automatic;
}

AttentionKernels attention_forward_family(AttentionKernels requested, int head_dim) {
  return resolve_with_cudnn(kForward, attention_kernels_for(requested, true), head_dim);
}

AttentionKernels attention_backward_family(AttentionKernels requested, int head_dim) {
  return resolve_with_cudnn(kBackward, attention_kernels_for(requested, false), head_dim);
}

std::size_t attention_workspace_bytes(bool forward, AttentionKernels kernels, int batch,
                                      int seq_len, int n_heads, int head_dim) {
  kernels = attention_kernels_for(kernels, forward);
  std::size_t bytes = forward ? 0 : row_dot_bytes(batch, seq_len, n_heads);
  // The own kernels' Di stays affordable beside cuDNN's: a call cuDNN refuses at run time
  // falls back to them with the same workspace.
  if (kernels == AttentionKernels::cudnn && batch > 0 && seq_len > 0 && n_heads > 0 &&
      cudnn_here(head_dim)) {
    const std::size_t cudnn =
        cudnn_attention_workspace_bytes(forward, batch, seq_len, n_heads, head_dim);
    bytes = bytes > cudnn ? bytes : cudnn;
  }
  return bytes;
}

// An unsupported head_dim launches nothing: CudaBackend checks attention_supports_head_dim.
void attention_forward(const void* qkv, void* out, float* lse, int batch, int seq_len, int n_heads,
                       int head_dim, cudaStream_t stream, AmaxOut amax, AttentionKernels kernels,
                       void* workspace) {
  if (batch <= 0 || seq_len <= 0 || n_heads <= 0) return amax_of_no_output(amax, stream);
  kernels = attention_kernels_for(kernels, true);
  if (kernels == AttentionKernels::cudnn) {
    if (cudnn_takes(head_dim) && attention_forward_cudnn(qkv, out, lse, batch, seq_len, n_heads,
                                                         head_dim, workspace, stream)) {
      const std::int64_t n =
          elements(batch, seq_len, static_cast<std::int64_t>(n_heads) * head_dim);
      return amax_only(out, ElemType::bf16, n, stream, amax);
    }
    kernels = AttentionKernels::automatic;
  }
  dispatch(kForward, kernels, head_dim, qkv, out, lse, batch, seq_len, n_heads, head_dim, stream,
           amax);
}

void attention_backward(const void* qkv, const void* out, const float* lse, const void* dout,
                        void* dqkv, int batch, int seq_len, int n_heads, int head_dim,
                        void* workspace, cudaStream_t stream, AttentionKernels kernels,
                        AmaxOut amax) {
  if (batch <= 0 || seq_len <= 0 || n_heads <= 0) return amax_of_no_output(amax, stream);
  kernels = attention_kernels_for(kernels, false);
  if (kernels == AttentionKernels::cudnn) {
    if (cudnn_takes(head_dim) && attention_backward_cudnn(qkv, out, lse, dout, dqkv, batch, seq_len,
                                                          n_heads, head_dim, workspace, stream)) {
      const std::int64_t n =
          elements(batch, seq_len, 3 * static_cast<std::int64_t>(n_heads) * head_dim);
      return amax_only(dqkv, ElemType::bf16, n, stream, amax);
    }
    kernels = AttentionKernels::automatic;
  }
  auto* row_dot = static_cast<float*>(workspace);
  attention_backward_row_dot(out, dout, row_dot, batch, seq_len, n_heads, head_dim, stream);
  const float* dot = row_dot;
  dispatch(kBackward, kernels, head_dim, qkv, lse, dout, dot, dqkv, batch, seq_len, n_heads,
           head_dim, stream, amax);
}

}  // namespace fp8lab::cuda_ops
