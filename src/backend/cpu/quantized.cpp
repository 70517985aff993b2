// Quantization on the CPU (every mode): quantize and dequantize split by groups across the pool;
// the few-row product (and each product of gather_qmm) dequantizes one weight row at a time
// into L1 and uses it for every row of x, so the packed weights are read once.
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

// The value of the one-element float32 global scale, or 0 (none).
float global_scale_of(const std::vector<array>& inputs, size_t at) {
  if (inputs.size() <= at) return 0.0f;
  const array g = cpu::row_contiguous(inputs[at]);
  return *static_cast<const float*>(g.desc()->data_ptr);
}

template <typename T>
void quantize_typed(const array& w, array& out, int group, int bits, QuantizationMode mode, Quantize::Part part,
                    float global) {
  const T* src = static_cast<const T*>(w.desc()->data_ptr);
  const int64_t groups = static_cast<int64_t>(w.size()) / group;
  const int64_t words_per_group = static_cast<int64_t>(group) * bits / 32;
  void* dst = out.desc()->data_ptr;
  const bool affine = mode == QuantizationMode::affine;
  detail::parallel_for(groups, std::max<int64_t>(1, 4096 / group), [&](int64_t b, int64_t e) {
    for (int64_t gi = b; gi < e; ++gi) {
      const T* x = src + gi * group;
      float lo = static_cast<float>(x[0]), hi = lo, amax = std::fabs(lo);
      for (int i = 1; i < group; ++i) {
        const float v = static_cast<float>(x[i]);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        amax = std::max(amax, std::fabs(v));
      }
      const common::AffineParams p = common::affine_params(lo, hi, bits);
      const common::FpGroup fp = common::fp_group(mode, amax, global);
      auto code = [&](int i) {
        const float v = static_cast<float>(x[i]);
        return affine ? common::affine_quantize(v, p, bits) : common::fp_quantize(mode, v, fp);
      };
      switch (part) {
        case Quantize::Part::scales:
          if (affine) {
            static_cast<T*>(dst)[gi] = static_cast<T>(p.scale);
          } else {
            static_cast<uint8_t*>(dst)[gi] = static_cast<uint8_t>(fp.scale_code);
          }
          break;
        case Quantize::Part::biases: static_cast<T*>(dst)[gi] = static_cast<T>(p.bias); break;
        case Quantize::Part::packed: {
          uint32_t* words = static_cast<uint32_t*>(dst) + gi * words_per_group;
          std::fill(words, words + words_per_group, 0u);
          for (int i = 0; i < group; ++i) common::pack_into(words, i, code(i), bits);
          break;
        }
      }
    }
  });
}

// Where a packed matrix's group parameters come from: affine's scales and biases (of type
// T), or a fp mode's uint8 scale codes times `global` (the nvfp4 global scale / (448 * 6), or
// 1).
template <typename T>
struct Groups {
  QuantizationMode mode;
  const void* scales;
  const T* biases;
  float global;

  Groups skip(int64_t groups) const {
    const bool affine = mode == QuantizationMode::affine;
    return {mode,
            affine ? static_cast<const void*>(static_cast<const T*>(scales) + groups)
                   : static_cast<const void*>(static_cast<const uint8_t*>(scales) + groups),
            affine ? biases + groups : nullptr, global};
  }
};

// The groups of inputs[at] (scales) and, for affine, inputs[at + 1] (biases).
template <typename T>
Groups<T> groups_of(QuantizationMode mode, const std::vector<array>& inputs, size_t at, float global = 1.0f) {
  const bool affine = mode == QuantizationMode::affine;
  return {mode, inputs[at].desc()->data_ptr,
          affine ? static_cast<const T*>(inputs[at + 1].desc()->data_ptr) : nullptr, global};
}

// One packed row of k values, dequantized into `dst` (floats).
template <typename T>
void dequantize_row(const uint32_t* row, const Groups<T>& p, int64_t k, int group, int bits, float* dst) {
  if (p.mode == QuantizationMode::affine) {
    const T* scales = static_cast<const T*>(p.scales);
    for (int64_t g = 0; g < k / group; ++g) {
      const float s = static_cast<float>(scales[g]), b = static_cast<float>(p.biases[g]);
      for (int i = 0; i < group; ++i) {
        const int64_t j = g * group + i;
        dst[j] = s * static_cast<float>(common::unpack(row, j, bits)) + b;
      }
    }
    return;
  }
  const uint8_t* codes = static_cast<const uint8_t*>(p.scales);
  for (int64_t g = 0; g < k / group; ++g) {
    const float s = common::scale_value(p.mode, codes[g]) * p.global;
    for (int i = 0; i < group; ++i) {
      const int64_t j = g * group + i;
      dst[j] = s * common::element_value(p.mode, common::unpack(row, j, bits));
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

// Columns [jb, je) of x [rows, K] times the transposed dequantized w [N, K] (n columns in
// all): each weight row is dequantized once into `row` and dotted with every row of x.
template <typename T>
void columns_transposed(const float* xf, int64_t rows, const uint32_t* w, const Groups<T>& params, int64_t k,
                        int64_t words, int group, int bits, int64_t jb, int64_t je, int64_t n, T* dst, float* row) {
  const int64_t groups = k / group;
  for (int64_t j = jb; j < je; ++j) {
    dequantize_row(w + j * words, params.skip(j * groups), k, group, bits, row);
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = xf + r * k;
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
}

// x [rows, K] times the dequantized w [K, N]: each weight row k is dequantized once and
// added, scaled by x[r, k], into every output row (accumulated in `acc`, rows * n floats).
template <typename T>
void product_untransposed(const float* xf, int64_t rows, const uint32_t* w, const Groups<T>& params, int64_t k,
                          int64_t n, int64_t words, int group, int bits, T* dst, float* row, float* acc) {
  std::fill(acc, acc + rows * n, 0.0f);
  for (int64_t kk = 0; kk < k; ++kk) {
    dequantize_row(w + kk * words, params.skip(kk * (n / group)), n, group, bits, row);
    for (int64_t r = 0; r < rows; ++r) {
      const float xv = xf[r * k + kk];
      float* out_row = acc + r * n;
      for (int64_t j = 0; j < n; ++j) out_row[j] += xv * row[j];
    }
  }
  for (int64_t i = 0; i < rows * n; ++i) dst[i] = static_cast<T>(acc[i]);
}

// The elements of a contiguous array of T as floats.
template <typename T>
std::vector<float> as_floats(const array& a) {
  const T* p = static_cast<const T*>(a.desc()->data_ptr);
  std::vector<float> out(a.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(p[i]);
  return out;
}

}  // namespace

void Quantize::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array w = cpu::row_contiguous(inputs[0]);
  const float global = global_scale_of(inputs, 1);
  for_float_types(w.dtype(), "quantize", [&](auto tag) {
    quantize_typed<typename decltype(tag)::type>(w, out, group_size_, bits_, mode_, part_, global);
  });
}

void Dequantize::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  std::vector<array> in;
  for (const array& a : inputs) in.push_back(cpu::row_contiguous(a));
  const bool affine = mode_ == QuantizationMode::affine;
  const float global = affine ? 1.0f : (in.size() > 2 ? global_scale_of(in, 2) / common::kNvfp4GlobalRange : 1.0f);
  const int64_t k = out.shape(-1);
  const int64_t rows = static_cast<int64_t>(out.size()) / k;
  const int64_t words = in[0].shape(-1);
  for_float_types(out.dtype(), "dequantize", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Groups<T> params = groups_of<T>(mode_, in, 1, global);
    const auto* pw = static_cast<const uint32_t*>(in[0].desc()->data_ptr);
    T* dst = static_cast<T*>(out.desc()->data_ptr);
    detail::parallel_for(rows, std::max<int64_t>(1, 16384 / k), [&](int64_t b, int64_t e) {
      std::vector<float> row(static_cast<size_t>(k));
      for (int64_t r = b; r < e; ++r) {
        dequantize_row(pw + r * words, params.skip(r * (k / group_size_)), k, group_size_, bits_, row.data());
        for (int64_t j = 0; j < k; ++j) dst[r * k + j] = static_cast<T>(row[j]);
      }
    });
  });
}

void QuantizedMatmul::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  std::vector<array> in;
  for (const array& a : inputs) in.push_back(cpu::row_contiguous(a));
  const array& x = in[0];
  const array& w = in[1];
  const int64_t rows = x.shape(0), k = x.shape(1), n = w.shape(0), words = w.shape(1);
  for_float_types(out.dtype(), "quantized_matmul", [&](auto tag) {
    using T = typename decltype(tag)::type;
    // x as float once: every weight row is dotted with every row of x.
    const std::vector<float> xf = as_floats<T>(x);
    const auto* pw = static_cast<const uint32_t*>(w.desc()->data_ptr);
    const Groups<T> params = groups_of<T>(mode_, in, 2);
    T* dst = static_cast<T*>(out.desc()->data_ptr);
    detail::parallel_for(n, std::max<int64_t>(1, 65536 / k), [&](int64_t b, int64_t e) {
      std::vector<float> row(static_cast<size_t>(k));
      columns_transposed(xf.data(), rows, pw, params, k, words, group_size_, bits_, b, e, n, dst, row.data());
    });
  });
}

void GatherQMM::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  std::vector<array> in;
  for (const array& a : inputs) in.push_back(cpu::row_contiguous(a));
  const array& x = in[0];
  const array& w = in[1];
  const array& lhs = in[in.size() - 2];
  const array& rhs = in[in.size() - 1];
  const int64_t batches = out.shape(0), m = out.shape(1), n = out.shape(2), k = x.shape(2);
  const int64_t x_batches = x.shape(0), w_batches = w.shape(0);
  const int64_t w_rows = w.shape(1), words = w.shape(2), groups = in[2].shape(2);
  const auto* li = static_cast<const uint32_t*>(lhs.desc()->data_ptr);
  const auto* ri = static_cast<const uint32_t*>(rhs.desc()->data_ptr);
  for_float_types(out.dtype(), "gather_qmm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::vector<float> xf = as_floats<T>(x);
    const auto* pw = static_cast<const uint32_t*>(w.desc()->data_ptr);
    const Groups<T> params = groups_of<T>(mode_, in, 2);
    T* dst = static_cast<T*>(out.desc()->data_ptr);
    // Operands of product b (indices past the end clamped to the last batch).
    auto x_of = [&](int64_t b) { return xf.data() + std::min<int64_t>(li[b], x_batches - 1) * m * k; };
    auto w_batch = [&](int64_t b) { return std::min<int64_t>(ri[b], w_batches - 1); };
    if (transpose_) {
      // Tasks are (product, output column) pairs, so a few products still spread out.
      detail::parallel_for(batches * n, std::max<int64_t>(1, 65536 / (k * m)), [&](int64_t tb, int64_t te) {
        std::vector<float> row(static_cast<size_t>(k));
        for (int64_t t = tb; t < te;) {
          const int64_t b = t / n, jb = t - b * n, je = std::min(n, jb + (te - t));
          const int64_t wb = w_batch(b);
          columns_transposed(x_of(b), m, pw + wb * w_rows * words, params.skip(wb * w_rows * groups), k, words,
                             group_size_, bits_, jb, je, n, dst + b * m * n, row.data());
          t += je - jb;
        }
      });
    } else {
      detail::parallel_for(batches, 1, [&](int64_t bb, int64_t be) {
        std::vector<float> row(static_cast<size_t>(n)), acc(static_cast<size_t>(m * n));
        for (int64_t b = bb; b < be; ++b) {
          const int64_t wb = w_batch(b);
          product_untransposed(x_of(b), m, pw + wb * w_rows * words, params.skip(wb * w_rows * groups), k, n,
                               words, group_size_, bits_, dst + b * m * n, row.data(), acc.data());
        }
      });
    }
  });
}

}  // namespace braid
