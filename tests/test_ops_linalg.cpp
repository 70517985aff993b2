// The matrix-product family on every device against references computed here in double:
// matmul in float64 and complex64, addmm, tensordot, inner, outer, kron, block_masked_mm,
// gather_mm and segmented_mm, with broadcasting, vectors, empty dimensions, transposed and
// strided operands and the 16-bit floats.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <random>

#include "support.h"

using namespace braid;

namespace {

// A host copy of an array: its shape and its elements in row-major order, as doubles.
struct Host {
  Shape shape;
  std::vector<double> v;
};

Host host(const array& a) { return {a.shape(), test::values(a)}; }

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int32_t d : s) n *= d;
  return n;
}

array random_array(const Shape& shape, Dtype dt, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(count(shape)));
  for (double& x : v) x = dist(rng);
  return test::make(v, shape, dt);
}

// The element of `h` that position `idx` of a (broadcast) shape reads, NumPy-aligned.
double broadcast_at(const Host& h, const std::vector<int64_t>& idx) {
  int64_t off = 0, stride = 1;
  const size_t diff = idx.size() - h.shape.size();
  for (int i = static_cast<int>(h.shape.size()) - 1; i >= 0; --i) {
    const int64_t d = h.shape[i];
    off += (d == 1 ? 0 : idx[i + diff]) * stride;
    stride *= d;
  }
  return h.v[static_cast<size_t>(off)];
}

std::vector<int64_t> unravel(int64_t i, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

// NumPy's matmul in double (vectors promoted and squeezed, batch dims broadcast).
Host ref_matmul(Host a, Host b) {
  const bool av = a.shape.size() == 1, bv = b.shape.size() == 1;
  if (av) a.shape = Shape{1, a.shape[0]};
  if (bv) b.shape = Shape{b.shape[0], 1};
  const size_t na = a.shape.size(), nb = b.shape.size();
  const int64_t m = a.shape[na - 2], k = a.shape[na - 1], n = b.shape[nb - 1];
  Shape batch =
      na > nb ? Shape(a.shape.begin(), a.shape.end() - 2) : Shape(b.shape.begin(), b.shape.end() - 2);
  for (size_t i = 0; i < batch.size(); ++i) {
    const size_t ia = i + na - 2 - batch.size(), ib = i + nb - 2 - batch.size();
    const int32_t da = i + na >= batch.size() + 2 ? a.shape[ia] : 1;
    const int32_t db = i + nb >= batch.size() + 2 ? b.shape[ib] : 1;
    batch[i] = da == 1 ? db : da;
  }
  Shape out_shape = batch;
  out_shape.push_back(static_cast<int32_t>(m));
  out_shape.push_back(static_cast<int32_t>(n));
  Host out{out_shape, std::vector<double>(static_cast<size_t>(count(out_shape)), 0.0)};
  for (int64_t i = 0; i < count(out_shape); ++i) {
    std::vector<int64_t> idx = unravel(i, out_shape);
    const int64_t r = idx[idx.size() - 2], c = idx[idx.size() - 1];
    double acc = 0;
    for (int64_t j = 0; j < k; ++j) {
      idx[idx.size() - 2] = r;
      idx[idx.size() - 1] = j;
      const double x = broadcast_at(a, idx);
      idx[idx.size() - 2] = j;
      idx[idx.size() - 1] = c;
      acc += x * broadcast_at(b, idx);
    }
    out.v[static_cast<size_t>(i)] = acc;
  }
  Shape squeezed = batch;
  if (!av) squeezed.push_back(static_cast<int32_t>(m));
  if (!bv) squeezed.push_back(static_cast<int32_t>(n));
  out.shape = squeezed;
  return out;
}

// Tolerance (relative and absolute) for a dtype's sums of k products of values in [-1, 1]:
// the result's own rounding plus rounding that grows like sqrt(k).
double tolerance(Dtype dt, int64_t k) {
  const double eps = dt == float64 ? 1e-15 : dt == float32 ? 2.4e-7 : dt == float16 ? 1e-3 : 8e-3;
  return eps * (2 + 2 * std::sqrt(static_cast<double>(std::max<int64_t>(k, 1))));
}

void expect_matches(const array& got, const Host& want, Dtype dt, int64_t k, const std::string& what) {
  EXPECT_EQ(got.dtype(), dt) << what;
  ASSERT_EQ(got.shape(), want.shape) << what;
  const double tol = tolerance(dt, k);
  test::expect_close(test::values(got), want.v, tol, tol, what);
}

std::string name_of(Device dev, Dtype dt, const std::string& what) {
  return test::device_name(dev) + " " + dtype_name(dt) + " " + what;
}

const std::vector<Dtype> kFloats = {float16, bfloat16, float32, float64};

}  // namespace

// ---- matmul in float64 and complex64 --------------------------------------------------------

TEST(OpsLinalg, Float64MatmulIsComputedInDouble) {
  // 1 + 2^-40 squared differs from 1 only past float32's precision.
  const double x = 1.0 + std::ldexp(1.0, -40);
  for (Device dev : test::test_devices()) {
    array a = test::make({x, x}, {1, 2}, float64);
    array b = test::make({x, x}, {2, 1}, float64);
    EXPECT_EQ(test::values(matmul(a, b, dev))[0], 2 * x * x) << test::device_name(dev);
    for (const auto& [sa, sb] : std::vector<std::pair<Shape, Shape>>{{{5, 7}, {7, 3}},
                                                                     {{2, 3, 4}, {4, 5}},
                                                                     {{4}, {2, 4, 3}},
                                                                     {{3, 4}, {4}},
                                                                     {{2, 1, 3, 6}, {4, 6, 2}}}) {
      array p = random_array(sa, float64, 1), q = random_array(sb, float64, 2);
      expect_matches(matmul(p, q, dev), ref_matmul(host(p), host(q)), float64, sa.back(),
                     name_of(dev, float64, "batched"));
    }
    array t = transpose(random_array({6, 5}, float64, 3));
    array s = slice(random_array({7, 8}, float64, 4), {0, 0}, {6, 8}, {1, 2});
    expect_matches(matmul(t, s, dev), ref_matmul(host(t), host(s)), float64, 6,
                   name_of(dev, float64, "views"));
  }
}

TEST(OpsLinalg, Complex64MatmulKeepsImaginaryParts) {
  const std::vector<std::complex<double>> av = {{1, 2}, {-1, 0.5}, {0, -3}, {2, 1}, {0.5, 0.5}, {-2, 1}};
  const std::vector<std::complex<double>> bv = {{2, -1}, {1, 1}, {0, 1}, {-1, 2}, {3, 0}, {1, -2}};
  for (Device dev : test::test_devices()) {
    // a [2, 3], b [3, 2] built from real and imaginary parts.
    const auto build = [&](const std::vector<std::complex<double>>& v, const Shape& shape) {
      std::vector<double> re, im;
      for (const auto& c : v) {
        re.push_back(c.real());
        im.push_back(c.imag());
      }
      array i(complex64_t(0.0f, 1.0f));
      return add(astype(test::make(re, shape, float32), complex64),
                 multiply(i, test::make(im, shape, float32)));
    };
    array a = build(av, {2, 3}), b = build(bv, {3, 2});
    // b also as a column-major view.
    for (const array& bb : {b, transpose(contiguous(transpose(b)))}) {
      array got = matmul(a, bb, dev);
      ASSERT_EQ(got.dtype(), complex64);
      ASSERT_EQ(got.shape(), (Shape{2, 2}));
      const auto g = test::complex_values(got);
      for (int r = 0; r < 2; ++r) {
        for (int c = 0; c < 2; ++c) {
          std::complex<double> want = 0;
          for (int j = 0; j < 3; ++j) want += av[r * 3 + j] * bv[j * 2 + c];
          EXPECT_NEAR(g[r * 2 + c].real(), want.real(), 1e-5) << test::device_name(dev);
          EXPECT_NEAR(g[r * 2 + c].imag(), want.imag(), 1e-5) << test::device_name(dev);
        }
      }
    }
  }
}

// ---- addmm -----------------------------------------------------------------------------------

TEST(OpsLinalg, AddmmMatchesBetaCPlusAlphaAB) {
  struct Case {
    Shape c, a, b;
  };
  const std::vector<Case> cases = {{{4, 5}, {4, 3}, {3, 5}},
                                   {{5}, {4, 3}, {3, 5}},
                                   {{4, 1}, {4, 3}, {3, 5}},
                                   {{}, {4, 3}, {3, 5}},
                                   {{2, 4, 5}, {2, 4, 3}, {3, 5}},
                                   {{4, 5}, {2, 4, 3}, {2, 3, 5}},
                                   {{5}, {3}, {3, 5}},
                                   {{4}, {4, 3}, {3}},
                                   {{}, {3}, {3}},
                                   {{0, 5}, {0, 3}, {3, 5}},
                                   {{2, 1, 5}, {2, 4, 0}, {0, 5}},
                                   {{40, 33}, {40, 70}, {70, 33}}};
  const std::vector<std::pair<float, float>> scales = {{1.f, 1.f}, {2.f, -0.5f}, {0.5f, 0.f}};
  for (Device dev : test::test_devices()) {
    for (Dtype dt : kFloats) {
      for (size_t i = 0; i < cases.size(); ++i) {
        const Case& cs = cases[i];
        array c = random_array(cs.c, dt, 10 + i), a = random_array(cs.a, dt, 20 + i),
              b = random_array(cs.b, dt, 30 + i);
        for (const auto& [alpha, beta] : scales) {
          const std::string what = name_of(dev, dt,
                                           "case " + std::to_string(i) + " alpha " + std::to_string(alpha) +
                                               " beta " + std::to_string(beta));
          Host want = ref_matmul(host(a), host(b));
          const Host hc = host(c);
          std::vector<int64_t> idx;
          for (size_t j = 0; j < want.v.size(); ++j) {
            want.v[j] =
                alpha * want.v[j] + beta * broadcast_at(hc, unravel(static_cast<int64_t>(j), want.shape));
          }
          expect_matches(addmm(c, a, b, alpha, beta, dev), want, dt, cs.a.back() + 2, what);
        }
      }
    }
    // Transposed and strided operands, and mixed dtypes promote (c included).
    array at = transpose(random_array({6, 4}, float32, 40));
    array bs = slice(random_array({6, 10}, float32, 41), {0, 0}, {6, 10}, {1, 2});
    array c = random_array({4, 5}, float16, 42);
    Host want = ref_matmul(host(at), host(bs));
    const Host hc = host(c);
    for (size_t j = 0; j < want.v.size(); ++j) want.v[j] = 3 * want.v[j] + 2 * hc.v[j];
    expect_matches(addmm(c, at, bs, 3.f, 2.f, dev), want, float32, 8, test::device_name(dev) + " views");
    EXPECT_EQ(addmm(zeros({2, 2}, float16), zeros({2, 2}, float16), zeros({2, 2}, bfloat16)).dtype(),
              float32);
  }
}

TEST(OpsLinalg, AddmmWithBetaZeroIgnoresNaNsInC) {
  for (Device dev : test::test_devices()) {
    array c = full({2, 2}, std::nanf(""));
    array out = addmm(c, ones({2, 3}), ones({3, 2}), 1.f, 0.f, dev);
    EXPECT_EQ(test::values(out), std::vector<double>(4, 3.0)) << test::device_name(dev);
  }
}

// ---- tensordot, inner, outer, kron -----------------------------------------------------------

TEST(OpsLinalg, TensordotContractsTheNamedAxes) {
  for (Device dev : test::test_devices()) {
    for (Dtype dt : {float32, float64, float16}) {
      array a = random_array({3, 4, 5}, dt, 1), b = random_array({4, 5, 2}, dt, 2);
      // Default: a's last two axes with b's first two.
      const Host ha = host(a), hb = host(b);
      Host want{{3, 2}, std::vector<double>(6, 0.0)};
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 2; ++j)
          for (int p = 0; p < 4; ++p)
            for (int q = 0; q < 5; ++q)
              want.v[i * 2 + j] += ha.v[(i * 4 + p) * 5 + q] * hb.v[(p * 5 + q) * 2 + j];
      expect_matches(tensordot(a, b, 2, dev), want, dt, 20, name_of(dev, dt, "tensordot axis 2"));
      // Pairs of axes, in a different order: a's (2, 0) with c's (0, 2).
      array c = random_array({5, 6, 3}, dt, 3);
      const Host hcc = host(c);
      Host want2{{4, 6}, std::vector<double>(24, 0.0)};
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 6; ++j)
          for (int p = 0; p < 5; ++p)
            for (int q = 0; q < 3; ++q)
              want2.v[i * 6 + j] += ha.v[(q * 4 + i) * 5 + p] * hcc.v[(p * 6 + j) * 3 + q];
      expect_matches(tensordot(a, c, {2, 0}, {0, -1}, dev), want2, dt, 15,
                     name_of(dev, dt, "tensordot pairs"));
      // axis 0 is the outer product; contracting everything is a scalar.
      EXPECT_EQ(tensordot(a, b, 0, dev).shape(), (Shape{3, 4, 5, 4, 5, 2}));
      array full_dot = tensordot(a, a, {0, 1, 2}, {0, 1, 2}, dev);
      EXPECT_EQ(full_dot.ndim(), 0u);
      double sq = 0;
      for (double v : ha.v) sq += v * v;
      expect_matches(full_dot, Host{{}, {sq}}, dt, 60, name_of(dev, dt, "full contraction"));
    }
    EXPECT_EQ(tensordot(zeros({2, 0}), zeros({0, 3}), 1, dev).shape(), (Shape{2, 3}));
    EXPECT_EQ(test::values(tensordot(ones({2, 0}), ones({0, 3}), 1, dev)), std::vector<double>(6, 0.0));
  }
}

TEST(OpsLinalg, InnerSumsOverTheLastAxes) {
  for (Device dev : test::test_devices()) {
    for (Dtype dt : kFloats) {
      array a = random_array({2, 3, 4}, dt, 5), b = random_array({5, 4}, dt, 6);
      const Host ha = host(a), hb = host(b);
      Host want{{2, 3, 5}, std::vector<double>(30, 0.0)};
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 5; ++j)
          for (int p = 0; p < 4; ++p) want.v[i * 5 + j] += ha.v[i * 4 + p] * hb.v[j * 4 + p];
      expect_matches(inner(a, b, dev), want, dt, 4, name_of(dev, dt, "inner"));
      array v = random_array({4}, dt, 7);
      const Host hv = host(v);
      double dot = 0;
      for (int p = 0; p < 4; ++p) dot += hv.v[p] * hv.v[p];
      expect_matches(inner(v, v, dev), Host{{}, {dot}}, dt, 4, name_of(dev, dt, "vector inner"));
    }
    // A 0-d operand multiplies, in any dtype.
    array s = inner(array(3), array({1, 2, 4}), dev);
    EXPECT_EQ(s.dtype(), int32);
    EXPECT_EQ(test::values(s), (std::vector<double>{3, 6, 12}));
  }
}

TEST(OpsLinalg, OuterOfFlattenedInputsInAnyDtype) {
  for (Device dev : test::test_devices()) {
    for (Dtype dt : {int32, float16, float32, float64}) {
      array a = astype(random_array({2, 2}, float32, 8) * 4, dt),
            b = astype(random_array({3}, float32, 9) * 4, dt);
      const Host ha = host(a), hb = host(b);
      Host want{{4, 3}, {}};
      for (double x : ha.v)
        for (double y : hb.v) want.v.push_back(x * y);
      expect_matches(outer(a, b, dev), want, dt, 1, name_of(dev, dt, "outer"));
    }
    EXPECT_EQ(outer(zeros({0}), zeros({3}), dev).shape(), (Shape{0, 3}));
    EXPECT_EQ(outer(array(2.0f), array({1.0f, 3.0f}), dev).shape(), (Shape{1, 2}));
  }
}

TEST(OpsLinalg, KronInterleavesBlocks) {
  for (Device dev : test::test_devices()) {
    for (Dtype dt : {int32, float32, float64, bfloat16}) {
      array a = astype(random_array({2, 3}, float32, 10) * 4, dt);
      array b = astype(random_array({4, 1, 2}, float32, 11) * 4, dt);
      const Host ha = host(a), hb = host(b);
      // a is [1, 2, 3] against b's [4, 1, 2]: the result is [4, 2, 6].
      Host want{{4, 2, 6}, std::vector<double>(48, 0.0)};
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 2; ++j)
          for (int l = 0; l < 6; ++l) {
            const double x = ha.v[j * 3 + l / 2];
            const double y = hb.v[i * 2 + l % 2];
            want.v[(i * 2 + j) * 6 + l] = x * y;
          }
      expect_matches(kron(a, b, dev), want, dt, 1, name_of(dev, dt, "kron"));
    }
    EXPECT_EQ(test::values(kron(array({1, 2}), array({1, 10}), dev)), (std::vector<double>{1, 10, 2, 20}));
  }
}

// ---- block_masked_mm -------------------------------------------------------------------------

namespace {

// The block of element (r, c) in a [..., tiles_r, tiles_c] mask, read with broadcasting.
double mask_at(const Host& mask, std::vector<int64_t> idx, int block) {
  idx[idx.size() - 2] /= block;
  idx[idx.size() - 1] /= block;
  return broadcast_at(mask, idx);
}

// block_masked_mm's reference: masked operands, product, masked result (a zero mask block is
// exactly zero; another value scales).
Host ref_block_masked(const Host& a, const Host& b, int block, const Host* mo, const Host* ml,
                      const Host* mr) {
  const auto masked = [&](const Host& x, const Host* m) {
    if (!m) return x;
    Host y = x;
    for (size_t i = 0; i < x.v.size(); ++i) {
      std::vector<int64_t> idx = unravel(static_cast<int64_t>(i), x.shape);
      std::vector<int64_t> full(std::max(idx.size(), m->shape.size()), 0);
      std::copy(idx.begin(), idx.end(), full.end() - idx.size());
      const double f = mask_at(*m, full, block);
      y.v[i] = f == 0 ? 0.0 : x.v[i] * f;
    }
    return y;
  };
  Host out = ref_matmul(masked(a, ml), masked(b, mr));
  return masked(out, mo);
}

}  // namespace

TEST(OpsLinalg, BlockMaskedMmMasksBlocksOfOperandsAndResult) {
  for (Device dev : test::test_devices()) {
    for (Dtype dt : kFloats) {
      for (int block : {32, 64}) {
        const int m = 70, k = 40, n = 33;
        const int tm = (m + block - 1) / block, tk = (k + block - 1) / block, tn = (n + block - 1) / block;
        array a = random_array({2, m, k}, dt, 20), b = random_array({k, n}, dt, 21);
        // Bool masks with both values, and float masks that scale.
        array mo = less(random_array({2, tm, tn}, float32, 22), array(0.3f));
        array ml = less(random_array({tm, tk}, float32, 23), array(0.5f));
        array mr = astype(random_array({2, tk, tn}, float32, 24), dt);
        // b is shared by both batches, while mask_rhs differs between them.
        const Host ha = host(a), hb = host(broadcast_to(b, {2, k, n})), hmo = host(mo), hml = host(ml),
                   hmr = host(mr);
        const std::string what = name_of(dev, dt, "block " + std::to_string(block));
        expect_matches(block_masked_mm(a, b, block, mo, std::nullopt, std::nullopt, dev),
                       ref_block_masked(ha, hb, block, &hmo, nullptr, nullptr), dt, k, what + " out mask");
        expect_matches(block_masked_mm(a, b, block, std::nullopt, ml, std::nullopt, dev),
                       ref_block_masked(ha, hb, block, nullptr, &hml, nullptr), dt, k, what + " lhs mask");
        expect_matches(block_masked_mm(a, b, block, mo, ml, mr, dev),
                       ref_block_masked(ha, hb, block, &hmo, &hml, &hmr), dt, k, what + " all masks");
        // Transposed b: the same product.
        array bt = transpose(contiguous(transpose(b)));
        expect_matches(block_masked_mm(a, bt, block, mo, ml, mr, dev),
                       ref_block_masked(ha, hb, block, &hmo, &hml, &hmr), dt, k, what + " transposed b");
      }
    }
    // A false block of a bool mask zeroes NaNs; no masks is matmul.
    array a = full({40, 40}, std::nanf(""));
    array out = block_masked_mm(a, ones({40, 40}), 32, array({false, true, true, true}, {2, 2}), std::nullopt,
                                std::nullopt, dev);
    const auto v = test::values(out);
    EXPECT_EQ(v[0], 0.0);
    EXPECT_TRUE(std::isnan(v[39]));
    EXPECT_EQ(block_masked_mm(ones({3, 4}), ones({4, 2}), 64, std::nullopt, std::nullopt, std::nullopt, dev)
                  .shape(),
              (Shape{3, 2}));
    // Vectors: the masks lose the vector's dimension.
    array vec = random_array({40}, float32, 30), mat = random_array({40, 20}, float32, 31);
    array vm = block_masked_mm(vec, mat, 32, array({true}), array({true, false}), std::nullopt, dev);
    EXPECT_EQ(vm.shape(), (Shape{20}));
    Host hv = host(vec);
    for (int i = 32; i < 40; ++i) hv.v[i] = 0;
    expect_matches(vm, ref_matmul(hv, host(mat)), float32, 40, test::device_name(dev) + " vector");
  }
}

// ---- gather_mm -------------------------------------------------------------------------------

namespace {

// gather_mm's reference: a's and b's matrices picked by the broadcast indices.
Host ref_gather(const Host& a, const Host& b, const Host& li, const Host& ri) {
  const size_t na = a.shape.size(), nb = b.shape.size();
  const int64_t m = a.shape[na - 2], k = a.shape[na - 1], n = b.shape[nb - 1];
  Shape batch = li.shape.size() >= ri.shape.size() ? li.shape : ri.shape;
  for (size_t i = 0; i < batch.size(); ++i) {
    const auto dim = [&](const Host& h) {
      const int64_t j = static_cast<int64_t>(i) - static_cast<int64_t>(batch.size() - h.shape.size());
      return j < 0 ? 1 : h.shape[j];
    };
    batch[i] = std::max(dim(li), dim(ri));
  }
  Host out{batch, {}};
  out.shape.push_back(static_cast<int32_t>(m));
  out.shape.push_back(static_cast<int32_t>(n));
  for (int64_t t = 0; t < count(batch); ++t) {
    const std::vector<int64_t> idx = unravel(t, batch);
    const int64_t ia = static_cast<int64_t>(broadcast_at(li, idx)),
                  ib = static_cast<int64_t>(broadcast_at(ri, idx));
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < k; ++j) acc += a.v[(ia * m + r) * k + j] * b.v[(ib * k + j) * n + c];
        out.v.push_back(acc);
      }
  }
  return out;
}

}  // namespace

TEST(OpsLinalg, GatherMmPicksMatricesByIndex) {
  for (Device dev : test::test_devices()) {
    for (Dtype dt : kFloats) {
      array a = random_array({3, 5, 6}, dt, 40);     // 3 matrices [5, 6]
      array w = random_array({2, 2, 6, 4}, dt, 41);  // 4 matrices [6, 4]
      array li = array({2, 0, 1, 2, 2, 0}, {2, 3}, int32);
      array ri = array({3, 1, 0}, {3}, uint32);  // broadcast against li
      const Host ha = host(a), hw = host(w);
      const std::string what = name_of(dev, dt, "gather");
      expect_matches(gather_mm(a, w, li, ri, false, dev), ref_gather(ha, hw, host(li), host(ri)), dt, 6,
                     what);
      // Sorted rhs indices only (lhs: every row block of a in turn), as a mixture of experts does.
      array x = random_array({4, 1, 6}, dt, 42);
      array sorted = array({0, 0, 2, 3}, {4}, uint32);
      expect_matches(gather_mm(x, w, std::nullopt, sorted, true, dev),
                     ref_gather(host(x), hw, host(arange(4.0, float32)), host(sorted)), dt, 6,
                     what + " sorted");
      // Weights stored transposed (column-major matrices) give the same products.
      array wt = transpose(contiguous(transpose(w, {0, 1, 3, 2})), {0, 1, 3, 2});
      expect_matches(gather_mm(a, wt, li, ri, false, dev), ref_gather(ha, hw, host(li), host(ri)), dt, 6,
                     what + " transposed weights");
    }
    // A vector lhs, and default rhs indices.
    array v = random_array({6}, float32, 43), w = random_array({3, 6, 2}, float32, 44);
    array out = gather_mm(v, w, array({0}, {1}, uint32), std::nullopt, false, dev);
    EXPECT_EQ(out.shape(), (Shape{3, 2}));
    Host want = ref_gather(Host{{1, 1, 6}, host(v).v}, host(w), Host{{1}, {0}}, Host{{3}, {0, 1, 2}});
    want.shape = Shape{3, 2};
    expect_matches(out, want, float32, 6, test::device_name(dev) + " vector lhs");
    // Empty index arrays and an inner dimension of zero.
    EXPECT_EQ(
        gather_mm(ones({2, 3, 4}), ones({2, 4, 5}), array({0}, {1}, uint32), zeros({0}, uint32), false, dev)
            .shape(),
        (Shape{0, 3, 5}));
    EXPECT_EQ(test::values(gather_mm(ones({2, 3, 0}), ones({2, 0, 2}), array({1}, {1}, uint32), std::nullopt,
                                     false, dev)),
              std::vector<double>(2 * 3 * 2, 0.0));
  }
}

// ---- segmented_mm ----------------------------------------------------------------------------

TEST(OpsLinalg, SegmentedMmMultipliesEachSegmentOfK) {
  for (Device dev : test::test_devices()) {
    for (Dtype dt : kFloats) {
      array a = random_array({5, 20}, dt, 50), b = random_array({20, 3}, dt, 51);
      // Segments [2, 3, 2]: ordinary, empty, reversed (empty), whole and one element.
      array seg = array({0, 7, 7, 7, 9, 4, 0, 20, 19, 20, 3, 15}, {2, 3, 2}, int32);
      const Host ha = host(a), hb = host(b), hs = host(seg);
      Host want{{2, 3, 5, 3}, {}};
      for (int s = 0; s < 6; ++s) {
        const int lo = static_cast<int>(hs.v[2 * s]), hi = static_cast<int>(hs.v[2 * s + 1]);
        for (int r = 0; r < 5; ++r)
          for (int c = 0; c < 3; ++c) {
            double acc = 0;
            for (int j = lo; j < hi; ++j) acc += ha.v[r * 20 + j] * hb.v[j * 3 + c];
            want.v.push_back(acc);
          }
      }
      expect_matches(segmented_mm(a, b, seg, dev), want, dt, 20, name_of(dev, dt, "segments"));
      array at = transpose(contiguous(transpose(a)));
      expect_matches(segmented_mm(at, b, seg, dev), want, dt, 20, name_of(dev, dt, "transposed a"));
    }
    EXPECT_EQ(segmented_mm(ones({2, 3}), ones({3, 4}), zeros({0, 2}, int32), dev).shape(), (Shape{0, 2, 4}));
  }
}
