// The C API's per-op overhead against the C++ API's (issue target: at most 1.2x): a chain of
// 1,000 tiny adds (16 floats, as braid_bench_cpu's figure a), built and evaluated through
// <braid/c.h> and through braid's C++ API, samples interleaved in one run.
//
//   braid_bench_capi [--runs N] [--quick]
#include <braid/braid.h>
#include <braid/c.h>

#include <iostream>

#include "bench_report.h"

using namespace braid_bench;

namespace {

constexpr int kChainLen = 1000;
constexpr int kElems = 16;

void cxx_chain(const braid::array& start) {
  braid::array y = start;
  for (int i = 0; i < kChainLen; ++i) y = y + 1.0f;
  y.eval();
  check(y.data<float>()[0] == static_cast<float>(kChainLen));
}

// The same chain as a C program writes it: one handle per result, freed when replaced.
void c_chain(mlx_array start, mlx_array one, mlx_stream s) {
  mlx_array y = mlx_array_new();
  mlx_array_set(&y, start);
  for (int i = 0; i < kChainLen; ++i) {
    if (mlx_add(&y, y, one, s) != 0) check(false);
  }
  if (mlx_array_eval(y) != 0) check(false);
  float first = 0;
  const float* data = mlx_array_data_float32(y);
  if (data != nullptr) first = data[0];
  check(first == static_cast<float>(kChainLen));
  mlx_array_free(y);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 15;
  std::string plot_data;  // accepted for bench/run.sh; this report has no chart
  parse_bench_args(argc, argv, runs, [] {}, &plot_data);
  const std::string load_before = load_average();

  braid::array cxx_start = braid::zeros({kElems});
  cxx_start.eval();

  const int shape[] = {kElems};
  std::vector<float> zeros(kElems, 0.0f);
  mlx_array c_start = mlx_array_new_data(zeros.data(), shape, 1, MLX_FLOAT32);
  mlx_array c_one = mlx_array_new_float(1.0f);
  mlx_stream s = mlx_default_cpu_stream_new();
  mlx_array_eval(c_start);

  constexpr int kChains = 20;
  auto cxx_side = [&](int calls) {
    auto t0 = Clock::now();
    for (int c = 0; c < calls * kChains; ++c) cxx_chain(cxx_start);
    return seconds_since(t0) * 1e6 / (double(calls) * kChains * kChainLen);
  };
  auto c_side = [&](int calls) {
    auto t0 = Clock::now();
    for (int c = 0; c < calls * kChains; ++c) c_chain(c_start, c_one, s);
    return seconds_since(t0) * 1e6 / (double(calls) * kChains * kChainLen);
  };
  // One call of each side per sample (20 chains, 20,000 ops), sides alternating.
  std::vector<Stats> st(2);
  cxx_side(1);
  c_side(1);
  for (int r = 0; r < runs; ++r) {
    st[0].samples.push_back(cxx_side(1));
    st[1].samples.push_back(c_side(1));
  }
  Stats ratio = quotients(st[1], st[0]);

  mlx_array_free(c_start);
  mlx_array_free(c_one);
  mlx_stream_free(s);

  std::cout << "# braid C API overhead\n\n"
            << "- machine: " << cpu_model() << ", " << std::thread::hardware_concurrency()
            << " hardware threads; load average before: " << load_before << ", after: " << load_average() << "\n"
            << "- " << utc_now() << ", " << compiler() << ", " << runs << " samples per side, interleaved\n"
            << "- chain of " << kChainLen << " adds of " << kElems << " floats, built and evaluated; "
            << "microseconds per op, median (min .. max)\n\n";
  print_table(std::cout, {"figure", "C++ API", "C API", "C / C++", "target", "result"}, "llllll",
              {{"per-op overhead", spread(st[0], 3), spread(st[1], 3), spread(ratio, 2), "<= 1.20",
                verdict(ratio.median() <= 1.2)}});
  if (wrong_answers() != 0) {
    std::cout << "\n**" << wrong_answers() << " wrong answers: the figures are void.**\n";
    return 1;
  }
  return 0;
}
