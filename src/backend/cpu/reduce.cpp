// Reduce::eval_cpu. The input's dimensions are split into kept and reduced ones and each group
// is collapsed; the dimension with unit stride picks the loop:
//  - a reduced one (rows): every output reads contiguous runs. Outputs run in parallel; when
//    there are few, each output's range is cut into fixed chunks whose partials are combined.
//  - a kept one (columns): input rows are accumulated into a block of outputs. Column blocks
//    run in parallel, and the reduced range is cut into chunks too when blocks are few. A few
//    columns of dense rows are read as wide rows of several rows each (narrow_columns).
//  - neither (broadcast or other strides): the row loop, reading with strides.
// Chunks have fixed sizes, so a result never depends on the number of threads.
// Output dtypes: max and min keep the input's; sum and prod widen small integers as MLX
// (Reduce::sum_dtype); all and any are min and max of a bool input.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <memory>
#include <stdexcept>

#include "backend/common/elementwise_ops.h"
#include "backend/common/reduce_plan.h"
#include "backend/cpu/convert.h"
#include "backend/cpu/dispatch.h"
#include "backend/cpu/reduce_simd.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {
namespace {

using cpu::compute_t;

constexpr int64_t kChunk = 1 << 15;  // elements per task
constexpr int64_t kColBlock = 4096;  // outputs per column task: whole rows of up to 16 KiB stream from memory
constexpr int64_t kFewTasks = 64;    // below this many tasks, the reduced range is split too
constexpr int kLanes = 16;           // independent accumulators, so the compiler vectorizes

template <typename T>
constexpr bool is_float_v = std::is_floating_point_v<compute_t<T>>;

// Floats accumulate in double, integers in uint64 (overflow wraps, as in the output type,
// instead of being undefined), complex64 in complex<float>.
template <typename In, typename Out>
struct SumOp {
  using Real = std::conditional_t<std::is_same_v<In, double>, double, float>;  // float32 lanes
  using Acc = std::conditional_t<is_float_v<In>, double,
                                 std::conditional_t<cpu::is_complex_v<In>, std::complex<float>, uint64_t>>;
  static Acc init() { return Acc(0); }
  static Acc load(In x) {
    if constexpr (is_float_v<In>) {
      return static_cast<double>(static_cast<Real>(x));
    } else if constexpr (cpu::is_complex_v<In>) {
      return static_cast<std::complex<float>>(x);
    } else {
      return static_cast<uint64_t>(static_cast<int64_t>(x));
    }
  }
  static Acc combine(Acc a, Acc b) { return a + b; }
  // Column sums add whole rows in float (vectorized) and move to double every kStageRows.
  using Stage = std::conditional_t<is_float_v<In>, Real, Acc>;
  static constexpr int64_t kStageRows = is_float_v<In> ? 128 : std::numeric_limits<int64_t>::max();
  static constexpr bool kStageIsAcc = false;
  static Stage stage_init() { return Stage(0); }
  static Stage stage_add(Stage s, In x) {
    if constexpr (is_float_v<In>) {
      return s + static_cast<Real>(x);
    } else {
      return s + load(x);
    }
  }
  static Acc to_acc(Stage s) { return static_cast<Acc>(s); }
  static Out finish(Acc a) {
    if constexpr (is_float_v<In>) {
      return static_cast<Out>(static_cast<Real>(a));
    } else if constexpr (cpu::is_complex_v<In>) {
      return Out(a);
    } else {
      return static_cast<Out>(a);
    }
  }
  // Column rows of floats, a tile at a time (reduce_simd.h).
  static void stage_rows(Stage* stage, const In* p, int64_t stride, int64_t rows,
                         int64_t n) requires is_float_v<In> {
    if constexpr (std::is_same_v<In, float>) {
      if (const cpu::simd::Kernels* k = cpu::simd::kernels()) return k->sum_rows(stage, p, stride, rows, n);
    }
    cpu::simd::sum_rows<Real>(stage, p, stride, rows, n);
  }
  static Acc run(const In* p, int64_t n, int64_t stride) {
    if constexpr (is_float_v<In>) {
      // Blocks of float lanes (lane_sum's fixed order): fast, and exact for integers up to
      // 2^24 per lane and block.
      if (stride == 1) {
        if constexpr (std::is_same_v<In, float>) {
          if (const cpu::simd::Kernels* k = cpu::simd::kernels()) return k->sum(p, n);
        }
        return cpu::simd::lane_sum<Real>(p, n);
      }
    }
    Acc acc = init();
    for (int64_t i = 0; i < n; ++i) acc += load(p[i * stride]);
    return acc;
  }
};

// Products: floats in double, integers in uint64 (the low bits of a product do not depend on
// signedness, so it wraps as the output type), complex64 in complex<float>.
template <typename In, typename Out>
struct ProdOp {
  using Acc = typename SumOp<In, Out>::Acc;
  static Acc init() { return Acc(1); }
  static Acc load(In x) { return SumOp<In, Out>::load(x); }
  static Acc combine(Acc a, Acc b) { return a * b; }
  using Stage = Acc;
  static constexpr int64_t kStageRows = std::numeric_limits<int64_t>::max();
  static constexpr bool kStageIsAcc = false;  // combine(1, s) is not s for every complex s
  static Stage stage_init() { return init(); }
  static Stage stage_add(Stage s, In x) { return s * load(x); }
  static Acc to_acc(Stage s) { return s; }
  static Out finish(Acc a) { return SumOp<In, Out>::finish(a); }
  static Acc run(const In* p, int64_t n, int64_t stride) {
    Acc acc = init();
    int64_t i = 0;
    if constexpr (!cpu::is_complex_v<In>) {
      if (stride == 1 && n >= kLanes) {
        Acc lanes[kLanes];
        for (int j = 0; j < kLanes; ++j) lanes[j] = init();
        for (; i + kLanes <= n; i += kLanes) {
          for (int j = 0; j < kLanes; ++j) lanes[j] *= load(p[i + j]);
        }
        for (int j = 0; j < kLanes; ++j) acc *= lanes[j];
      }
    }
    for (; i < n; ++i) acc *= load(p[i * stride]);
    return acc;
  }
};

// max (kMax) or min. NaN wins, as in NumPy: once the accumulator is NaN, no comparison
// replaces it. complex64 compares lexicographically and is NaN when either part is (its first
// NaN wins, as NumPy's). Bool max/min are any/all.
template <typename In, bool kMax>
struct ExtremeOp {
  using Acc = compute_t<In>;
  static Acc init() {
    if constexpr (cpu::is_complex_v<In>) {
      const float inf = std::numeric_limits<float>::infinity();
      return kMax ? Acc(-inf, -inf) : Acc(inf, inf);
    } else if constexpr (is_float_v<In>) {
      return static_cast<Acc>(kMax ? -std::numeric_limits<float>::infinity()
                                   : std::numeric_limits<float>::infinity());
    } else {
      return kMax ? std::numeric_limits<Acc>::lowest() : std::numeric_limits<Acc>::max();
    }
  }
  static Acc load(In x) { return static_cast<Acc>(x); }
  static bool better(Acc b, Acc a) {
    if constexpr (kMax) {
      return b > a;
    } else {
      return b < a;
    }
  }
  static Acc combine(Acc a, Acc b) {
    if constexpr (is_float_v<In>) {
      return (better(b, a) || b != b) ? b : a;
    } else if constexpr (cpu::is_complex_v<In>) {
      // A NaN part compares false either way, so the lexicographic order alone would skip it.
      if (ew::is_nan(a)) return a;
      return (ew::is_nan(b) || better(b, a)) ? b : a;
    } else {
      return better(b, a) ? b : a;
    }
  }
  static In finish(Acc a) { return static_cast<In>(a); }
  using Stage = Acc;
  static constexpr int64_t kStageRows = std::numeric_limits<int64_t>::max();
  static constexpr bool kStageIsAcc = true;  // combine(init(), s) is s
  static Stage stage_init() { return init(); }
  static Stage stage_add(Stage s, In x) { return combine(s, load(x)); }
  static Acc to_acc(Stage s) { return s; }
  // Column rows of float and double in vectors, a tile at a time (reduce_simd.h).
  static void stage_rows(Stage* stage, const In* p, int64_t stride, int64_t rows,
                         int64_t n) requires cpu::simd::has_v<In> {
    if constexpr (std::is_same_v<In, float>) {
      if (const cpu::simd::Kernels* k = cpu::simd::kernels())
        return k->extreme_rows[kMax](stage, p, stride, rows, n);
    }
    cpu::simd::extreme_rows<In, kMax>(stage, p, stride, rows, n);
  }
  static Acc run(const In* p, int64_t n, int64_t stride) {
    if constexpr (cpu::simd::has_v<In>) {
      if (stride == 1) return cpu::simd::extreme_dispatched<In, kMax>(p, n, init());
    }
    Acc acc = init();
    int64_t i = 0;
    if (!cpu::is_complex_v<In> && stride == 1 && n >= kLanes) {
      // A plain extreme per lane plus a NaN flag vectorizes better than a NaN-aware compare.
      Acc lanes[kLanes];
      int32_t nan[kLanes] = {};
      for (int j = 0; j < kLanes; ++j) lanes[j] = init();
      for (; i + kLanes <= n; i += kLanes) {
        for (int j = 0; j < kLanes; ++j) {
          const Acc x = load(p[i + j]);
          lanes[j] = better(x, lanes[j]) ? x : lanes[j];
          if constexpr (is_float_v<In>) nan[j] |= (x != x);
        }
      }
      for (int j = 0; j < kLanes; ++j) {
        acc = combine(acc, lanes[j]);
        if constexpr (is_float_v<In>) {
          if (nan[j]) acc = static_cast<Acc>(NAN);
        }
      }
    }
    for (; i < n; ++i) acc = combine(acc, load(p[i * stride]));
    return acc;
  }
};

using Dim = common::ReduceDim;
using Dims = common::ReduceDims;
using common::count_of;

// Calls fn(in_offset, out_offset, len) for runs along the last of `dims` covering the
// row-major positions [begin, end) of `dims`.
template <typename F>
void for_each_run(const Dims& dims, int64_t begin, int64_t end, F&& fn) {
  const int nd = static_cast<int>(dims.size());
  if (begin >= end) return;
  if (nd == 0) {
    fn(int64_t{0}, int64_t{0}, int64_t{1});
    return;
  }
  int64_t small[8];
  std::vector<int64_t> big;
  int64_t* idx = small;
  if (nd > 8) {
    big.resize(nd);
    idx = big.data();
  }
  int64_t in_off = 0, out_off = 0, rem = begin;
  for (int i = nd - 1; i >= 0; --i) {
    idx[i] = rem % dims[i].n;
    rem /= dims[i].n;
    in_off += idx[i] * dims[i].in_stride;
    out_off += idx[i] * dims[i].out_stride;
  }
  const Dim& last = dims[nd - 1];
  for (int64_t pos = begin; pos < end;) {
    const int64_t len = std::min(last.n - idx[nd - 1], end - pos);
    fn(in_off, out_off, len);
    pos += len;
    idx[nd - 1] += len;
    in_off += len * last.in_stride;
    out_off += len * last.out_stride;
    for (int i = nd - 1; i > 0 && idx[i] == dims[i].n; --i) {
      idx[i] = 0;
      ++idx[i - 1];
      in_off += dims[i - 1].in_stride - dims[i].n * dims[i].in_stride;
      out_off += dims[i - 1].out_stride - dims[i].n * dims[i].out_stride;
    }
  }
}

template <typename Op, typename In, typename Out>
class Reducer {
 public:
  using Acc = typename Op::Acc;
  // A plain array: std::vector<bool> would pack into bits that threads share.
  template <typename T>
  struct Array {
    explicit Array(size_t n) : data_(new T[n]), size_(n) {}
    T& operator[](size_t i) { return data_[i]; }
    T* data() { return data_.get(); }
    T* begin() { return data_.get(); }
    T* end() { return data_.get() + size_; }
    std::unique_ptr<T[]> data_;
    size_t size_;
  };
  using Buffer = Array<Acc>;
  using StageBuffer = Array<typename Op::Stage>;

  Reducer(const In* src, Out* dst, Dims kept, Dims reduced)
      : src_(src), dst_(dst), kept_(std::move(kept)), reduced_(std::move(reduced)) {
    outputs_ = count_of(kept_);
    count_ = count_of(reduced_);
  }

  void run() {
    if (count_ == 0) {
      for_each_output(kept_, 0, outputs_, [&](int64_t, int64_t o) { dst_[o] = Op::finish(Op::init()); });
      return;
    }
    if (reduced_.back().in_stride != 1) {
      if (narrow_columns()) return;
      for (size_t i = 0; i < kept_.size(); ++i) {
        if (kept_[i].in_stride == 1) return columns(i);
      }
    }
    rows();
  }

 private:
  // A few columns of many dense rows ([count, w] reduced over its rows, w <= kNarrow): each
  // row alone is too short for the column loop's vectors, so the rows are read k at a time as
  // wide rows of k * w columns, and each column's k partial results (and the rows that fill no
  // wide row) are combined at the end.
  bool narrow_columns() {
    constexpr int64_t kNarrow = 16, kWideRow = 256;
    // complex64 keeps the column loop: its max and min keep the first NaN in row order, which
    // the interleaved rows would change. (Float max and min may pick the other zero of a -0/+0
    // tie than the row order would; the result is still fixed for a shape.)
    if constexpr (cpu::is_complex_v<In>) return false;
    if (kept_.size() != 1 || reduced_.size() != 1 || kept_[0].in_stride != 1) return false;
    const int64_t w = kept_[0].n;
    if (w > kNarrow || reduced_[0].in_stride != w) return false;
    const int64_t k = kWideRow / w, wide_rows = count_ / k;
    if (wide_rows < 8) return false;
    const int64_t width = k * w;
    Buffer partial(static_cast<size_t>(width));
    Reducer wide(src_, dst_, Dims{Dim{width, 1, 1}}, Dims{Dim{wide_rows, width, 0}});
    wide.partial_out_ = partial.data();
    wide.columns(0);
    for (int64_t j = 0; j < w; ++j) {
      Acc acc = partial[j];
      for (int64_t m = 1; m < k; ++m) acc = Op::combine(acc, partial[m * w + j]);
      for (int64_t r = wide_rows * k; r < count_; ++r) acc = Op::combine(acc, Op::load(src_[r * w + j]));
      dst_[j * kept_[0].out_stride] = Op::finish(acc);
    }
    return true;
  }

  // Output `o` (at dst_[out_index]) of the column loop: finished, or kept as a partial result
  // for narrow_columns.
  void emit(int64_t out_index, int64_t o, Acc a) {
    if (partial_out_) {
      partial_out_[o] = a;
    } else {
      dst_[out_index] = Op::finish(a);
    }
  }

  // Reduces positions [rbegin, rend) of the reduced dims, starting from input offset `base`.
  Acc reduce_range(int64_t base, int64_t rbegin, int64_t rend) const {
    const int64_t stride = reduced_.back().in_stride;
    if (reduced_.size() == 1) return Op::run(src_ + base + rbegin * stride, rend - rbegin, stride);
    Acc acc = Op::init();
    for_each_run(reduced_, rbegin, rend, [&](int64_t off, int64_t, int64_t len) {
      acc = Op::combine(acc, Op::run(src_ + base + off, len, stride));
    });
    return acc;
  }

  // Calls fn(in_offset, out_offset) for outputs [begin, end).
  template <typename F>
  void for_each_output(const Dims& dims, int64_t begin, int64_t end, F&& fn) const {
    const int64_t is = dims.empty() ? 0 : dims.back().in_stride;
    const int64_t os = dims.empty() ? 0 : dims.back().out_stride;
    for_each_run(dims, begin, end, [&](int64_t i, int64_t o, int64_t len) {
      for (int64_t t = 0; t < len; ++t) fn(i + t * is, o + t * os);
    });
  }

  void rows() {
    if (outputs_ >= kFewTasks || count_ < 2 * kChunk) {
      const int64_t grain = std::max<int64_t>(1, kChunk / count_);
      detail::parallel_for(outputs_, grain, [&](int64_t b, int64_t e) {
        for_each_output(kept_, b, e,
                        [&](int64_t i, int64_t o) { dst_[o] = Op::finish(reduce_range(i, 0, count_)); });
      });
      return;
    }
    // Few long rows: fixed chunks of each row in parallel, partials combined in order.
    const int64_t chunks = (count_ + kChunk - 1) / kChunk;
    Buffer partial(static_cast<size_t>(outputs_ * chunks));
    detail::parallel_for(outputs_ * chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t task = b; task < e; ++task) {
        const int64_t c = task % chunks;
        for_each_output(kept_, task / chunks, task / chunks + 1, [&](int64_t i, int64_t) {
          partial[task] = reduce_range(i, c * kChunk, std::min(count_, (c + 1) * kChunk));
        });
      }
    });
    int64_t row = 0;
    for_each_output(kept_, 0, outputs_, [&](int64_t, int64_t o) {
      Acc acc = Op::init();
      for (int64_t c = 0; c < chunks; ++c) acc = Op::combine(acc, partial[row * chunks + c]);
      dst_[o] = Op::finish(acc);
      ++row;
    });
  }

  // The kept dim `col` has unit input stride: accumulate rows of it into blocks of outputs.
  void columns(size_t col) {
    const Dim column = kept_[col];
    Dims batch = kept_;
    batch.erase(batch.begin() + static_cast<std::ptrdiff_t>(col));
    const int64_t batches = count_of(batch);
    const int64_t blocks = (column.n + kColBlock - 1) / kColBlock;
    const int64_t width = std::min(column.n, kColBlock);
    int64_t splits = 1;
    if (batches * blocks < kFewTasks) {
      // Only as many splits as parallelism needs: the partials cost width accumulators each.
      splits = std::clamp<int64_t>(count_ * width / kChunk, 1,
                                   (kFewTasks + batches * blocks - 1) / (batches * blocks));
    }
    const int64_t rows_per_split = (count_ + splits - 1) / splits;
    splits = (count_ + rows_per_split - 1) / rows_per_split;
    Buffer partial(splits > 1 ? static_cast<size_t>(batches * blocks * splits * width) : 0);
    const int64_t tasks = batches * blocks * splits;
    const int64_t grain = std::max<int64_t>(1, kChunk / std::max<int64_t>(1, rows_per_split * width));

    detail::parallel_for(tasks, grain, [&](int64_t b, int64_t e) {
      Buffer acc(static_cast<size_t>(width));
      StageBuffer stage(static_cast<size_t>(width));
      for (int64_t task = b; task < e; ++task) {
        const int64_t split = task % splits, blk = (task / splits) % blocks, bt = task / (splits * blocks);
        const int64_t c0 = blk * kColBlock, cw = std::min(kColBlock, column.n - c0);
        std::fill(stage.begin(), stage.end(), Op::stage_init());
        int64_t staged = 0;
        // A stage that is never flushed before the end (max, min) is the accumulator itself.
        Acc* result;
        if constexpr (Op::kStageIsAcc) {
          result = stage.data();
        } else {
          result = acc.data();
          std::fill(acc.begin(), acc.end(), Op::init());
        }
        auto flush = [&] {
          if constexpr (!Op::kStageIsAcc) {
            for (int64_t j = 0; j < cw; ++j) {
              acc[j] = Op::combine(acc[j], Op::to_acc(stage[j]));
              stage[j] = Op::stage_init();
            }
          }
          staged = 0;
        };
        for_each_output(batch, bt, bt + 1, [&](int64_t in_base, int64_t out_base) {
          const int64_t r0 = split * rows_per_split, r1 = std::min(count_, r0 + rows_per_split);
          const int64_t rs = reduced_.back().in_stride;
          for_each_run(reduced_, r0, r1, [&](int64_t off, int64_t, int64_t len) {
            const In* p = src_ + in_base + off + c0;
            if constexpr (requires { Op::stage_rows(stage.data(), p, rs, len, cw); }) {
              // As many rows at once as the stage takes before its next flush.
              for (int64_t t = 0; t < len;) {
                const int64_t take = std::min(len - t, Op::kStageRows - staged);
                Op::stage_rows(stage.data(), p + t * rs, rs, take, cw);
                t += take;
                staged += take;
                if (staged == Op::kStageRows) flush();
              }
            } else {
              for (int64_t t = 0; t < len; ++t, p += rs) {
                for (int64_t j = 0; j < cw; ++j) stage[j] = Op::stage_add(stage[j], p[j]);
                if (++staged == Op::kStageRows) flush();
              }
            }
          });
          flush();
          if (splits == 1) {
            for (int64_t j = 0; j < cw; ++j) emit(out_base + (c0 + j) * column.out_stride, c0 + j, result[j]);
          } else {
            std::copy(result, result + cw, partial.begin() + task * width);
          }
        });
      }
    });
    if (splits == 1) return;
    // Each output combines its splits in order: columns in parallel, one split's row at a time.
    for (int64_t bt = 0; bt < batches; ++bt) {
      for_each_output(batch, bt, bt + 1, [&](int64_t, int64_t out_base) {
        for (int64_t blk = 0; blk < blocks; ++blk) {
          const int64_t c0 = blk * kColBlock, cw = std::min(kColBlock, column.n - c0);
          const Acc* part = partial.data() + (bt * blocks + blk) * splits * width;
          detail::parallel_for(cw, std::max<int64_t>(64, kChunk / splits), [&](int64_t jb, int64_t je) {
            Buffer total(static_cast<size_t>(je - jb));
            std::fill(total.begin(), total.end(), Op::init());
            if constexpr (Op::kStageIsAcc &&
                          requires { Op::stage_rows(total.data(), part, width, splits, cw); }) {
              Op::stage_rows(total.data(), part + jb, width, splits, je - jb);  // combine, vectorized
            } else {
              for (int64_t s = 0; s < splits; ++s) {
                for (int64_t j = jb; j < je; ++j)
                  total[j - jb] = Op::combine(total[j - jb], part[s * width + j]);
              }
            }
            for (int64_t j = jb; j < je; ++j)
              emit(out_base + (c0 + j) * column.out_stride, c0 + j, total[j - jb]);
          });
        }
      });
    }
  }

  const In* src_;
  Out* dst_;
  Dims kept_;
  Dims reduced_;
  int64_t outputs_ = 1;
  int64_t count_ = 1;
  // narrow_columns' wide rows: the column loop's unfinished results, indexed by column (so
  // only for a reducer without batch dims).
  Acc* partial_out_ = nullptr;
};

template <typename Op, typename In, typename Out>
void reduce_typed(const array& in, array& out, const std::vector<int>& axes) {
  if (out.dtype() != detail::storage_dtype<Out>()) {
    throw std::runtime_error("[Reduce] Unexpected output dtype.");
  }
  common::ReducePlan plan = common::make_reduce_plan(in, out, axes);
  Reducer<Op, In, Out>(static_cast<const In*>(in.desc()->data_ptr), static_cast<Out*>(out.desc()->data_ptr),
                       std::move(plan.kept), std::move(plan.reduced))
      .run();
}

// MLX's sum and product types (Reduce::sum_dtype): bool and signed ints up to 32 bits give
// int32, unsigned ones uint32.
template <typename In>
using SumOut = std::conditional_t<
    std::is_same_v<In, bool> || std::is_same_v<In, int8_t> || std::is_same_v<In, int16_t>, int32_t,
    std::conditional_t<std::is_same_v<In, uint8_t> || std::is_same_v<In, uint16_t>, uint32_t, In>>;

}  // namespace

void Reduce::eval_cpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  if (in.shape() == out.shape()) {
    // Only size-1 axes are reduced: a converting copy.
    cpu::copy_to_contiguous(in, out);
    return;
  }
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  cpu::dispatch_dtype(in.dtype(), [&](auto tag) {
    using In = typename decltype(tag)::type;
    switch (op_) {
      case Op::max:
      case Op::any: return reduce_typed<ExtremeOp<In, true>, In, In>(in, out, axes_);
      case Op::min:
      case Op::all: return reduce_typed<ExtremeOp<In, false>, In, In>(in, out, axes_);
      case Op::prod: return reduce_typed<ProdOp<In, SumOut<In>>, In, SumOut<In>>(in, out, axes_);
      case Op::sum: break;
    }
    if (out.dtype() == float32 && !std::is_same_v<In, float>) {
      // A float32 sum of 16-bit floats (mean's): the total does not overflow 16 bits.
      if constexpr (is_float_v<In>) {
        reduce_typed<SumOp<In, float>, In, float>(in, out, axes_);
      } else {
        throw std::runtime_error("[Reduce] Unexpected output dtype.");
      }
    } else {
      reduce_typed<SumOp<In, SumOut<In>>, In, SumOut<In>>(in, out, axes_);
    }
  });
}

}  // namespace braid
