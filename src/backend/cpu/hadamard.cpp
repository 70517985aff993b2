// The Hadamard transform on the CPU: rows split across the pool; each row is transformed in
// an L1 buffer of float (double for float64) and rounded to the output dtype once.
#include <algorithm>
#include <vector>

#include "backend/common/hadamard.h"
#include "backend/cpu/convert.h"
#include "backend/cpu/dispatch.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {

namespace {

// Sylvester's H_p (natural order) applied in place to x[0, p).
template <typename A>
void walsh_hadamard(A* x, int64_t p) {
  for (int64_t h = 1; h < p; h <<= 1) {
    for (int64_t i = 0; i < p; i += 2 * h) {
      for (int64_t j = i; j < i + h; ++j) {
        const A a = x[j], b = x[j + h];
        x[j] = a + b;
        x[j + h] = a - b;
      }
    }
  }
}

template <typename T, typename A>
void hadamard_rows(const T* in, T* out, int64_t rows, int64_t n, const common::HadamardPlan& plan, A scale) {
  const common::HadamardMatrix hm = common::hadamard_matrix(plan.m);
  const int m = plan.m;
  const int64_t p = plan.pow2;
  detail::parallel_for(rows, std::max<int64_t>(1, 16384 / n), [&](int64_t b, int64_t e) {
    std::vector<A> buf(static_cast<size_t>(n));
    std::vector<A> mixed(static_cast<size_t>(m));
    for (int64_t r = b; r < e; ++r) {
      const T* src = in + r * n;
      T* dst = out + r * n;
      for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<A>(src[i]);
      for (int l = 0; l < m; ++l) walsh_hadamard(buf.data() + l * p, p);
      if (m == 1) {
        for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(buf[i] * scale);
        continue;
      }
      for (int64_t i = 0; i < p; ++i) {
        for (int j = 0; j < m; ++j) {
          A acc = 0;
          for (int l = 0; l < m; ++l) acc += static_cast<A>(hm.h[j * m + l]) * buf[l * p + i];
          mixed[j] = acc;
        }
        for (int j = 0; j < m; ++j) dst[j * p + i] = static_cast<T>(mixed[j] * scale);
      }
    }
  });
}

}  // namespace

void Hadamard::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array in = cpu::row_contiguous(inputs[0]);
  const int64_t n = out.shape(-1);
  const int64_t rows = static_cast<int64_t>(out.size()) / n;
  const common::HadamardPlan plan = common::hadamard_plan(n);
  cpu::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, double>) {
      hadamard_rows<T, double>(static_cast<const T*>(in.desc()->data_ptr),
                               static_cast<T*>(out.desc()->data_ptr), rows, n, plan,
                               static_cast<double>(scale_));
    } else if constexpr (cpu::is_half_v<T> || std::is_same_v<T, float>) {
      hadamard_rows<T, float>(static_cast<const T*>(in.desc()->data_ptr),
                              static_cast<T*>(out.desc()->data_ptr), rows, n, plan, scale_);
    } else {
      throw std::invalid_argument("[hadamard_transform] Unsupported dtype " + dtype_name(out.dtype()) + ".");
    }
  });
}

}  // namespace braid
