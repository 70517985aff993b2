// Random bits on the CPU: one threefry hash per counter pair, split across the pool; and the
// covariance factor of multivariate_normal by one-sided Jacobi SVD in double.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backend/common/threefry.h"
#include "backend/cpu/convert.h"
#include "graph/node.h"
#include "primitives/primitives.h"
#include "runtime/pool.h"

namespace braid {

namespace {

// Counter pairs per task: a hash is a few nanoseconds.
constexpr int64_t kPairGrain = 16384;

// Word `j` of a key's `bytes` output bytes, little-endian, cut short at the end.
inline void store_word(unsigned char* key_out, int64_t j, uint32_t value, int64_t bytes) {
  const int64_t n = std::min<int64_t>(4, bytes - 4 * j);
  std::memcpy(key_out + 4 * j, &value, static_cast<size_t>(n));
}

// Columns of A (n x n, column-major in `a`) made orthogonal by plane rotations, which are
// accumulated into V (`v`, column-major, starting as the identity): A V = U S.
void one_sided_jacobi(double* a, double* v, int64_t n) {
  constexpr double kEps = 1e-15;
  constexpr int kMaxSweeps = 64;  // converges in about 10; NaNs never do
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        double* ap = a + p * n;
        double* aq = a + q * n;
        double alpha = 0, beta = 0, gamma = 0;
        for (int64_t i = 0; i < n; ++i) {
          alpha += ap[i] * ap[i];
          beta += aq[i] * aq[i];
          gamma += ap[i] * aq[i];
        }
        if (gamma == 0 || std::abs(gamma) <= kEps * std::sqrt(alpha * beta)) continue;
        rotated = true;
        const double zeta = (beta - alpha) / (2 * gamma);
        const double t = std::copysign(1.0, zeta) / (std::abs(zeta) + std::sqrt(1 + zeta * zeta));
        const double c = 1 / std::sqrt(1 + t * t), s = c * t;
        for (double* m : {a, v}) {
          double* mp = m + p * n;
          double* mq = m + q * n;
          for (int64_t i = 0; i < n; ++i) {
            const double x = mp[i], y = mq[i];
            mp[i] = c * x - s * y;
            mq[i] = s * x + c * y;
          }
        }
      }
    }
    if (!rotated) return;
  }
}

// out = U sqrt(S) V^T of the row-major n x n matrix `in` = sum_j a_j v_j^T / sqrt(s_j), with
// a_j = s_j u_j the orthogonalized columns.
void svd_square_root(const float* in, float* out, int64_t n, std::vector<double>& a, std::vector<double>& v) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      a[j * n + i] = in[i * n + j];
      v[j * n + i] = i == j ? 1.0 : 0.0;
    }
  }
  one_sided_jacobi(a.data(), v.data(), n);
  std::vector<double> f(static_cast<size_t>(n * n), 0.0);
  for (int64_t j = 0; j < n; ++j) {
    double norm2 = 0;
    for (int64_t i = 0; i < n; ++i) norm2 += a[j * n + i] * a[j * n + i];
    if (norm2 == 0) continue;  // a zero singular value contributes nothing
    const double w = 1 / std::sqrt(std::sqrt(norm2));
    for (int64_t i = 0; i < n; ++i) {
      const double ai = a[j * n + i] * w;
      for (int64_t k = 0; k < n; ++k) f[i * n + k] += ai * v[j * n + k];
    }
  }
  for (int64_t i = 0; i < n * n; ++i) out[i] = static_cast<float>(f[i]);
}

}  // namespace

void RandomBits::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array keys = cpu::row_contiguous(inputs[0]);
  const auto* k = static_cast<const uint32_t*>(keys.desc()->data_ptr);
  const int64_t num_keys = static_cast<int64_t>(keys.size() / 2);
  const int64_t bytes_per_key = static_cast<int64_t>(out.nbytes()) / num_keys;
  const common::BitsLayout layout(bytes_per_key);
  const int64_t pairs = layout.pairs();
  auto* dst = static_cast<unsigned char*>(out.desc()->data_ptr);
  detail::parallel_for(num_keys * pairs, kPairGrain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t key_index = t / pairs;
      const common::Words2 key{k[2 * key_index], k[2 * key_index + 1]};
      const common::BitsPair bp = common::bits_pair(key, layout, t - key_index * pairs);
      unsigned char* key_out = dst + key_index * bytes_per_key;
      store_word(key_out, bp.first_word, bp.hash.first, bytes_per_key);
      if (bp.second_word >= 0) store_word(key_out, bp.second_word, bp.hash.second, bytes_per_key);
    }
  });
}

void SvdSquareRoot::eval_cpu(const std::vector<array>& inputs, array& out) {
  detail::alloc_contiguous(out);
  if (out.size() == 0) return;
  const array in = cpu::row_contiguous(inputs[0]);
  const int64_t n = in.shape(-1);
  const int64_t matrices = static_cast<int64_t>(in.size()) / (n * n);
  const auto* src = static_cast<const float*>(in.desc()->data_ptr);
  auto* dst = static_cast<float*>(out.desc()->data_ptr);
  detail::parallel_for(matrices, 1, [&](int64_t b, int64_t e) {
    std::vector<double> a(static_cast<size_t>(n * n)), v(static_cast<size_t>(n * n));
    for (int64_t m = b; m < e; ++m) svd_square_root(src + m * n * n, dst + m * n * n, n, a, v);
  });
}

}  // namespace braid
