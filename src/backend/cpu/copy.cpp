// The CPU's one strided copy: any layout to any layout, converting the dtype on the way, split
// across the pool. Same-dtype copies move raw bytes by element size (four instantiations) and
// memcpy their contiguous runs (around the cache when the copy is large); conversions
// instantiate each dtype pair once. AsType, Full, Reshape's gather, Concatenate, SliceUpdate
// and Pad all go through copy_region.
#include <cstring>

#include "backend/cpu/convert.h"
#include "backend/cpu/dispatch.h"
#include "backend/cpu/streaming.h"
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
namespace {

// Bytes per parallel task of a copy: large enough that the split costs nothing.
constexpr int64_t kCopyGrainBytes = int64_t{1} << 18;

// Shorter contiguous runs are copied element by element (a memcpy call costs more).
constexpr int64_t kMemcpyMinRun = 16;

// Contiguous runs shorter than this are written through the cache even in a large copy.
constexpr int64_t kStreamMinRunBytes = 256;

template <typename T>
void copy_same(const T* src, T* dst, const StridedLayout<2>& layout) {
  const int64_t n = layout.count();
  const int64_t is = layout.inner_stride(0), os = layout.inner_stride(1);
  const int64_t grain = std::max<int64_t>(1, kCopyGrainBytes / static_cast<int64_t>(sizeof(T)));
  // A large copy writes its runs around the cache (kStreamBytes): memcpy does this by itself
  // only for single calls larger than most of the cache, not for a copy made of many rows.
  const bool stream = stream_output(static_cast<size_t>(n) * sizeof(T), static_cast<size_t>(n) * sizeof(T)) &&
                      is == 1 && os == 1;
  detail::parallel_for(n, grain, [&](int64_t b, int64_t e) {
    layout.for_each_run(b, e, [&](const std::array<int64_t, 2>& off, int64_t len) {
      const T* s = src + off[0];
      T* d = dst + off[1];
      if (is == 1 && os == 1) {
        const size_t bytes = static_cast<size_t>(len) * sizeof(T);
        if (stream && bytes >= kStreamMinRunBytes) {
          stream_copy(d, s, bytes);
        } else if (len >= kMemcpyMinRun) {
          std::memcpy(d, s, static_cast<size_t>(len) * sizeof(T));
        } else {
          for (int64_t i = 0; i < len; ++i) d[i] = s[i];
        }
      } else if (is == 0 && os == 1) {
        const T v = *s;
        for (int64_t i = 0; i < len; ++i) d[i] = v;
      } else {
        for (int64_t i = 0; i < len; ++i) d[i * os] = s[i * is];
      }
    });
    if (stream) stream_fence();
  });
}

template <typename S, typename D>
void copy_convert(const S* src, D* dst, const StridedLayout<2>& layout) {
  const int64_t n = layout.count();
  const int64_t is = layout.inner_stride(0), os = layout.inner_stride(1);
  detail::parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    layout.for_each_run(b, e, [&](const std::array<int64_t, 2>& off, int64_t len) {
      const S* s = src + off[0];
      D* d = dst + off[1];
      if (is == 1 && os == 1) {
        for (int64_t i = 0; i < len; ++i) d[i] = convert<D>(s[i]);
      } else if (is == 0) {
        const D v = convert<D>(*s);
        for (int64_t i = 0; i < len; ++i) d[i * os] = v;
      } else {
        for (int64_t i = 0; i < len; ++i) d[i * os] = convert<D>(s[i * is]);
      }
    });
  });
}

}  // namespace

void copy_region(const void* src, Dtype src_dtype, const Strides& src_strides, void* dst, Dtype dst_dtype,
                 const Strides& dst_strides, const Shape& shape) {
  for (int32_t d : shape) {
    if (d == 0) return;
  }
  const StridedLayout<2> layout(shape, {src_strides, dst_strides});
  if (src_dtype == dst_dtype) {
    switch (src_dtype.size()) {
      case 1: copy_same(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst), layout); return;
      case 2: copy_same(static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), layout); return;
      case 4: copy_same(static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), layout); return;
      case 8: copy_same(static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst), layout); return;
      default: break;  // no dtype has another size
    }
  }
  dispatch_dtype(src_dtype, [&](auto st) {
    using S = typename decltype(st)::type;
    dispatch_dtype(dst_dtype, [&](auto dt) {
      using D = typename decltype(dt)::type;
      copy_convert(static_cast<const S*>(src), static_cast<D*>(dst), layout);
    });
  });
}

void copy_into(const array& in, array& out, const common::Region& region, const Shape& shape) {
  copy_region(in.desc()->data_ptr, in.dtype(), broadcast_strides(in, shape),
              static_cast<char*>(out.desc()->data_ptr) + region.offset * static_cast<int64_t>(out.itemsize()),
              out.dtype(), region.strides, shape);
}

void copy_to_contiguous(const array& in, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  copy_into(in, out, common::Region{0, out.strides()}, out.shape());
}

}  // namespace cpu

array cpu::contiguous_copy(const array& in) {
  array tmp(in.shape(), in.dtype(), nullptr, {});
  copy_to_contiguous(in, tmp);
  return tmp;
}

array cpu::row_contiguous(const array& in) { return in.flags().row_contiguous ? in : contiguous_copy(in); }

void AsType::eval_cpu(const std::vector<array>& inputs, array& out) {
  cpu::copy_to_contiguous(inputs[0], out);
}

void Full::eval_cpu(const std::vector<array>& inputs, array& out) { cpu::copy_to_contiguous(inputs[0], out); }

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
  detail::reshape_view(cpu::contiguous_copy(in), out);
}

}  // namespace braid
