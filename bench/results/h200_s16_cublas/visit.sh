#!/usr/bin/env bash
# Session 16, call 3b (3a looked for the wheel's cuBLAS under nvidia/cublas, found none, and so
# ran the system library twice; a one-line call then read a torch matmul's /proc/self/maps):
# which cuBLASLt fp8lab loads, which PyTorch's wheel ships, and fp8lab's bf16 op times on each,
# alternating, at gpt50m and gpt1.3b. ("pip" below = the wheel's libraries.)
set -u
cd "$(dirname "$0")/.."
d=$OUT/cublas; mkdir -p "$d"
mkdir -p .gpubin
python3 -c 'import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
  .gpucarry/bin.tar.xz .gpubin
# PyTorch's wheel: nvidia/cu13/lib. Only its two cuBLAS libraries are linked into a folder of
# their own, so nothing else changes.
wheel=$(python3 -c 'import nvidia,os;print(os.path.join(list(nvidia.__path__)[0],"cu13","lib"))')
pip=$PWD/.gpubin/wheel_cublas; mkdir -p "$pip"
ln -sf "$wheel/libcublasLt.so.13" "$wheel/libcublas.so.13" "$pip/"
sys_ld="$PWD/.gpubin/lib:/usr/local/cuda/lib64:$pip"
pip_ld="$PWD/.gpubin/lib:$pip:/usr/local/cuda/lib64"
{ ls -la /usr/local/cuda/lib64/libcublasLt.so* "$pip"/libcublasLt.so*
  for lib in /usr/local/cuda/lib64/libcublasLt.so.13 "$pip"/libcublasLt.so.13; do
    python3 -c 'import ctypes,sys; l=ctypes.CDLL(sys.argv[1]); l.cublasLtGetVersion.restype=ctypes.c_size_t; print(sys.argv[1], "cublasLtGetVersion", l.cublasLtGetVersion())' "$lib"
  done
  echo "system first:"; LD_LIBRARY_PATH=$sys_ld ldd .gpubin/fp8lab | grep -i cublas
  echo "wheel first:"; LD_LIBRARY_PATH=$pip_ld ldd .gpubin/fp8lab | grep -i cublas
  python3 -c 'import torch; print("torch cublasLt", torch._C._cuda_getCompiledVersion(), torch.backends.cuda.preferred_blas_library())'
  which nsys; ls /usr/local/cuda/bin | grep -i nsys; ls /opt/nvidia 2>/dev/null
} > "$d/versions.txt" 2>&1
cat "$d/versions.txt"
run() {  # label preset ld
  LD_LIBRARY_PATH=$3 timeout 110 .gpubin/fp8lab bench model --preset "$2" --arms bf16 --no-frozen \
    --repeats 10 --op-times --json "$d/$2_$1.json" > "$d/$2_$1.log" 2>&1
  echo "exit $?" >> "$d/$2_$1.log"
  echo "== $2 $1: $(grep -E '^\| bf16 \|' "$d/$2_$1.log" | head -1)"
  grep -E '^\| (linear|cross_entropy: (logits|dw|dx))' "$d/$2_$1.log"
}
run sys_r1 gpt50m "$sys_ld"; run pip_r1 gpt50m "$pip_ld"
run pip_r2 gpt50m "$pip_ld"; run sys_r2 gpt50m "$sys_ld"
run sys_r1 gpt1.3b "$sys_ld"; run pip_r1 gpt1.3b "$pip_ld"
tar -czf "$OUT/cublas.tar.gz" -C "$OUT" cublas && rm -rf "$d"
