// The fused optimizer updates on the CPU: one pass over contiguous inputs, split across the pool.
#include <cmath>
#include <stdexcept>

#include "backend/common/optimizer.h"
#include "backend/cpu/convert.h"
#include "backend/cpu/dispatch.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {

namespace {

// Plain arithmetic: this file is compiled without FMA, so nothing is contracted.
struct HostArith {
  template <typename A>
  static A add(A x, A y) {
    return x + y;
  }
  template <typename A>
  static A sub(A x, A y) {
    return x - y;
  }
  template <typename A>
  static A mul(A x, A y) {
    return x * y;
  }
  template <typename A>
  static A div(A x, A y) {
    return x / y;
  }
  template <typename A>
  static A sqrt(A x) {
    return std::sqrt(x);
  }
};

template <typename T, typename A>
void update(const OptimizerUpdate& p, const std::vector<array>& in, array& out) {
  auto round = [](A x) { return static_cast<A>(static_cast<T>(x)); };
  auto ptr = [](const array& a) { return static_cast<const T*>(a.desc()->data_ptr); };
  auto scalar = [&](const array& a) { return static_cast<A>(*ptr(a)); };
  const A a = round(static_cast<A>(p.a()));
  const A b = round(static_cast<A>(p.b()));
  const A eps = round(static_cast<A>(p.eps()));
  T* dst = static_cast<T*>(out.desc()->data_ptr);
  const int64_t n = static_cast<int64_t>(out.size());
  constexpr int64_t kGrain = 1 << 15;
  switch (p.kind()) {
    case OptimizerUpdate::Kind::moment:
    case OptimizerUpdate::Kind::moment_square: {
      const T* x = ptr(in[0]);
      const T* g = ptr(in[1]);
      const bool square = p.kind() == OptimizerUpdate::Kind::moment_square;
      detail::parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
          const A xi = static_cast<A>(x[i]), gi = static_cast<A>(g[i]);
          dst[i] = static_cast<T>(square ? common::moment_square_update<HostArith>(a, b, xi, gi, round)
                                         : common::moment_update<HostArith>(a, b, xi, gi, round));
        }
      });
      return;
    }
    case OptimizerUpdate::Kind::adam: {
      const T* w = ptr(in[0]);
      const T* m = ptr(in[1]);
      const T* v = ptr(in[2]);
      const A s = scalar(in[3]);
      size_t next = 4;
      const A c = p.has_c() ? scalar(in[next++]) : A(1);
      const A d = p.has_d() ? scalar(in[next++]) : A(1);
      const bool has_c = p.has_c(), has_d = p.has_d();
      detail::parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
          dst[i] = static_cast<T>(common::adam_update<HostArith>(static_cast<A>(w[i]), static_cast<A>(m[i]),
                                                                 static_cast<A>(v[i]), s, c, d, eps, has_c,
                                                                 has_d, round));
        }
      });
      return;
    }
  }
}

}  // namespace

void OptimizerUpdate::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  std::vector<array> in;
  in.reserve(inputs.size());
  for (const auto& a : inputs) in.push_back(cpu::row_contiguous(a));
  cpu::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, double>) {
      update<T, double>(*this, in, out);
    } else if constexpr (cpu::is_half_v<T> || std::is_same_v<T, float>) {
      update<T, float>(*this, in, out);
    } else {
      throw std::invalid_argument("[OptimizerUpdate] Unsupported dtype " + dtype_name(out.dtype()) + ".");
    }
  });
}

}  // namespace braid
