// The `cudnn` attention family: cuDNN's fused scaled-dot-product attention (causal, bf16 in and
// out, f32 softmax statistics) built through cuDNN's graph API with NVIDIA's header-only
// cudnn-frontend (third_party/cudnn-frontend, MIT). cuDNN is loaded at run time, so a binary
// built with the headers runs where the library is missing: the family reports why and the
// dispatch table runs the own kernels.
//
// Layout: q, k and v are strided views into the packed qkv rows ([B*T, 3*H*hd]: row b*T + t
// holds q | k | v, head h at columns h*hd), out and dqkv the same rows as ours, and cuDNN's
// "Stats" (the natural-log sum of exp of the scaled scores per row, [B, H, T] f32) is exactly
// our lse, so either direction may run in cuDNN while the other runs an own kernel.
//
// Graphs are built once per (device, direction, B, T, H, hd) and kept; the first call of a
// shape pays the build (cuDNN's heuristics, tens to hundreds of milliseconds). The backward is
// built with cuDNN's deterministic algorithm, so reruns repeat their bits as the own kernels do
// (its default algorithm, which sums dQ in the order its CTAs finish, was no faster at gpt1.3b).
#if defined(FP8LAB_HAVE_CUDA)
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/shared_library.hpp"
#include "cuda_attention/attention_kernels.hpp"
#include "fp8lab/environment.hpp"

#if defined(FP8LAB_HAVE_CUDNN)
#include <cudnn_frontend.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <memory>
#include <unordered_map>

// The frontend's dynamic loading reads its symbols through this handle, which the program sets.
namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;
}
#endif

namespace fp8lab::cuda_ops {

#if defined(FP8LAB_HAVE_CUDNN)
namespace {

namespace fe = cudnn_frontend;

struct Loaded {
  std::string why_not;  // empty: loaded
  std::size_t version = 0;
};

// Loads the library once per configured name (a test may install another): the user's file
// alone when FP8LAB_CUDNN_LIBRARY names one, else libcudnn.so.9, then libcudnn.so.
const Loaded& loaded() {
  static std::mutex mu;
  static std::map<std::string, Loaded> by_setting;
  static void* current = nullptr;
  const std::string forced = environment().cudnn_library;
  std::lock_guard lock(mu);
  if (auto it = by_setting.find(forced); it != by_setting.end()) {
    fe::cudnn_dlhandle = it->second.why_not.empty() ? current : nullptr;
    return it->second;
  }
  Loaded l;
  const OpenedLibrary lib = open_first_library(
      library_candidates(forced, {"libcudnn.so.9", "libcudnn.so"}), RTLD_NOW | RTLD_LOCAL);
  void* handle = lib.handle;
  if (handle == nullptr) {
    l.why_not = "cannot load the cuDNN library; tried:" + lib.tried +
                "\n(install cuDNN 9, e.g. the nvidia-cudnn-cu13 wheel, and put its lib/ "
                "directory on LD_LIBRARY_PATH, or set FP8LAB_CUDNN_LIBRARY to the file)";
  } else {
    fe::cudnn_dlhandle = handle;
    try {
      l.version = fe::detail::get_backend_version();
      if (l.version < 90000)
        l.why_not = "cuDNN " + std::to_string(l.version) + " is older than 9.0 (90000)";
    } catch (const std::exception& e) {
      l.why_not = std::string("the cuDNN library has no version: ") + e.what();
    }
    if (l.why_not.empty()) {
      current = handle;
    } else {
      fe::cudnn_dlhandle = nullptr;
      ::dlclose(handle);
    }
  }
  return by_setting.emplace(forced, l).first->second;
}

enum Uid : std::int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV };

struct Shape4 {
  int batch, seq, heads, head_dim;
  std::int64_t d_model() const { return static_cast<std::int64_t>(heads) * head_dim; }
  std::vector<std::int64_t> dims() const { return {batch, heads, seq, head_dim}; }
  // q, k, v and dq, dk, dv: [B, H, T, hd] views into the packed qkv rows.
  std::vector<std::int64_t> qkv_strides() const {
    return {static_cast<std::int64_t>(seq) * 3 * d_model(), head_dim, 3 * d_model(), 1};
  }
  // out and dout: [B, H, T, hd] views into [B*T, H*hd] rows.
  std::vector<std::int64_t> out_strides() const {
    return {static_cast<std::int64_t>(seq) * d_model(), head_dim, d_model(), 1};
  }
  std::vector<std::int64_t> stats_dims() const { return {batch, heads, seq, 1}; }
  std::vector<std::int64_t> stats_strides() const {
    return {static_cast<std::int64_t>(heads) * seq, seq, 1, 1};
  }
};

struct Plan {
  std::shared_ptr<fe::graph::Graph> graph;
  std::int64_t workspace = 0;
  std::string why_not;  // empty: built
};

// device, forward, B, T, H, hd
using PlanKey = std::tuple<int, bool, int, int, int, int>;

struct State {
  std::mutex mu;
  std::map<int, cudnnHandle_t> handles;  // per device; kept for the process
  std::map<PlanKey, Plan> plans;
  std::set<std::string> noted;  // reasons already printed
};

State& state() {
  static State* s = new State;  // never destroyed: handles outlive static destruction order
  return *s;
}

// The frontend's getters are not const: take a copy.
std::string status_text(fe::error_t e) {
  const std::string message = e.get_message();
  return message.empty() ? "cuDNN frontend error " + std::to_string(static_cast<int>(e.get_code()))
                         : message;
}

#define FP8LAB_FE_TRY(call)                                  \
  do {                                                       \
    fe::error_t fe_status = (call);                          \
    if (!fe_status.is_good()) return status_text(fe_status); \
  } while (0)

std::shared_ptr<fe::graph::Tensor_attributes> input(fe::graph::Graph& g, const char* name, Uid uid,
                                                    std::vector<std::int64_t> dims,
                                                    std::vector<std::int64_t> strides) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim(std::move(dims))
                      .set_stride(std::move(strides)));
}

// Builds `plan`'s graph for one direction; returns why not ("" when built).
std::string build(Plan& plan, cudnnHandle_t handle, const Shape4& s, bool forward) {
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(fe::DataType_t::BFLOAT16)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  // The own kernels' scale (attention_tiles.cuh, softmax_scale), the same float.
  const float scale = 1.f / std::sqrt(static_cast<float>(s.head_dim));
  auto q = input(*g, "q", kQ, s.dims(), s.qkv_strides());
  auto k = input(*g, "k", kK, s.dims(), s.qkv_strides());
  auto v = input(*g, "v", kV, s.dims(), s.qkv_strides());
  if (forward) {
    auto options = fe::graph::SDPA_attributes()
                       .set_name("fp8lab_attention_forward")
                       .set_generate_stats(true)
                       .set_attn_scale(scale)
                       .set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT)
                       .set_diagonal_band_right_bound(0);  // causal: key j <= query i
    auto [o, stats] = g->sdpa(q, k, v, options);
    o->set_output(true).set_uid(kO).set_dim(s.dims()).set_stride(s.out_strides());
    stats->set_output(true)
        .set_uid(kStats)
        .set_data_type(fe::DataType_t::FLOAT)
        .set_dim(s.stats_dims())
        .set_stride(s.stats_strides());
  } else {
    auto o = input(*g, "o", kO, s.dims(), s.out_strides());
    auto d_o = input(*g, "do", kDO, s.dims(), s.out_strides());
    auto stats = g->tensor(fe::graph::Tensor_attributes()
                               .set_name("stats")
                               .set_uid(kStats)
                               .set_dim(s.stats_dims())
                               .set_stride(s.stats_strides())
                               .set_data_type(fe::DataType_t::FLOAT));
    auto options = fe::graph::SDPA_backward_attributes()
                       .set_name("fp8lab_attention_backward")
                       .set_attn_scale(scale)
                       .set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT)
                       .set_diagonal_band_right_bound(0)
                       .set_deterministic_algorithm(true);
    auto [dq, dk, dv] = g->sdpa_backward(q, k, v, o, d_o, stats, options);
    dq->set_output(true).set_uid(kDQ).set_dim(s.dims()).set_stride(s.qkv_strides());
    dk->set_output(true).set_uid(kDK).set_dim(s.dims()).set_stride(s.qkv_strides());
    dv->set_output(true).set_uid(kDV).set_dim(s.dims()).set_stride(s.qkv_strides());
  }
  FP8LAB_FE_TRY(g->validate());
  FP8LAB_FE_TRY(g->build_operation_graph(handle));
  FP8LAB_FE_TRY(g->create_execution_plans({fe::HeurMode_t::A}));
  FP8LAB_FE_TRY(g->check_support());
  FP8LAB_FE_TRY(g->build_plans());
  FP8LAB_FE_TRY(g->get_workspace_size(plan.workspace));
  plan.graph = std::move(g);
  return "";
}

// The handle of the current device (created on first use); null with *why set on failure.
cudnnHandle_t handle_for(State& st, int device, std::string* why) {
  if (auto it = st.handles.find(device); it != st.handles.end()) return it->second;
  cudnnHandle_t h = nullptr;
  const cudnnStatus_t status = fe::detail::create_handle(&h);
  if (status != CUDNN_STATUS_SUCCESS) {
    *why = "cudnnCreate failed with status " + std::to_string(static_cast<int>(status));
    return nullptr;
  }
  st.handles.emplace(device, h);
  return h;
}

// Prints `why` once per distinct text: the run goes on with the own kernels.
void note_once(State& st, const std::string& why) {
  if (!st.noted.insert(why).second) return;
  std::fprintf(stderr, "fp8lab: kernels.attention=cudnn: %s; running the own kernels\n",
               why.c_str());
}

// The plan for a call, built on first use; null when cuDNN cannot run it (reason printed once).
// Call with st.mu held.
Plan* plan_for(State& st, const Shape4& s, bool forward, cudnnHandle_t* handle) {
  if (!loaded().why_not.empty()) return nullptr;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return nullptr;
  const PlanKey key{device, forward, s.batch, s.seq, s.heads, s.head_dim};
  auto it = st.plans.find(key);
  if (it == st.plans.end()) {
    Plan plan;
    std::string why;
    if (s.seq < 2 || s.batch > 65535 || s.heads > 65535) {
      // cuDNN refuses a one-token sequence in the backward, and its launch puts B and H in
      // grid dimensions of at most 65535.
      why = "outside cuDNN's fused attention (T >= 2, B and H <= 65535)";
    } else if (cudnnHandle_t h = handle_for(st, device, &why); h != nullptr) {
      try {
        why = build(plan, h, s, forward);
      } catch (const std::exception& e) {
        why = e.what();
      }
    }
    if (!why.empty()) {
      plan.why_not = std::string(forward ? "forward" : "backward") + " for B " +
                     std::to_string(s.batch) + ", T " + std::to_string(s.seq) + ", H " +
                     std::to_string(s.heads) + ", hd " + std::to_string(s.head_dim) +
                     " not built: " + why;
      plan.graph.reset();
    }
    it = st.plans.emplace(key, std::move(plan)).first;
  }
  if (!it->second.why_not.empty()) {
    note_once(st, it->second.why_not);
    return nullptr;
  }
  *handle = st.handles.at(device);
  return &it->second;
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

bool run(const Shape4& s, bool forward, std::unordered_map<std::int64_t, void*> pack,
         void* workspace, cudaStream_t stream) {
  for (const auto& [uid, p] : pack)
    if (!aligned16(p)) return false;  // cuDNN's loads are 16-byte vectors: the own kernels run
  State& st = state();
  std::lock_guard lock(st.mu);
  cudnnHandle_t handle = nullptr;
  Plan* plan = plan_for(st, s, forward, &handle);
  if (plan == nullptr) return false;
  if (plan->workspace > 0 && workspace == nullptr) return false;
  if (fe::detail::set_stream(handle, stream) != CUDNN_STATUS_SUCCESS) return false;
  fe::error_t status = plan->graph->execute(handle, pack, workspace);
  if (!status.is_good()) {
    // Not tried again for this shape: every later call runs the own kernels, as this one does.
    plan->why_not = std::string(forward ? "forward" : "backward") +
                    " failed to run: " + status_text(status);
    plan->graph.reset();
    note_once(st, plan->why_not);
    return false;
  }
  return true;
}

}  // namespace

const std::string& cudnn_attention_unavailable() { return loaded().why_not; }

std::size_t cudnn_attention_workspace_bytes(bool forward, int batch, int seq_len, int n_heads,
                                            int head_dim) {
  State& st = state();
  std::lock_guard lock(st.mu);
  cudnnHandle_t handle = nullptr;
  const Plan* plan = plan_for(st, {batch, seq_len, n_heads, head_dim}, forward, &handle);
  return plan != nullptr ? static_cast<std::size_t>(plan->workspace) : 0;
}

bool attention_forward_cudnn(const void* qkv, void* out, float* lse, int batch, int seq_len,
                             int n_heads, int head_dim, void* workspace, cudaStream_t stream) {
  const Shape4 s{batch, seq_len, n_heads, head_dim};
  auto* base = static_cast<std::uint16_t*>(const_cast<void*>(qkv));
  const std::int64_t d = s.d_model();
  return run(s, true, {{kQ, base}, {kK, base + d}, {kV, base + 2 * d}, {kO, out}, {kStats, lse}},
             workspace, stream);
}

bool attention_backward_cudnn(const void* qkv, const void* out, const float* lse, const void* dout,
                              void* dqkv, int batch, int seq_len, int n_heads, int head_dim,
                              void* workspace, cudaStream_t stream) {
  const Shape4 s{batch, seq_len, n_heads, head_dim};
  auto* base = static_cast<std::uint16_t*>(const_cast<void*>(qkv));
  auto* grad = static_cast<std::uint16_t*>(dqkv);
  const std::int64_t d = s.d_model();
  return run(s, false,
             {{kQ, base},
              {kK, base + d},
              {kV, base + 2 * d},
              {kO, const_cast<void*>(out)},
              {kDO, const_cast<void*>(dout)},
              {kStats, const_cast<float*>(lse)},
              {kDQ, grad},
              {kDK, grad + d},
              {kDV, grad + 2 * d}},
             workspace, stream);
}

#else  // built without cuDNN's headers

const std::string& cudnn_attention_unavailable() {
  static const std::string why =
      "this fp8lab was built without cuDNN's headers (cudnn.h not found at configure time)";
  return why;
}

std::size_t cudnn_attention_workspace_bytes(bool, int, int, int, int) { return 0; }

bool attention_forward_cudnn(const void*, void*, float*, int, int, int, int, void*, cudaStream_t) {
  return false;
}

bool attention_backward_cudnn(const void*, const void*, const float*, const void*, void*, int, int,
                              int, int, bool, void*, cudaStream_t) {
  return false;
}

#endif

}  // namespace fp8lab::cuda_ops
#endif  // FP8LAB_HAVE_CUDA
