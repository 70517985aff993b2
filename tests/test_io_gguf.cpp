// GGUF files: round trips of every supported dtype and metadata kind, a file written byte by
// byte from ggml's docs/gguf.md (plain and block-quantized tensors), and the errors MLX gives.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "io_format_support.h"
#include "support.h"
#include "watchdog.h"

using namespace braid;
using test::le;

namespace {

std::string gguf_string(const std::string& s) { return le<uint64_t>(s.size()) + s; }

// A tensor info: name, GGML-order dims, type, offset.
std::string tensor_info(const std::string& name, std::vector<uint64_t> dims, uint32_t type, uint64_t offset) {
  std::string s = gguf_string(name) + le<uint32_t>(static_cast<uint32_t>(dims.size()));
  for (uint64_t d : dims) s += le<uint64_t>(d);
  return s + le<uint32_t>(type) + le<uint64_t>(offset);
}

std::string pad_to(std::string s, size_t align) {
  s.append((align - s.size() % align) % align, '\0');
  return s;
}

uint16_t half_bits(float f) { return float16_t(f).bits; }

template <typename F>
void expect_gguf_error(F&& f, const std::string& prefix, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << "no error: " << what;
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << what << ": " << e.what();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << what << ": " << e.what();
  }
}

}  // namespace

TEST(IoGguf, EverySupportedDtypeAndMetadataKindRoundTripsOnEveryDevice) {
  const std::string path = test::temp_file("every.gguf");
  for (Device d : test::test_devices()) {
    std::unordered_map<std::string, array> arrays;
    for (Dtype dt : {float32, float16, bfloat16, float64, int8, int16, int32, int64}) {
      const std::string name = dtype_name(dt);
      arrays.emplace(name + ".matrix",
                     copy(test::make({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4}, dt), d));
      arrays.emplace(name + ".cube", transpose(copy(test::make({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}, dt), d)));
      arrays.emplace(name + ".scalar", copy(test::make({-3}, {}, dt), d));
      arrays.emplace(name + ".empty", zeros({0, 2}, dt, d));
    }
    std::unordered_map<std::string, GGUFMetaData> meta = {
        {"general.name", std::string("braid")},
        {"tokens", std::vector<std::string>{"a", "", "longer token"}},
    };
    for (Dtype dt : {bool_, uint8, uint16, uint32, uint64, int8, int16, int32, int64, float32, float64}) {
      meta.emplace("scalar." + dtype_name(dt), copy(test::make({1}, {}, dt), d));
      meta.emplace("list." + dtype_name(dt), copy(test::make({0, 1, 1}, {3}, dt), d));
    }
    save_gguf(path, arrays, meta);
    auto [loaded, loaded_meta] = load_gguf(path);
    ASSERT_EQ(loaded.size(), arrays.size());
    for (const auto& [name, a] : arrays) {
      EXPECT_EQ(loaded.at(name).dtype(), a.dtype()) << name;
      EXPECT_EQ(loaded.at(name).shape(), a.shape()) << name;
      EXPECT_EQ(test::values(loaded.at(name)), test::values(a)) << name;
    }
    ASSERT_EQ(loaded_meta.size(), meta.size());
    EXPECT_EQ(std::get<std::string>(loaded_meta.at("general.name")), "braid");
    EXPECT_EQ(std::get<std::vector<std::string>>(loaded_meta.at("tokens")),
              (std::vector<std::string>{"a", "", "longer token"}));
    for (const auto& [key, value] : meta) {
      if (!std::holds_alternative<array>(value)) continue;
      const array& want = std::get<array>(value);
      const array& got = std::get<array>(loaded_meta.at(key));
      EXPECT_EQ(got.dtype(), want.dtype()) << key;
      EXPECT_EQ(got.shape(), want.shape()) << key;
      EXPECT_EQ(test::values(got), test::values(want)) << key;
    }
  }
  std::remove(path.c_str());
}

TEST(IoGguf, ReadsAFileWrittenFromTheFormatDescription) {
  // Metadata: the alignment (64), a string, a string list, an int32 list, a float64, a bool.
  std::string kv = gguf_string("general.alignment") + le<uint32_t>(4) + le<uint32_t>(64);
  kv += gguf_string("general.name") + le<uint32_t>(8) + gguf_string("hand made");
  kv += gguf_string("tokens") + le<uint32_t>(9) + le<uint32_t>(8) + le<uint64_t>(2) + gguf_string("a") +
        gguf_string("bc");
  kv += gguf_string("ids") + le<uint32_t>(9) + le<uint32_t>(5) + le<uint64_t>(3) + le<int32_t>(1) +
        le<int32_t>(-2) + le<int32_t>(3);
  kv += gguf_string("eps") + le<uint32_t>(12) + le<double>(1e-5);
  kv += gguf_string("flag") + le<uint32_t>(7) + std::string("\x01", 1);

  // Tensor data, each piece at a multiple of 64 bytes.
  std::string f32;  // GGML dims [3, 2]: braid shape [2, 3]
  for (float v : {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}) f32 += le<float>(v);
  // Q4_0, dims [32, 2]: two blocks. Value i of block b: d_b * (q - 8), q = (i * 7 + b) % 16.
  std::string q40;
  std::vector<double> q40_ref;
  for (int b = 0; b < 2; ++b) {
    const float d = b == 0 ? 0.5f : -1.25f;
    q40 += le<uint16_t>(half_bits(d));
    int q[32];
    for (int i = 0; i < 32; ++i) q[i] = (i * 7 + b) % 16;
    for (int i = 0; i < 16; ++i) q40 += static_cast<char>(q[i] | (q[i + 16] << 4));
    for (int i = 0; i < 32; ++i) q40_ref.push_back(d * (q[i] - 8.0));
  }
  // Q4_1, dims [32, 1]: d * q + m.
  std::string q41 = le<uint16_t>(half_bits(0.25f)) + le<uint16_t>(half_bits(-3.0f));
  std::vector<double> q41_ref(32);
  for (int i = 0; i < 16; ++i) q41 += static_cast<char>((i % 16) | (((15 - i) % 16) << 4));
  for (int i = 0; i < 16; ++i) {
    q41_ref[i] = 0.25 * i - 3.0;
    q41_ref[i + 16] = 0.25 * (15 - i) - 3.0;
  }
  // Q8_0, dims [64, 1]: two blocks of int8 q: d * q.
  std::string q80;
  std::vector<double> q80_ref;
  for (int b = 0; b < 2; ++b) {
    const float d = b == 0 ? 0.125f : 2.0f;
    q80 += le<uint16_t>(half_bits(d));
    for (int i = 0; i < 32; ++i) {
      const int8_t q = static_cast<int8_t>(i * 9 - 128 + b);
      q80 += static_cast<char>(q);
      q80_ref.push_back(d * q);
    }
  }
  // Q4_K, dims [256, 1]: sub-block j has scale index sc_j and min index m_j (6 bits each).
  const float kd = 0.5f, kdmin = 0.25f;
  uint8_t sc[8], mn[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = static_cast<uint8_t>(5 + 7 * j);  // up to 54: uses the high bits for j >= 4
    mn[j] = static_cast<uint8_t>(60 - 3 * j);
  }
  uint8_t packed[12];
  for (int j = 0; j < 4; ++j) {
    packed[j] = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
    packed[j + 4] = static_cast<uint8_t>((mn[j] & 63) | ((mn[j + 4] >> 4) << 6));
    packed[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((mn[j + 4] & 0xF) << 4));
  }
  std::string q4k = le<uint16_t>(half_bits(kd)) + le<uint16_t>(half_bits(kdmin)) +
                    std::string(reinterpret_cast<char*>(packed), 12);
  std::vector<double> q4k_ref(256);
  for (int pair = 0; pair < 4; ++pair) {
    for (int i = 0; i < 32; ++i) {
      const int lo = (i + pair) % 16, hi = (3 * i + pair) % 16;
      q4k += static_cast<char>(lo | (hi << 4));
      q4k_ref[pair * 64 + i] = kd * sc[2 * pair] * lo - kdmin * mn[2 * pair];
      q4k_ref[pair * 64 + 32 + i] = kd * sc[2 * pair + 1] * hi - kdmin * mn[2 * pair + 1];
    }
  }

  std::string infos = tensor_info("t.f32", {3, 2}, 0, 0) + tensor_info("blk.0.weight", {32, 2}, 2, 64) +
                      tensor_info("q41", {32, 1}, 3, 128) + tensor_info("blk.8.weight", {64, 1}, 8, 192) +
                      tensor_info("k.weight", {256, 1}, 12, 320);
  std::string file = "GGUF" + le<uint32_t>(3) + le<uint64_t>(5) + le<uint64_t>(6) + kv + infos;
  file = pad_to(file, 64) + pad_to(f32, 64) + pad_to(q40, 64) + pad_to(q41, 64) + pad_to(q80, 128) + q4k;
  const std::string path = test::temp_file("hand.gguf");
  test::write_bytes(path, file);

  auto [arrays, meta] = load_gguf(path);
  EXPECT_EQ(array(std::get<array>(meta.at("general.alignment"))).item<uint32_t>(), 64u);
  EXPECT_EQ(std::get<std::string>(meta.at("general.name")), "hand made");
  EXPECT_EQ(std::get<std::vector<std::string>>(meta.at("tokens")), (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(test::values(std::get<array>(meta.at("ids"))), (std::vector<double>{1, -2, 3}));
  EXPECT_EQ(std::get<array>(meta.at("eps")).dtype(), float64);
  EXPECT_EQ(array(std::get<array>(meta.at("eps"))).item<double>(), 1e-5);
  EXPECT_EQ(array(std::get<array>(meta.at("flag"))).item<bool>(), true);

  EXPECT_EQ(arrays.at("t.f32").shape(), (Shape{2, 3}));
  EXPECT_EQ(test::values(arrays.at("t.f32")), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  auto check = [&](const std::string& weight, const std::string& prefix, int bits, const Shape& shape,
                   const std::vector<double>& want) {
    const array& w = arrays.at(weight);
    const array& scales = arrays.at(prefix + ".scales");
    const array& biases = arrays.at(prefix + ".biases");
    EXPECT_EQ(w.dtype(), uint32) << weight;
    Shape wshape = shape, gshape = shape;
    wshape.back() = shape.back() * bits / 32;
    gshape.back() = shape.back() / 32;
    EXPECT_EQ(w.shape(), wshape) << weight;
    EXPECT_EQ(scales.shape(), gshape) << weight;
    EXPECT_EQ(scales.dtype(), float16) << weight;
    EXPECT_EQ(biases.dtype(), float16) << weight;
    array deq = dequantize(w, scales, biases, 32, bits, "affine", std::nullopt, float32);
    EXPECT_EQ(deq.shape(), shape) << weight;
    test::expect_close(test::values(deq), want, 1e-6, 1e-6, weight);
  };
  check("blk.0.weight", "blk.0", 4, {2, 32}, q40_ref);
  check("q41", "q41", 4, {1, 32}, q41_ref);
  check("blk.8.weight", "blk.8", 8, {1, 64}, q80_ref);
  check("k.weight", "k", 4, {1, 256}, q4k_ref);
  std::remove(path.c_str());
}

TEST(IoGguf, UnsupportedTensorTypesAndMalformedFilesFailWithLoadGgufErrors) {
  const std::string path = test::temp_file("bad.gguf");
  auto one_tensor = [&](uint32_t type, std::vector<uint64_t> dims, uint64_t offset, size_t data_bytes) {
    std::string f =
        "GGUF" + le<uint32_t>(3) + le<uint64_t>(1) + le<uint64_t>(0) + tensor_info("w", dims, type, offset);
    return pad_to(f, 32) + std::string(data_bytes, '\0');
  };
  const std::vector<std::pair<std::string, std::string>> files = {
      {"Q6_K", one_tensor(14, {256}, 0, 210)},
      {"an unknown type", one_tensor(1000, {4}, 0, 64)},
      {"Q4_0 rows not a multiple of 32", one_tensor(2, {16}, 0, 64)},
      {"Q4_K rows not a multiple of 256", one_tensor(12, {32}, 0, 200)},
      {"data past the end", one_tensor(0, {100}, 0, 64)},
      {"an unaligned offset", one_tensor(0, {4}, 4, 64)},
      {"an offset past the end", one_tensor(0, {4}, 1ull << 62, 64)},
      {"a dimension past int32", one_tensor(0, {1ull << 40}, 0, 64)},
      {"dims whose product overflows", one_tensor(0, {1ull << 30, 1ull << 30, 1ull << 30}, 0, 64)},
      {"more than 8 dimensions (gguflib's limit)", one_tensor(0, std::vector<uint64_t>(32, 1), 0, 64)},
      {"a bad magic", "GGUX" + le<uint32_t>(3) + le<uint64_t>(0) + le<uint64_t>(0)},
      {"version 1", "GGUF" + le<uint32_t>(1) + le<uint64_t>(0) + le<uint64_t>(0)},
      {"a huge tensor count", "GGUF" + le<uint32_t>(3) + le<uint64_t>(~0ull) + le<uint64_t>(0)},
      {"a huge metadata count", "GGUF" + le<uint32_t>(3) + le<uint64_t>(0) + le<uint64_t>(1ull << 60)},
      {"a huge string length",
       "GGUF" + le<uint32_t>(3) + le<uint64_t>(0) + le<uint64_t>(1) + le<uint64_t>(~0ull) + "key"},
      {"a huge array length", "GGUF" + le<uint32_t>(3) + le<uint64_t>(0) + le<uint64_t>(1) +
                                  gguf_string("k") + le<uint32_t>(9) + le<uint32_t>(6) +
                                  le<uint64_t>(1ull << 61) + std::string(16, '\0')},
      {"a nested array", "GGUF" + le<uint32_t>(3) + le<uint64_t>(0) + le<uint64_t>(1) + gguf_string("k") +
                             le<uint32_t>(9) + le<uint32_t>(9) + le<uint64_t>(1) + std::string(16, '\0')},
      {"an unknown value type", "GGUF" + le<uint32_t>(3) + le<uint64_t>(0) + le<uint64_t>(1) +
                                    gguf_string("k") + le<uint32_t>(13) + std::string(16, '\0')},
      {"an alignment of 3", "GGUF" + le<uint32_t>(3) + le<uint64_t>(0) + le<uint64_t>(1) +
                                gguf_string("general.alignment") + le<uint32_t>(4) + le<uint32_t>(3)},
      {"a string alignment", "GGUF" + le<uint32_t>(3) + le<uint64_t>(0) + le<uint64_t>(1) +
                                 gguf_string("general.alignment") + le<uint32_t>(8) + gguf_string("32")},
      {"an empty file", ""},
  };
  for (const auto& [what, bytes] : files) {
    test::write_bytes(path, bytes);
    expect_gguf_error([&] { load_gguf(path); }, "[load_gguf]", what);
  }
  // Two tensors over the same bytes, and two of one name.
  std::string both = "GGUF" + le<uint32_t>(3) + le<uint64_t>(2) + le<uint64_t>(0) +
                     tensor_info("a", {8}, 0, 0) + tensor_info("b", {4}, 0, 0);
  test::write_bytes(path, pad_to(both, 32) + std::string(64, '\0'));
  expect_gguf_error([&] { load_gguf(path); }, "[load_gguf]", "overlapping tensors");
  std::string twice = "GGUF" + le<uint32_t>(3) + le<uint64_t>(2) + le<uint64_t>(0) +
                      tensor_info("a", {4}, 0, 0) + tensor_info("a", {4}, 0, 32);
  test::write_bytes(path, pad_to(twice, 32) + std::string(64, '\0'));
  expect_gguf_error([&] { load_gguf(path); }, "[load_gguf]", "a duplicate name");
  expect_gguf_error([&] { load_gguf(test::temp_file("missing.gguf")); }, "[load_gguf]", "a missing file");
  std::remove(path.c_str());
}

TEST(IoGguf, SaveRejectsWhatGgufCannotHoldBeforeWriting) {
  const std::string path = test::temp_file("refused.gguf");
  std::remove(path.c_str());
  auto refuses = [&](std::unordered_map<std::string, array> arrays,
                     std::unordered_map<std::string, GGUFMetaData> meta, const std::string& what) {
    expect_gguf_error([&] { save_gguf(path, arrays, meta); }, "[save_gguf]", what);
    EXPECT_TRUE(test::read_bytes(path).empty()) << what << ": a file was written";
  };
  refuses({{"w", zeros({2}, uint8)}}, {}, "a uint8 tensor");
  refuses({{"w", zeros({2}, bool_)}}, {}, "a bool tensor");
  refuses({{"w", zeros({2}, complex64)}}, {}, "a complex tensor");
  refuses({{"w", zeros(Shape(9, 1))}}, {}, "a tensor of 9 dimensions, which no GGUF reader takes");
  refuses({}, {{"m", GGUFMetaData{}}}, "an empty metadata value");
  refuses({}, {{"m", zeros({2, 2})}}, "a 2-d metadata array");
  refuses({}, {{"m", zeros({0})}}, "an empty metadata array");
  refuses({}, {{"m", zeros({2}, float16)}}, "a float16 metadata array");
  refuses({}, {{"general.alignment", array(48u)}}, "an alignment that is not a power of two");
}

TEST(IoGguf, ThreadsSaveAndLoadAtOnce) {
  braid_test::Watchdog watchdog;
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string own = test::temp_file("thread" + std::to_string(t) + ".gguf");
      for (int round = 0; round < 5; ++round) {
        array w = full({8, 32}, static_cast<float>(t + round));
        save_gguf(own, {{"w", w}}, {{"round", array(round)}});
        auto [a, m] = load_gguf(own);
        if (test::values(a.at("w")) != test::values(w) ||
            array(std::get<array>(m.at("round"))).item<int>() != round)
          ++failures[t];
      }
      std::remove(own.c_str());
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}
