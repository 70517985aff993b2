// Hadamard transforms, planned the same way by both backends (host code: the kernels receive
// the plan and the small matrix by value).
//
// A row of n = m * 2^k elements, read as m blocks of p = 2^k, is multiplied by
// H_n = H_m (x) H_p: every block goes through the fast Walsh-Hadamard butterflies (Sylvester's
// H_p, natural order), then element i of the blocks is mixed by the dense m x m matrix H_m:
// y[j * p + i] = sum_l H_m[j][l] * (H_p x_l)[i].
//
// H_m for m = 12, 20, 28 comes from Paley's constructions (MLX ships other tables of the same
// orders, so for those sizes the results differ from MLX's; powers of two agree).
#pragma once

#include <cstdint>

namespace braid::common {

/// The largest power-of-two factor MLX accepts.
constexpr int64_t kMaxHadamardPow2 = int64_t{1} << 26;

/// n = m * pow2; m == 0 when n has no such form.
struct HadamardPlan {
  int m = 0;
  int64_t pow2 = 0;
};

inline HadamardPlan hadamard_plan(int64_t n) {
  for (int m : {1, 12, 20, 28}) {
    if (n <= 0 || n % m != 0) continue;
    const int64_t p = n / m;
    if ((p & (p - 1)) == 0 && p <= kMaxHadamardPow2) return {m, p};
  }
  return {};
}

/// The order-m matrix (m <= 28) as +-1 entries, row-major.
struct HadamardMatrix {
  int8_t h[28 * 28] = {};
};

namespace detail {
// The quadratic character modulo the prime q: 0 for 0, 1 for a nonzero square, -1 otherwise.
inline int quadratic_character(int a, int q) {
  a = ((a % q) + q) % q;
  if (a == 0) return 0;
  for (int x = 1; x < q; ++x) {
    if (x * x % q == a) return 1;
  }
  return -1;
}

// Entry (i, j) of the conference matrix of order q + 1: a zero diagonal, ones along the
// first row, `first_column` down the first column, and the Jacobsthal matrix chi(j - i).
inline int conference(int i, int j, int q, int first_column) {
  if (i == 0) return j == 0 ? 0 : 1;
  if (j == 0) return first_column;
  return quadratic_character(j - i, q);
}
}  // namespace detail

/// H_m for m = 1, 12, 20 or 28. 12 and 20: Paley's first construction with the prime
/// q = m - 1 (q = 3 mod 4), H = I + S for the skew conference matrix S. 28: Paley's second
/// construction with q = 13 (q = 1 mod 4): each entry c of the symmetric conference matrix C
/// of order 14 becomes the 2 x 2 block [[1, 1], [1, -1]] when c = 0, else
/// c * [[1, -1], [-1, -1]].
inline HadamardMatrix hadamard_matrix(int m) {
  HadamardMatrix out;
  if (m == 1) {
    out.h[0] = 1;
  } else if (m == 12 || m == 20) {
    const int q = m - 1;
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < m; ++j)
        out.h[i * m + j] = static_cast<int8_t>((i == j) + detail::conference(i, j, q, -1));
    }
  } else if (m == 28) {
    const int q = 13;
    for (int i = 0; i <= q; ++i) {
      for (int j = 0; j <= q; ++j) {
        const int c = detail::conference(i, j, q, 1);
        for (int a = 0; a < 2; ++a) {
          for (int b = 0; b < 2; ++b) {
            const int v = c == 0 ? (a && b ? -1 : 1) : c * (a || b ? -1 : 1);
            out.h[(2 * i + a) * m + 2 * j + b] = static_cast<int8_t>(v);
          }
        }
      }
    }
  }
  return out;
}

}  // namespace braid::common
