// Which cuBLASLt options an FP8 GEMM (E4M3 x E4M3, TN, fp32 compute) runs with on this machine:
// output type, epilogue (GELU, GELU_AUX), aux type, AMAX_D, the aux amax, fast accumulation.
// For each case: the heuristic's status and candidate count, and whether a candidate launched.
// Written for the FP8 MLP's GELU epilogue (docs/performance.md, "GEMMs"), which needs an FP8 GEMM
// with GELU_AUX that also returns max|out| for a bf16 out. Every operand is E4M3 1.0, so the
// product is K and a reported amax_d should read K.
//
// Build: the `cublaslt_fp8_epilogue_probe` target (CUDA builds). Run on the GPU machine; prints
// one line per case. Results from the H200: bench/results/kernels/cublaslt_fp8_epilogue_probe.txt.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr int kM = 1024, kN = 1024, kK = 1024;
constexpr std::uint64_t kWorkspace = std::uint64_t{32} << 20;

struct Case {
  const char* name;
  cudaDataType_t out;
  cublasLtEpilogue_t epilogue;
  int aux_type;  // -1: cuBLASLt's default
  bool amax_d, aux_amax, fast_accum, d_scale;
};

struct Buffers {
  void *a, *b, *d, *aux, *workspace, *bias;
  float *scales, *amax;
};

template <typename T>
void set(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value) {
  const cublasStatus_t s = cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value));
  if (s != CUBLAS_STATUS_SUCCESS)
    std::printf("  (attribute %d refused: %s)\n", static_cast<int>(attr), cublasLtGetStatusName(s));
}

void run_case(cublasLtHandle_t handle, const Case& c, const Buffers& buf) {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  set(desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  set(desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  set(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, static_cast<std::int8_t>(c.fast_accum));
  set(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const float*>(buf.scales));
  set(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const float*>(buf.scales + 4));
  if (c.d_scale)
    set(desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, static_cast<const float*>(buf.scales + 8));
  if (c.epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, c.epilogue);
    if (c.epilogue == CUBLASLT_EPILOGUE_GELU_AUX || c.epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS) {
      set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, buf.aux);
      set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, static_cast<std::int64_t>(kN));
      if (c.aux_type >= 0)
        set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE,
            static_cast<std::int32_t>(c.aux_type));
      if (c.aux_type == CUDA_R_8F_E4M3)
        set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER,
            static_cast<const float*>(buf.scales + 12));
    }
    if (c.epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS) {
      set(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(buf.bias));
      set(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, CUDA_R_16BF);
    }
  }
  if (c.amax_d) set(desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, static_cast<void*>(buf.amax));
  if (c.aux_amax)
    set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER, static_cast<void*>(buf.amax + 8));
  // Row-major out[M, N] = A[M, K] B[N, K]^T as the column-major out^T = B A^T
  // (gemm_cublaslt.cpp).
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr, ld = nullptr;
  cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, kK, kN, kK);
  cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, kK, kM, kK);
  cublasLtMatrixLayoutCreate(&lc, c.out == CUDA_R_8F_E4M3 ? CUDA_R_16BF : c.out, kN, kM, kN);
  cublasLtMatrixLayoutCreate(&ld, c.out, kN, kM, kN);
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &kWorkspace,
                                       sizeof(kWorkspace));
  cublasLtMatmulHeuristicResult_t results[8] = {};
  int found = 0;
  const cublasStatus_t heuristic =
      cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, lc, ld, pref, 8, results, &found);
  const float alpha = 1.0f, beta = 0.0f;
  int ran = -1;
  cublasStatus_t last = CUBLAS_STATUS_NOT_SUPPORTED;
  cudaMemset(buf.amax, 0, 64);
  for (int i = 0; i < found && ran < 0; ++i) {
    last = cublasLtMatmul(handle, desc, &alpha, buf.b, la, buf.a, lb, &beta, buf.d, lc, buf.d, ld,
                          &results[i].algo, buf.workspace, kWorkspace, nullptr);
    if (last == CUBLAS_STATUS_SUCCESS) ran = i;
  }
  const cudaError_t sync = cudaDeviceSynchronize();
  float amax[9] = {};
  cudaMemcpy(amax, buf.amax, sizeof(amax), cudaMemcpyDeviceToHost);
  std::printf("%-58s heuristic %-27s candidates %d launched %-3s (%s) %s amax_d %g aux_amax %g\n",
              c.name, cublasLtGetStatusName(heuristic), found, ran >= 0 ? "yes" : "no",
              cublasLtGetStatusName(last), cudaGetErrorName(sync), static_cast<double>(amax[0]),
              static_cast<double>(amax[8]));
  cublasLtMatmulPreferenceDestroy(pref);
  for (cublasLtMatrixLayout_t l : {la, lb, lc, ld}) cublasLtMatrixLayoutDestroy(l);
  cublasLtMatmulDescDestroy(desc);
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no GPU: nothing to probe\n");
    return 0;
  }
  cublasLtHandle_t handle = nullptr;
  cublasLtCreate(&handle);
  Buffers buf{};
  cudaMalloc(&buf.a, kM * kK);
  cudaMalloc(&buf.b, kN * kK);
  cudaMalloc(&buf.d, std::size_t{4} * kM * kN);
  cudaMalloc(&buf.aux, std::size_t{4} * kM * kN);
  cudaMalloc(&buf.workspace, kWorkspace);
  cudaMalloc(&buf.bias, 2 * kN);
  cudaMalloc(reinterpret_cast<void**>(&buf.scales), 256);
  cudaMalloc(reinterpret_cast<void**>(&buf.amax), 256);
  cudaMemset(buf.a, 0x38, kM * kK);  // E4M3 0x38 = 1.0
  cudaMemset(buf.b, 0x38, kN * kK);
  cudaMemset(buf.bias, 0, 2 * kN);
  const std::vector<float> ones(64, 1.0f);
  cudaMemcpy(buf.scales, ones.data(), 256, cudaMemcpyHostToDevice);
  const auto bf16 = CUDA_R_16BF;
  const auto none = CUBLASLT_EPILOGUE_DEFAULT, gelu = CUBLASLT_EPILOGUE_GELU,
             gelu_aux = CUBLASLT_EPILOGUE_GELU_AUX;
  const Case cases[] = {
      {"bf16 out", bf16, none, -1, false, false, false, false},
      {"bf16 out, amax_d", bf16, none, -1, true, false, false, false},
      {"bf16 out, GELU", bf16, gelu, -1, false, false, false, false},
      {"bf16 out, GELU, amax_d", bf16, gelu, -1, true, false, false, false},
      {"bf16 out, GELU_AUX (aux default)", bf16, gelu_aux, -1, false, false, false, false},
      {"bf16 out, GELU_AUX (aux bf16)", bf16, gelu_aux, bf16, false, false, false, false},
      {"bf16 out, GELU_AUX (aux bf16), fast accumulation", bf16, gelu_aux, bf16, false, false, true,
       false},
      {"bf16 out, GELU_AUX (aux bf16), amax_d", bf16, gelu_aux, bf16, true, false, false, false},
      {"bf16 out, GELU_AUX (aux default), amax_d", bf16, gelu_aux, -1, true, false, false, false},
      {"bf16 out, GELU_AUX (aux bf16), aux amax", bf16, gelu_aux, bf16, false, true, false, false},
      {"bf16 out, GELU_AUX_BIAS (aux bf16)", bf16, CUBLASLT_EPILOGUE_GELU_AUX_BIAS, bf16, false,
       false, false, false},
      {"fp16 out, GELU_AUX (aux fp16)", CUDA_R_16F, gelu_aux, CUDA_R_16F, false, false, false,
       false},
      {"f32 out, amax_d", CUDA_R_32F, none, -1, true, false, false, false},
      {"e4m3 out, amax_d, D scale", CUDA_R_8F_E4M3, none, -1, true, false, false, true},
      {"e4m3 out, GELU_AUX (aux bf16), amax_d, D scale", CUDA_R_8F_E4M3, gelu_aux, bf16, true,
       false, false, true},
      {"e4m3 out, GELU_AUX (aux bf16), amax_d, aux amax, D scale", CUDA_R_8F_E4M3, gelu_aux, bf16,
       true, true, false, true},
      {"e4m3 out, GELU_AUX (aux e4m3), amax_d, aux amax, D scale", CUDA_R_8F_E4M3, gelu_aux,
       CUDA_R_8F_E4M3, true, true, false, true},
  };
  for (const Case& c : cases) run_case(handle, c, buf);
  std::printf("cuBLASLt version %zu\n", cublasLtGetVersion());
  cublasLtDestroy(handle);
  return 0;
}
