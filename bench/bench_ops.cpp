// braid's array ops against libtorch on the CPU, side by side in one run (DESIGN.md section 5):
// unary math, broadcast add, reductions over each axis, sort, take, scatter_add, and the
// copies (concatenate, slice_update) against the machine's memcpy bandwidth. Every figure is
// a median over samples, shown with its spread; braid's answers are checked against
// libtorch's once. Prints a Markdown report. Options: --runs N, --quick, --plot-data FILE.
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <braid/braid.h>
#include <torch/torch.h>
#include <torch/version.h>

#include "bench_report.h"

namespace {

using namespace braid_bench;
using braid::array;

struct Config {
  int threads = 1;         // braid's pool and libtorch's intra-op pool
  int runs = 11;           // samples per side of a figure
  double sample_s = 0.05;  // a sample repeats the call for about this long
  std::string plot_data;
};

// ---- timing one side ----

// braid: build the op and evaluate it, each call; the result is dropped, so its buffer goes
// back to the allocator's cache as it would in a loop of a program.
Timed braid_timed(std::function<array()> op) {
  return [op = std::move(op)](int calls) {
    auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) {
      array y = op();
      braid::eval(y);
    }
    return seconds_since(t0) / calls;
  };
}

// libtorch: eager, under InferenceMode, as a serving loop would run it.
Timed torch_timed(std::function<void()> op) {
  return [op = std::move(op)](int calls) {
    c10::InferenceMode guard;
    auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) op();
    return seconds_since(t0) / calls;
  };
}

// The machine's copy: memcpy of `bytes`, split over `threads` threads (as braid and libtorch
// split theirs). Buffers are written once first, so no page is faulted in while timed.
struct MemcpyPeer {
  std::vector<char> src, dst;
  int threads;
  MemcpyPeer(size_t bytes, int threads) : src(bytes, 1), dst(bytes, 0), threads(threads) {}
  void once() {
    const size_t part = (src.size() + threads - 1) / threads;
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) {
      const size_t at = std::min(src.size(), t * part), n = std::min(part, src.size() - at);
      pool.emplace_back([this, at, n] { std::memcpy(dst.data() + at, src.data() + at, n); });
    }
    std::memcpy(dst.data(), src.data(), std::min(part, src.size()));
    for (auto& th : pool) th.join();
  }
  Timed timed() {
    return [this](int calls) {
      auto t0 = Clock::now();
      for (int i = 0; i < calls; ++i) once();
      return seconds_since(t0) / calls;
    };
  }
};

// ---- data ----

torch::Tensor torch_of(const std::vector<float>& v, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat32).clone();
}

// libtorch's own index type.
torch::Tensor torch_ids(const std::vector<int32_t>& v) {
  return torch::from_blob(const_cast<int32_t*>(v.data()), {int64_t(v.size())}, torch::kInt32)
      .to(torch::kInt64);
}

std::vector<double> torch_values(const torch::Tensor& t) {
  torch::Tensor d = t.to(torch::kFloat64).contiguous();
  return std::vector<double>(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
}

// ---- the figures ----

struct Run {
  const Config& cfg;
  std::vector<Figure> figures;
  std::vector<Answer> answers;
  // Measures a figure, then drops its timed functions: they refer to the caller's data.
  void add(Figure f) {
    std::cerr << "  " << f.id << ". " << f.name << "\n";
    measure(f, cfg.runs, cfg.sample_s);
    f.braid = f.torch = f.copy = nullptr;
    figures.push_back(std::move(f));
  }
  void answer(std::string what, const array& got, const torch::Tensor& want, double tolerance) {
    answers.push_back({std::move(what), max_abs_diff(host_values(got), torch_values(want)), tolerance});
  }
};

void bench_unary(Run& run) {
  const int64_t n = int64_t{16} << 20;
  const std::vector<float> host = random_floats(n, -3.0f, 3.0f, 1);
  array x = braid_of(host, {int32_t(n)});
  torch::Tensor tx = torch_of(host, {n}), ty = torch::empty({n});
  struct Unary {
    const char* name;
    array (*braid_op)(const array&, braid::StreamOrDevice);
    at::Tensor& (*torch_out)(at::Tensor&, const at::Tensor&);
    double tolerance;  // exp's values reach e^3 = 20
  };
  const Unary ops[] = {{"exp", braid::exp, at::exp_out, 1e-5},
                       {"tanh", braid::tanh, at::tanh_out, 1e-6},
                       {"erf", braid::erf, at::erf_out, 1e-6}};
  int i = 1;
  for (const Unary& u : ops) {
    run.answer(std::string(u.name) + ", 16M", u.braid_op(x, {}), u.torch_out(ty, tx), u.tolerance);
    Figure f{"u" + std::to_string(i++), std::string(u.name) + ", 16M float32, ms/call", Peer::torch_time,
             1.0};
    f.braid = braid_timed([&] { return u.braid_op(x, {}); });
    f.torch = torch_timed([&] { u.torch_out(ty, tx); });
    run.add(std::move(f));
  }
}

void bench_broadcast(Run& run) {
  const int n = 4096;
  const std::vector<float> col = random_floats(n, -1, 1, 2), row = random_floats(n, -1, 1, 3);
  array a = braid_of(col, {n, 1}), b = braid_of(row, {1, n});
  torch::Tensor ta = torch_of(col, {n, 1}), tb = torch_of(row, {1, n}), tc = torch::empty({n, n});
  run.answer("a[4096,1] + b[1,4096]", a + b, at::add_out(tc, ta, tb), 0);
  Figure f{"b1", "a[4096,1] + b[1,4096] float32, ms/call", Peer::torch_time, 1.0};
  f.braid = braid_timed([&] { return a + b; });
  f.torch = torch_timed([&] { at::add_out(tc, ta, tb); });
  run.add(std::move(f));
}

void bench_reductions(Run& run) {
  const int n = 4096;
  const std::vector<float> host = random_floats(int64_t(n) * n, -1, 1, 4);
  array x = braid_of(host, {n, n});
  torch::Tensor tx = torch_of(host, {n, n}), tout = torch::empty({n}),
                tidx = torch::empty({n}, torch::kInt64);
  int i = 1;
  for (int axis : {0, 1}) {
    const std::string of = " over axis " + std::to_string(axis) + " of 4096x4096 float32, ms/call";
    const std::vector<int64_t> dims = {axis};
    run.answer("sum axis " + std::to_string(axis), braid::sum(x, axis), at::sum_out(tout, tx, dims), 1e-3);
    Figure sum{"r" + std::to_string(i++), "sum" + of, Peer::torch_time, 1.0};
    sum.braid = braid_timed([&] { return braid::sum(x, axis); });
    sum.torch = torch_timed([&] { at::sum_out(tout, tx, dims); });
    run.add(std::move(sum));

    run.answer("max axis " + std::to_string(axis), braid::max(x, axis), at::amax_out(tout, tx, dims), 0);
    Figure max{"r" + std::to_string(i++), "max" + of, Peer::torch_time, 1.0};
    max.braid = braid_timed([&] { return braid::max(x, axis); });
    max.torch = torch_timed([&] { at::amax_out(tout, tx, dims); });
    run.add(std::move(max));

    // Ties may pick different positions: compare the values found there.
    array where = braid::argmax(x, axis);
    at::argmax_out(tidx, tx, axis);
    array picked = braid::squeeze(braid::take_along_axis(x, braid::expand_dims(where, axis), axis), axis);
    run.answer("x at argmax axis " + std::to_string(axis), picked,
               tx.gather(axis, tidx.unsqueeze(axis)).squeeze(axis), 0);
    Figure arg{"r" + std::to_string(i++), "argmax" + of, Peer::torch_time, 1.0};
    arg.braid = braid_timed([&] { return braid::argmax(x, axis); });
    arg.torch = torch_timed([&] { at::argmax_out(tidx, tx, axis); });
    run.add(std::move(arg));
  }
}

void bench_sort(Run& run) {
  const int64_t n = int64_t{1} << 20;
  const std::vector<float> host = random_floats(n, -1, 1, 5);
  array x = braid_of(host, {int32_t(n)});
  torch::Tensor tx = torch_of(host, {n}), tv = torch::empty({n}), ti = torch::empty({n}, torch::kInt64);
  at::sort_out(tv, ti, tx, 0);
  run.answer("sort 1M", braid::sort(x, 0), tv, 0);
  // Equal keys may be ordered differently: compare the values the positions select.
  run.answer("x at argsort 1M", braid::take(x, braid::argsort(x, 0), 0), tv, 0);

  Figure sort{"s1", "sort 1M float32, ms/call", Peer::torch_time, 1.0};
  sort.braid = braid_timed([&] { return braid::sort(x, 0); });
  sort.torch = torch_timed([&] { at::sort_out(tv, ti, tx, 0); });
  run.add(std::move(sort));
  Figure arg{"s2", "argsort 1M float32, ms/call", Peer::torch_time, 1.0};
  arg.braid = braid_timed([&] { return braid::argsort(x, 0); });
  arg.torch = torch_timed([&] { at::argsort_out(ti, tx, /*stable=*/false, 0); });
  run.add(std::move(arg));
}

void bench_indexing(Run& run) {
  const int rows = 32000, width = 1024, count = 4096;
  const std::vector<float> host = random_floats(int64_t(rows) * width, -1, 1, 6);
  const std::vector<float> host_updates = random_floats(int64_t(count) * width, -1, 1, 7);
  const std::vector<int32_t> host_ids = random_ids(count, rows, 8);
  array table = braid_of(host, {rows, width});
  array ids = braid_of(host_ids, {count});
  array updates = braid_of(host_updates, {count, 1, width});
  torch::Tensor ttable = torch_of(host, {rows, width}), tids = torch_ids(host_ids);
  torch::Tensor tupdates = torch_of(host_updates, {count, width});

  torch::Tensor gathered = torch::empty({count, width});
  run.answer("take 4096 rows", braid::take(table, ids, 0), at::index_select_out(gathered, ttable, 0, tids),
             0);
  Figure take{"i1", "take 4096 int32 ids along axis 0 of 32000x1024 float32, ms/call", Peer::torch_time, 1.0};
  take.braid = braid_timed([&] { return braid::take(table, ids, 0); });
  take.torch = torch_timed([&] { at::index_select_out(gathered, ttable, 0, tids); });
  run.add(std::move(take));

  // scatter_add returns a new array. `t = scatter_add(t, ...)` is the idiom that updates a
  // table (MLX then reuses t's buffer); libtorch's is index_add_ in place.
  torch::Tensor summed = torch::empty({rows, width});
  run.answer("scatter_add 4096 rows", braid::scatter_add(table, ids, updates, 0),
             at::index_add_out(summed, ttable, 0, tids, tupdates), 1e-5);
  array running = table;
  torch::Tensor trunning = ttable.clone();
  Figure add{"i2",
             "scatter_add, t = scatter_add(t, 4096 ids, [4096,1,1024]) on a 32000x1024 float32 table; "
             "torch index_add_ in place, ms/call",
             Peer::torch_time, 1.0};
  add.braid = braid_timed([&] { return running = braid::scatter_add(running, ids, updates, 0); });
  add.torch = torch_timed([&] { trunning.index_add_(0, tids, tupdates); });
  run.add(std::move(add));
  Figure fresh{"i2r", "scatter_add into a new array (the table kept); torch index_add_out, ms/call",
               Peer::torch_time, 0};
  fresh.braid = braid_timed([&] { return braid::scatter_add(table, ids, updates, 0); });
  fresh.torch = torch_timed([&] { at::index_add_out(summed, ttable, 0, tids, tupdates); });
  run.add(std::move(fresh));
}

void bench_copies(Run& run) {
  const int n = 4096, quarter = 1024;
  const double out_bytes = 4.0 * n * n;
  MemcpyPeer memcpy_peer(static_cast<size_t>(out_bytes), run.cfg.threads);

  std::vector<array> parts;
  std::vector<torch::Tensor> tparts;
  for (int p = 0; p < 4; ++p) {
    const std::vector<float> host = random_floats(int64_t(n) * quarter, -1, 1, 10 + p);
    parts.push_back(braid_of(host, {n, quarter}));
    tparts.push_back(torch_of(host, {n, quarter}));
  }
  torch::Tensor tcat = torch::empty({n, n});
  run.answer("concatenate 4 x [4096,1024] axis 1", braid::concatenate(parts, 1),
             at::cat_out(tcat, at::TensorList(tparts), 1), 0);
  Figure cat{"c1",
             "concatenate 4 x [4096,1024] float32 along axis 1, GB/s (read + write)",
             Peer::copy_bandwidth,
             0.9,
             2 * out_bytes,
             2 * out_bytes};
  cat.braid = braid_timed([&] { return braid::concatenate(parts, 1); });
  cat.torch = torch_timed([&] { at::cat_out(tcat, at::TensorList(tparts), 1); });
  cat.copy = memcpy_peer.timed();
  run.add(std::move(cat));
  parts.clear();
  tparts.clear();

  const std::vector<float> host = random_floats(int64_t(n) * n, -1, 1, 20);
  const std::vector<float> host_block = random_floats(int64_t(2048) * 1024, -1, 1, 21);
  array src = braid_of(host, {n, n}), block = braid_of(host_block, {2048, 1024});
  torch::Tensor tsrc = torch_of(host, {n, n}), tblock = torch_of(host_block, {2048, 1024});
  const braid::Shape start = {1024, 2048}, stop = {3072, 3072};
  auto torch_region = [](torch::Tensor& t) { return t.narrow(0, 1024, 2048).narrow(1, 2048, 1024); };
  torch::Tensor tout = torch::empty({n, n});
  auto torch_update = [&] {
    tout.copy_(tsrc);
    torch_region(tout).copy_(tblock);
  };
  {
    c10::InferenceMode guard;
    torch_update();
  }
  run.answer("slice_update [2048,1024] into [4096,4096]", braid::slice_update(src, block, start, stop), tout,
             0);
  // A new array: src is read, the result written, the block read.
  Figure upd{"c2",
             "slice_update of a [2048,1024] block into [4096,4096] float32, new array, GB/s",
             Peer::copy_bandwidth,
             0.9,
             2 * out_bytes + 4.0 * 2048 * 1024,
             2 * out_bytes};
  upd.braid = braid_timed([&] { return braid::slice_update(src, block, start, stop); });
  upd.torch = torch_timed(torch_update);
  upd.copy = memcpy_peer.timed();
  run.add(std::move(upd));
  // The idiom that updates a cache, `x = slice_update(x, ...)`: MLX reuses x's buffer and
  // libtorch writes into x, so only the block moves.
  array running = src;
  torch::Tensor trunning = tsrc.clone();
  Figure inplace{"c2r", "x = slice_update(x, block) against torch x[region].copy_(block), ms/call",
                 Peer::torch_time, 0};
  inplace.braid = braid_timed([&] { return running = braid::slice_update(running, block, start, stop); });
  inplace.torch = torch_timed([&] { torch_region(trunning).copy_(tblock); });
  run.add(std::move(inplace));
}

// conv2d 3x3, 64 -> 64 channels, 56x56, padding 1, batch 8, float32: NHWC input and
// [O, kh, kw, I] weights for braid (MLX's layout), at::conv2d on NCHW for libtorch (its
// default layout); answers compared after permuting libtorch's output to NHWC.
void bench_conv(Run& run) {
  const int n = 8, hw = 56, c = 64;
  const std::vector<float> host_x = random_floats(int64_t(n) * hw * hw * c, -1, 1, 11);
  const std::vector<float> host_w = random_floats(int64_t(c) * 9 * c, -0.1, 0.1, 12);
  array x = braid_of(host_x, {n, hw, hw, c});
  array w = braid_of(host_w, {c, 3, 3, c});
  torch::Tensor tx = torch_of(host_x, {n, hw, hw, c}).permute({0, 3, 1, 2}).contiguous();
  torch::Tensor tw = torch_of(host_w, {c, 3, 3, c}).permute({0, 3, 1, 2}).contiguous();
  run.answer("conv2d 3x3 64->64", braid::conv2d(x, w, {1, 1}, {1, 1}),
             at::conv2d(tx, tw, {}, 1, 1).permute({0, 2, 3, 1}).contiguous(), 1e-3);
  Figure conv{"v1", "conv2d 3x3 64->64 56x56 batch 8 float32, ms/call", Peer::torch_time, 0.8};
  conv.braid = braid_timed([&] { return braid::conv2d(x, w, {1, 1}, {1, 1}); });
  conv.torch = torch_timed([&] { at::conv2d(tx, tw, {}, 1, 1); });
  run.add(std::move(conv));
}

Config parse_args(int argc, char** argv) {
  Config cfg;
  parse_bench_args(argc, argv, cfg.runs, [&cfg] { cfg.sample_s = 0.02; }, &cfg.plot_data);
  return cfg;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg = parse_args(argc, argv);
  cfg.threads = pool_threads();  // before braid's pool starts (on first use, below)
  torch::set_num_threads(cfg.threads);
  const int torch_threads = torch::get_num_threads();
  const std::string load_before = load_average();
  const std::string date = utc_now();

  std::cerr << "braid op bench: running (" << cfg.runs << " samples per figure)...\n";
  Run run{cfg, {}, {}};
  bench_unary(run);
  bench_broadcast(run);
  bench_reductions(run);
  bench_sort(run);
  bench_indexing(run);
  braid::clear_cache();
  bench_copies(run);
  braid::clear_cache();
  bench_conv(run);
  const std::string load_after = load_average();

  std::ostream& out = std::cout;
  out << "# braid CPU op benchmark\n\n";
  out << "- date: " << date << "\n";
  out << "- machine: " << cpu_model() << ", " << std::thread::hardware_concurrency() << " hardware threads\n";
  out << "- threads: braid pool " << cfg.threads << ", libtorch intra-op " << torch_threads
      << " (torch::set_num_threads), memcpy split over " << cfg.threads << "\n";
  out << "- versions: braid " << braid::version() << ", libtorch " << TORCH_VERSION << ", compiler "
      << compiler() << "\n";
  out << "- load average (1/5/15 min): " << load_before << " at start, " << load_after << " at end\n";
  out << "- method: median of " << cfg.runs << " samples per figure; a sample repeats the call for about "
      << fmt(cfg.sample_s * 1e3, 0) << " ms (at least once) after a warm-up call; samples of braid, libtorch "
      << "and the copy alternate; braid's calls end in eval(), so all their work is inside the timing\n";
  out << "- libtorch: eager under InferenceMode, the *_out form into a preallocated output where it has one; "
         "ids as int64 (its index type)\n";
  out << "- ratio: torch time / braid time for ms/call figures, braid GB/s / copy GB/s for GB/s figures "
         "(higher is better for braid); bytes count reads plus writes; the copy is memcpy of a buffer the "
         "size "
         "of the result; the libtorch column of a GB/s figure is for reference\n\n";
  print_figures(out, run.figures);
  out << "\nSpread, median (min .. max) over the samples (ms/call or GB/s, as above):\n\n";
  print_spread(out, run.figures);
  out << "\n";
  print_answers(out, run.answers);

  if (!cfg.plot_data.empty()) {
    std::ofstream f(cfg.plot_data);
    f << "# label value target (ratios; higher is better)\n";
    for (const auto& fig : run.figures) {
      if (fig.target > 0 && fig.has_ratio())
        f << '"' << fig.id << "\" " << fig.ratio() << " " << fig.target << "\n";
    }
  }
  return wrong_answers() == 0 ? 0 : 1;
}
