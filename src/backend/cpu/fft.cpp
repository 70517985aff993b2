// The Fourier transforms on the CPU, with kissfft in float. A node runs as one-dimensional
// passes (backend/common/fft.h); each pass splits its lines across the worker pool, and each
// line is gathered into a buffer, transformed and scattered back, so a pass may work in place.
// kissfft's mixed radix costs O(n p) for a prime factor p of n, so a length with a prime
// factor above kMaxDirectPrime goes through Bluestein's algorithm instead: every length costs
// O(n log n).
#include <kiss_fft.h>
#include <kiss_fftr.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <vector>

#include "backend/common/fft.h"
#include "backend/cpu/convert.h"
#include "graph/node.h"
#include "primitives/fft.h"
#include "runtime/pool.h"

namespace braid {

namespace {

using cpx = std::complex<float>;
static_assert(sizeof(cpx) == sizeof(kiss_fft_cpx), "std::complex<float> is laid out as kiss_fft_cpx");

kiss_fft_cpx* kiss(cpx* p) { return reinterpret_cast<kiss_fft_cpx*>(p); }
const kiss_fft_cpx* kiss(const cpx* p) { return reinterpret_cast<const kiss_fft_cpx*>(p); }

struct KissFree {
  void operator()(void* p) const noexcept { std::free(p); }  // kiss_fft_free is free()
};
using FftState = std::unique_ptr<kiss_fft_state, KissFree>;
using RealFftState = std::unique_ptr<kiss_fftr_state, KissFree>;

FftState new_state(int64_t n, bool inverse) {
  FftState st(kiss_fft_alloc(static_cast<int>(n), inverse ? 1 : 0, nullptr, nullptr));
  if (!st) throw std::bad_alloc();
  return st;
}

RealFftState new_real_state(int64_t n, bool inverse) {
  RealFftState st(kiss_fftr_alloc(static_cast<int>(n), inverse ? 1 : 0, nullptr, nullptr));
  if (!st) throw std::bad_alloc();
  return st;
}

// kissfft has butterflies for 2, 3, 4 and 5; any other prime factor p goes through its generic
// butterfly at O(p) per output, fine for small p only.
constexpr int64_t kMaxDirectPrime = 64;

bool kiss_is_fast(int64_t n) {
  for (int64_t p = 2; p <= kMaxDirectPrime && n > 1; ++p) {
    while (n % p == 0) n /= p;
  }
  return n == 1;
}

// kiss_fftr runs a complex transform of n / 2 points, so it needs n even and n / 2 fast.
bool use_real_kiss(int64_t n) { return n % 2 == 0 && kiss_is_fast(n / 2); }

// Lines per chunk of a pass: about 16K elements of work each.
int64_t line_grain(int64_t n) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)); }

// The unnormalized DFT of length n in one direction (exp(-2 pi i jk / n) forward, + inverse):
// kissfft directly when n factors fast, else Bluestein's algorithm: with the chirp
// w_k = exp(-+ i pi k^2 / n), X_k = w_k sum_j (x_j w_j) conj(w_(k-j)), a circular convolution
// computed with power-of-two transforms of length m >= 2n - 1. Immutable once built: any
// number of threads may run it at once, each with its own work buffer.
class ComplexFft {
 public:
  ComplexFft(int64_t n, bool inverse) : n_(n) {
    if (n == 1) return;
    if (kiss_is_fast(n)) {
      direct_ = new_state(n, inverse);
      return;
    }
    int64_t m = 1;
    while (m < 2 * n - 1) m <<= 1;
    if (m > std::numeric_limits<int>::max()) {
      throw std::invalid_argument("[fftn] Length " + std::to_string(n) +
                                  " is too large for the CPU transform.");
    }
    m_ = m;
    forward_m_ = new_state(m, false);
    inverse_m_ = new_state(m, true);
    chirp_.resize(n);
    const double sign = inverse ? 1.0 : -1.0;
    for (int64_t k = 0; k < n; ++k) {
      // k^2 mod 2n keeps the angle exact for any k (k < 2^31, so k * k fits in 64 bits).
      const double angle =
          sign * std::numbers::pi * static_cast<double>((k * k) % (2 * n)) / static_cast<double>(n);
      chirp_[k] = cpx(static_cast<float>(std::cos(angle)), static_cast<float>(std::sin(angle)));
    }
    // The convolution kernel conj(w_t) at t and m - t, transformed once, with the 1 / m of the
    // inverse transform folded in.
    std::vector<cpx> b(m, cpx(0.0f, 0.0f));
    for (int64_t k = 0; k < n; ++k) {
      b[k] = std::conj(chirp_[k]);
      if (k > 0) b[m - k] = b[k];
    }
    kernel_.resize(m);
    kiss_fft(forward_m_.get(), kiss(b.data()), kiss(kernel_.data()));
    const float inv_m = 1.0f / static_cast<float>(m);
    for (cpx& v : kernel_) v *= inv_m;
  }

  int64_t size() const { return n_; }
  /// Elements of the work buffer run() needs.
  size_t work_size() const { return static_cast<size_t>(2 * m_); }

  /// out = DFT(in), n elements each, in != out.
  void run(const cpx* in, cpx* out, cpx* work) const {
    if (n_ == 1) {
      out[0] = in[0];
      return;
    }
    if (direct_) {
      kiss_fft(direct_.get(), kiss(in), kiss(out));
      return;
    }
    cpx* a = work;
    cpx* spectrum = work + m_;
    for (int64_t k = 0; k < n_; ++k) a[k] = in[k] * chirp_[k];
    std::fill(a + n_, a + m_, cpx(0.0f, 0.0f));
    kiss_fft(forward_m_.get(), kiss(a), kiss(spectrum));
    for (int64_t k = 0; k < m_; ++k) spectrum[k] *= kernel_[k];
    kiss_fft(inverse_m_.get(), kiss(spectrum), kiss(a));
    for (int64_t k = 0; k < n_; ++k) out[k] = a[k] * chirp_[k];
  }

 private:
  int64_t n_;
  FftState direct_;
  int64_t m_ = 0;
  FftState forward_m_;
  FftState inverse_m_;
  std::vector<cpx> chirp_;
  std::vector<cpx> kernel_;
};

// Complex lines of `g` from src to dst (which may be src), divided by n when inverse.
void c2c_pass(const cpx* src, cpx* dst, const common::LineGeometry& g, bool inverse) {
  const int64_t n = g.len, inner = g.inner;
  const ComplexFft plan(n, inverse);
  const float scale = inverse ? 1.0f / static_cast<float>(n) : 1.0f;
  detail::parallel_for(g.lines(), line_grain(n), [&](int64_t begin, int64_t end) {
    std::vector<cpx> line(n), result(n), work(plan.work_size());
    for (int64_t l = begin; l < end; ++l) {
      const int64_t base = (l / inner) * n * inner + l % inner;
      for (int64_t k = 0; k < n; ++k) line[k] = src[base + k * inner];
      plan.run(line.data(), result.data(), work.data());
      for (int64_t k = 0; k < n; ++k) dst[base + k * inner] = result[k] * scale;
    }
  });
}

// Real lines of `g` (n values) to their n / 2 + 1 non-negative frequencies.
void r2c_pass(const float* src, cpx* dst, const common::LineGeometry& g) {
  const int64_t n = g.len, m = n / 2 + 1, inner = g.inner;
  const bool packed = use_real_kiss(n);
  std::optional<ComplexFft> full;
  if (!packed) full.emplace(n, false);
  detail::parallel_for(g.lines(), line_grain(n), [&](int64_t begin, int64_t end) {
    // kiss_fftr's state holds a work buffer: one state per chunk.
    RealFftState state;
    if (packed) state = new_real_state(n, false);
    std::vector<float> real_line(packed ? n : 0);
    std::vector<cpx> line(packed ? 0 : n), result(n), work(packed ? 0 : full->work_size());
    for (int64_t l = begin; l < end; ++l) {
      const int64_t o = l / inner, i = l % inner;
      const float* s = src + o * n * inner + i;
      if (packed) {
        for (int64_t k = 0; k < n; ++k) real_line[k] = s[k * inner];
        kiss_fftr(state.get(), real_line.data(), kiss(result.data()));
      } else {
        for (int64_t k = 0; k < n; ++k) line[k] = cpx(s[k * inner], 0.0f);
        full->run(line.data(), result.data(), work.data());
      }
      cpx* d = dst + o * m * inner + i;
      for (int64_t k = 0; k < m; ++k) d[k * inner] = result[k];
    }
  });
}

// The n / 2 + 1 frequencies of each line to n real values (`g` is the output's geometry),
// divided by n. The imaginary parts of the zero and Nyquist frequencies do not contribute.
void c2r_pass(const cpx* src, float* dst, const common::LineGeometry& g) {
  const int64_t n = g.len, m = n / 2 + 1, inner = g.inner;
  const bool packed = use_real_kiss(n);
  std::optional<ComplexFft> full;
  if (!packed) full.emplace(n, true);
  const float scale = 1.0f / static_cast<float>(n);
  detail::parallel_for(g.lines(), line_grain(n), [&](int64_t begin, int64_t end) {
    RealFftState state;
    if (packed) state = new_real_state(n, true);
    std::vector<cpx> line(packed ? m : n), result(packed ? 0 : n), work(packed ? 0 : full->work_size());
    std::vector<float> real_result(packed ? n : 0);
    for (int64_t l = begin; l < end; ++l) {
      const int64_t o = l / inner, i = l % inner;
      const cpx* s = src + o * m * inner + i;
      float* d = dst + o * n * inner + i;
      for (int64_t k = 0; k < m; ++k) line[k] = s[k * inner];
      if (packed) {
        kiss_fftri(state.get(), kiss(line.data()), real_result.data());
        for (int64_t k = 0; k < n; ++k) d[k * inner] = real_result[k] * scale;
        continue;
      }
      // The Hermitian spectrum these frequencies stand for; the real part of its inverse
      // drops what the imaginary parts at 0 and n / 2 would add.
      for (int64_t k = m; k < n; ++k) line[k] = std::conj(line[n - k]);
      full->run(line.data(), result.data(), work.data());
      for (int64_t k = 0; k < n; ++k) d[k * inner] = result[k].real() * scale;
    }
  });
}

}  // namespace

void FFT::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array in = cpu::row_contiguous(inputs[0]);
  const void* src = in.desc()->data_ptr;
  void* dst = out.desc()->data_ptr;
  if (!real_) {
    // The first pass reads the input; the others work in place on the output.
    const cpx* from = static_cast<const cpx*>(src);
    for (int ax : axes_) {
      c2c_pass(from, static_cast<cpx*>(dst), common::line_geometry(out.shape(), ax), inverse_);
      from = static_cast<const cpx*>(dst);
    }
    return;
  }
  const int last = axes_.back();
  if (!inverse_) {
    r2c_pass(static_cast<const float*>(src), static_cast<cpx*>(dst), common::line_geometry(in.shape(), last));
    for (size_t i = 0; i + 1 < axes_.size(); ++i) {
      c2c_pass(static_cast<const cpx*>(dst), static_cast<cpx*>(dst),
               common::line_geometry(out.shape(), axes_[i]), false);
    }
    return;
  }
  // A real inverse transforms the other axes first, in a complex buffer of the input's shape.
  const cpx* from = static_cast<const cpx*>(src);
  std::vector<cpx> staging;
  if (axes_.size() > 1) staging.resize(in.size());
  for (size_t i = 0; i + 1 < axes_.size(); ++i) {
    c2c_pass(from, staging.data(), common::line_geometry(in.shape(), axes_[i]), true);
    from = staging.data();
  }
  c2r_pass(from, static_cast<float*>(dst), common::line_geometry(out.shape(), last));
}

}  // namespace braid
