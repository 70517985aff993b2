#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "braid/braid.h"

using namespace braid;

TEST(Smoke, AddEvaluates) {
  array a({1.0f, 2.0f, 3.0f});
  array b = a + 1.0f;
  auto c = b * b;
  EXPECT_FLOAT_EQ(c.data<float>()[2], 16.0f);
  EXPECT_EQ(c.shape(), (Shape{3}));
}

TEST(Smoke, GraphBuiltOnOneThreadEvaluatesOnAnother) {
  array x = arange(10.0f) * 2.0f;
  float v = 0;
  std::thread t([&] { v = x.data<float>()[9]; });
  t.join();
  EXPECT_FLOAT_EQ(v, 18.0f);
}

// operator<< prints as MLX does: more than six entries along an axis show the first and last
// three, and the entries of every axis but the last go one per line under the opening bracket.
TEST(Smoke, PrintsInMlxLayout) {
  auto text = [](const array& a) {
    std::ostringstream os;
    os << a;
    return os.str();
  };
  EXPECT_EQ(text(array(1.0f)), "array(1, dtype=float32)");
  EXPECT_EQ(text(array({1, 0, 1})), "array([1, 0, 1], dtype=int32)");
  EXPECT_EQ(text(full({6}, 1)), "array([1, 1, 1, 1, 1, 1], dtype=int32)");
  EXPECT_EQ(text(full({7}, 1)), "array([1, 1, 1, ..., 1, 1, 1], dtype=int32)");
  EXPECT_EQ(text(arange(8)), "array([0, 1, 2, ..., 5, 6, 7], dtype=int32)");
  EXPECT_EQ(text(reshape(arange(6), {3, 2})), "array([[0, 1],\n       [2, 3],\n       [4, 5]], dtype=int32)");
  EXPECT_EQ(text(reshape(arange(8), {2, 2, 2})),
            "array([[[0, 1],\n        [2, 3]],\n       [[4, 5],\n        [6, 7]]], dtype=int32)");
  EXPECT_EQ(text(reshape(arange(14), {7, 2})),
            "array([[0, 1],\n       [2, 3],\n       [4, 5],\n       ...,\n       [8, 9],\n       [10, 11],\n"
            "       [12, 13]], dtype=int32)");
  // A transposed view prints its logical order.
  EXPECT_EQ(text(transpose(reshape(arange(4), {2, 2}))), "array([[0, 2],\n       [1, 3]], dtype=int32)");
  EXPECT_EQ(text(array({true, false})), "array([true, false], dtype=bool)");
  EXPECT_EQ(text(zeros({0})), "array([], dtype=float32)");
}
