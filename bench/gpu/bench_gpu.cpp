// GPU benchmark: braid against PyTorch (libtorch, C++) on the same GPU in one run.
// Prints a markdown table of absolute figures and ratios. Build and run with bench/gpu/run.sh.
#include <torch/torch.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "braid/braid.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Median of `reps` timings of fn() (each returns seconds).
double median_of(int reps, const std::function<double()>& fn) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) t.push_back(fn());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Row {
  std::string name, unit;
  double braid, peer;
  std::string peer_name, target;
  bool higher_is_better;
};
std::vector<Row> rows;

void add_row(const std::string& name, const std::string& unit, double b, double p, const std::string& peer,
             const std::string& target, bool higher_better = true) {
  rows.push_back({name, unit, b, p, peer, target, higher_better});
  std::printf("  %-44s braid %10.3f  %-12s %10.3f %s\n", name.c_str(), b, peer.c_str(), p, unit.c_str());
  std::fflush(stdout);
}

void device_sync() { cudaDeviceSynchronize(); }

// ---- bandwidth: copy, add, reductions, softmax ----
void bench_bandwidth() {
  using namespace braid;
  const int64_t n = int64_t{1} << 28;  // 1 GiB of float32
  const double gib = n * 4.0;
  // Plain device copy: the reference bandwidth.
  void *src, *dst;
  cudaMalloc(&src, n * 4);
  cudaMalloc(&dst, n * 4);
  cudaMemset(src, 0, n * 4);
  double copy_s = median_of(5, [&] {
    device_sync();
    auto t0 = Clock::now();
    for (int i = 0; i < 10; ++i) cudaMemcpyAsync(dst, src, n * 4, cudaMemcpyDeviceToDevice);
    device_sync();
    return seconds_since(t0) / 10;
  });
  cudaFree(src);
  cudaFree(dst);
  double copy_bw = 2 * gib / copy_s / 1e9;

  Stream s = new_stream(Device::gpu);
  array a = full({static_cast<int32_t>(n)}, 1.0f, s);
  array b = full({static_cast<int32_t>(n)}, 2.0f, s);
  eval(a, b);
  auto time_braid = [&](const std::function<array()>& make, int iters) {
    return median_of(5, [&] {
      synchronize(s);
      auto t0 = Clock::now();
      for (int i = 0; i < iters; ++i) {
        array c = make();
        async_eval(c);
      }
      synchronize(s);
      return seconds_since(t0) / iters;
    });
  };
  double copy_braid = time_braid([&] { return full({static_cast<int32_t>(n)}, a, s); }, 10);
  double add_braid = time_braid([&] { return add(a, b, s); }, 10);
  add_row("copy 1 GiB f32 (GB/s, peer = cudaMemcpy)", "GB/s", 2 * gib / copy_braid / 1e9, copy_bw, "cudaMemcpy",
          ">= 0.9x");
  add_row("add 1 GiB f32 (GB/s, peer = cudaMemcpy)", "GB/s", 3 * gib / add_braid / 1e9, copy_bw, "cudaMemcpy",
          ">= 0.9x");

  array m = reshape(a, {16384, 16384}, s);
  eval(m);
  double sum_all = time_braid([&] { return sum(m, false, s); }, 10);
  double sum_ax0 = time_braid([&] { return sum(m, 0, false, s); }, 10);
  double sum_ax1 = time_braid([&] { return sum(m, 1, false, s); }, 10);
  add_row("sum all 1 GiB f32 (GB/s vs copy)", "GB/s", gib / sum_all / 1e9, copy_bw, "cudaMemcpy", ">= 0.9x");
  add_row("sum axis 0 (16384^2) (GB/s vs copy)", "GB/s", gib / sum_ax0 / 1e9, copy_bw, "cudaMemcpy", ">= 0.9x");
  add_row("sum axis 1 (16384^2) (GB/s vs copy)", "GB/s", gib / sum_ax1 / 1e9, copy_bw, "cudaMemcpy", ">= 0.9x");

  // Softmax over rows, against torch::softmax.
  array x = reshape(arange(0.0, 65536.0 * 4096.0, 1.0, float32, s), {65536, 4096}, s);
  x = multiply(x, array(1e-6f), s);
  eval(x);
  double sm_braid = time_braid([&] { return softmax(x, -1, false, s); }, 10);
  auto tx = torch::arange(65536.0 * 4096.0, torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA))
                .reshape({65536, 4096}) * 1e-6;
  double sm_torch = median_of(5, [&] {
    device_sync();
    auto t0 = Clock::now();
    for (int i = 0; i < 10; ++i) {
      auto y = torch::softmax(tx, -1);
    }
    device_sync();
    return seconds_since(t0) / 10;
  });
  const double sm_bytes = 2.0 * 65536 * 4096 * 4;
  add_row("softmax rows 65536x4096 f32 (GB/s)", "GB/s", sm_bytes / sm_braid / 1e9, sm_bytes / sm_torch / 1e9,
          "torch", ">= 1.1x");
}

// ---- matmul ----
void bench_matmul() {
  using namespace braid;
  const int n = 8192;
  const double flop = 2.0 * n * n * n;
  Stream s = new_stream(Device::gpu);
  for (Dtype dt : {bfloat16, float32}) {
    array a = astype(multiply(reshape(arange(0.0, double(n) * n, 1.0, float32, s), {n, n}, s), array(1e-8f), s), dt, s);
    array b = astype(multiply(reshape(arange(0.0, double(n) * n, 1.0, float32, s), {n, n}, s), array(1e-8f), s), dt, s);
    eval(a, b);
    double tb = median_of(5, [&] {
      synchronize(s);
      auto t0 = Clock::now();
      for (int i = 0; i < 5; ++i) async_eval(matmul(a, b, s));
      synchronize(s);
      return seconds_since(t0) / 5;
    });
    auto opts = torch::TensorOptions().dtype(dt == bfloat16 ? torch::kBFloat16 : torch::kFloat32).device(torch::kCUDA);
    auto ta = torch::rand({n, n}, opts);
    auto tb2 = torch::rand({n, n}, opts);
    at::globalContext().setAllowTF32CuBLAS(false);
    double tt = median_of(5, [&] {
      device_sync();
      auto t0 = Clock::now();
      for (int i = 0; i < 5; ++i) {
        auto c = torch::matmul(ta, tb2);
      }
      device_sync();
      return seconds_since(t0) / 5;
    });
    add_row(std::string("matmul 8192^3 ") + (dt == bfloat16 ? "bf16" : "f32") + " (TFLOP/s)", "TFLOP/s",
            flop / tb / 1e12, flop / tt / 1e12, "torch", ">= 0.95x");
  }
}

// ---- per-op overhead ----
void bench_overhead() {
  using namespace braid;
  Stream s = new_stream(Device::gpu);
  array x = zeros({16}, float32, s);
  // The constant lives on the device, as torch's `y + 1.0` passes it to the kernel directly;
  // a fresh host scalar per op would add a small copy kernel to every op.
  array one = full({}, 1.0f, s);
  eval(x, one);
  double tb = median_of(7, [&] {
    auto t0 = Clock::now();
    array y = x;
    for (int i = 0; i < 1000; ++i) y = add(y, one, s);
    eval(y);
    return seconds_since(t0) / 1000;
  });
  auto tx = torch::zeros({16}, torch::TensorOptions().device(torch::kCUDA));
  double tt = median_of(7, [&] {
    auto t0 = Clock::now();
    auto y = tx;
    for (int i = 0; i < 1000; ++i) y = y + 1.0;
    device_sync();
    return seconds_since(t0) / 1000;
  });
  add_row("tiny-add chain, 1000 ops (us/op)", "us/op", tb * 1e6, tt * 1e6, "torch", "<= 1x", false);
}

// ---- serving: 3-layer 1024-wide MLP at batch 8 ----
double serve_braid(int threads, bool shared_stream, double seconds) {
  using namespace braid;
  const int w = 1024;
  Stream shared = new_stream(Device::gpu);
  std::vector<array> weights;
  for (int l = 0; l < 3; ++l) {
    weights.push_back(multiply(reshape(arange(0.0, double(w) * w, 1.0, float32, shared), {w, w}, shared),
                               array(1e-7f), shared));
  }
  eval(weights);
  std::atomic<long> done{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      Stream s = shared_stream ? shared : new_stream(Device::gpu);
      array in = full({8, w}, 0.5f + t, s);
      array zero = full({}, 0.0f, s);
      eval(in, zero);
      while (!stop.load(std::memory_order_relaxed)) {
        array h = in;
        for (int l = 0; l < 3; ++l) h = maximum(matmul(h, weights[l], s), zero, s);
        h.eval();
        done.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : pool) th.join();
  return done.load() / seconds;
}

double serve_torch(int threads, double seconds) {
  const int w = 1024;
  auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA);
  std::vector<torch::Tensor> weights;
  for (int l = 0; l < 3; ++l) weights.push_back(torch::rand({w, w}, opts) * 1e-3);
  device_sync();
  std::atomic<long> done{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      torch::NoGradGuard ng;
      auto stream = c10::cuda::getStreamFromPool();
      c10::cuda::CUDAStreamGuard guard(stream);
      auto in = torch::full({8, w}, 0.5 + t, opts);
      while (!stop.load(std::memory_order_relaxed)) {
        auto h = in;
        for (int l = 0; l < 3; ++l) h = torch::relu(torch::matmul(h, weights[l]));
        stream.synchronize();
        done.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : pool) th.join();
  return done.load() / seconds;
}

void bench_serving() {
  double one = 0;
  for (int t : {1, 2, 4, 8, 16}) {
    double r = serve_braid(t, false, 2.0);
    if (t == 1) one = r;
    double p = t == 16 || t == 1 ? serve_torch(t, 2.0) : 0;
    add_row("MLP serve, " + std::to_string(t) + " threads own streams (inf/s)", "inf/s", r, p, p > 0 ? "torch" : "-",
            t == 16 ? ">= 1.5x torch, >= 3x braid 1T (" + std::to_string(r / one).substr(0, 4) + "x)" : "");
  }
  double shared = serve_braid(16, true, 2.0);
  add_row("MLP serve, 16 threads one shared stream (inf/s)", "inf/s", shared, 0, "-", "");
}

}  // namespace

int main(int argc, char** argv) {
  if (!braid::is_available(braid::Device::gpu) || !torch::cuda::is_available()) {
    std::printf("no GPU available: nothing to measure\n");
    return 1;
  }
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  std::printf("GPU: %s, %d SMs, braid %s, torch %s\n", p.name, p.multiProcessorCount, braid::version(), TORCH_VERSION);
  std::string only = argc > 1 ? argv[1] : "all";
  if (only == "all" || only == "bandwidth") bench_bandwidth();
  if (only == "all" || only == "matmul") bench_matmul();
  if (only == "all" || only == "overhead") bench_overhead();
  if (only == "all" || only == "serving") bench_serving();

  std::printf("\n| benchmark | braid | peer | peer value | braid/peer | target |\n|---|---|---|---|---|---|\n");
  for (const auto& r : rows) {
    double ratio = r.peer > 0 ? (r.higher_is_better ? r.braid / r.peer : r.peer / r.braid) : 0;
    std::printf("| %s | %.3f | %s | %.3f | %s | %s |\n", r.name.c_str(), r.braid, r.peer_name.c_str(), r.peer,
                r.peer > 0 ? (std::to_string(ratio).substr(0, 5) + (r.higher_is_better ? "x" : "x (peer/braid)")).c_str()
                           : "-",
                r.target.c_str());
  }
  return 0;
}
