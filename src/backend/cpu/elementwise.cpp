// Element-wise kernels: Unary, Binary, Select. Contiguous inputs take a flat loop the
// compiler vectorizes; anything else goes through StridedLayout.
#include <algorithm>
#include <cmath>
#include <cstdint>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "backend/cpu/dispatch.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {
namespace {

using cpu::compute_t;

// Whether `in` can be read with a flat index over `out`'s elements.
bool flat_readable(const array& in, const array& out) {
  return in.flags().row_contiguous && in.size() == out.size();
}
bool is_scalar_like(const array& in) { return in.data_size() == 1; }

// Outputs at least this large are written around the cache (non-temporal stores): they do
// not fit in it anyway, and a normal store first reads each line it writes, a fourth of an
// add's memory traffic.
constexpr size_t kStreamBytes = size_t{16} << 20;

// Runs dst[i] = f(i) for i in [b, e), computing blocks into an L1 buffer and streaming them
// out. The flat loop in `f`'s caller stays one the compiler vectorizes.
template <typename R, typename F>
void streamed(R* dst, int64_t b, int64_t e, F&& f) {
#if defined(__SSE2__)
  constexpr int64_t kBlock = 1024 / sizeof(R);
  alignas(64) R tmp[kBlock];
  int64_t i = b;
  for (; i < e && (reinterpret_cast<uintptr_t>(dst + i) & 15) != 0; ++i) dst[i] = f(i);
  for (; i + kBlock <= e; i += kBlock) {
    for (int64_t k = 0; k < kBlock; ++k) tmp[k] = f(i + k);
    auto* out = reinterpret_cast<__m128i*>(dst + i);
    const auto* in = reinterpret_cast<const __m128i*>(tmp);
    constexpr int64_t kVectors = kBlock * static_cast<int64_t>(sizeof(R)) / 16;
    for (int64_t k = 0; k < kVectors; ++k) _mm_stream_si128(out + k, _mm_load_si128(in + k));
  }
  for (; i < e; ++i) dst[i] = f(i);
  _mm_sfence();  // the streamed lines are visible before the chunk is reported done
#else
  for (int64_t i = b; i < e; ++i) dst[i] = f(i);
#endif
}

template <typename T, typename R, typename Op>
void unary_loop(const array& in, array& out, Op op) {
  const T* src = static_cast<const T*>(in.desc()->data_ptr);
  R* dst = static_cast<R*>(out.desc()->data_ptr);
  const int64_t n = static_cast<int64_t>(out.size());
  if (flat_readable(in, out)) {
    detail::parallel_for(n, cpu::kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dst[i] = static_cast<R>(op(static_cast<compute_t<T>>(src[i])));
    });
    return;
  }
  cpu::StridedLayout<1> layout(out.shape(), {cpu::broadcast_strides(in, out.shape())});
  const int64_t is = layout.inner_stride(0);
  detail::parallel_for(n, cpu::kElementwiseGrain, [&](int64_t b, int64_t e) {
    int64_t o = b;
    layout.for_each_run(b, e, [&](const std::array<int64_t, 1>& off, int64_t len) {
      for (int64_t i = 0; i < len; ++i) dst[o + i] = static_cast<R>(op(static_cast<compute_t<T>>(src[off[0] + i * is])));
      o += len;
    });
  });
}

template <typename T, typename R, typename Op>
void binary_loop(const array& a, const array& b, array& out, Op op) {
  const T* pa = static_cast<const T*>(a.desc()->data_ptr);
  const T* pb = static_cast<const T*>(b.desc()->data_ptr);
  R* dst = static_cast<R*>(out.desc()->data_ptr);
  const int64_t n = static_cast<int64_t>(out.size());
  using C = compute_t<T>;
  const bool fa = flat_readable(a, out), fb = flat_readable(b, out);
  if (fa && fb) {
    if (static_cast<size_t>(n) * sizeof(R) >= kStreamBytes && sizeof(R) <= 8) {
      detail::parallel_for(n, cpu::kElementwiseGrain, [&](int64_t s, int64_t e) {
        streamed(dst, s, e, [&](int64_t i) { return static_cast<R>(op(static_cast<C>(pa[i]), static_cast<C>(pb[i]))); });
      });
      return;
    }
    detail::parallel_for(n, cpu::kElementwiseGrain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) dst[i] = static_cast<R>(op(static_cast<C>(pa[i]), static_cast<C>(pb[i])));
    });
    return;
  }
  if (fa && is_scalar_like(b)) {
    const C vb = static_cast<C>(pb[0]);
    detail::parallel_for(n, cpu::kElementwiseGrain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) dst[i] = static_cast<R>(op(static_cast<C>(pa[i]), vb));
    });
    return;
  }
  if (is_scalar_like(a) && fb) {
    const C va = static_cast<C>(pa[0]);
    detail::parallel_for(n, cpu::kElementwiseGrain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) dst[i] = static_cast<R>(op(va, static_cast<C>(pb[i])));
    });
    return;
  }
  cpu::StridedLayout<2> layout(out.shape(), {cpu::broadcast_strides(a, out.shape()), cpu::broadcast_strides(b, out.shape())});
  const int64_t sa = layout.inner_stride(0), sb = layout.inner_stride(1);
  detail::parallel_for(n, cpu::kElementwiseGrain, [&](int64_t s, int64_t e) {
    int64_t o = s;
    layout.for_each_run(s, e, [&](const std::array<int64_t, 2>& off, int64_t len) {
      const T* xa = pa + off[0];
      const T* xb = pb + off[1];
      for (int64_t i = 0; i < len; ++i) dst[o + i] = static_cast<R>(op(static_cast<C>(xa[i * sa]), static_cast<C>(xb[i * sb])));
      o += len;
    });
  });
}

template <typename T, typename R>
void binary_dispatch(Binary::Op op, const array& a, const array& b, array& out) {
  using C = compute_t<T>;
  switch (op) {
    case Binary::Op::add: binary_loop<T, R>(a, b, out, [](C x, C y) { return static_cast<C>(x + y); }); break;
    case Binary::Op::subtract: binary_loop<T, R>(a, b, out, [](C x, C y) { return static_cast<C>(x - y); }); break;
    case Binary::Op::multiply: binary_loop<T, R>(a, b, out, [](C x, C y) { return static_cast<C>(x * y); }); break;
    case Binary::Op::divide: binary_loop<T, R>(a, b, out, [](C x, C y) { return static_cast<C>(x / y); }); break;
    case Binary::Op::maximum:
      binary_loop<T, R>(a, b, out, [](C x, C y) {
        if constexpr (std::is_floating_point_v<C>) {
          if (std::isnan(x) || std::isnan(y)) return static_cast<C>(NAN);
        }
        return x > y ? x : y;
      });
      break;
    case Binary::Op::minimum:
      binary_loop<T, R>(a, b, out, [](C x, C y) {
        if constexpr (std::is_floating_point_v<C>) {
          if (std::isnan(x) || std::isnan(y)) return static_cast<C>(NAN);
        }
        return x < y ? x : y;
      });
      break;
    default: break;
  }
}

}  // namespace

void Unary::eval_cpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  cpu::dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if constexpr (std::is_same_v<T, bool>) {
      throw std::invalid_argument(std::string("[") + name() + "] Not defined for bool.");
    } else if constexpr (std::is_floating_point_v<C>) {
      switch (op_) {
        case Op::negative: unary_loop<T, T>(in, out, [](C x) { return -x; }); break;
        case Op::exp: unary_loop<T, T>(in, out, [](C x) { return std::exp(x); }); break;
        case Op::log: unary_loop<T, T>(in, out, [](C x) { return std::log(x); }); break;
        case Op::sqrt: unary_loop<T, T>(in, out, [](C x) { return std::sqrt(x); }); break;
        case Op::tanh: unary_loop<T, T>(in, out, [](C x) { return std::tanh(x); }); break;
      }
    } else {
      // Integers: only negative reaches here (the op casts to float for the others).
      unary_loop<T, T>(in, out, [](C x) { return static_cast<C>(-x); });
    }
  });
}

void Binary::eval_cpu(const std::vector<array>& inputs, array& out) {
  const array& a = inputs[0];
  const array& b = inputs[1];
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  cpu::dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    switch (op_) {
      case Op::equal: binary_loop<T, bool>(a, b, out, [](C x, C y) { return x == y; }); break;
      case Op::less: binary_loop<T, bool>(a, b, out, [](C x, C y) { return x < y; }); break;
      case Op::greater: binary_loop<T, bool>(a, b, out, [](C x, C y) { return x > y; }); break;
      default: binary_dispatch<T, T>(op_, a, b, out);
    }
  });
}

void Select::eval_cpu(const std::vector<array>& inputs, array& out) {
  const array& c = inputs[0];
  const array& x = inputs[1];
  const array& y = inputs[2];
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  cpu::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const bool* pc = static_cast<const bool*>(c.desc()->data_ptr);
    const T* px = static_cast<const T*>(x.desc()->data_ptr);
    const T* py = static_cast<const T*>(y.desc()->data_ptr);
    T* dst = static_cast<T*>(out.desc()->data_ptr);
    cpu::StridedLayout<3> layout(out.shape(), {cpu::broadcast_strides(c, out.shape()),
                                               cpu::broadcast_strides(x, out.shape()),
                                               cpu::broadcast_strides(y, out.shape())});
    const int64_t sc = layout.inner_stride(0), sx = layout.inner_stride(1), sy = layout.inner_stride(2);
    detail::parallel_for(static_cast<int64_t>(out.size()), cpu::kElementwiseGrain, [&](int64_t s, int64_t e) {
      int64_t o = s;
      layout.for_each_run(s, e, [&](const std::array<int64_t, 3>& off, int64_t len) {
        for (int64_t i = 0; i < len; ++i) {
          dst[o + i] = pc[off[0] + i * sc] ? px[off[1] + i * sx] : py[off[2] + i * sy];
        }
        o += len;
      });
    });
  });
}

}  // namespace braid
