// braid demo: a two-layer MLP whose graph is built on the main thread and served by a pool
// of worker threads, first all on one shared stream, then each worker on its own stream.
// Every answer is compared bit for bit with a single-threaded run.
//
// What it shows (docs/threading.md):
//   - the model's weights are lazy arrays built on the main thread; whichever worker needs
//     them first computes them, exactly once, and every other worker uses the result;
//   - any number of threads may submit to one stream, with no lock of their own;
//   - a StreamContext on a worker changes only that worker's default stream.
#include <braid/braid.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr int kInputs = 256;
constexpr int kHidden = 512;
constexpr int kOutputs = 10;
constexpr int kBatch = 8;        // rows per request
constexpr int kRequests = 2000;  // per mode
constexpr int kWorkers = 4;

// Deterministic values in [-1, 1) from a 32-bit linear congruential generator (no random
// module yet), so every run and every thread sees the same model and requests.
std::vector<float> lcg_values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t x = seed;
  for (auto& f : v) {
    x = x * 1664525u + 1013904223u;
    f = static_cast<float>(x >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

// The host-side numbers of the model; make_model turns them into lazy arrays.
struct ModelValues {
  std::vector<float> w1 = lcg_values(size_t{kInputs} * kHidden, 1);
  std::vector<float> b1 = lcg_values(kHidden, 2);
  std::vector<float> w2 = lcg_values(size_t{kHidden} * kOutputs, 3);
  std::vector<float> b2 = lcg_values(kOutputs, 4);
};

struct Mlp {
  braid::array w1, b1, w2, b2;

  // Builds the graph of one forward pass on the calling thread's default stream.
  braid::array forward(const braid::array& x) const {
    braid::array h = braid::maximum(braid::matmul(x, w1) + b1, braid::array(0.0f));
    return braid::matmul(h, w2) + b2;
  }
};

// The weights are scaled lazily: nothing is computed here, on the main thread. The first
// worker to evaluate a request computes them; the others wait for that one computation.
Mlp make_model(const ModelValues& v) {
  const float s1 = 1.0f / std::sqrt(static_cast<float>(kInputs));
  const float s2 = 1.0f / std::sqrt(static_cast<float>(kHidden));
  return Mlp{braid::array(v.w1.begin(), {kInputs, kHidden}) * s1,
             braid::array(v.b1.begin(), {kHidden}) * 0.1f,
             braid::array(v.w2.begin(), {kHidden, kOutputs}) * s2,
             braid::array(v.b2.begin(), {kOutputs}) * 0.1f};
}

using Answers = std::vector<std::vector<float>>;

// Handles requests until none are left: input -> forward -> eval -> read the output.
void serve(const Mlp& model, const std::vector<std::vector<float>>& requests, std::atomic<int>& next,
           Answers& answers) {
  for (int r = next.fetch_add(1); r < kRequests; r = next.fetch_add(1)) {
    braid::array x(requests[r].begin(), {kBatch, kInputs});
    braid::array y = model.forward(x);
    braid::eval(y);
    const float* out = y.data<float>();
    answers[r].assign(out, out + kBatch * kOutputs);
  }
}

struct Mode {
  const char* name;
  double requests_per_s;
  int mismatches;
};

// Serves every request with `workers` threads. `worker_stream(i)` gives worker i's stream.
template <typename StreamFor>
Mode run_workers(const char* name, const ModelValues& values, const std::vector<std::vector<float>>& requests,
                 const Answers& reference, StreamFor worker_stream) {
  Mlp model = make_model(values);  // fresh lazy weights, built here on the main thread
  Answers answers(kRequests);
  std::atomic<int> next{0};
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int i = 0; i < kWorkers; ++i) {
    workers.emplace_back([&, i] {
      braid::StreamContext on(worker_stream(i));  // this worker's default stream only
      serve(model, requests, next, answers);
    });
  }
  for (auto& w : workers) w.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int mismatches = 0;
  for (int r = 0; r < kRequests; ++r) {
    if (answers[r].size() != reference[r].size() ||
        std::memcmp(answers[r].data(), reference[r].data(), answers[r].size() * sizeof(float)) != 0) {
      ++mismatches;
    }
  }
  return {name, kRequests / seconds, mismatches};
}

}  // namespace

int main() {
  std::printf("braid %s demo: MLP %d -> %d -> %d (relu), %d requests of %d rows per mode\n",
              braid::version(), kInputs, kHidden, kOutputs, kRequests, kBatch);

  const ModelValues values;
  std::vector<std::vector<float>> requests;
  requests.reserve(kRequests);
  for (int r = 0; r < kRequests; ++r) requests.push_back(lcg_values(size_t{kBatch} * kInputs, 1000u + r));

  // The reference: one thread serves everything, on its default stream.
  Answers reference(kRequests);
  double reference_rate;
  {
    Mlp model = make_model(values);
    std::atomic<int> next{0};
    auto t0 = std::chrono::steady_clock::now();
    serve(model, requests, next, reference);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    reference_rate = kRequests / seconds;
  }

  braid::Stream shared = braid::new_stream(braid::Device::cpu);
  Mode one_stream = run_workers("4 workers, one shared stream", values, requests, reference,
                                [&](int) { return shared; });
  Mode own_streams = run_workers("4 workers, one stream each", values, requests, reference,
                                 [](int) { return braid::new_stream(braid::Device::cpu); });

  std::printf("  %-30s %9.0f requests/s\n", "1 thread (reference)", reference_rate);
  bool ok = true;
  for (const Mode& m : {one_stream, own_streams}) {
    std::printf("  %-30s %9.0f requests/s  (%.2fx)%s\n", m.name, m.requests_per_s,
                m.requests_per_s / reference_rate, m.mismatches ? "  MISMATCH" : "");
    if (m.mismatches) {
      std::printf("    %d of %d answers differ from the single-threaded ones\n", m.mismatches, kRequests);
      ok = false;
    }
  }
  std::printf("  first request, row 0: [");
  for (int j = 0; j < kOutputs; ++j) std::printf("%s%.4f", j ? ", " : "", reference[0][j]);
  std::printf("]\n");
  std::printf("%s\n", ok ? "all answers match" : "ANSWERS DIFFER");
  return ok ? 0 : 1;
}
