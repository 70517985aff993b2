#!/usr/bin/env bash
# Builds the GPU benchmarks against braid's CUDA build (build/gpu) and the libtorch that ships
# inside the torch Python package, then runs them:
#   bench/gpu/bench_gpu.cpp       bandwidth, matmul, per-op overhead, serving
#   bench/gpu/bench_ops_gpu.cpp   the array ops (bandwidth-bound ops, sort, indexing, 4-bit matmul)
#   bench/gpu/bench_train_gpu.cpp training: an AdamW step of a bfloat16 MLP; 8 threads on own streams
# Usage: bench/gpu/run.sh [all|bandwidth|matmul|overhead|serving|ops|train] [--quick | --runs N]
# "all" runs every section of bench_gpu, then bench_ops_gpu, then bench_train_gpu; options after
# the section go to bench_ops_gpu and bench_train_gpu (both take --quick and --runs N).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
TORCH=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')
CUDA_LIBS=$TORCH/../nvidia/cu13/lib
ABI=$(python3 -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
section=${1:-all}
[[ $# -gt 0 ]] && shift
mkdir -p build/gpu-bench
build() {
  # libtorch_cuda registers the CUDA backend when loaded; --no-as-needed keeps it linked even
  # where the program calls none of its symbols directly.
  g++ -O2 -std=c++20 -D_GLIBCXX_USE_CXX11_ABI="$ABI" "bench/gpu/$1.cpp" -o "build/gpu-bench/$1" \
    -I"$ROOT/include" -I"$ROOT/bench" -I"$TORCH/include" -I"$TORCH/include/torch/csrc/api/include" \
    -I/usr/local/cuda/include \
    -L"$ROOT/build/gpu" -lbraid -L"$TORCH/lib" \
    -Wl,--no-as-needed -ltorch -ltorch_cpu -ltorch_cuda -lc10 -lc10_cuda -Wl,--as-needed \
    -L"$CUDA_LIBS" -L/usr/local/cuda/lib64 -lcudart \
    -Wl,-rpath,"$ROOT/build/gpu:$TORCH/lib:$CUDA_LIBS:$ROOT/.deps/rt"
}
if [[ $section != ops && $section != train ]]; then
  build bench_gpu
  ./build/gpu-bench/bench_gpu "$section"
fi
if [[ $section == ops || $section == all ]]; then
  build bench_ops_gpu
  ./build/gpu-bench/bench_ops_gpu "$@"
fi
if [[ $section == train || $section == all ]]; then
  build bench_train_gpu
  ./build/gpu-bench/bench_train_gpu "$@"
fi
