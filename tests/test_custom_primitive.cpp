// A primitive written outside braid, through the public headers only, as MLX's extensions
// are: its kernel gives its output a buffer with array::set_data (or shares an input's with
// copy_shared_buffer), writes it through data<T>(), and the node runs, differentiates and
// fails like braid's own.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "braid/braid.h"
#include "support.h"

namespace {

using namespace braid;
using namespace braid::test;

// alpha * x + beta * y of two float32 arrays of one shape, read through their strides (a
// broadcast input has strides of 0).
class ScaledSum : public UnaryPrimitive {
 public:
  ScaledSum(Stream s, float alpha, float beta, std::atomic<int>* released = nullptr)
      : UnaryPrimitive(std::move(s)), alpha_(alpha), beta_(beta), released_(released) {}

  void eval_cpu(const std::vector<array>& inputs, array& out) override {
    const array& x = inputs[0];
    const array& y = inputs[1];
    if (released_ != nullptr) {
      // A buffer of the caller's own, released by its deleter.
      std::atomic<int>* released = released_;
      out.set_data(allocator::malloc(out.nbytes()), [released](allocator::Buffer b) {
        released->fetch_add(1);
        allocator::free(b);
      });
    } else {
      out.set_data(allocator::malloc(out.nbytes()));
    }
    const float* xs = x.data<float>();
    const float* ys = y.data<float>();
    float* o = out.data<float>();
    for (size_t i = 0; i < out.size(); ++i) o[i] = alpha_ * xs[offset(x, i)] + beta_ * ys[offset(y, i)];
  }
  void eval_gpu(const std::vector<array>&, array&) override {
    throw std::runtime_error("[ScaledSum] no GPU kernel");
  }
  std::vector<array> vjp(const std::vector<array>&, const std::vector<array>& cotangents,
                         const std::vector<int>& argnums, const std::vector<array>&) override {
    std::vector<array> out;
    for (int a : argnums) out.push_back(multiply(array(a == 0 ? alpha_ : beta_), cotangents[0], stream()));
    return out;
  }
  const char* name() const override { return "ScaledSum"; }
  bool is_equivalent(const Primitive& other) const override {
    const auto& o = static_cast<const ScaledSum&>(other);
    return alpha_ == o.alpha_ && beta_ == o.beta_;
  }

 private:
  // The element of `a` at row-major position i of its shape.
  static int64_t offset(const array& a, size_t i) {
    int64_t at = 0;
    for (int d = static_cast<int>(a.ndim()) - 1; d >= 0; --d) {
      at += static_cast<int64_t>(i % a.shape(d)) * a.strides()[d];
      i /= a.shape(d);
    }
    return at;
  }
  float alpha_, beta_;
  std::atomic<int>* released_;
};

// Built as MLX's extensions build their nodes: cast, broadcast, then the node on a CPU stream.
array scaled_sum(const array& x, const array& y, float alpha, float beta,
                 std::atomic<int>* released = nullptr, const Stream& s = default_stream(Device::cpu)) {
  std::vector<array> in = broadcast_arrays({astype(x, float32, s), astype(y, float32, s)}, s);
  const Shape shape = in[0].shape();
  return array(shape, float32, std::make_shared<ScaledSum>(s, alpha, beta, released), std::move(in));
}

// The first row of a matrix, as a view of its buffer.
class FirstRow : public UnaryPrimitive {
 public:
  using UnaryPrimitive::UnaryPrimitive;
  void eval_cpu(const std::vector<array>& inputs, array& out) override {
    const array& m = inputs[0];
    out.copy_shared_buffer(m, {m.strides()[1]},
                           array::Flags{m.shape(1) <= 1 || m.strides()[1] == 1, true, true},
                           static_cast<size_t>(m.shape(1)));
  }
  void eval_gpu(const std::vector<array>&, array&) override {
    throw std::runtime_error("[FirstRow] no GPU kernel");
  }
  const char* name() const override { return "FirstRow"; }
};

// A copy of a float32 matrix written in column-major order: set_data with a layout.
class ColumnMajorCopy : public UnaryPrimitive {
 public:
  using UnaryPrimitive::UnaryPrimitive;
  void eval_cpu(const std::vector<array>& inputs, array& out) override {
    const array& m = inputs[0];
    const int64_t rows = out.shape(0), cols = out.shape(1);
    out.set_data(allocator::malloc(out.nbytes()), out.size(), Strides{1, rows},
                 array::Flags{true, rows <= 1, true});
    const float* in = m.data<float>();
    float* o = out.data<float>();
    for (int64_t c = 0; c < cols; ++c) {
      for (int64_t r = 0; r < rows; ++r) o[c * rows + r] = in[r * m.strides()[0] + c * m.strides()[1]];
    }
  }
  void eval_gpu(const std::vector<array>&, array&) override {
    throw std::runtime_error("[ColumnMajorCopy] no GPU");
  }
  const char* name() const override { return "ColumnMajorCopy"; }
};

// A kernel that gives its output a buffer of the caller's and then fails.
class SetsThenFails : public UnaryPrimitive {
 public:
  SetsThenFails(Stream s, std::atomic<int>* released) : UnaryPrimitive(std::move(s)), released_(released) {}
  void eval_cpu(const std::vector<array>&, array& out) override {
    std::atomic<int>* released = released_;
    out.set_data(allocator::malloc(out.nbytes()), [released](allocator::Buffer b) {
      released->fetch_add(1);
      allocator::free(b);
    });
    throw std::runtime_error("[SetsThenFails] as asked");
  }
  void eval_gpu(const std::vector<array>&, array&) override {
    throw std::runtime_error("[SetsThenFails] no GPU");
  }
  const char* name() const override { return "SetsThenFails"; }

 private:
  std::atomic<int>* released_;
};

// A kernel that fails.
class Fails : public UnaryPrimitive {
 public:
  using UnaryPrimitive::UnaryPrimitive;
  void eval_cpu(const std::vector<array>&, array&) override { throw std::runtime_error("[Fails] as asked"); }
  void eval_gpu(const std::vector<array>&, array&) override { throw std::runtime_error("[Fails] as asked"); }
  const char* name() const override { return "Fails"; }
};

TEST(CustomPrimitive, AKernelSetsItsOutputsDataAsMlx) {
  array x = reshape(arange(6.0f), {2, 3});
  array y = array({10.0f, 20.0f, 30.0f});  // broadcast: strides of 0
  array z = scaled_sum(x, y, 2.0f, 0.5f);
  EXPECT_STREQ(z.primitive().name(), "ScaledSum");
  EXPECT_EQ(values(z), (std::vector<double>{5, 12, 19, 11, 18, 25}));
  // A transposed input is read through its strides.
  array t = scaled_sum(transpose(x), zeros({3, 2}), 1.0f, 0.0f);
  EXPECT_EQ(values(t), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  // Its result feeds braid's ops like any other.
  EXPECT_EQ(values(sum(z)), std::vector<double>{90});
}

TEST(CustomPrimitive, ItsVjpDifferentiates) {
  array x = array({1.0f, 2.0f, 3.0f});
  array y = array({4.0f, 5.0f, 6.0f});
  auto [value, grads] = value_and_grad(
      [](const std::vector<array>& in) {
        return sum(multiply(scaled_sum(in[0], in[1], 3.0f, -2.0f), in[0]));
      },
      std::vector<int>{0, 1})({x, y});
  // sum((3x - 2y) * x): d/dx = 6x - 2y, d/dy = -2x.
  EXPECT_EQ(values(value), std::vector<double>{3 * 14 - 2 * 32});
  EXPECT_EQ(values(grads[0]), (std::vector<double>{-2, 2, 6}));
  EXPECT_EQ(values(grads[1]), (std::vector<double>{-2, -4, -6}));
}

TEST(CustomPrimitive, AViewSharesItsInputsBuffer) {
  array m = reshape(arange(12.0f), {3, 4});
  eval(m);
  array row(Shape{4}, float32, std::make_shared<FirstRow>(default_stream(Device::cpu)), {m});
  EXPECT_EQ(values(row), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(row.data<float>(), m.data<float>());
  m = array(0.0f);  // the view keeps the buffer alive
  EXPECT_EQ(values(add(row, array(1.0f))), (std::vector<double>{1, 2, 3, 4}));
}

// The stream's worker lets go of a finished node's inputs just after publishing its value:
// waits (boundedly) until a dropped array's buffer has been released.
void wait_for_release(const std::atomic<int>& released) {
  for (int i = 0; i < 5000 && released.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// set_data on `a` with a fresh buffer, which goes back to the allocator when it is refused.
bool accepts_data(array& a) {
  allocator::Buffer b = allocator::malloc(a.nbytes());
  try {
    a.set_data(b);
    return true;
  } catch (const std::invalid_argument&) {
    allocator::free(b);
    return false;
  }
}

TEST(CustomPrimitive, AnEvaluatedArrayRefusesNewData) {
  array a = array({1.0f, 2.0f});
  eval(a);
  EXPECT_FALSE(accepts_data(a));
  array b = array({3.0f, 4.0f});
  EXPECT_THROW(a.copy_shared_buffer(b), std::invalid_argument);
  // A node not being computed by this thread refuses too: only its kernel gives it data.
  array lazy = add(a, b);
  EXPECT_FALSE(accepts_data(lazy));
  EXPECT_EQ(values(lazy), (std::vector<double>{4, 6}));
  EXPECT_EQ(values(a), (std::vector<double>{1, 2}));
}

TEST(CustomPrimitive, ACustomDeleterRunsOnceWhenTheLastArrayGoes) {
  std::atomic<int> released{0};
  {
    array z = scaled_sum(array({1.0f, 2.0f}), array({3.0f, 4.0f}), 1.0f, 1.0f, &released);
    EXPECT_EQ(values(z), (std::vector<double>{4, 6}));
    // The caller's buffer is never reused for another result (no donation into it), even
    // when nothing else holds it.
    const void* caller_buffer = z.data<float>();
    array w = add(std::move(z), array(1.0f));
    EXPECT_EQ(values(w), (std::vector<double>{5, 7}));
    EXPECT_NE(static_cast<const void*>(w.data<float>()), caller_buffer);
  }
  wait_for_release(released);
  EXPECT_EQ(released.load(), 1);
  // Released once only: a block given back twice would be handed out twice.
  allocator::Buffer first = allocator::malloc(8), second = allocator::malloc(8);
  EXPECT_NE(first.ptr, second.ptr);
  allocator::free(first);
  allocator::free(second);
}

TEST(CustomPrimitive, AKernelsErrorReachesTheCaller) {
  array f(Shape{2}, float32, std::make_shared<Fails>(default_stream(Device::cpu)), {array({1.0f, 2.0f})});
  EXPECT_THROW(eval(f), std::runtime_error);
  EXPECT_THROW(eval(add(f, array(1.0f))), std::runtime_error);
  // A kernel that fails after taking a buffer: the buffer is released once, with the node.
  std::atomic<int> released{0};
  {
    array g(Shape{4}, float32, std::make_shared<SetsThenFails>(default_stream(Device::cpu), &released),
            {array({1.0f})});
    EXPECT_THROW(eval(g), std::runtime_error);
  }
  wait_for_release(released);
  EXPECT_EQ(released.load(), 1);
}

TEST(CustomPrimitive, AKernelLaysOutItsOutputAsItChooses) {
  array m = reshape(arange(6.0f), {2, 3});
  array c(Shape{2, 3}, float32, std::make_shared<ColumnMajorCopy>(default_stream(Device::cpu)), {m});
  eval(c);
  EXPECT_EQ(c.strides(), (Strides{1, 2}));
  EXPECT_TRUE(c.flags().col_contiguous);
  EXPECT_FALSE(c.flags().row_contiguous);
  EXPECT_EQ(values(c), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(values(add(c, transpose(reshape(arange(6.0f), {3, 2})))),
            (std::vector<double>{0, 3, 6, 4, 7, 10}));
}

TEST(CustomPrimitive, ManyThreadsUseItOnOneStream) {
  Stream s = new_stream(Device::cpu);
  constexpr int kThreads = 8;
  std::vector<std::vector<double>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, s, &got] {
      array acc = full({64}, static_cast<float>(t), s);
      for (int i = 0; i < 50; ++i) acc = scaled_sum(acc, ones({64}, float32, s), 1.0f, 1.0f, nullptr, s);
      got[t] = values(acc);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(got[t], std::vector<double>(64, t + 50.0)) << t;
}

}  // namespace
