// The CPU element-wise loops: apply a functor of backend/common/elementwise_ops.h to every
// element. Contiguous inputs take a flat loop the compiler vectorizes (a broadcast scalar is
// hoisted out of it; float32 exp, log, tanh, erf and the like go to vector_math.h, float32
// arithmetic to vector_arith.h), large outputs are streamed past the cache, anything else
// walks the collapsed strided layout in runs along the innermost dimension.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "backend/common/elementwise_ops.h"
#include "backend/cpu/dispatch.h"
#include "backend/cpu/streaming.h"
#include "backend/cpu/vector_arith.h"
#include "backend/cpu/vector_math.h"
#include "graph/node.h"
#include "primitives/elementwise_ops.h"
#include "runtime/pool.h"

namespace braid::cpu {

/// The storage type of an op's result on inputs of storage type T: T itself when the functor
/// returns T's compute type (so float16 stays float16), else what it returns (bool, float).
template <typename T, typename Res>
using result_storage_t = std::conditional_t<std::is_same_v<Res, compute_t<T>>, T, Res>;

/// The kind (ew::Kind) of storage type T.
template <typename T>
inline constexpr uint8_t kind_v = ew::kind_of(TypeToDtype<T>{});

/// Calls f(TypeTag<T>{}) for `d` when dtype class `cls` accepts it. The ops cast their inputs
/// to an accepted dtype, so anything else is a bug (and instantiates nothing).
template <uint8_t Cls, typename F>
void dispatch_class(Dtype d, const char* name, F&& f) {
  dispatch_dtype(d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr ((Cls & kind_v<T>) != 0) {
      f(tag);
    } else {
      throw std::logic_error(std::string("[") + name + "] kernel called with an unsupported dtype.");
    }
  });
}

// Whether `in` can be read with a flat index over `out`'s elements.
inline bool flat_readable(const array& in, const array& out) {
  return in.flags().row_contiguous && in.size() == out.size();
}
inline bool is_scalar_like(const array& in) { return in.data_size() == 1; }

// The period m when `in`, broadcast to `shape`, repeats one dense row-major block of m
// elements along its leading axes (a bias row over a batch, per-channel constants over an
// image): element i of the output reads element i % m of `in`. 0 for any other layout.
inline int64_t repeat_period(const array& in, const Shape& shape) {
  const auto strides = broadcast_strides(in, shape);
  int64_t m = 1;
  int i = static_cast<int>(shape.size()) - 1;
  for (; i >= 0 && (shape[i] == 1 || strides[i] == m); --i) m *= shape[i];
  for (; i >= 0; --i) {
    if (shape[i] != 1 && strides[i] != 0) return 0;
  }
  return m;
}

template <typename R>
void check_output(const array& out) {
  if (out.itemsize() != sizeof(R)) throw std::logic_error("[elementwise] output dtype does not match the op.");
}

/// f over `len` float32 elements read from x with stride `is`, into dst: a contiguous run
/// directly, one broadcast element once, other strides gathered into blocks first.
inline void vector_run(VectorFn f, const float* x, int64_t is, float* dst, int64_t len) {
  if (is == 1) return f(x, dst, len);
  if (is == 0) {
    float v = 0;
    f(x, &v, 1);
    std::fill(dst, dst + len, v);
    return;
  }
  for (int64_t done = 0; done < len;) {
    float gathered[256];
    const int64_t m = std::min<int64_t>(256, len - done);
    for (int64_t i = 0; i < m; ++i) gathered[i] = x[(done + i) * is];
    f(gathered, dst + done, m);
    done += m;
  }
}

/// out[i] = op(in[i]) with in broadcast to out's shape.
template <typename T, typename Op>
void unary_loop(const array& in, array& out, Op op) {
  using C = compute_t<T>;
  using R = result_storage_t<T, decltype(op(std::declval<C>()))>;
  check_output<R>(out);
  const T* src = static_cast<const T*>(in.desc()->data_ptr);
  R* dst = static_cast<R*>(out.desc()->data_ptr);
  const int64_t n = static_cast<int64_t>(out.size());
  // float32 goes through the vector kernel whatever the layout, so an element's value does
  // not depend on the layout it is read from (the vector kernel and the scalar functor may
  // differ in the last bit).
  constexpr bool kFloat = std::is_same_v<T, float> && std::is_same_v<R, float>;
  VectorFn vector = nullptr;
  if constexpr (kFloat && VectorOpOf<Op>::kHas) vector = vector_math(VectorOpOf<Op>::kOp);
  if (flat_readable(in, out)) {
    if constexpr (kFloat) {
      if (vector != nullptr) {
        detail::parallel_for(n, kElementwiseGrain,
                             [&](int64_t b, int64_t e) { vector(src + b, dst + b, e - b); });
        return;
      }
    }
    detail::parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dst[i] = static_cast<R>(op(static_cast<C>(src[i])));
    });
    return;
  }
  StridedLayout<1> layout(out.shape(), {broadcast_strides(in, out.shape())});
  const int64_t is = layout.inner_stride(0);
  detail::parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    int64_t o = b;
    layout.for_each_run(b, e, [&](const std::array<int64_t, 1>& off, int64_t len) {
      const T* x = src + off[0];
      if constexpr (kFloat) {
        if (vector != nullptr) {
          vector_run(vector, x, is, dst + o, len);
          o += len;
          return;
        }
      }
      for (int64_t i = 0; i < len; ++i) dst[o + i] = static_cast<R>(op(static_cast<C>(x[i * is])));
      o += len;
    });
  });
}

/// out[i] = op(a[i], b[i]) with a and b (same dtype) broadcast to out's shape.
template <typename T, typename Op>
void binary_loop(const array& a, const array& b, array& out, Op op) {
  using C = compute_t<T>;
  using R = result_storage_t<T, decltype(op(std::declval<C>(), std::declval<C>()))>;
  check_output<R>(out);
  const T* pa = static_cast<const T*>(a.desc()->data_ptr);
  const T* pb = static_cast<const T*>(b.desc()->data_ptr);
  R* dst = static_cast<R*>(out.desc()->data_ptr);
  const int64_t n = static_cast<int64_t>(out.size());
  const bool fa = flat_readable(a, out), fb = flat_readable(b, out);
  // float32 add, subtract, multiply and divide take vector_arith.h's kernels where the CPU has
  // them: runs, or a run and a broadcast scalar.
  constexpr bool kArith = std::is_same_v<T, float> && std::is_same_v<R, float> && ArithOpOf<Op>::kHas;
  ArithFn arith[3] = {};
  if constexpr (kArith) {
    for (Operands operands : {Operands::runs, Operands::x_scalar, Operands::y_scalar})
      arith[static_cast<int>(operands)] = vector_arith(ArithOpOf<Op>::kOp, operands);
  }
  if (fa && fb) {
    const size_t bytes_read = 2 * static_cast<size_t>(n) * sizeof(T);
    if (stream_output(bytes_read, static_cast<size_t>(n) * sizeof(R)) && sizeof(R) <= 8) {
      detail::parallel_for(n, kElementwiseGrain, [&](int64_t s, int64_t e) {
        stream_out(dst, s, e, [&](int64_t i) { return static_cast<R>(op(static_cast<C>(pa[i]), static_cast<C>(pb[i]))); });
        stream_fence();
      });
      return;
    }
    if constexpr (kArith) {
      if (const ArithFn f = arith[static_cast<int>(Operands::runs)]) {
        detail::parallel_for(n, kElementwiseGrain,
                             [&](int64_t s, int64_t e) { f(pa + s, pb + s, dst + s, e - s); });
        return;
      }
    }
    detail::parallel_for(n, kElementwiseGrain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) dst[i] = static_cast<R>(op(static_cast<C>(pa[i]), static_cast<C>(pb[i])));
    });
    return;
  }
  StridedLayout<2> layout(out.shape(), {broadcast_strides(a, out.shape()), broadcast_strides(b, out.shape())});
  const int64_t sa = layout.inner_stride(0), sb = layout.inner_stride(1);
  const bool stream =
      stream_output((a.data_size() + b.data_size()) * sizeof(T), static_cast<size_t>(n) * sizeof(R)) &&
      sizeof(R) <= 8;
  // One run of `len` outputs at dst + o whose element i is f(i); f's loop is one the compiler
  // vectorizes when the inner strides are 0 or 1 (the cases spelled out below). Written
  // through the cache, a kernel of vector_arith.h computes it where there is one.
  auto write_run = [&](int64_t o, int64_t len, Operands operands, const T* xa, const T* xb, auto f) {
    if (stream) {
      stream_out(dst + o, 0, len, f);
      return;
    }
    if constexpr (kArith) {
      if (const ArithFn k = arith[static_cast<int>(operands)]) return k(xa, xb, dst + o, len);
    }
    for (int64_t i = 0; i < len; ++i) dst[o + i] = f(i);
  };
  auto dense_run = [&](int64_t o, int64_t len, const T* xa, const T* xb) {
    write_run(o, len, Operands::runs, xa, xb,
              [&](int64_t i) { return static_cast<R>(op(static_cast<C>(xa[i]), static_cast<C>(xb[i]))); });
  };
  // One operand read flat, the other a short row repeated over it: the strided runs would be
  // one row long, so the row is tiled into a block of up to 4096 elements instead, and each
  // block of output is one run of two dense operands.
  if (fa != fb) {
    constexpr int64_t kShortRow = 32, kTile = 4096;
    const int64_t m = repeat_period(fa ? b : a, out.shape());
    if (m > 1 && m <= kShortRow && n >= 4 * m) {
      const T* row = fa ? pb : pa;
      const T* flat = fa ? pa : pb;
      const int64_t block = std::min(kTile, n) / m * m;
      const std::unique_ptr<T[]> tiled(new T[static_cast<size_t>(block)]);
      for (int64_t i = 0; i < block; ++i) tiled[i] = row[i % m];
      const T* tile = tiled.get();
      // Output o onwards against the tile from position t of the row.
      auto run = [&](int64_t o, int64_t len, int64_t t) {
        dense_run(o, len, fa ? flat + o : tile + t, fa ? tile + t : flat + o);
      };
      detail::parallel_for(n, kElementwiseGrain, [&](int64_t s, int64_t e) {
        // The head up to the next row boundary, then whole blocks starting on one.
        const int64_t head = std::min(e, s + (m - s % m) % m);
        if (head > s) run(s, head - s, s % m);
        for (int64_t o = head; o < e; o += block) run(o, std::min(block, e - o), 0);
        if (stream) stream_fence();
      });
      return;
    }
  }
  detail::parallel_for(n, kElementwiseGrain, [&](int64_t s, int64_t e) {
    int64_t o = s;
    layout.for_each_run(s, e, [&](const std::array<int64_t, 2>& off, int64_t len) {
      const T* xa = pa + off[0];
      const T* xb = pb + off[1];
      if (sa == 1 && sb == 1) {
        dense_run(o, len, xa, xb);
      } else if (sa == 0 && sb == 1) {
        const C va = static_cast<C>(xa[0]);
        write_run(o, len, Operands::x_scalar, xa, xb,
                  [&](int64_t i) { return static_cast<R>(op(va, static_cast<C>(xb[i]))); });
      } else if (sa == 1 && sb == 0) {
        const C vb = static_cast<C>(xb[0]);
        write_run(o, len, Operands::y_scalar, xa, xb,
                  [&](int64_t i) { return static_cast<R>(op(static_cast<C>(xa[i]), vb)); });
      } else {
        // Strided reads bound this loop; streaming stores would not speed it up.
        for (int64_t i = 0; i < len; ++i) {
          dst[o + i] = static_cast<R>(op(static_cast<C>(xa[i * sa]), static_cast<C>(xb[i * sb])));
        }
      }
      o += len;
    });
    if (stream) stream_fence();
  });
}

}  // namespace braid::cpu
