#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>
#include <thread>
#include <variant>
#include <vector>

#include "braid/braid.h"
#include "watchdog.h"

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

// Print options (MLX's PrintOptions): a precision prints floating-point parts with that many
// digits after the point; -1 is the stream's format. Process-wide.
TEST(Smoke, PrintOptionsSetThePrecision) {
  auto text = [](const array& a) {
    std::ostringstream os;
    os << a;
    return os.str();
  };
  const array x = array({1.123456789f});
  EXPECT_EQ(text(x), "array([1.12346], dtype=float32)");
  struct Restore {
    ~Restore() { set_printoptions(PrintOptions{}); }  // even when an expectation fails
  } restore;
  set_printoptions(PrintOptions{4});
  EXPECT_EQ(get_printoptions().precision, 4);
  EXPECT_EQ(text(x), "array([1.1235], dtype=float32)");
  EXPECT_EQ(text(array(complex64_t(1.0f, -2.5f))), "array(1.0000-2.5000j, dtype=complex64)");
  EXPECT_EQ(text(array({3, 4})), "array([3, 4], dtype=int32)");  // integers are unaffected
  std::ostringstream os;
  os.precision(2);
  os << x << " " << 3.14159;  // the caller's stream state comes back
  EXPECT_EQ(os.str(), "array([1.1235], dtype=float32) 3.1");
  set_printoptions(PrintOptions{});
  EXPECT_EQ(get_printoptions().precision, -1);
  EXPECT_EQ(text(x), "array([1.12346], dtype=float32)");
}

// MLX's utils.h.
TEST(Smoke, UtilsPromoteBroadcastAndNormalize) {
  EXPECT_EQ(result_type({array(1, int8), array(1, int16), array(1.0f)}), float32);
  EXPECT_EQ(result_type(array(1, uint8), array(1, int8)), int16);
  EXPECT_EQ(result_type(array(1, uint8), array(1, int8), array(1.0, float64)), float64);
  EXPECT_THROW(result_type(std::vector<array>{}), std::invalid_argument);
  EXPECT_EQ(broadcast_shapes({3, 1}, {4}), (Shape{3, 4}));
  EXPECT_EQ(broadcast_shapes({}, {2, 2}), (Shape{2, 2}));
  EXPECT_THROW(broadcast_shapes({3}, {4}), std::invalid_argument);
  EXPECT_EQ(normalize_axis_index(-1, 3), 2);
  EXPECT_EQ(normalize_axis_index(1, 3), 1);
  try {
    normalize_axis_index(3, 3, "[my_op]");
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[my_op] Axis 3", 0), 0u) << e.what();
  }
  EXPECT_TRUE(is_power_of_2(64));
  EXPECT_FALSE(is_power_of_2(0));
  EXPECT_FALSE(is_power_of_2(6));
  EXPECT_EQ(next_power_of_2(5), 8);
  EXPECT_EQ(next_power_of_2(1), 1);
}

// device_count and device_info (MLX's): what the machine has, read once.
TEST(Smoke, DeviceInfoDescribesEachAvailableDevice) {
  EXPECT_EQ(device_count(Device::cpu), 1);
  EXPECT_EQ(device_count(Device::gpu), is_available(Device::gpu) ? 1 : 0);
  for (Device d : {Device(Device::cpu), Device(Device::gpu)}) {
    if (!is_available(d)) {
      EXPECT_THROW(device_info(d), std::invalid_argument);
      continue;
    }
    const auto& info = device_info(d);
    EXPECT_EQ(&info, &device_info(d));  // the same map each time
    ASSERT_TRUE(info.count("device_name"));
    EXPECT_FALSE(std::get<std::string>(info.at("device_name")).empty());
    const size_t memory = std::get<size_t>(info.at("memory_size"));
    EXPECT_GT(memory, size_t{1} << 28);
    EXPECT_EQ(std::get<size_t>(info.at("total_memory")), memory);
    EXPECT_EQ(std::get<size_t>(info.at("max_recommended_working_set_size")), memory);
    const auto& arch = std::get<std::string>(info.at("architecture"));
    if (d == Device::gpu) EXPECT_EQ(arch.rfind("sm_", 0), 0u);
  }
}

// get_streams lists live streams; clear_streams gives the calling thread new defaults and
// leaves streams others hold alive.
TEST(Smoke, GetStreamsAndClearStreams) {
  Stream mine = new_stream(Device::cpu);
  auto listed = [](const Stream& s) {
    auto all = get_streams();
    EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
    return std::find(all.begin(), all.end(), s) != all.end();
  };
  braid_test::Watchdog wd;
  EXPECT_TRUE(listed(mine));
  EXPECT_EQ(to_stream({}, Device::cpu), default_stream(Device::cpu));
  EXPECT_EQ(to_stream(mine, Device::gpu), mine);
  std::thread([&] {
    Stream before = default_stream(Device::cpu);
    array kept = add(array(1.0f), array(2.0f));  // on `before`, not yet evaluated
    clear_streams();
    Stream after = default_stream(Device::cpu);
    EXPECT_NE(before, after);
    EXPECT_TRUE(listed(before));  // `before` is still held here
    EXPECT_EQ(kept.item<float>(), 3.0f);
    ThreadLocalStream handle = new_thread_local_stream(Device::cpu);  // MLX's type
    EXPECT_TRUE(handle.is_thread_local_handle());
    Stream real = stream_from_thread_local_stream(handle);
    EXPECT_FALSE(real.is_thread_local_handle());
    clear_streams();
    EXPECT_NE(stream_from_thread_local_stream(handle), real);
  }).join();
}

// get_array_buffer_size counts each buffer once, at what its allocator holds for it: a view
// counts its base's buffer, repeats and shared buffers count once, and unevaluated arrays throw.
TEST(Smoke, ArrayBufferSizeCountsDistinctBuffers) {
  array a = arange(1000.0f);
  array view = slice(a, {10}, {20});
  array lazy = a + 1.0f;
  EXPECT_THROW(get_array_buffer_size({lazy}), std::invalid_argument);
  eval(view);
  const size_t a_size = get_array_buffer_size({a});
  EXPECT_GE(a_size, a.nbytes());
  EXPECT_LT(a_size, 2 * a.nbytes());
  EXPECT_EQ(get_array_buffer_size({view}), a_size);
  EXPECT_EQ(get_array_buffer_size({a, view, a}), a_size);
  EXPECT_EQ(get_array_buffer_size({}), 0u);
  std::vector<float> none;
  array empty(none.begin(), Shape{0});
  EXPECT_EQ(get_array_buffer_size({empty}), 0u);
  array b = arange(3000.0f);
  eval(b);
  EXPECT_EQ(get_array_buffer_size({a, b}), a_size + get_array_buffer_size({b}));
  // A small constant lives inside the array's bookkeeping and counts its bytes.
  array c({1.0f, 2.0f});
  eval(c);
  EXPECT_EQ(get_array_buffer_size({c}), c.nbytes());
}

// MLX's C++ API pieces that programs reach for: the umbrella header brings fast::, a const
// array's item, untyped data, shapes and complex numbers printed as MLX prints them, Device's
// order and comparison with a bare type, get_stream, and io's file classes.
TEST(Smoke, MlxApiSurfaceCompilesAndBehaves) {
  const array x = fast::rms_norm(ones({2, 4}), std::nullopt, 1e-5f);
  EXPECT_NEAR(sum(x).item<float>(), 8.0f, 1e-4f);
  const array c(3.5f);
  EXPECT_EQ(c.item<float>(), 3.5f);
  array ints = array({1, 2, 3});
  const void* raw = ints.data<void>();
  EXPECT_EQ(static_cast<const int32_t*>(raw)[2], 3);

  std::ostringstream os;
  os << Shape{2, 3} << " " << std::vector<int>{4} << " " << complex64_t(1.0f, 2.0f) << " "
     << complex64_t(0.5f, -1.0f) << " " << float16_t(1.5f) << " " << bfloat16_t(-2.0f);
  EXPECT_EQ(os.str(), "(2,3) (4) 1+2j 0.5-1j 1.5 -2");
  ShapeElem dim = ones({5}).shape(0);
  EXPECT_EQ(dim, 5);

  EXPECT_TRUE(Device(Device::gpu, 1) == Device::gpu);
  EXPECT_TRUE(Device::cpu != Device(Device::gpu));
  EXPECT_TRUE(Device::gpu == Device(Device::gpu, 1));
  EXPECT_TRUE(Device(Device::cpu) != Device::gpu);
  EXPECT_FALSE(Device(Device::gpu, 1) == Device(Device::gpu, 0));
  std::set<Device> devices{Device(Device::gpu), Device(Device::cpu), Device(Device::cpu)};
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices.begin()->type, Device::cpu);
  const Device& d = default_device();
  EXPECT_EQ(d, default_device());

  Stream s = new_stream(Device::cpu);
  EXPECT_EQ(get_stream(s.index), s);
  EXPECT_EQ(get_stream(s.index).device, Device::cpu);
  EXPECT_THROW(get_stream(-7), std::invalid_argument);

  const std::string path = ::testing::TempDir() + "braid_smoke_writer.npy";
  {
    auto w = std::make_shared<io::FileWriter>(path);
    ASSERT_TRUE(w->is_open());
    save(w, arange(4.0f));
  }
  auto r = std::make_shared<io::ParallelFileReader>(path);
  ASSERT_TRUE(r->is_open());
  EXPECT_TRUE(array_equal(load(r), arange(4.0f)).item<bool>());
  io::ParallelFileReader missing(path + ".missing");
  EXPECT_FALSE(missing.is_open());
  char byte = 0;
  EXPECT_THROW(missing.read(&byte, 1), std::runtime_error);
  EXPECT_THROW(missing.read(&byte, 1, 0), std::runtime_error);
  std::remove(path.c_str());
}
