// Affine quantization on the CPU: quantize and dequantize split by groups across the pool;
// the few-row product dequantizes one weight row at a time into L1 and dots it with every
// row of x, so the packed weights are read once.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/common/quantized.h"
#include "backend/cpu/convert.h"
#include "backend/cpu/dispatch.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {

namespace {

template <typename T>
void quantize_typed(const array& w, array& out, int group, int bits, AffineQuantize::Part part) {
  const T* src = static_cast<const T*>(w.desc()->data_ptr);
  const int64_t groups = static_cast<int64_t>(w.size()) / group;
  const int64_t words_per_group = static_cast<int64_t>(group) * bits / 32;
  void* dst = out.desc()->data_ptr;
  detail::parallel_for(groups, std::max<int64_t>(1, 4096 / group), [&](int64_t b, int64_t e) {
    for (int64_t gi = b; gi < e; ++gi) {
      const T* x = src + gi * group;
      float lo = static_cast<float>(x[0]), hi = lo;
      for (int i = 1; i < group; ++i) {
        const float v = static_cast<float>(x[i]);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      const common::AffineParams p = common::affine_params(lo, hi, bits);
      switch (part) {
        case AffineQuantize::Part::scales: static_cast<T*>(dst)[gi] = static_cast<T>(p.scale); break;
        case AffineQuantize::Part::biases: static_cast<T*>(dst)[gi] = static_cast<T>(p.bias); break;
        case AffineQuantize::Part::packed: {
          uint32_t* words = static_cast<uint32_t*>(dst) + gi * words_per_group;
          std::fill(words, words + words_per_group, 0u);
          for (int i = 0; i < group; ++i) {
            common::pack_into(words, i, common::affine_quantize(static_cast<float>(x[i]), p, bits), bits);
          }
          break;
        }
      }
    }
  });
}

// One packed row of k values, dequantized into `dst` (floats).
template <typename T>
void dequantize_row(const uint32_t* row, const T* scales, const T* biases, int64_t k, int group, int bits,
                    float* dst) {
  for (int64_t g = 0; g < k / group; ++g) {
    const float s = static_cast<float>(scales[g]), b = static_cast<float>(biases[g]);
    for (int i = 0; i < group; ++i) {
      const int64_t j = g * group + i;
      dst[j] = s * static_cast<float>(common::unpack(row, j, bits)) + b;
    }
  }
}

// Calls fn(TypeTag<T>{}) for the dtypes quantization takes (the ops reject the others).
template <typename F>
void for_float_types(Dtype d, const char* op, F&& fn) {
  cpu::dispatch_dtype(d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (cpu::is_half_v<T> || std::is_same_v<T, float>) {
      fn(tag);
    } else {
      throw std::invalid_argument(std::string("[") + op + "] Unsupported dtype " + dtype_name(d) + ".");
    }
  });
}

}  // namespace

void AffineQuantize::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array w = cpu::row_contiguous(inputs[0]);
  for_float_types(w.dtype(), "quantize", [&](auto tag) {
    quantize_typed<typename decltype(tag)::type>(w, out, group_size_, bits_, part_);
  });
}

void AffineDequantize::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array w = cpu::row_contiguous(inputs[0]);
  const array scales = cpu::row_contiguous(inputs[1]);
  const array biases = cpu::row_contiguous(inputs[2]);
  const int64_t k = out.shape(-1);
  const int64_t rows = static_cast<int64_t>(out.size()) / k;
  const int64_t words = w.shape(-1);
  for_float_types(out.dtype(), "dequantize", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* pw = static_cast<const uint32_t*>(w.desc()->data_ptr);
    const T* ps = static_cast<const T*>(scales.desc()->data_ptr);
    const T* pb = static_cast<const T*>(biases.desc()->data_ptr);
    T* dst = static_cast<T*>(out.desc()->data_ptr);
    detail::parallel_for(rows, std::max<int64_t>(1, 16384 / k), [&](int64_t b, int64_t e) {
      std::vector<float> row(static_cast<size_t>(k));
      for (int64_t r = b; r < e; ++r) {
        dequantize_row(pw + r * words, ps + r * (k / group_size_), pb + r * (k / group_size_), k, group_size_, bits_,
                       row.data());
        for (int64_t j = 0; j < k; ++j) dst[r * k + j] = static_cast<T>(row[j]);
      }
    });
  });
}

void QuantizedMatmul::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array x = cpu::row_contiguous(inputs[0]);
  const array w = cpu::row_contiguous(inputs[1]);
  const array scales = cpu::row_contiguous(inputs[2]);
  const array biases = cpu::row_contiguous(inputs[3]);
  const int64_t rows = x.shape(0), k = x.shape(1), n = w.shape(0), words = w.shape(1);
  const int64_t groups = k / group_size_;
  for_float_types(out.dtype(), "quantized_matmul", [&](auto tag) {
    using T = typename decltype(tag)::type;
    // x as float once: every weight row is dotted with every row of x.
    std::vector<float> xf(static_cast<size_t>(rows * k));
    const T* px = static_cast<const T*>(x.desc()->data_ptr);
    for (int64_t i = 0; i < rows * k; ++i) xf[i] = static_cast<float>(px[i]);
    const auto* pw = static_cast<const uint32_t*>(w.desc()->data_ptr);
    const T* ps = static_cast<const T*>(scales.desc()->data_ptr);
    const T* pb = static_cast<const T*>(biases.desc()->data_ptr);
    T* dst = static_cast<T*>(out.desc()->data_ptr);
    detail::parallel_for(n, std::max<int64_t>(1, 65536 / k), [&](int64_t b, int64_t e) {
      std::vector<float> row(static_cast<size_t>(k));
      for (int64_t j = b; j < e; ++j) {
        dequantize_row(pw + j * words, ps + j * groups, pb + j * groups, k, group_size_, bits_, row.data());
        for (int64_t r = 0; r < rows; ++r) {
          const float* xr = xf.data() + r * k;
          float acc[8] = {};
          int64_t i = 0;
          for (; i + 8 <= k; i += 8) {
            for (int l = 0; l < 8; ++l) acc[l] += xr[i + l] * row[i + l];
          }
          float total = 0;
          for (; i < k; ++i) total += xr[i] * row[i];
          for (float a : acc) total += a;
          dst[r * n + j] = static_cast<T>(total);
        }
      }
    });
  });
}

}  // namespace braid
