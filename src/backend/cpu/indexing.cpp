// Gather, Scatter and MaskedScatter on the CPU. Index arrays (any integer dtype, any layout)
// are first read into int64 in row-major order; a gather then copies slices (whole rows with
// memcpy when a slice is contiguous in the source), a scatter combines update slices into a
// copy of the input. Out-of-range indices never touch memory outside the array (see
// backend/common/indexing.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "backend/common/indexing.h"
#include "backend/cpu/convert.h"
#include "backend/cpu/dispatch.h"
#include "backend/cpu/vector_arith.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {
namespace {

using cpu::compute_t;

constexpr int64_t kGrain = 1 << 15;
constexpr size_t kPrefetchBytes = 256;  // of a gathered row, requested a row ahead

// The elements of an integer array in row-major order, as int64.
std::vector<int64_t> load_indices(const array& idx, const char* op) {
  std::vector<int64_t> out(idx.size());
  if (out.empty()) return out;
  cpu::dispatch_dtype(idx.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
      const I* src = static_cast<const I*>(idx.desc()->data_ptr);
      cpu::StridedLayout<1> layout(idx.shape(), {idx.strides()});
      const int64_t is = layout.inner_stride(0);
      detail::parallel_for(static_cast<int64_t>(out.size()), 1 << 16, [&](int64_t b, int64_t e) {
        int64_t o = b;
        layout.for_each_run(b, e, [&](const std::array<int64_t, 1>& off, int64_t len) {
          for (int64_t t = 0; t < len; ++t) out[o + t] = static_cast<int64_t>(src[off[0] + t * is]);
          o += len;
        });
      });
    } else {
      throw std::invalid_argument(std::string("[") + op + "] Indices must be integral.");
    }
  });
  return out;
}

// Where the index arrays point: per indexed axis its size, slice length and stride.
struct IndexedAxes {
  std::vector<std::vector<int64_t>> idx;
  std::vector<int64_t> dim, slice, stride;
};

IndexedAxes indexed_axes(const std::vector<array>& inputs, size_t first, const std::vector<int>& axes,
                         const Shape& shape, const Shape& slice, const Strides& strides, const char* op) {
  IndexedAxes r;
  for (size_t k = 0; k < axes.size(); ++k) {
    r.idx.push_back(load_indices(inputs[first + k], op));
    r.dim.push_back(shape[axes[k]]);
    r.slice.push_back(slice[axes[k]]);
    r.stride.push_back(strides[axes[k]]);
  }
  return r;
}

template <size_t N>
struct Bytes {
  unsigned char b[N];
};

template <size_t N>
void gather_strided(const char* src, char* dst, const cpu::StridedLayout<1>& slice_layout, int64_t S,
                    int64_t total, const std::function<int64_t(int64_t)>& base_of) {
  using E = Bytes<N>;
  const E* s = reinterpret_cast<const E*>(src);
  E* d = reinterpret_cast<E*>(dst);
  const int64_t is = slice_layout.inner_stride(0);
  detail::parallel_for(total, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b / S; i * S < e; ++i) {
      const int64_t jb = std::max<int64_t>(b - i * S, 0), je = std::min<int64_t>(e - i * S, S);
      const E* base = s + base_of(i);
      E* o = d + i * S + jb;
      slice_layout.for_each_run(jb, je, [&](const std::array<int64_t, 1>& off, int64_t len) {
        for (int64_t t = 0; t < len; ++t) *o++ = base[off[0] + t * is];
      });
    }
  });
}

// Scatter reductions in the element's compute type; bool uses logical forms. Max and min let
// a NaN update win, as maximum and minimum do.
template <Scatter::ReduceType R, typename T>
T combine(T o, T u) {
  using C = compute_t<T>;
  const C x = static_cast<C>(o), y = static_cast<C>(u);
  if constexpr (R == Scatter::ReduceType::None) {
    return u;
  } else if constexpr (R == Scatter::ReduceType::Sum) {
    if constexpr (std::is_same_v<T, bool>)
      return x || y;
    else
      return static_cast<T>(x + y);
  } else if constexpr (R == Scatter::ReduceType::Prod) {
    if constexpr (std::is_same_v<T, bool>)
      return x && y;
    else
      return static_cast<T>(x * y);
  } else {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(y)) return u;
    }
    if constexpr (R == Scatter::ReduceType::Max)
      return x < y ? u : o;
    else
      return y < x ? u : o;
  }
}

// Calls f(std::integral_constant<ReduceType, r>{}).
template <typename F>
void dispatch_reduce(Scatter::ReduceType r, F&& f) {
  using R = Scatter::ReduceType;
  switch (r) {
    case R::Max: f(std::integral_constant<R, R::Max>{}); break;
    case R::Min: f(std::integral_constant<R, R::Min>{}); break;
    case R::Sum: f(std::integral_constant<R, R::Sum>{}); break;
    case R::Prod: f(std::integral_constant<R, R::Prod>{}); break;
    case R::None: f(std::integral_constant<R, R::None>{}); break;
  }
}

// Updates grouped by where their slices start, for a scatter whose slices meet only where they
// start at the same place: group g takes the slices starting in the g-th of kCount equal
// ranges of the output, in update order, so the groups can run in parallel and give the bits
// of one thread applying every update in order, and sorted indices stay in order within a
// group. Each thread then writes whole slices (a split of every slice into column ranges
// would leave each thread short runs in far-apart rows, which the hardware prefetchers do not
// follow). Empty where the groups would be uneven (the updates crowd into a few ranges): the
// caller splits the slices instead.
struct DestinationGroups {
  static constexpr int kCount = 64;
  std::vector<int64_t> first;  // group g holds order[first[g], first[g + 1])
  std::vector<int64_t> order;  // update positions, each group's in increasing order
};

std::optional<DestinationGroups> group_by_destination(const std::vector<int64_t>& bases, int64_t extent) {
  constexpr int kCount = DestinationGroups::kCount;
  const int64_t n = static_cast<int64_t>(bases.size());
  if (n < 2 * kCount) return std::nullopt;
  const int64_t span = (extent + kCount - 1) / kCount;
  DestinationGroups g;
  g.first.assign(kCount + 1, 0);
  for (int64_t base : bases) {
    if (base >= 0) ++g.first[base / span + 1];
  }
  int64_t most = 0;
  for (int k = 0; k < kCount; ++k) {
    most = std::max(most, g.first[k + 1]);
    g.first[k + 1] += g.first[k];
  }
  if (most > 2 * ((g.first[kCount] + kCount - 1) / kCount)) return std::nullopt;
  g.order.resize(static_cast<size_t>(g.first[kCount]));
  std::vector<int64_t> next(g.first.begin(), g.first.end() - 1);
  for (int64_t i = 0; i < n; ++i) {
    if (bases[i] >= 0) g.order[next[bases[i] / span]++] = i;
  }
  return g;
}

}  // namespace

void Gather::eval_cpu(const std::vector<array>& inputs, array& out) {
  const array& a = inputs[0];
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  IndexedAxes ax = indexed_axes(inputs, 1, axes_, a.shape(), slice_sizes_, a.strides(), "Gather");
  int64_t S = 1;
  for (int32_t n : slice_sizes_) S *= n;
  const int64_t N = static_cast<int64_t>(out.size()) / S;
  auto base_of = [&](int64_t i) {
    int64_t off = 0;
    for (size_t k = 0; k < ax.idx.size(); ++k)
      off += common::gather_start(ax.idx[k][i], ax.dim[k], ax.slice[k]) * ax.stride[k];
    return off;
  };
  cpu::StridedLayout<1> slice_layout(slice_sizes_, {a.strides()});
  const size_t size = a.itemsize();
  const char* src = static_cast<const char*>(a.desc()->data_ptr);
  char* dst = static_cast<char*>(out.desc()->data_ptr);
  if (slice_layout.ndim() == 0 || (slice_layout.ndim() == 1 && slice_layout.inner_stride(0) == 1)) {
    const size_t row = static_cast<size_t>(S) * size;
    const int64_t item = static_cast<int64_t>(size);
    // Rows of a gather lie far apart, and at each the copy waits for its first lines before
    // the hardware prefetchers take over: the next row's first lines are requested while this
    // row is copied. (Requesting all of a 4 KiB row ahead was slower on the 2-core EPYC when
    // the gathered rows were still cached from the previous call, as in bench/ figure i1.)
    const size_t ahead = std::min(row, kPrefetchBytes);
    detail::parallel_for(N, std::max<int64_t>(1, kGrain / S), [&](int64_t b, int64_t e) {
      const char* next = src + base_of(b) * item;
      for (int64_t i = b; i < e; ++i) {
        const char* from = next;
        if (i + 1 < e) {
          next = src + base_of(i + 1) * item;
          for (size_t at = 0; at < ahead; at += 64) __builtin_prefetch(next + at);
        }
        std::memcpy(dst + i * row, from, row);
      }
    });
    return;
  }
  const std::function<int64_t(int64_t)> base_fn = base_of;
  switch (size) {
    case 1: gather_strided<1>(src, dst, slice_layout, S, N * S, base_fn); break;
    case 2: gather_strided<2>(src, dst, slice_layout, S, N * S, base_fn); break;
    case 4: gather_strided<4>(src, dst, slice_layout, S, N * S, base_fn); break;
    default: gather_strided<8>(src, dst, slice_layout, S, N * S, base_fn); break;
  }
}

// Output position o reads a at the output's other coordinates and at start(idx[o]) along the
// axis: a layout over the output shape with a's strides (the axis' zeroed) gives the first.
void GatherAxis::eval_cpu(const std::vector<array>& inputs, array& out) {
  const array& a = inputs[0];
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const std::vector<int64_t> idx = load_indices(inputs[1], "GatherAxis");
  Strides others = a.strides();
  const int64_t step = others[axis_], dim = a.shape()[axis_];
  others[axis_] = 0;
  const cpu::StridedLayout<1> layout(out.shape(), {others});
  const int64_t is = layout.inner_stride(0);
  auto run = [&](auto tag) {
    using E = typename decltype(tag)::type;
    const E* src = static_cast<const E*>(a.desc()->data_ptr);
    E* dst = static_cast<E*>(out.desc()->data_ptr);
    detail::parallel_for(static_cast<int64_t>(out.size()), kGrain, [&](int64_t b, int64_t e) {
      int64_t o = b;
      layout.for_each_run(b, e, [&](const std::array<int64_t, 1>& off, int64_t len) {
        for (int64_t t = 0; t < len; ++t, ++o)
          dst[o] = src[off[0] + t * is + common::gather_start(idx[o], dim, 1) * step];
      });
    });
  };
  switch (a.itemsize()) {
    case 1: run(cpu::TypeTag<Bytes<1>>{}); break;
    case 2: run(cpu::TypeTag<Bytes<2>>{}); break;
    case 4: run(cpu::TypeTag<Bytes<4>>{}); break;
    default: run(cpu::TypeTag<Bytes<8>>{}); break;
  }
}

void Scatter::eval_cpu(const std::vector<array>& inputs, array& out) {
  const array& a = inputs[0];
  if (!detail::donate_host(inputs, 0, out)) cpu::copy_to_contiguous(a, out);
  const array& upd_in = inputs.back();
  if (out.size() == 0 || upd_in.size() == 0) return;
  std::optional<array> upd_copy;
  if (!upd_in.flags().row_contiguous) {
    upd_copy.emplace(upd_in.shape(), upd_in.dtype(), nullptr, std::vector<array>{});
    cpu::copy_to_contiguous(upd_in, *upd_copy);
  }
  const array& upd = upd_copy ? *upd_copy : upd_in;
  const size_t idx_nd = upd.ndim() - a.ndim();
  const Shape slice(upd.shape().begin() + idx_nd, upd.shape().end());
  IndexedAxes ax = indexed_axes(inputs, 1, axes_, a.shape(), slice, out.strides(), "Scatter");
  int64_t S = 1;
  for (int32_t n : slice) S *= n;
  const int64_t N = static_cast<int64_t>(upd.size()) / S;
  cpu::StridedLayout<2> layout(slice, {out.strides(), detail::row_major_strides(slice)});
  const int64_t os = layout.inner_stride(0), us = layout.inner_stride(1);
  // Where each update's slice starts in out, or -1 where an index drops it.
  std::vector<int64_t> bases(static_cast<size_t>(N));
  for (int64_t i = 0; i < N; ++i) {
    int64_t base = 0;
    for (size_t k = 0; k < ax.idx.size() && base >= 0; ++k) {
      const int64_t start = common::scatter_start(ax.idx[k][i], ax.dim[k], ax.slice[k]);
      base = start < 0 ? -1 : base + start * ax.stride[k];
    }
    bases[i] = base;
  }
  // When every indexed axis takes slices of one, two updates meet only where their slices
  // start at the same place; otherwise slices may overlap and one thread applies them all.
  bool disjoint = true;
  for (int64_t n : ax.slice) disjoint = disjoint && n == 1;
  cpu::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatch_reduce(reduce_, [&](auto reduce_tag) {
      constexpr ReduceType R = decltype(reduce_tag)::value;
      T* dst = static_cast<T*>(out.desc()->data_ptr);
      const T* src = static_cast<const T*>(upd.desc()->data_ptr);
      // float32 sums of runs in AVX2 where the CPU has it (the same bits: one rounding each).
      cpu::ArithFn add_runs = nullptr;
      if constexpr (std::is_same_v<T, float> && R == ReduceType::Sum) {
        add_runs = cpu::vector_arith(cpu::ArithOp::add, cpu::Operands::runs);
      }
      // Update i into slice positions [jb, je).
      auto apply = [&](int64_t i, int64_t jb, int64_t je) {
        T* o = dst + bases[i];
        const T* u = src + i * S;
        layout.for_each_run(jb, je, [&](const std::array<int64_t, 2>& off, int64_t len) {
          T* oo = o + off[0];
          const T* uu = u + off[1];
          if (os == 1 && us == 1) {
            if constexpr (std::is_same_v<T, float>) {
              if (add_runs != nullptr) return add_runs(oo, uu, oo, len);
            }
            for (int64_t t = 0; t < len; ++t) oo[t] = combine<R>(oo[t], uu[t]);
          } else {
            for (int64_t t = 0; t < len; ++t) oo[t * os] = combine<R>(oo[t * os], uu[t * us]);
          }
        });
      };
      auto in_order = [&](int64_t jb, int64_t je) {
        for (int64_t i = 0; i < N; ++i) {
          if (bases[i] >= 0) apply(i, jb, je);
        }
      };
      if (!disjoint) return in_order(0, S);
      if (const std::optional<DestinationGroups> groups =
              group_by_destination(bases, static_cast<int64_t>(out.size()))) {
        detail::parallel_for(DestinationGroups::kCount, 1, [&](int64_t b, int64_t e) {
          for (int64_t k = groups->first[b]; k < groups->first[e]; ++k) apply(groups->order[k], 0, S);
        });
        return;
      }
      detail::parallel_for(S, std::max<int64_t>(64, kGrain / std::max<int64_t>(N, 1)), in_order);
    });
  });
}

void MaskedScatter::eval_cpu(const std::vector<array>& inputs, array& out) {
  const array& a = inputs[0];
  const array& src_in = inputs[2];
  if (!detail::donate_host(inputs, 0, out)) cpu::copy_to_contiguous(a, out);
  if (out.size() == 0 || src_in.size() == 0) return;
  array mask(out.shape(), bool_, nullptr, std::vector<array>{});
  cpu::copy_to_contiguous(inputs[1], mask);
  std::optional<array> src_copy;
  if (!src_in.flags().row_contiguous) {
    src_copy.emplace(src_in.shape(), src_in.dtype(), nullptr, std::vector<array>{});
    cpu::copy_to_contiguous(src_in, *src_copy);
  }
  const array& src = src_copy ? *src_copy : src_in;
  const bool* m = static_cast<const bool*>(mask.desc()->data_ptr);
  const int64_t n = static_cast<int64_t>(out.size());
  const int64_t src_n = static_cast<int64_t>(src.size());
  // Two passes over fixed chunks: count the true positions of each, then fill each chunk
  // from its starting position in src.
  constexpr int64_t kChunk = 1 << 16;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<int64_t> first(static_cast<size_t>(chunks) + 1, 0);
  detail::parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      int64_t count = 0;
      for (int64_t i = c * kChunk, end = std::min(n, (c + 1) * kChunk); i < end; ++i) count += m[i];
      first[c + 1] = count;
    }
  });
  for (int64_t c = 0; c < chunks; ++c) first[c + 1] += first[c];
  const size_t size = out.itemsize();
  char* dst = static_cast<char*>(out.desc()->data_ptr);
  const char* s = static_cast<const char*>(src.desc()->data_ptr);
  detail::parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      int64_t k = first[c];
      for (int64_t i = c * kChunk, end = std::min(n, (c + 1) * kChunk); i < end && k < src_n; ++i) {
        if (m[i]) std::memcpy(dst + i * size, s + (k++) * size, size);
      }
    }
  });
}

}  // namespace braid
