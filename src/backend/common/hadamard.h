// Hadamard transforms, planned the same way by both backends (host code: the kernels receive
// the plan and the small matrix by value).
//
// A row of n = m * 2^k elements, read as m blocks of p = 2^k, is multiplied by
// H_n = H_m (x) H_p: every block goes through the fast Walsh-Hadamard butterflies (Sylvester's
// H_p, natural order), then element i of the blocks is mixed by the dense m x m matrix H_m:
// y[j * p + i] = sum_l H_m[j][l] * (H_p x_l)[i].
//
// H_m for m = 12, 20, 28 is the table MLX uses (Sloane's), so every size agrees with MLX.
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
// N. J. A. Sloane's library of Hadamard matrices, the tables of orders 12, 20 and 28 that MLX
// uses, one row per string: '+' is 1, '-' is -1.
inline constexpr const char* kSloane12[12] = {
    "+-++++++++++",
    "--+-+-+-+-+-",
    "+++-++----++",
    "+---+--+-++-",
    "+++++-++----",
    "+-+---+--+-+",
    "++--+++-++--",
    "+--++---+--+",
    "++----+++-++",
    "+--+-++---+-",
    "++++----+++-",
    "+-+--+-++---",
};
inline constexpr const char* kSloane20[20] = {
    "+----+----++--++-++-",
    "-+----+---+++---+-++",
    "--+----+---+++-+-+-+",
    "---+----+---+++++-+-",
    "----+----++--++-++-+",
    "-+++++-----+--+++--+",
    "+-+++-+---+-+--+++--",
    "++-++--+---+-+--+++-",
    "+++-+---+---+-+--+++",
    "++++-----++--+-+--++",
    "--++-+-++-+-----++++",
    "---++-+-++-+---+-+++",
    "+---++-+-+--+--++-++",
    "++---++-+----+-+++-+",
    "-++---++-+----+++++-",
    "-+--+--++-+----+----",
    "+-+-----++-+----+---",
    "-+-+-+---+--+----+--",
    "--+-+++------+----+-",
    "+--+--++------+----+",
};
inline constexpr const char* kSloane28[28] = {
    "+------++----++-+--+-+--++--",
    "-+-----+++-----+-+--+-+--++-",
    "--+-----+++---+-+-+----+--++",
    "---+-----+++---+-+-+-+--+--+",
    "----+-----+++---+-+-+++--+--",
    "-----+-----++++--+-+--++--+-",
    "------++----++-+--+-+--++--+",
    "--++++-+-------++--+++-+--+-",
    "---++++-+-----+-++--+-+-+--+",
    "+---+++--+----++-++--+-+-+--",
    "++---++---+----++-++--+-+-+-",
    "+++---+----+----++-++--+-+-+",
    "++++--------+-+--++-++--+-+-",
    "-++++--------+++--++--+--+-+",
    "-+-++-++--++--+--------++++-",
    "+-+-++--+--++--+--------++++",
    "-+-+-++--+--++--+----+---+++",
    "+-+-+-++--+--+---+---++---++",
    "++-+-+-++--+------+--+++---+",
    "-++-+-+-++--+------+-++++---",
    "+-++-+---++--+------+-++++--",
    "-++--++-+-++-+++----++------",
    "+-++--++-+-++-+++-----+-----",
    "++-++---+-+-++-+++-----+----",
    "-++-++-+-+-+-+--+++-----+---",
    "--++-++++-+-+----+++-----+--",
    "+--++-+-++-+-+----+++-----+-",
    "++--++-+-++-+-+----++------+",
};
}  // namespace detail

/// H_m for m = 1, 12, 20 or 28 (Sloane's tables, as MLX).
inline HadamardMatrix hadamard_matrix(int m) {
  HadamardMatrix out;
  const char* const* rows = m == 12   ? detail::kSloane12
                            : m == 20 ? detail::kSloane20
                            : m == 28 ? detail::kSloane28
                                      : nullptr;
  if (rows == nullptr) {
    out.h[0] = 1;
    return out;
  }
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j) out.h[i * m + j] = static_cast<int8_t>(rows[i][j] == '+' ? 1 : -1);
  }
  return out;
}

}  // namespace braid::common
