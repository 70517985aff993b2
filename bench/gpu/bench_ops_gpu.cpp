// braid's array ops against libtorch on the same GPU, side by side in one run (DESIGN.md
// section 5): every bandwidth-bound op as a fraction of the device's copy bandwidth; sort,
// argsort, topk, take, take_along_axis and scatter_add against libtorch's time; 4-bit
// quantized_matmul at batch 1 as weight bytes read per second against the copy. Prints a
// Markdown report in the style of bench/bench_ops.cpp. Build and run: bench/gpu/run.sh ops.
// Options: --runs N, --quick.
#include <cuda_runtime.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "bench_report.h"
#include "braid/braid.h"

namespace {

using namespace braid_bench;
using braid::array;

struct Config {
  int runs = 11;           // samples per side of a figure
  double sample_s = 0.02;  // a sample repeats the call for about this long
  std::string only;        // --only: the sections to run (all when empty)
};

void device_sync() { cudaDeviceSynchronize(); }

// ---- timing one side ----

// braid: build the op and submit it each call; one synchronize of the stream at the end, so
// the time per call is the device's steady rate (plus whatever host time it cannot hide).
Timed braid_timed(braid::Stream s, std::function<array()> op) {
  return [s, op = std::move(op)](int calls) {
    braid::synchronize(s);
    auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) braid::async_eval(op());
    braid::synchronize(s);
    return seconds_since(t0) / calls;
  };
}

// libtorch: eager under InferenceMode on its current stream, the device synchronized at the end.
Timed torch_timed(std::function<void()> op) {
  return [op = std::move(op)](int calls) {
    c10::InferenceMode guard;
    device_sync();
    auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) op();
    device_sync();
    return seconds_since(t0) / calls;
  };
}

// The device's copy: cudaMemcpyAsync device to device of `bytes`.
struct CopyPeer {
  void* src = nullptr;
  void* dst = nullptr;
  size_t bytes;
  explicit CopyPeer(size_t bytes) : bytes(bytes) {
    cudaMalloc(&src, bytes);
    cudaMalloc(&dst, bytes);
    cudaMemset(src, 1, bytes);
    cudaMemset(dst, 0, bytes);
  }
  ~CopyPeer() {
    cudaFree(src);
    cudaFree(dst);
  }
  CopyPeer(const CopyPeer&) = delete;
  CopyPeer& operator=(const CopyPeer&) = delete;
  Timed timed() {
    return [this](int calls) {
      device_sync();
      auto t0 = Clock::now();
      for (int i = 0; i < calls; ++i) cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice);
      device_sync();
      return seconds_since(t0) / calls;
    };
  }
};

// ---- data ----

// A host array: the first GPU op that reads it (a warm-up call) makes its device copy, once.
torch::Tensor cuda_of(const std::vector<float>& v, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat32).to(torch::kCUDA);
}

torch::Tensor cuda_of_values(std::vector<double>& v, std::vector<int64_t> shape) {
  return torch::from_blob(v.data(), shape, torch::kFloat64).to(torch::kCUDA).to(torch::kFloat32);
}

// libtorch's own index type.
torch::Tensor cuda_ids(const std::vector<int32_t>& v, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<int32_t*>(v.data()), shape, torch::kInt32)
      .to(torch::kCUDA)
      .to(torch::kInt64);
}

std::vector<double> torch_values(const torch::Tensor& t) {
  torch::Tensor d = t.to(torch::kFloat64).cpu().contiguous();
  return std::vector<double>(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
}

// ---- the figures ----

struct Run {
  const Config& cfg;
  braid::Stream s;
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
  Timed braid(std::function<array()> op) { return braid_timed(s, std::move(op)); }
};

constexpr int kSide = 16384;  // 16384 x 16384 float32: 1 GiB
constexpr int64_t kBig = int64_t{kSide} * kSide;
constexpr double kGiB = 4.0 * kBig;

// A bandwidth figure over 1 GiB-sized work, judged against the copy of 1 GiB.
Figure bandwidth(std::string id, std::string name, double bytes, CopyPeer& copy) {
  Figure f{std::move(id), std::move(name) + ", GB/s", Peer::copy_bandwidth, 0.9, bytes, 2 * kGiB};
  f.copy = copy.timed();
  return f;
}

void bench_bandwidth(Run& run, CopyPeer& copy) {
  const braid::Stream s = run.s;
  const std::vector<float> host_a = random_floats(kBig, -3, 3, 1), host_b = random_floats(kBig, -1, 1, 2);
  array a = braid_of(host_a, {kSide, kSide}), b = braid_of(host_b, {kSide, kSide});
  torch::Tensor ta = cuda_of(host_a, {kSide, kSide}), tb = cuda_of(host_b, {kSide, kSide});
  torch::Tensor tout = torch::empty_like(ta);

  Figure cp = bandwidth("g1", "copy 1 GiB float32 (full(shape, a))", 2 * kGiB, copy);
  cp.braid = run.braid([&] { return braid::full({kSide, kSide}, a, s); });
  cp.torch = torch_timed([&] { tout.copy_(ta); });
  run.add(std::move(cp));

  run.answer("exp 1 GiB", braid::exp(a, s), at::exp_out(tout, ta), 1e-4);  // values to e^3 = 20
  Figure ex = bandwidth("g2", "exp 1 GiB float32", 2 * kGiB, copy);
  ex.braid = run.braid([&] { return braid::exp(a, s); });
  ex.torch = torch_timed([&] { at::exp_out(tout, ta); });
  run.add(std::move(ex));

  run.answer("add 1 GiB", braid::add(a, b, s), at::add_out(tout, ta, tb), 0);
  Figure ad = bandwidth("g3", "a + b, 1 GiB float32 each", 3 * kGiB, copy);
  ad.braid = run.braid([&] { return braid::add(a, b, s); });
  ad.torch = torch_timed([&] { at::add_out(tout, ta, tb); });
  run.add(std::move(ad));

  {
    array col = braid::slice(a, {0, 0}, {kSide, 1}, s), row = braid::slice(b, {0, 0}, {1, kSide}, s);
    col = braid::contiguous(col, false, s);
    braid::eval(col, row);
    torch::Tensor tcol = ta.narrow(1, 0, 1).contiguous(), trow = tb.narrow(0, 0, 1).contiguous();
    run.answer("a[16384,1] + b[1,16384]", braid::add(col, row, s), at::add_out(tout, tcol, trow), 0);
    Figure br = bandwidth("g4", "a[16384,1] + b[1,16384] float32 (1 GiB written)", kGiB, copy);
    br.braid = run.braid([&] { return braid::add(col, row, s); });
    br.torch = torch_timed([&] { at::add_out(tout, tcol, trow); });
    run.add(std::move(br));
  }

  torch::Tensor tred = torch::empty({kSide}, ta.options()),
                tidx = torch::empty({kSide}, ta.options().dtype(torch::kInt64));
  int i = 5;
  for (int axis : {0, 1}) {
    const std::string of = " over axis " + std::to_string(axis) + " of 16384x16384 float32";
    const std::vector<int64_t> dims = {axis};
    const double read = kGiB + 4.0 * kSide;
    run.answer("sum axis " + std::to_string(axis), braid::sum(a, axis, false, s), at::sum_out(tred, ta, dims),
               1e-2);
    Figure sm = bandwidth("g" + std::to_string(i++), "sum" + of, read, copy);
    sm.braid = run.braid([&] { return braid::sum(a, axis, false, s); });
    sm.torch = torch_timed([&] { at::sum_out(tred, ta, dims); });
    run.add(std::move(sm));

    run.answer("max axis " + std::to_string(axis), braid::max(a, axis, false, s),
               at::amax_out(tred, ta, dims), 0);
    Figure mx = bandwidth("g" + std::to_string(i++), "max" + of, read, copy);
    mx.braid = run.braid([&] { return braid::max(a, axis, false, s); });
    mx.torch = torch_timed([&] { at::amax_out(tred, ta, dims); });
    run.add(std::move(mx));

    // Ties may pick different positions: compare the values found there.
    array where = braid::argmax(a, axis, false, s);
    at::argmax_out(tidx, ta, axis);
    array picked =
        braid::squeeze(braid::take_along_axis(a, braid::expand_dims(where, axis, s), axis, s), axis, s);
    run.answer("a at argmax axis " + std::to_string(axis), picked,
               ta.gather(axis, tidx.unsqueeze(axis)).squeeze(axis), 0);
    Figure am = bandwidth("g" + std::to_string(i++), "argmax" + of, kGiB + 4.0 * kSide, copy);
    am.braid = run.braid([&] { return braid::argmax(a, axis, false, s); });
    am.torch = torch_timed([&] { at::argmax_out(tidx, ta, axis); });
    run.add(std::move(am));
  }

  run.answer("transpose copy", braid::contiguous(braid::transpose(a, s), false, s), ta.t().contiguous(), 0);
  Figure tr =
      bandwidth("g11", "transpose copy of 16384x16384 float32 (contiguous(transpose(a)))", 2 * kGiB, copy);
  tr.braid = run.braid([&] { return braid::contiguous(braid::transpose(a, s), false, s); });
  tr.torch = torch_timed([&] { tout.copy_(ta.t()); });
  run.add(std::move(tr));

  {
    std::vector<array> parts = braid::split(a, 4, 1, s);
    for (auto& p : parts) p = braid::contiguous(p, false, s);
    braid::eval(parts);
    std::vector<torch::Tensor> tparts;
    for (auto& t : ta.chunk(4, 1)) tparts.push_back(t.contiguous());
    run.answer("concatenate 4 x [16384,4096]", braid::concatenate(parts, 1, s),
               at::cat_out(tout, at::TensorList(tparts), 1), 0);
    Figure cat = bandwidth("g12", "concatenate 4 x [16384,4096] float32 along axis 1", 2 * kGiB, copy);
    cat.braid = run.braid([&] { return braid::concatenate(parts, 1, s); });
    cat.torch = torch_timed([&] { at::cat_out(tout, at::TensorList(tparts), 1); });
    run.add(std::move(cat));
  }

  {
    const int rows = kSide / 2, cols = kSide / 4;
    array block = braid::contiguous(braid::slice(b, {0, 0}, {rows, cols}, s), false, s);
    braid::eval(block);
    torch::Tensor tblock = tb.narrow(0, 0, rows).narrow(1, 0, cols).contiguous();
    const braid::Shape start = {kSide / 4, kSide / 2}, stop = {kSide / 4 + rows, kSide / 2 + cols};
    auto region = [&](torch::Tensor& t) { return t.narrow(0, kSide / 4, rows).narrow(1, kSide / 2, cols); };
    auto torch_update = [&] {
      tout.copy_(ta);
      region(tout).copy_(tblock);
    };
    {
      c10::InferenceMode guard;
      torch_update();
    }
    run.answer("slice_update [8192,4096] into [16384,16384]", braid::slice_update(a, block, start, stop, s),
               tout, 0);
    // A new array: a is read, the result written, the block read.
    Figure upd = bandwidth("g13", "slice_update of a [8192,4096] block into [16384,16384] float32, new array",
                           2 * kGiB + 4.0 * rows * cols, copy);
    upd.braid = run.braid([&] { return braid::slice_update(a, block, start, stop, s); });
    upd.torch = torch_timed(torch_update);
    run.add(std::move(upd));
    // The idiom that updates a cache: MLX reuses x's buffer, libtorch writes into x.
    array running = a;
    torch::Tensor trunning = ta.clone();
    Figure inplace{"g13r", "x = slice_update(x, block) against torch x[region].copy_(block), ms/call",
                   Peer::torch_time, 0};
    inplace.braid = run.braid([&] { return running = braid::slice_update(running, block, start, stop, s); });
    inplace.torch = torch_timed([&] { region(trunning).copy_(tblock); });
    run.add(std::move(inplace));
  }
}

void bench_sort(Run& run) {
  const braid::Stream s = run.s;
  struct Case {
    std::string id, name;
    int rows, cols;  // sorted along the last axis
  };
  for (const Case& c :
       {Case{"s1", "1M float32", 1, 1 << 20}, Case{"s3", "1024x1024 float32, last axis", 1024, 1024}}) {
    const std::vector<float> host = random_floats(int64_t(c.rows) * c.cols, -1, 1, 30 + c.rows);
    array x = braid_of(host, {c.rows, c.cols});
    torch::Tensor tx = cuda_of(host, {c.rows, c.cols}), tv = torch::empty_like(tx);
    torch::Tensor ti = torch::empty_like(tx, tx.options().dtype(torch::kInt64));
    at::sort_out(tv, ti, tx, -1);
    run.answer("sort " + c.name, braid::sort(x, -1, s), tv, 0);
    // Equal keys may be ordered differently: compare the values the positions select.
    run.answer("x at argsort " + c.name, braid::take_along_axis(x, braid::argsort(x, -1, s), -1, s), tv, 0);

    Figure so{c.id, "sort " + c.name + ", ms/call", Peer::torch_time, 1.0};
    so.braid = run.braid([&] { return braid::sort(x, -1, s); });
    so.torch = torch_timed([&] { at::sort_out(tv, ti, tx, -1); });
    run.add(std::move(so));
    Figure as{c.id == "s1" ? "s2" : "s4", "argsort " + c.name + ", ms/call", Peer::torch_time, 1.0};
    as.braid = run.braid([&] { return braid::argsort(x, -1, s); });
    as.torch = torch_timed([&] { at::argsort_out(ti, tx, /*stable=*/false, -1); });
    run.add(std::move(as));
  }

  // Top 32 of a batch of vocabulary-sized logits. braid's topk returns the values unsorted;
  // libtorch's sorted = false is the same contract.
  const int rows = 1024, vocab = 32000, k = 32;
  const std::vector<float> host = random_floats(int64_t(rows) * vocab, -10, 10, 40);
  array x = braid_of(host, {rows, vocab});
  torch::Tensor tx = cuda_of(host, {rows, vocab});
  torch::Tensor tv = torch::empty({rows, k}, tx.options()),
                ti = torch::empty({rows, k}, tx.options().dtype(torch::kInt64));
  at::topk_out(tv, ti, tx, k, -1, true, true);
  run.answer("topk 32 of 1024x32000 (sorted after)", braid::sort(braid::topk(x, k, -1, s), -1, s),
             std::get<0>(tv.sort(-1)), 0);
  Figure tk{"s5", "topk k=32 of 1024x32000 float32, last axis, ms/call", Peer::torch_time, 1.0};
  tk.braid = run.braid([&] { return braid::topk(x, k, -1, s); });
  tk.torch = torch_timed([&] { at::topk_out(tv, ti, tx, k, -1, true, false); });
  run.add(std::move(tk));
}

void bench_indexing(Run& run) {
  const braid::Stream s = run.s;
  const int rows = 32000, width = 4096, count = 4096;
  const std::vector<float> host = random_floats(int64_t(rows) * width, -1, 1, 50);
  const std::vector<float> host_updates = random_floats(int64_t(count) * width, -1, 1, 51);
  const std::vector<int32_t> host_ids = random_ids(count, rows, 52);
  array table = braid_of(host, {rows, width}), ids = braid_of(host_ids, {count});
  array updates = braid_of(host_updates, {count, 1, width});
  torch::Tensor ttable = cuda_of(host, {rows, width}), tids = cuda_ids(host_ids, {count});
  torch::Tensor tupdates = cuda_of(host_updates, {count, width});

  torch::Tensor gathered = torch::empty({count, width}, ttable.options());
  run.answer("take 4096 rows", braid::take(table, ids, 0, s), at::index_select_out(gathered, ttable, 0, tids),
             0);
  Figure tk{"i1", "take 4096 int32 ids along axis 0 of 32000x4096 float32, ms/call", Peer::torch_time, 1.0};
  tk.braid = run.braid([&] { return braid::take(table, ids, 0, s); });
  tk.torch = torch_timed([&] { at::index_select_out(gathered, ttable, 0, tids); });
  run.add(std::move(tk));

  {
    const int n = 4096, picks = 1024;
    const std::vector<float> src = random_floats(int64_t(n) * n, -1, 1, 53);
    const std::vector<int32_t> where = random_ids(int64_t(n) * picks, n, 54);
    array x = braid_of(src, {n, n}), idx = braid_of(where, {n, picks});
    torch::Tensor tx = cuda_of(src, {n, n}), tidx = cuda_ids(where, {n, picks});
    torch::Tensor tout = torch::empty({n, picks}, tx.options());
    run.answer("take_along_axis [4096,1024] of [4096,4096]", braid::take_along_axis(x, idx, 1, s),
               at::gather_out(tout, tx, 1, tidx), 0);
    Figure ta{"i2",
              "take_along_axis, int32 [4096,1024] into [4096,4096] float32, axis 1; torch gather, ms/call",
              Peer::torch_time, 1.0};
    ta.braid = run.braid([&] { return braid::take_along_axis(x, idx, 1, s); });
    ta.torch = torch_timed([&] { at::gather_out(tout, tx, 1, tidx); });
    run.add(std::move(ta));
  }

  // scatter_add returns a new array. `t = scatter_add(t, ...)` is the idiom that updates a
  // table (MLX then reuses t's buffer); libtorch's is index_add_ in place.
  torch::Tensor summed = torch::empty_like(ttable);
  run.answer("scatter_add 4096 rows", braid::scatter_add(table, ids, updates, 0, s),
             at::index_add_out(summed, ttable, 0, tids, tupdates), 1e-5);
  array running = table;
  torch::Tensor trunning = ttable.clone();
  Figure add{"i3",
             "scatter_add, t = scatter_add(t, 4096 ids, [4096,1,4096]) on a 32000x4096 float32 table; "
             "torch index_add_ in place, ms/call",
             Peer::torch_time, 1.0};
  add.braid = run.braid([&] { return running = braid::scatter_add(running, ids, updates, 0, s); });
  add.torch = torch_timed([&] { trunning.index_add_(0, tids, tupdates); });
  run.add(std::move(add));
  Figure fresh{"i3r", "scatter_add into a new array (the table kept); torch index_add_out, ms/call",
               Peer::torch_time, 0};
  fresh.braid = run.braid([&] { return braid::scatter_add(table, ids, updates, 0, s); });
  fresh.torch = torch_timed([&] { at::index_add_out(summed, ttable, 0, tids, tupdates); });
  run.add(std::move(fresh));
}

// Batch-1 decoding through a 4096x4096 layer of 4-bit weights (group 64, float16 scales and
// biases). The weights cycle through 16 copies (144 MiB), more than the 50 MiB L2 holds, so
// every call reads them from memory.
void bench_quantized(Run& run, CopyPeer& copy) {
  const braid::Stream s = run.s;
  const int n = 4096, copies = 16, group = 64, bits = 4;
  const std::vector<float> host_w = random_floats(int64_t(n) * n, -1, 1, 60);
  const std::vector<float> host_x = random_floats(n, -1, 1, 61);
  array w = braid::astype(braid_of(host_w, {n, n}), braid::float16, s);
  array x = braid::astype(braid_of(host_x, {1, n}), braid::float16, s);
  std::vector<std::vector<array>> layers;
  for (int c = 0; c < copies; ++c) {
    layers.push_back(braid::quantize(braid::multiply(w, braid::array(1.0f + c / 64.0f, braid::float16), s),
                                     group, bits, "affine", std::nullopt, s));
    braid::eval(layers.back());
  }
  braid::eval(x);
  const double weight_bytes =
      double(layers[0][0].nbytes()) + double(layers[0][1].nbytes()) + double(layers[0][2].nbytes());

  // libtorch has no 4-bit matmul: check against its float32 product with braid's dequantized
  // weights.
  const auto& l0 = layers[0];
  array deq = braid::dequantize(l0[0], l0[1], l0[2], group, bits, "affine", std::nullopt, braid::float32, s);
  std::vector<double> deq_values = host_values(deq), x_values = host_values(x);
  torch::Tensor tw = cuda_of_values(deq_values, {n, n}), tx = cuda_of_values(x_values, {1, n});
  run.answer("quantized_matmul 1x4096 by 4-bit 4096x4096",
             braid::quantized_matmul(x, l0[0], l0[1], l0[2], true, group, bits, "affine", s),
             at::matmul(tx, tw.t()), 0.1);

  Figure q{"q1",
           "quantized_matmul 1x4096 by 4-bit 4096x4096 (group 64), weight bytes read, GB/s",
           Peer::copy_bandwidth,
           0.7,
           weight_bytes,
           2 * kGiB};
  int next = 0;
  q.braid = run.braid([&] {
    const auto& l = layers[next++ % copies];
    return braid::quantized_matmul(x, l[0], l[1], l[2], true, group, bits, "affine", s);
  });
  q.copy = copy.timed();
  run.add(std::move(q));

  // Reference row: the same products as a model computes them, the 16 layers' products of one
  // x built and evaluated together (as a decoder's projections of one token), so that the
  // host's work for the next product overlaps the device's for this one. Bytes per call: all
  // 16 layers. Equal to q1 means the time per product is not the host's submission.
  Figure qb{"q1b",
            "quantized_matmul, the 16 layers' 1x4096 products of one x evaluated together, weight bytes read, GB/s",
            Peer::copy_bandwidth,
            0,
            weight_bytes * copies,
            2 * kGiB};
  qb.braid = [&](int calls) {
    braid::synchronize(s);
    auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) {
      std::vector<array> outs;
      for (const auto& l : layers) {
        outs.push_back(braid::quantized_matmul(x, l[0], l[1], l[2], true, group, bits, "affine", s));
      }
      braid::async_eval(outs);
    }
    braid::synchronize(s);
    return seconds_since(t0) / calls;
  };
  qb.copy = copy.timed();
  run.add(std::move(qb));

  // Reference row: the least any kernel launched once per call pays to read these bytes. Each
  // call reduces one layer's 8 MiB of packed words (max over all of them), cycling the 16
  // layers as q1 does; libtorch's amax over int32 words of the same size beside it.
  std::vector<torch::Tensor> twords;
  for (int c = 0; c < copies; ++c) {
    twords.push_back(torch::randint(1 << 30, {n, n * bits / 32},
                                    torch::TensorOptions().dtype(torch::kInt32).device(torch::kCUDA)));
  }
  torch::Tensor tmax = torch::empty({}, twords[0].options());
  Figure qr{"q1r",
            "max over one layer's packed words (4096x512 uint32, 8 MiB) per call, cycling the 16 layers; "
            "torch amax of int32 words, ms/call",
            Peer::torch_time, 0};
  int next_words = 0, next_twords = 0;
  qr.braid = run.braid([&] { return braid::max(layers[next_words++ % copies][0], false, s); });
  qr.torch = torch_timed([&] { at::amax_out(tmax, twords[next_twords++ % copies], {0, 1}); });
  run.add(std::move(qr));
}

// conv2d 3x3, 64 -> 64 channels, 56x56, padding 1, batch 64, float32 and bfloat16: NHWC input
// and [O, kh, kw, I] weights for braid (MLX's layout); libtorch (cuDNN) in channels_last, its
// fastest layout for this, with cuDNN's autotuner on, with answers compared in NHWC. float32
// is exact float32 on both sides (braid's default; torch's TF32 for cuDNN turned off).
void bench_conv(Run& run) {
  at::globalContext().setBenchmarkCuDNN(true);
  at::globalContext().setAllowTF32CuDNN(false);
  const braid::Stream s = run.s;
  const int n = 64, hw = 56, c = 64;
  const std::vector<float> host_x = random_floats(int64_t(n) * hw * hw * c, -1, 1, 51);
  const std::vector<float> host_w = random_floats(int64_t(c) * 9 * c, -0.1, 0.1, 52);
  for (bool bf16 : {false, true}) {
    const braid::Dtype bt = bf16 ? braid::bfloat16 : braid::float32;
    const auto tt = bf16 ? torch::kBFloat16 : torch::kFloat32;
    array x = braid::astype(braid_of(host_x, {n, hw, hw, c}), bt, s);
    array w = braid::astype(braid_of(host_w, {c, 3, 3, c}), bt, s);
    braid::eval({x, w});
    torch::Tensor tx = cuda_of(host_x, {n, hw, hw, c}).to(tt).permute({0, 3, 1, 2});  // channels_last strides
    torch::Tensor tw = cuda_of(host_w, {c, 3, 3, c}).to(tt).permute({0, 3, 1, 2});
    const std::string name = bf16 ? "bfloat16" : "float32";
    run.answer("conv2d 3x3 64->64 " + name, braid::astype(braid::conv2d(x, w, {1, 1}, {1, 1}, {1, 1}, 1, s), braid::float32, s),
               at::conv2d(tx, tw, {}, 1, 1).permute({0, 2, 3, 1}).to(torch::kFloat32).contiguous(),
               bf16 ? 0.25 : 1e-2);
    Figure conv{bf16 ? "v2" : "v1", "conv2d 3x3 64->64 56x56 batch 64 " + name + ", ms/call", Peer::torch_time, 0.9};
    conv.braid = run.braid([&] { return braid::conv2d(x, w, {1, 1}, {1, 1}, {1, 1}, 1, s); });
    conv.torch = torch_timed([&] { at::conv2d(tx, tw, {}, 1, 1); });
    run.add(std::move(conv));
  }
}

Config parse_args(int argc, char** argv) {
  Config cfg;
  parse_bench_args(argc, argv, cfg.runs, [&cfg] { cfg.sample_s = 0.01; }, nullptr, &cfg.only, "bandwidth,quantized,sort,indexing,conv");
  return cfg;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg = parse_args(argc, argv);
  if (!braid::is_available(braid::Device::gpu) || !torch::cuda::is_available()) {
    std::cerr << "no GPU available: nothing to measure\n";
    return 1;
  }
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  const std::string date = utc_now();

  std::cerr << "braid GPU op bench: running (" << cfg.runs << " samples per figure)...\n";
  Run run{cfg, braid::new_stream(braid::Device::gpu), {}, {}};
  // --only runs the named sections (comma-separated); by default every one.
  auto wanted = [&](const std::string& section) {
    return cfg.only.empty() || ("," + cfg.only + ",").find("," + section + ",") != std::string::npos;
  };
  if (wanted("bandwidth") || wanted("quantized")) {
    CopyPeer copy(static_cast<size_t>(kGiB));
    if (wanted("bandwidth")) bench_bandwidth(run, copy);
    braid::clear_cache();
    if (wanted("quantized")) bench_quantized(run, copy);
  }
  braid::clear_cache();
  if (wanted("sort")) bench_sort(run);
  braid::clear_cache();
  if (wanted("indexing")) bench_indexing(run);
  braid::clear_cache();
  if (wanted("conv")) bench_conv(run);

  std::ostream& out = std::cout;
  out << "# braid GPU op benchmark\n\n";
  out << "- date: " << date << "\n";
  out << "- GPU: " << prop.name << " (" << prop.multiProcessorCount << " SMs); host " << cpu_model() << "\n";
  out << "- versions: braid " << braid::version() << ", libtorch " << TORCH_VERSION << ", compiler "
      << compiler() << "\n";
  out << "- method: median of " << cfg.runs << " samples per figure; a sample submits the call for about "
      << fmt(cfg.sample_s * 1e3, 0)
      << " ms (at least once) after a warm-up call and synchronizes once at the "
      << "end (braid: async_eval per call, synchronize(stream); libtorch and the copy: "
         "cudaDeviceSynchronize); "
      << "samples of braid, libtorch and the copy alternate\n";
  out << "- libtorch: eager under InferenceMode on its current stream, the *_out form into a preallocated "
         "output "
         "where it has one; ids as int64 (its index type)\n";
  out << "- ratio: torch time / braid time for ms/call figures, braid GB/s / copy GB/s for GB/s figures "
         "(higher is "
         "better for braid); bytes count reads plus writes; the copy is cudaMemcpyAsync device to device of "
         "1 GiB; "
         "the libtorch column of a GB/s figure is for reference\n\n";
  print_figures(out, run.figures);
  out << "\nSpread, median (min .. max) over the samples (ms/call or GB/s, as above):\n\n";
  print_spread(out, run.figures);
  out << "\n";
  print_answers(out, run.answers);
  return wrong_answers() == 0 ? 0 : 1;
}
