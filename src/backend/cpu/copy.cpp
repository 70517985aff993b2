// Copies, conversions and views: AsType, Full, Broadcast, Reshape, Transpose.
#include <cstring>

#include "backend/cpu/convert.h"
#include "backend/cpu/dispatch.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {

namespace detail {

void convert_contiguous(const void* src, Dtype src_dtype, void* dst, Dtype dst_dtype, size_t n) {
  if (src_dtype == dst_dtype) {
    if (n > 0) std::memcpy(dst, src, n * src_dtype.size());
    return;
  }
  cpu::dispatch_dtype(src_dtype, [&](auto st) {
    using S = typename decltype(st)::type;
    cpu::dispatch_dtype(dst_dtype, [&](auto dt) {
      using D = typename decltype(dt)::type;
      const S* s = static_cast<const S*>(src);
      D* d = static_cast<D*>(dst);
      for (size_t i = 0; i < n; ++i) d[i] = cpu::convert<D>(s[i]);
    });
  });
}

}  // namespace detail

namespace cpu {

void copy_to_contiguous(const array& in, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  if (in.flags().row_contiguous && in.size() == out.size()) {
    int64_t n = static_cast<int64_t>(out.size());
    const char* src = static_cast<const char*>(in.desc()->data_ptr);
    char* dst = static_cast<char*>(out.desc()->data_ptr);
    detail::parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
      detail::convert_contiguous(src + b * in.itemsize(), in.dtype(), dst + b * out.itemsize(), out.dtype(),
                                 static_cast<size_t>(e - b));
    });
    return;
  }
  StridedLayout<2> layout(out.shape(), {broadcast_strides(in, out.shape()), out.strides()});
  dispatch_dtype(in.dtype(), [&](auto st) {
    using S = typename decltype(st)::type;
    dispatch_dtype(out.dtype(), [&](auto dt) {
      using D = typename decltype(dt)::type;
      const S* src = static_cast<const S*>(in.desc()->data_ptr);
      D* dst = static_cast<D*>(out.desc()->data_ptr);
      const int64_t is = layout.inner_stride(0);
      detail::parallel_for(static_cast<int64_t>(out.size()), kElementwiseGrain, [&](int64_t b, int64_t e) {
        layout.for_each_run(b, e, [&](const std::array<int64_t, 2>& off, int64_t n) {
          const S* s = src + off[0];
          D* d = dst + off[1];
          for (int64_t i = 0; i < n; ++i) d[i] = convert<D>(s[i * is]);
        });
      });
    });
  });
}

}  // namespace cpu

void AsType::eval_cpu(const std::vector<array>& inputs, array& out) {
  cpu::copy_to_contiguous(inputs[0], out);
}

void Full::eval_cpu(const std::vector<array>& inputs, array& out) {
  cpu::copy_to_contiguous(inputs[0], out);
}

void Broadcast::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::broadcast_view(inputs[0], out);
}

void Transpose::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::transpose_view(inputs[0], out, axes_);
}

void Reshape::eval_cpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  if (detail::reshape_view(in, out)) return;
  // Gather into row-major order in the input's shape; the reshaped view of that is exact.
  array tmp(in.shape(), in.dtype(), nullptr, {});
  cpu::copy_to_contiguous(in, tmp);
  detail::reshape_view(tmp, out);
}

}  // namespace braid
