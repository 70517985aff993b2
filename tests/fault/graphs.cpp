#include "graphs.h"

#include <cxxabi.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>
#include <typeinfo>

namespace fault {

using namespace braid;

namespace {

using Mat = std::vector<double>;  // row-major

Mat map(const Mat& a, double (*f)(double)) {
  Mat r(a.size());
  for (size_t i = 0; i < a.size(); ++i) r[i] = f(a[i]);
  return r;
}

template <typename F>
Mat zip(const Mat& a, const Mat& b, F f) {
  Mat r(a.size());
  for (size_t i = 0; i < a.size(); ++i) r[i] = f(a[i], b[i]);
  return r;
}

}  // namespace

CheckedGraph sweep_graph(const std::vector<Stream>& st) {
  const Stream &s0 = st.at(0), &s1 = st.at(1), &s2 = st.at(2);
  constexpr int n = 8;
  // X[i][j] = (8i + j) / 64 and Y[i][j] = 0.01 (64 - (8i + j)), built on different streams.
  array x = divide(reshape(arange(0.0, 64.0, s0), {n, n}, s0), array(64.0f), s1);
  array y = multiply(reshape(arange(64.0, 0.0, -1.0, s1), {n, n}, s1), array(0.01f), s2);
  array a = add(x, y, s0);
  array c = matmul(a, transpose(y, s1), s2);
  array d = tanh(divide(c, array(8.0f), s0), s1);
  array e = softmax(d, -1, false, s2);
  array f = sum(e, 1, false, s0);
  array g = exp(negative(a, s1), s2);
  array h = where(greater(a, array(0.5f), s0), g, subtract(array(1.0f), g, s1), s2);
  array m = max(h, 0, false, s0);
  array mc = mean(c, 1, false, s1);
  array p = add(add(f, m, s2), mc, s0);
  array q = log(sqrt(add(multiply(p, p, s1), array(1.0f), s2), s0), s1);
  // 256 x 512 = 2^17 elements: twice the elementwise kernels' grain, so split across the pool.
  array big = add(multiply(ones({256, 512}, s2), array(2.0f), s0), array(1.0f), s1);
  array big_sum = sum(big, s2);  // 3 * 2^17 = 393216, exact in float32
  array r = add(q, divide(big_sum, array(393216.0f), s0), s2);
  array top = maximum(minimum(c, array(2.0f), s0), array(0.25f), s1);

  Mat X(n * n), Y(n * n);
  for (int i = 0; i < n * n; ++i) {
    X[i] = i / 64.0;
    Y[i] = 0.01 * (64 - i);
  }
  Mat A = zip(X, Y, [](double u, double v) { return u + v; });
  Mat C(n * n, 0.0);  // A @ Y^T
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) C[i * n + j] += A[i * n + k] * Y[j * n + k];
  Mat D = map(C, [](double v) { return std::tanh(v / 8.0); });
  Mat E(n * n);
  for (int i = 0; i < n; ++i) {
    double mx = *std::max_element(D.begin() + i * n, D.begin() + (i + 1) * n), s = 0;
    for (int j = 0; j < n; ++j) s += std::exp(D[i * n + j] - mx);
    for (int j = 0; j < n; ++j) E[i * n + j] = std::exp(D[i * n + j] - mx) / s;
  }
  Mat G = map(A, [](double v) { return std::exp(-v); });
  Mat H(n * n);
  for (int i = 0; i < n * n; ++i) H[i] = A[i] > 0.5 ? G[i] : 1.0 - G[i];
  Mat R(n), F(n), M(n, -1e300), MC(n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      F[i] += E[i * n + j];
      M[j] = std::max(M[j], H[i * n + j]);
      MC[i] += C[i * n + j] / n;
    }
  }
  for (int i = 0; i < n; ++i) {
    double pv = F[i] + M[i] + MC[i];
    R[i] = std::log(std::sqrt(pv * pv + 1.0)) + 1.0;
  }
  Mat TOP = map(C, [](double v) { return std::max(std::min(v, 2.0), 0.25); });

  CheckedGraph out;
  out.outputs = {r, e, big_sum, top};
  out.expected = {R, E, {393216.0}, TOP};
  return out;
}

CheckedGraph parallel_op_graph(const Stream& s) {
  CheckedGraph out;
  // 2^19 elements: eight chunks, so the pool's helpers are often still inside theirs when the
  // caller runs out of chunks to take.
  out.outputs = {add(ones({512, 1024}, s), array(1.0f), s)};
  out.expected = {Mat(512 * 1024, 2.0)};
  return out;
}

CheckedGraph small_graph(const Stream& sa, const Stream& sb) {
  array x = arange(0.0, 16.0, sa);
  array y = multiply(x, array(2.0f), sb);                  // cross-stream edge
  array big = add(ones({256, 512}, sa), array(1.0f), sb);  // split across the pool
  array total = sum(big, sa);                              // 2^18, exact
  array z = add(y, divide(total, array(262144.0f), sb), sa);
  Mat Z(16);
  for (int i = 0; i < 16; ++i) Z[i] = 2.0 * i + 1.0;
  CheckedGraph out;
  out.outputs = {z};
  out.expected = {Z};
  return out;
}

std::vector<array> exit_workload(const std::vector<Stream>& streams) {
  std::vector<array> out;
  int k = 0;
  for (const Stream& s : streams) {
    array a = divide(reshape(arange(0.0, 65536.0, s), {256, 256}, s), array(65536.0f), s);
    array m = a;
    for (int i = 0; i < 6; ++i) m = matmul(multiply(m, array(0.01f), s), a, s);
    out.push_back(m);
    out.push_back(softmax(add(a, array(static_cast<float>(k)), s), -1, false, s));
    out.push_back(sum(exp(a, s), s));
    ++k;
  }
  return out;
}

std::string check_values(const CheckedGraph& g) {
  char buf[256];
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    array a = g.outputs[o];
    const auto& want = g.expected[o];
    if (a.size() != want.size()) {
      std::snprintf(buf, sizeof buf, "output %zu: size %zu, expected %zu", o, a.size(), want.size());
      return buf;
    }
    const float* got = a.data<float>();
    if (!a.flags().row_contiguous) return "output " + std::to_string(o) + " is not row-contiguous";
    for (size_t i = 0; i < want.size(); ++i) {
      double tol = 1e-4 * std::max(1.0, std::fabs(want[i]));
      if (!(std::fabs(got[i] - want[i]) <= tol)) {
        std::snprintf(buf, sizeof buf, "output %zu element %zu: %.7g, expected %.7g", o, i,
                      static_cast<double>(got[i]), want[i]);
        return buf;
      }
    }
  }
  return {};
}

bool caused_by_bad_alloc(const std::exception_ptr& e) {
  std::exception_ptr cur = e;
  for (int depth = 0; cur && depth < 8; ++depth) {
    try {
      std::rethrow_exception(cur);
    } catch (const std::bad_alloc&) {
      return true;
    } catch (const std::nested_exception& n) {
      cur = n.nested_ptr();
    } catch (...) {
      return false;
    }
  }
  return false;
}

std::string describe(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    int status = 0;
    char* name = abi::__cxa_demangle(typeid(ex).name(), nullptr, nullptr, &status);
    std::string s = std::string(status == 0 && name ? name : typeid(ex).name()) + ": " + ex.what();
    std::free(name);
    return s;
  } catch (...) {
    return "(not a std::exception)";
  }
}

std::string synchronize_all(const std::vector<braid::Stream>& streams) {
  std::string unexpected;
  for (const auto& s : streams) {
    try {
      braid::synchronize(s);
    } catch (...) {
      const std::exception_ptr e = std::current_exception();
      if (!caused_by_bad_alloc(e) && unexpected.empty()) unexpected = describe(e);
    }
  }
  return unexpected;
}

}  // namespace fault
