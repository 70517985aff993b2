// einsum and einsum_path on every device against a reference computed here in double (a loop
// over every assignment of the letters): implicit and explicit outputs, ellipses, diagonals,
// traces, transposes, outer and batched products, broadcasting, scalars, empty dimensions, three
// and more operands, strided operands, integer and 16-bit dtypes; the greedy paths NumPy
// chooses; the derivatives and vmap the composition inherits; and the invalid subscripts.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <map>
#include <random>
#include <stdexcept>
#include <string>

#include "support.h"

using namespace braid;

namespace {

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int32_t d : s) n *= d;
  return n;
}

std::vector<double> draw(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(count(shape)));
  for (double& x : v) x = dist(rng);
  return v;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == sep) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

// The reference: `equation` is explicit and has letters only ("ab,bc->ac"); size-1 dimensions
// broadcast. Returns the output's shape and row-major values.
std::pair<Shape, std::vector<double>> reference(const std::string& equation, const std::vector<Shape>& shapes,
                                                const std::vector<std::vector<double>>& values) {
  const size_t arrow = equation.find("->");
  const std::vector<std::string> inputs = split(equation.substr(0, arrow), ',');
  const std::string output = equation.substr(arrow + 2);
  std::string letters;
  std::map<char, int64_t> size;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t j = 0; j < inputs[i].size(); ++j) {
      const char c = inputs[i][j];
      if (letters.find(c) == std::string::npos) letters += c;
      if (!size.count(c) || size[c] == 1) size[c] = shapes[i][j];  // 1 broadcasts
    }
  }
  Shape out_shape;
  for (char c : output) out_shape.push_back(static_cast<int32_t>(size[c]));
  std::vector<double> out(static_cast<size_t>(count(out_shape)), 0.0);
  int64_t total = 1;
  for (char c : letters) total *= size[c];
  std::map<char, int64_t> at;
  for (int64_t n = 0; n < total; ++n) {
    int64_t rest = n;
    for (auto c = letters.rbegin(); c != letters.rend(); ++c) {
      at[*c] = rest % size[*c];
      rest /= size[*c];
    }
    double term = 1.0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      int64_t offset = 0;
      for (size_t j = 0; j < inputs[i].size(); ++j) {
        offset = offset * shapes[i][j] + (shapes[i][j] == 1 ? 0 : at[inputs[i][j]]);
      }
      term *= values[i][static_cast<size_t>(offset)];
    }
    int64_t o = 0;
    for (char c : output) o = o * size[c] + at[c];
    out[static_cast<size_t>(o)] += term;
  }
  return {out_shape, out};
}

// One call of einsum, and the same contraction written for the reference.
struct Case {
  std::string subscripts;
  std::string reference;
  std::vector<Shape> shapes;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      // One operand: diagonals, traces, sums, transposes.
      {"ii->i", "ii->i", {{4, 4}}},
      {"ii", "ii->", {{4, 4}}},
      {"iii->i", "iii->i", {{3, 3, 3}}},
      {"iii->", "iii->", {{3, 3, 3}}},
      {"iijj->ij", "iijj->ij", {{2, 2, 3, 3}}},
      {"ijij->ij", "ijij->ij", {{2, 3, 2, 3}}},
      {"ijij->j", "ijij->j", {{2, 3, 2, 3}}},
      {"iji->j", "iji->j", {{3, 2, 3}}},
      {"ij->", "ij->", {{2, 4}}},
      {"ij->i", "ij->i", {{2, 4}}},
      {"ij->j", "ij->j", {{2, 4}}},
      {"ij", "ij->ij", {{2, 4}}},
      {"ji", "ji->ij", {{2, 4}}},
      {"ij->ji", "ij->ji", {{2, 4}}},
      {"ijk->jki", "ijk->jki", {{2, 3, 4}}},
      {"Ab->bA", "Ab->bA", {{2, 3}}},
      // Two operands: products of every kind.
      {"ik,kj", "ik,kj->ij", {{2, 8}, {8, 3}}},
      {"ik,kj->ji", "ik,kj->ji", {{2, 8}, {8, 3}}},
      {"ab,cb", "ab,cb->ac", {{3, 4}, {5, 4}}},
      {"ba,cb", "ba,cb->ac", {{4, 3}, {5, 4}}},
      {"i,i", "i,i->", {{5}, {5}}},
      {"ij,ij->", "ij,ij->", {{3, 4}, {3, 4}}},
      {"abc,cba", "abc,cba->", {{2, 3, 4}, {4, 3, 2}}},
      {"i,j->ij", "i,j->ij", {{4}, {6}}},
      {"ij,kl->ikjl", "ij,kl->ikjl", {{2, 3}, {4, 2}}},
      {"ij,ij->ij", "ij,ij->ij", {{2, 8}, {2, 8}}},
      {"ij,j->ij", "ij,j->ij", {{3, 4}, {4}}},
      {"ij,j->i", "ij,j->i", {{3, 4}, {4}}},
      {"abcd,fgda->bfca", "abcd,fgda->bfca", {{2, 8, 3, 5}, {3, 7, 5, 2}}},
      {"abcd,cdef->feba", "abcd,cdef->feba", {{2, 3, 4, 5}, {4, 5, 2, 3}}},
      {"abcd,efdc", "abcd,efdc->abef", {{2, 3, 4, 5}, {2, 3, 5, 4}}},
      {"bij,bjk->bik", "bij,bjk->bik", {{3, 4, 5}, {3, 5, 6}}},
      {"bij,jk->bik", "bij,jk->bik", {{3, 4, 5}, {5, 6}}},
      {"bij,bkj->bki", "bij,bkj->bki", {{3, 4, 5}, {3, 6, 5}}},
      {"itjk,iujk->ijtu", "itjk,iujk->ijtu", {{2, 3, 4, 5}, {2, 3, 4, 5}}},
      {"ab,bc->c", "ab,bc->c", {{5, 8}, {8, 2}}},
      {"aab,bc->ac", "aab,bc->ac", {{2, 2, 3}, {3, 4}}},
      {"baa,bcc->ac", "baa,bcc->ac", {{3, 2, 2}, {3, 4, 4}}},
      {"aab,ccb->ac", "aab,ccb->ac", {{2, 2, 3}, {4, 4, 3}}},
      // Ellipses (NumPy's right-aligned broadcasting of the dimensions they cover).
      {"...c->...", "abc->ab", {{2, 3, 4}}},
      {"a...d->...", "abcd->bc", {{2, 3, 4, 5}}},
      {"...hh->...h", "abhh->abh", {{2, 3, 4, 4}}},
      {"...ij,...gj->...ig", "abij,abgj->abig", {{2, 3, 4, 5}, {2, 3, 6, 5}}},
      {"...ij,...gj->...", "abij,abgj->ab", {{2, 3, 4, 5}, {2, 3, 6, 5}}},
      {"...h,...j->...hj", "bch,abcj->abchj", {{3, 4, 2}, {2, 3, 4, 5}}},
      {"...c,cd", "bc,cd->bd", {{3, 4}, {4, 5}}},
      {"...cd,c", "abcd,c->abd", {{2, 3, 4, 5}, {4}}},
      {"...cd,c...->d...", "abcd,c->dab", {{2, 3, 4, 5}, {4}}},
      {"ab...,...b->ab...", "abc,b->abc", {{2, 3, 4}, {3}}},
      {"ab...,b->ab...", "abc,b->abc", {{2, 3, 4}, {3}}},
      {"ab,b...->a...", "ab,bc->ac", {{2, 3}, {3, 4}}},
      {"ab...,...bc->a...c", "ab,bc->ac", {{2, 3}, {3, 4}}},
      {"...def,defg->...g", "abcdef,defg->abcg", {{2, 2, 2, 3, 2, 3}, {3, 2, 3, 4}}},
      {"...ij,...jk->...ik", "xyij,yjk->xyik", {{2, 1, 3, 4}, {5, 4, 2}}},
      {"...i->i", "abi->i", {{2, 3, 4}}},
      {"i...->...", "i->", {{4}}},
      // Broadcasting size-1 dimensions, summed or kept.
      {"ab,bc->c", "ab,bc->c", {{5, 1}, {8, 2}}},
      {"ij,jk->ik", "ij,jk->ik", {{2, 1}, {3, 4}}},
      {"abcd,cdab->abcd", "abcd,cdab->abcd", {{5, 1, 3, 1}, {1, 7, 1, 2}}},
      {"bij,bjk->bik", "bij,bjk->bik", {{1, 4, 5}, {3, 5, 6}}},
      // Scalars.
      {",ij->ij", ",ij->ij", {{}, {2, 3}}},
      {"", "->", {{}}},
      {",", ",->", {{}, {}}},
      {"i,", "i,->i", {{3}, {}}},
      // Empty dimensions.
      {"ij,jk->ik", "ij,jk->ik", {{2, 0}, {0, 3}}},
      {"ij,jk->ik", "ij,jk->ik", {{0, 3}, {3, 2}}},
      {"ii->i", "ii->i", {{0, 0}}},
      // Three and more operands (the greedy path decides the order).
      {"ij,jk,kl->il", "ij,jk,kl->il", {{5, 8}, {8, 3}, {3, 7}}},
      {"ij,jk,kl", "ij,jk,kl->il", {{5, 8}, {8, 10}, {10, 7}}},
      {"ijk,lmk,ijf->lf", "ijk,lmk,ijf->lf", {{3, 4, 5}, {3, 4, 5}, {3, 4, 5}}},
      {"a,ab,abc->abc", "a,ab,abc->abc", {{2}, {2, 3}, {2, 3, 4}}},
      {"a,b,ab->ab", "a,b,ab->ab", {{2}, {3}, {2, 3}}},
      {"ea,fb,gc,hd,abcd->efgh", "ea,fb,gc,hd,abcd->efgh", {{2, 2}, {3, 3}, {2, 4}, {3, 5}, {2, 3, 4, 5}}},
      {"ab,ab,c->c", "ab,ab,c->c", {{2, 3}, {2, 3}, {4}}},
      {"ab,ab,cd,cd->ac", "ab,ab,cd,cd->ac", {{2, 3}, {2, 3}, {4, 5}, {4, 5}}},
      {"ab,cd,ef->acdf", "ab,cd,ef->acdf", {{2, 3}, {4, 5}, {2, 3}}},
      {"ab,bcd,cd->abd", "ab,bcd,cd->abd", {{2, 3}, {3, 4, 5}, {4, 5}}},
      {"dd,fb,be,cdb->cef", "dd,fb,be,cdb->cef", {{5, 5}, {3, 3}, {3, 2}, {4, 5, 3}}},
      {"fff,fae,bef,def->abd", "fff,fae,bef,def->abd", {{3, 3, 3}, {3, 2, 2}, {3, 2, 3}, {5, 2, 3}}},
      {"bdhe,acad,hiab,agac,hibd",
       "bdhe,acad,hiab,agac,hibd->eg",
       {{3, 5, 2, 2}, {2, 4, 2, 5}, {2, 3, 2, 3}, {2, 2, 2, 4}, {2, 3, 3, 5}}},
      {"ab,bc,cd,de,ef->af", "ab,bc,cd,de,ef->af", {{2, 3}, {3, 4}, {4, 5}, {5, 3}, {3, 2}}},
      {"...ij,...jk,...kl->...il", "zij,zjk,kl->zil", {{2, 3, 4}, {2, 4, 5}, {5, 2}}},
  };
  return c;
}

std::vector<std::vector<double>> operand_values(const Case& c, uint32_t seed) {
  std::vector<std::vector<double>> v;
  for (const Shape& s : c.shapes) v.push_back(draw(s, seed++));
  return v;
}

void check_case(const Case& c, const Device& dev, Dtype dt, double tol, uint32_t seed) {
  SCOPED_TRACE("einsum(\"" + c.subscripts + "\") on " + test::device_name(dev) + ", seed " +
               std::to_string(seed));
  std::vector<std::vector<double>> v = operand_values(c, seed);
  if (!is_floating_point(dt)) {
    for (auto& x : v) {
      for (double& e : x) e = std::round(e * 4);  // small integers
    }
  }
  std::vector<array> operands;
  for (size_t i = 0; i < v.size(); ++i) operands.push_back(test::make(v[i], c.shapes[i], dt));
  const auto [shape, want] = reference(c.reference, c.shapes, v);
  array got = einsum(c.subscripts, operands, dev);
  EXPECT_EQ(got.shape(), shape);
  test::expect_close(test::values(got), want, tol, tol, "values");
}

}  // namespace

TEST(Einsum, EveryCaseMatchesTheReferenceOnEveryDevice) {
  for (const Device& dev : test::test_devices()) {
    uint32_t seed = 100;
    for (const Case& c : cases()) check_case(c, dev, float32, 2e-5, seed += 10);
  }
}

TEST(Einsum, Float64MatchesTheReferenceClosely) {
  uint32_t seed = 300;
  for (const Case& c : cases()) check_case(c, Device::cpu, float64, 1e-12, seed += 10);
}

TEST(Einsum, IntegersAreExactAndSmallFloatsClose) {
  const std::vector<Case> some = {
      {"ij,jk->ik", "ij,jk->ik", {{3, 4}, {4, 5}}},
      {"ii->", "ii->", {{4, 4}}},
      {"bij,bjk,k->bi", "bij,bjk,k->bi", {{2, 3, 4}, {2, 4, 5}, {5}}},
      {"i,j->ij", "i,j->ij", {{3}, {4}}},
  };
  for (const Device& dev : test::test_devices()) {
    uint32_t seed = 500;
    for (const Case& c : some) {
      check_case(c, dev, int32, 0.0, seed += 10);
      check_case(c, dev, int64, 0.0, seed += 10);
      check_case(c, dev, float16, 2e-2, seed += 10);
      check_case(c, dev, bfloat16, 5e-2, seed += 10);
    }
  }
}

TEST(Einsum, ResultDtypeIsThePromotedOne) {
  array a = ones({2, 3}, float16), b = ones({3, 4}, float32), i = ones({3, 4}, int32);
  EXPECT_EQ(einsum("ij,jk->ik", {a, b}).dtype(), float32);
  EXPECT_EQ(einsum("ij,jk->ik", {a, i}).dtype(), float16);
  EXPECT_EQ(einsum("ij->ji", {ones({2, 3}, int8)}).dtype(), int8);
  EXPECT_EQ(einsum("ij,jk->ik", {ones({2, 3}, int32), i}).dtype(), int32);
}

TEST(Einsum, Complex64ContractsThroughMatmul) {
  for (const Device& dev : test::test_devices()) {
    // a = [[1+i, 2], [0, 1-i]], b = [[1, i], [1, 0]]: a @ b = [[3+i, -1+i], [1-i, 0]].
    array a = array({complex64_t(1, 1), complex64_t(2, 0), complex64_t(0, 0), complex64_t(1, -1)}, {2, 2});
    array b = array({complex64_t(1, 0), complex64_t(0, 1), complex64_t(1, 0), complex64_t(0, 0)}, {2, 2});
    const auto got = test::complex_values(einsum("ij,jk->ik", {a, b}, dev));
    const std::vector<std::complex<float>> want = {{3, 1}, {-1, 1}, {1, -1}, {0, 0}};
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) EXPECT_LT(std::abs(got[k] - want[k]), 1e-5) << k;
  }
}

TEST(Einsum, TransposedAndSteppedOperandsAreReadThroughTheirLayout) {
  const Shape s{6, 4};
  const std::vector<double> va = draw(s, 1), vb = draw({4, 5}, 2);
  for (const Device& dev : test::test_devices()) {
    array a = test::make(va, s, float32), b = test::make(vb, {4, 5}, float32);
    array at = transpose(a);                           // [4, 6], a view
    array stepped = slice(a, {0, 0}, {6, 4}, {2, 1});  // rows 0, 2, 4: [3, 4]
    const std::vector<double> at_v = test::values(at), st_v = test::values(stepped);
    auto check = [&](const std::string& eq, const std::string& ref, std::vector<array> in) {
      std::vector<Shape> shapes;
      std::vector<std::vector<double>> vals;
      for (const array& x : in) {
        shapes.push_back(x.shape());
        vals.push_back(test::values(x));
      }
      const auto [shape, want] = reference(ref, shapes, vals);
      array got = einsum(eq, in, dev);
      EXPECT_EQ(got.shape(), shape) << eq;
      test::expect_close(test::values(got), want, 2e-5, 2e-5, eq);
    };
    check("ji,jk->ik", "ji,jk->ik", {at, b});
    check("ij,jk->ki", "ij,jk->ki", {stepped, b});
    check("ij,kj->ik", "ij,kj->ik", {stepped, transpose(b)});
    check("ii->i", "ii->i", {slice(a, {0, 0}, {4, 4})});
  }
}

// NumPy's einsum_path(..., optimize="greedy") paths, without its leading "einsum_path".
TEST(EinsumPath, GreedyPathsAreNumPys) {
  struct PathCase {
    std::string subscripts;
    std::vector<Shape> shapes;
    std::vector<std::vector<int>> path;
  };
  const std::vector<PathCase> paths = {
      {"ii", {{5, 5}}, {{0}}},
      {"ij->i", {{5, 5}}, {{0}}},
      {"ij,jk", {{5, 8}, {8, 3}}, {{0, 1}}},
      {"ij,jk -> ijk", {{5, 8}, {8, 3}}, {{0, 1}}},
      {"ij,jk,kl", {{5, 8}, {8, 3}, {3, 7}}, {{0, 1}, {0, 1}}},
      {"ij,jk,kl", {{5, 8}, {8, 10}, {10, 7}}, {{1, 2}, {0, 1}}},
      // MLX's longer cases (letter sizes a..C: 2 3 4 5 4 3 2 6 5 4 3 2 5 7 4 3 2 3 4).
      {"eb,cb,fb->cef", {{4, 3}, {4, 3}, {3, 3}}, {{0, 2}, {0, 1}}},
      {"dd,fb,be,cdb->cef", {{5, 5}, {3, 3}, {3, 4}, {4, 5, 3}}, {{0, 3}, {0, 1}, {0, 1}}},
      {"bca,cdb,dbf,afc->", {{3, 4, 2}, {4, 5, 3}, {5, 3, 3}, {2, 3, 4}}, {{1, 2}, {0, 2}, {0, 1}}},
      {"dcc,fce,ea,dbf->ab", {{5, 4, 4}, {3, 4, 4}, {4, 2}, {5, 3, 3}}, {{1, 2}, {0, 1}, {0, 1}}},
  };
  for (const auto& p : paths) {
    std::vector<array> operands;
    for (const Shape& s : p.shapes) operands.push_back(zeros(s));
    EXPECT_EQ(einsum_path(p.subscripts, operands).first, p.path) << p.subscripts;
  }
}

TEST(EinsumPath, DescriptionNamesTheContractionAndItsCosts) {
  const auto [path, text] = einsum_path("ij,jk,kl", {zeros({5, 8}), zeros({8, 3}), zeros({3, 7})});
  EXPECT_NE(text.find("Complete contraction:  ij,jk,kl->il"), std::string::npos) << text;
  EXPECT_NE(text.find("Naive scaling:  4"), std::string::npos) << text;
  EXPECT_NE(text.find("Optimized scaling:  3"), std::string::npos) << text;
  EXPECT_NE(text.find("Naive FLOP count:  2520"), std::string::npos) << text;
  EXPECT_NE(text.find("Optimized FLOP count:  450"), std::string::npos) << text;
  EXPECT_NE(text.find("ij,jk->ik"), std::string::npos) << text;
}

// The pair of a large contraction is one GEMM: the graph holds a Matmul node and nothing
// larger than the operands and the result (no broadcast product of every letter).
TEST(Einsum, LargeContractionsRunAsMatrixProducts) {
  array a = ones({8, 64, 32}), b = ones({8, 32, 48}), c = ones({48, 16});
  array out = einsum("bij,bjk,kl->bil", {a, b, c});
  const int64_t largest = 8 * 64 * 48;
  int matmuls = 0;
  std::vector<array> stack = {out};
  while (!stack.empty()) {
    array x = stack.back();
    stack.pop_back();
    EXPECT_LE(static_cast<int64_t>(x.size()), largest);
    if (x.has_primitive() && std::string(x.primitive().name()) == "Matmul") ++matmuls;
    for (const array& in : x.inputs()) stack.push_back(in);
  }
  EXPECT_EQ(matmuls, 2);
  EXPECT_EQ(test::values(out)[0], 32.0 * 48.0);
}

// einsum is linear in each operand, so a central difference of any step is exact up to
// rounding: the vjp and jvp must match it closely on every device.
TEST(Einsum, DerivativesMatchFiniteDifferences) {
  const std::string eq = "ii,ij,bjk->bk";
  const std::vector<Shape> shapes = {{3, 3}, {3, 4}, {2, 4, 5}};
  for (const Device& dev : test::test_devices()) {
    StreamContext ctx(dev);
    std::vector<array> x;
    for (size_t i = 0; i < shapes.size(); ++i) {
      x.push_back(test::make(draw(shapes[i], 7 + i), shapes[i], float32));
    }
    auto f = [&](const std::vector<array>& in) { return std::vector<array>{einsum(eq, in)}; };
    const Shape out_shape = f(x)[0].shape();
    array cot = test::make(draw(out_shape, 20), out_shape, float32);
    auto [values, grads] = vjp(f, x, {cot});
    for (size_t i = 0; i < x.size(); ++i) {
      const std::vector<double> xi = test::values(x[i]);
      std::vector<double> want;
      for (size_t k = 0; k < xi.size(); ++k) {
        auto plus = x, minus = x;
        std::vector<double> p = xi, m = xi;
        p[k] += 0.5;
        m[k] -= 0.5;
        plus[i] = test::make(p, shapes[i], float32);
        minus[i] = test::make(m, shapes[i], float32);
        want.push_back(test::values(sum(multiply(subtract(f(plus)[0], f(minus)[0]), cot)))[0]);
      }
      EXPECT_EQ(grads[i].shape(), shapes[i]);
      test::expect_close(test::values(grads[i]), want, 1e-4, 1e-4, "vjp of operand " + std::to_string(i));
    }
    std::vector<array> tangents;
    for (size_t i = 0; i < shapes.size(); ++i) {
      tangents.push_back(test::make(draw(shapes[i], 40 + i), shapes[i], float32));
    }
    auto [jv, jt] = jvp(f, x, tangents);
    // Linear in each operand: the tangent is the sum over operands of einsum with it swapped in.
    array want = zeros(out_shape);
    for (size_t i = 0; i < x.size(); ++i) {
      auto swapped = x;
      swapped[i] = tangents[i];
      want = add(want, f(swapped)[0]);
    }
    test::expect_close(test::values(jt[0]), test::values(want), 1e-4, 1e-4, "jvp");
  }
}

TEST(Einsum, VmapMapsEachSlice) {
  array a = test::make(draw({3, 2, 4}, 1), {3, 2, 4}, float32);
  array b = test::make(draw({4, 5}, 2), {4, 5}, float32);
  auto f = [](const std::vector<array>& in) { return std::vector<array>{einsum("ij,jk->ki", in)}; };
  const std::vector<array> mapped = vmap(f, {0, -1})({a, b});
  ASSERT_EQ(mapped[0].shape(), Shape({3, 5, 2}));
  for (int n = 0; n < 3; ++n) {
    array slice_n = squeeze(slice(a, {n, 0, 0}, {n + 1, 2, 4}), 0);
    test::expect_close(test::values(slice(mapped[0], {n, 0, 0}, {n + 1, 5, 2})),
                       test::values(einsum("ij,jk->ki", {slice_n, b})), 1e-6, 1e-6,
                       "slice " + std::to_string(n));
  }
}

TEST(Einsum, InvalidSubscriptsThrowAtBuild) {
  array m23 = zeros({2, 3}), m34 = ones({3, 4}), m45 = ones({4, 5}), v4 = zeros({4});
  struct Bad {
    std::string subscripts;
    std::vector<array> operands;
  };
  const std::vector<Bad> bad = {
      {"i$,jk", {m23, m34}},   // not a letter
      {"i1->i", {m23}},        // digits are not subscripts
      {"ij,jk", {m23}},        // fewer operands than subscripts
      {"ij", {m23, m34}},      // more operands than subscripts
      {"ij,jk", {}},           // no operand
      {"ij,jk", {m23, m45}},   // j is 3 and 4
      {"ii", {m23}},           // a repeated index of two sizes
      {"ij->ik", {m23}},       // an output index no input has
      {"ij->ii", {m23}},       // a repeated output index
      {"ijk", {m23}},          // three subscripts for two dimensions
      {"i", {m23}},            // one subscript for two dimensions
      {"a...b...", {m23}},     // two ellipses
      {"i.j", {m23}},          // a lone dot
      {"i..j", {m23}},         // two dots
      {"ij->j->i", {m23}},     // two arrows
      {"ij>j", {m23}},         // a stray '>'
      {"i-j", {m23}},          // a stray '-'
      {"ij...k", {m23}},       // an ellipsis and too many letters
      {"ij->i,j", {m23}},      // a comma in the output
      {"ij,j->i", {m23, v4}},  // j is 3 and 4
  };
  for (const Bad& b : bad) {
    for (const char* fn : {"einsum", "einsum_path"}) {
      try {
        if (std::string(fn) == "einsum") {
          (void)einsum(b.subscripts, b.operands);
        } else {
          (void)einsum_path(b.subscripts, b.operands);
        }
        ADD_FAILURE() << fn << "(\"" << b.subscripts << "\") did not throw";
      } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()).rfind(std::string("[") + fn + "] ", 0), 0u)
            << fn << "(\"" << b.subscripts << "\"): " << e.what();
      }
    }
  }
  for (const array* a : {&m23, &m34, &m45, &v4}) EXPECT_FALSE(a->is_available());
}

TEST(Einsum, SpacesAreIgnored) {
  array a = test::make(draw({2, 3}, 1), {2, 3}, float32), b = test::make(draw({3, 4}, 2), {3, 4}, float32);
  test::expect_close(test::values(einsum(" ij , jk -> ik ", {a, b})), test::values(matmul(a, b)), 1e-6, 1e-6,
                     "spaces");
}
