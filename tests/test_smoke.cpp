#include <gtest/gtest.h>

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
