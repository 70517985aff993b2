// Buffer donation: an op whose result starts as a copy of an input (slice_update, scatter,
// masked_scatter) or is computed element by element from it writes into that input's buffer
// when nothing else can read it any more, so `t = scatter_add(t, ...)` and
// `cache = slice_update(cache, ...)` move only the updated elements, and a chain of
// element-wise ops needs no new buffer per op. Whenever anything can still read the input, the result is a
// copy and the input keeps its values. An array made over the caller's memory is read in place and never
// written: its buffer is not donated.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "braid/braid.h"
#include "support.h"

namespace braid {
namespace {

const detail::Data* buffer_of(const array& a) { return a.desc()->data.get(); }

array iota(int n, Device d) { return astype(arange(0, n, 1, d), float32, d); }

// One way of updating a whole array in place, the idiom `t = op(t, ...)`.
struct Update {
  const char* name;
  array (*apply)(const array& t, Device d);  // t has 64 elements
  std::vector<double> (*expect)(std::vector<double> t);
};

const std::vector<Update>& updates() {
  static const std::vector<Update> u = {
      {"slice_update",
       [](const array& t, Device d) { return slice_update(t, full({4}, -1.0f, d), Shape{3}, Shape{7}, d); },
       [](std::vector<double> t) {
         for (int i = 3; i < 7; ++i) t[i] = -1;
         return t;
       }},
      {"slice_update with steps",
       [](const array& t, Device d) { return slice_update(t, full({8}, -2.0f, d), Shape{1}, Shape{17}, Shape{2}, d); },
       [](std::vector<double> t) {
         for (int i = 1; i < 17; i += 2) t[i] = -2;
         return t;
       }},
      {"dynamic slice_update",
       [](const array& t, Device d) { return slice_update(t, full({2}, -3.0f, d), array({10}, int32), {0}, d); },
       [](std::vector<double> t) {
         t[10] = t[11] = -3;
         return t;
       }},
      {"scatter_add",
       [](const array& t, Device d) {
         return scatter_add(t, array({5, 9, 5}, int32), full({3, 1}, 10.0f, d), 0, d);
       },
       [](std::vector<double> t) {
         t[5] += 20;
         t[9] += 10;
         return t;
       }},
      {"scatter",
       [](const array& t, Device d) { return scatter(t, array({60}, int32), full({1, 1}, 7.0f, d), 0, d); },
       [](std::vector<double> t) {
         t[60] = 7;
         return t;
       }},
      {"negative",
       [](const array& t, Device d) { return negative(t, d); },
       [](std::vector<double> t) {
         for (double& x : t) x = -x;
         return t;
       }},
      {"add, the donated operand first",
       [](const array& t, Device d) { return add(t, array(0.5f), d); },
       [](std::vector<double> t) {
         for (double& x : t) x += 0.5;
         return t;
       }},
      {"subtract, the donated operand second",
       [](const array& t, Device d) { return subtract(array(100.0f), t, d); },
       [](std::vector<double> t) {
         for (double& x : t) x = 100 - x;
         return t;
       }},
      {"masked_scatter",
       [](const array& t, Device d) {
         return masked_scatter(t, less(arange(0, 64, 1, d), array(2), d), full({2}, 4.0f, d), d);
       },
       [](std::vector<double> t) {
         t[0] = t[1] = 4;
         return t;
       }},
  };
  return u;
}

// 0 .. 63 as float32, evaluated, its values in `values`.
array evaluated_iota(Device d, std::vector<double>& values) {
  array t = iota(64, d);
  eval(t);
  values = test::values(t);
  return t;
}

std::string where(const Update& u, Device d) {
  return std::string(u.name) + (d == Device::gpu ? " on the GPU" : " on the CPU");
}

TEST(Donation, AnUpdateOfAnArrayNothingElseHoldsWritesIntoItsBuffer) {
  for (Device d : test::test_devices()) {
    for (const auto& u : updates()) {
      SCOPED_TRACE(where(u, d));
      std::vector<double> before;
      array t = evaluated_iota(d, before);
      const detail::Data* buffer = buffer_of(t);
      t = u.apply(t, d);
      eval(t);
      EXPECT_EQ(buffer_of(t), buffer);
      EXPECT_EQ(test::values(t), u.expect(before));
    }
  }
}

TEST(Donation, AnInputStillHeldElsewhereIsCopiedAndKeepsItsValues) {
  for (Device d : test::test_devices()) {
    for (const auto& u : updates()) {
      SCOPED_TRACE(where(u, d));
      std::vector<double> before;
      array t = evaluated_iota(d, before);
      array kept = t;  // another handle
      array updated = u.apply(t, d);
      eval(updated);
      EXPECT_NE(buffer_of(updated), buffer_of(kept));
      EXPECT_EQ(test::values(kept), before);
      EXPECT_EQ(test::values(updated), u.expect(before));

      array base = iota(64, d);
      eval(base);
      array view = slice(base, Shape{8}, Shape{16}, d);  // shares base's buffer
      eval(view);
      base = u.apply(base, d);
      eval(base);
      EXPECT_EQ(test::values(view), std::vector<double>(before.begin() + 8, before.begin() + 16));
      EXPECT_EQ(test::values(base), u.expect(before));
    }
  }
}

TEST(Donation, AChainOfLazyUpdatesReusesOneBuffer) {
  for (Device d : test::test_devices()) {
    array cache = zeros({16, 8}, float32, d);
    eval(cache);
    const detail::Data* buffer = buffer_of(cache);
    for (int i = 0; i < 16; ++i) {
      cache = slice_update(cache, full({1, 8}, static_cast<float>(i), d), Shape{i, 0}, Shape{i + 1, 8}, d);
    }
    eval(cache);
    EXPECT_EQ(buffer_of(cache), buffer);
    std::vector<double> expect(16 * 8);
    for (int i = 0; i < 16 * 8; ++i) expect[i] = i / 8;
    EXPECT_EQ(test::values(cache), expect);
  }
}

TEST(Donation, ReadersOnOtherStreamsSeeTheOldValues) {
  // On the GPU a reader's node completes once its kernel is queued; the update must wait for
  // that kernel before it overwrites the buffer.
  for (Device d : test::test_devices()) {
    const int n = d == Device::gpu ? (1 << 24) : (1 << 12);
    Stream other = new_stream(d);
    Stream mine = new_stream(d);
    for (int round = 0; round < 4; ++round) {
      array t = full({n}, 1.0f, mine);
      eval(t);
      array doubled = sum(multiply(exp(t, other), array(2.0f), other), false, other);
      async_eval({doubled});
      t = slice_update(t, full({n}, 5.0f, mine), Shape{0}, Shape{n}, mine);
      eval(t);
      EXPECT_NEAR(doubled.item<float>(), 2.0 * std::exp(1.0) * n, 1e-3 * n);
      EXPECT_EQ(max(t, false, mine).item<float>(), 5.0f);
    }
  }
}

TEST(Donation, GradientsThroughUpdatesAreUnchanged) {
  for (Device d : test::test_devices()) {
    auto f = [d](const array& x) {
      array y = multiply(x, x, d);
      y = scatter_add(y, array({1, 1}, int32), reshape(slice(x, Shape{0}, Shape{2}, d), {2, 1}, d), 0, d);
      y = slice_update(y, multiply(slice(x, Shape{2}, Shape{3}, d), array(3.0f), d), Shape{0}, Shape{1}, d);
      return sum(multiply(y, y, d), false, d);
    };
    // y = [3 x2, x1^2 + x0 + x1, x2^2]; f = 9 x2^2 + (x1^2 + x0 + x1)^2 + x2^4.
    const double x0 = 0.5, x1 = -2.0, x2 = 1.5, inner = x1 * x1 + x0 + x1;
    array g = grad(f)(array({0.5f, -2.0f, 1.5f}));
    const std::vector<double> got = test::values(g);
    EXPECT_NEAR(got[0], 2 * inner, 1e-5);
    EXPECT_NEAR(got[1], 2 * inner * (2 * x1 + 1), 1e-5);
    EXPECT_NEAR(got[2], 18 * x2 + 4 * x2 * x2 * x2, 1e-4);
  }
}

// --- Arrays over the caller's memory ------------------------------------------------------

// Waits (up to 10 s) until `count` reaches `want`: a worker may hold a finished node's inputs
// for a moment after its result is available.
bool reaches(const std::atomic<int>& count, int want) {
  for (int i = 0; i < 10000 && count.load() < want; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return count.load() == want;
}

TEST(ExternalMemory, IsReadInPlaceAndReleasedOnceWithTheLastArray) {
  for (Device d : test::test_devices()) {
    SCOPED_TRACE(test::device_name(d));
    std::vector<float> buf(64);
    std::iota(buf.begin(), buf.end(), 0.0f);
    std::atomic<int> released{0};
    void* seen = nullptr;
    {
      array x(buf.data(), {8, 8}, float32, [&](void* p) {
        seen = p;
        released.fetch_add(1);
      });
      EXPECT_TRUE(x.is_available());
      EXPECT_EQ(x.data<float>(), buf.data());  // not copied
      buf[9] = 100;
      array y = sum(x, 1, false, d);
      EXPECT_EQ(test::values(y)[1], 100 + (8 + 10 + 11 + 12 + 13 + 14 + 15));
      EXPECT_EQ(released.load(), 0);
    }
    ASSERT_TRUE(reaches(released, 1));
    EXPECT_EQ(seen, buf.data());
  }
}

TEST(ExternalMemory, IsNeverDonated) {
  for (Device d : test::test_devices()) {
    for (const auto& u : updates()) {
      SCOPED_TRACE(where(u, d));
      std::vector<float> buf(64);
      std::iota(buf.begin(), buf.end(), 0.0f);
      const std::vector<float> before = buf;
      std::atomic<int> released{0};
      // The only reference to the input is the update's: any other buffer would be donated.
      array t = u.apply(array(buf.data(), {64}, float32, [&](void*) { released.fetch_add(1); }), d);
      eval(t);
      EXPECT_EQ(buf, before);
      EXPECT_EQ(test::values(t), u.expect(std::vector<double>(before.begin(), before.end())));
      t = array(0.0f);
      EXPECT_TRUE(reaches(released, 1));
    }
  }
}

TEST(ExternalMemory, StridedLayoutsAreKept) {
  std::vector<int32_t> buf(12);
  std::iota(buf.begin(), buf.end(), 0);
  for (Device d : test::test_devices()) {
    SCOPED_TRACE(test::device_name(d));
    // The transpose of a 3 x 4 row-major block.
    array t(buf.data(), {4, 3}, Strides{1, 4}, int32, nullptr);
    EXPECT_TRUE(t.flags().col_contiguous);
    EXPECT_FALSE(t.flags().row_contiguous);
    EXPECT_EQ(test::values(add(t, array(0), d)), (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
    EXPECT_EQ(test::values(sum(t, 0, false, d)), (std::vector<double>{6, 22, 38}));
    // Every other element, and one element broadcast.
    array stepped(buf.data() + 2, {4}, Strides{2}, int32, nullptr);
    EXPECT_EQ(test::values(multiply(stepped, array(1), d)), (std::vector<double>{2, 4, 6, 8}));
    array broadcast(buf.data() + 7, {2, 3}, Strides{0, 0}, int32, nullptr);
    // MLX's contiguous: the one element it reads is dense; neither row- nor column-major.
    EXPECT_EQ(broadcast.data_size(), 1u);
    EXPECT_TRUE(broadcast.flags().contiguous);
    EXPECT_FALSE(broadcast.flags().row_contiguous || broadcast.flags().col_contiguous);
    EXPECT_EQ(test::values(add(broadcast, array(1), d)), std::vector<double>(6, 8));
    // A size-one axis may carry any stride; an empty array may point anywhere.
    array column(buf.data(), {3, 1}, Strides{4, 12345}, int32, nullptr);
    EXPECT_EQ(test::values(copy(column, d)), (std::vector<double>{0, 4, 8}));
    array empty(nullptr, {0, 5}, int32, nullptr);
    EXPECT_EQ(sum(empty, false, d).item<int32_t>(), 0);
  }
}

TEST(ExternalMemory, BadLayoutsThrowAndLeaveTheMemoryWithTheCaller) {
  std::vector<float> buf(8, 1.0f);
  int released = 0;
  auto deleter = [&](void*) { ++released; };
  auto throws = [&](auto make, const std::string& fragment) {
    try {
      make();
      ADD_FAILURE() << "no exception; expected " << fragment;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  throws([&] { return array(buf.data(), {2, 4}, Strides{-4, 1}, float32, deleter); }, "negative");
  throws(
      [&] {
        return array(buf.data(), {2, 4}, Strides{1}, float32, deleter);
      },
      "1 strides for a shape of 2");
  throws(
      [&] {
        return array(buf.data(), {1 << 30, 2}, Strides{int64_t{1} << 62, 1}, float32, deleter);
      },
      "more memory than exists");
  throws([&] { return array(nullptr, {2}, float32, deleter); }, "null");
  throws([&] { return array(buf.data(), {-2}, float32, deleter); }, "[array]");
  EXPECT_EQ(released, 0);
}

}  // namespace
}  // namespace braid
