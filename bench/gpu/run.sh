#!/usr/bin/env bash
# Builds bench/gpu/bench_gpu.cpp against braid's CUDA build (build/gpu) and the libtorch that
# ships inside the torch Python package, then runs it. Usage: bench/gpu/run.sh [section]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
TORCH=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')
CUDA_LIBS=$TORCH/../nvidia/cu13/lib
ABI=$(python3 -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
mkdir -p build/gpu-bench
g++ -O2 -std=c++20 -D_GLIBCXX_USE_CXX11_ABI="$ABI" bench/gpu/bench_gpu.cpp -o build/gpu-bench/bench_gpu \
  -I"$ROOT/include" -I"$TORCH/include" -I"$TORCH/include/torch/csrc/api/include" -I/usr/local/cuda/include \
  -L"$ROOT/build/gpu" -lbraid -L"$TORCH/lib" -ltorch -ltorch_cpu -ltorch_cuda -lc10 -lc10_cuda \
  -L"$CUDA_LIBS" -L/usr/local/cuda/lib64 -lcudart \
  -Wl,-rpath,"$ROOT/build/gpu:$TORCH/lib:$CUDA_LIBS:$ROOT/.deps/rt" -Wl,--no-as-needed
./build/gpu-bench/bench_gpu "${1:-all}"
