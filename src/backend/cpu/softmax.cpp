// Softmax::eval_cpu over the last axis. One read pass per row keeps a running maximum and a
// sum rescaled whenever the maximum grows; one more pass writes. Rows run in parallel and are
// computed in float32 whatever the storage type (so `precise` changes nothing here).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "backend/cpu/convert.h"
#include "backend/cpu/dispatch.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {
namespace {

template <typename T>
void softmax_rows(const T* src, T* dst, int64_t rows, int64_t width) {
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / width);
  detail::parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* x = src + r * width;
      T* y = dst + r * width;
      float running_max = -std::numeric_limits<float>::infinity();
      float total = 0.0f;
      for (int64_t i = 0; i < width; ++i) {
        const float v = static_cast<float>(x[i]);
        if (v > running_max) {
          total = total * std::exp(running_max - v) + 1.0f;
          running_max = v;
        } else {
          // A masked (-inf) entry adds nothing; exp(-inf - -inf) would add a NaN.
          if (v != -std::numeric_limits<float>::infinity()) total += std::exp(v - running_max);
        }
      }
      const float scale = 1.0f / total;
      for (int64_t i = 0; i < width; ++i) {
        y[i] = static_cast<T>(std::exp(static_cast<float>(x[i]) - running_max) * scale);
      }
    }
  });
}

}  // namespace

void Softmax::eval_cpu(const std::vector<array>& inputs, array& out) {
  const array& a = inputs[0];
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  std::optional<array> copy;
  const void* src = a.desc()->data_ptr;
  if (!a.flags().row_contiguous) {
    copy.emplace(a.shape(), a.dtype(), nullptr, std::vector<array>{});
    cpu::copy_to_contiguous(a, *copy);
    src = copy->desc()->data_ptr;
  }
  const int64_t width = out.shape().back();
  const int64_t rows = static_cast<int64_t>(out.size()) / width;
  cpu::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<cpu::compute_t<T>>) {
      softmax_rows(static_cast<const T*>(src), static_cast<T*>(out.desc()->data_ptr), rows, width);
    } else {
      throw std::invalid_argument("[Softmax] Only floating point inputs are supported.");
    }
  });
}

}  // namespace braid
