// Safetensors files: round trips of every dtype and layout on every device, metadata, files
// written byte by byte from the format's description, lazy reads, and malformed headers.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "io_format_support.h"
#include "support.h"
#include "watchdog.h"

using namespace braid;

namespace {

// The 8-byte length, the header text, then the data.
std::string safetensors_bytes(const std::string& header, const std::string& data) {
  return test::le<uint64_t>(header.size()) + header + data;
}

void expect_same(const array& got, const array& want, const std::string& what) {
  EXPECT_EQ(got.dtype(), want.dtype()) << what;
  EXPECT_EQ(got.shape(), want.shape()) << what;
  if (want.dtype() == complex64) {
    EXPECT_EQ(test::complex_values(got), test::complex_values(want)) << what;
  } else {
    EXPECT_EQ(test::values(got), test::values(want)) << what;
  }
}

template <typename F>
void expect_load_error(F&& load, const std::string& what) {
  try {
    load();
    ADD_FAILURE() << "loaded: " << what;
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[load_safetensors]", 0), 0u) << what << ": " << e.what();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[load_safetensors]", 0), 0u) << what << ": " << e.what();
  }
}

}  // namespace

TEST(IoSafetensors, EveryDtypeAndShapeRoundTripsOnEveryDevice) {
  const std::string path = test::temp_file("every.safetensors");
  for (Device d : test::test_devices()) {
    std::unordered_map<std::string, array> arrays;
    for (Dtype dt : test::kEveryDtype) {
      const std::string name = dtype_name(dt);
      arrays.emplace(name + ".matrix",
                     copy(test::make({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4}, dt), d));
      arrays.emplace(name + ".scalar", copy(test::make({1}, {}, dt), d));
      arrays.emplace(name + ".empty", zeros({0, 3}, dt, d));
    }
    save_safetensors(path, arrays, {{"format", "braid"}, {"device", test::device_name(d)}});
    auto [loaded, metadata] = load_safetensors(path, d);
    EXPECT_EQ(metadata, (std::unordered_map<std::string, std::string>{{"format", "braid"},
                                                                      {"device", test::device_name(d)}}));
    ASSERT_EQ(loaded.size(), arrays.size());
    for (const auto& [name, a] : arrays)
      expect_same(loaded.at(name), a, name + " on " + test::device_name(d));
  }
  std::remove(path.c_str());
}

TEST(IoSafetensors, NonContiguousArraysAreWrittenInRowMajorOrder) {
  const std::string path = test::temp_file("layouts.safetensors");
  array base = test::make({1, 2, 3, 4, 5, 6}, {2, 3}, int32);
  std::unordered_map<std::string, array> arrays = {
      {"transposed", transpose(base)},
      {"broadcast", broadcast_to(array(7, int16), {2, 3})},
      {"sliced", slice(arange(20, float32), {1}, {19}, {3})},
      {"lazy", add(base, base)},
  };
  save_safetensors(path, arrays);
  auto loaded = load_safetensors(path).first;
  for (const auto& [name, a] : arrays) expect_same(loaded.at(name), a, name);
  std::remove(path.c_str());
}

TEST(IoSafetensors, SaveAppendsTheExtensionAndWritesTheFormatsHeader) {
  const std::string path = test::temp_file("noext");
  save_safetensors(path, {{"w", array({1.0f, 2.0f})}}, {{"k", "v"}});
  const std::string bytes = test::read_bytes(path + ".safetensors");
  ASSERT_GE(bytes.size(), 8u);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  ASSERT_EQ(bytes.size(), 8 + n + 8);
  EXPECT_EQ(n % 8, 0u);  // the data starts 8-byte aligned
  const std::string header = bytes.substr(8, n);
  EXPECT_NE(header.find(R"("w":{"data_offsets":[0,8],"dtype":"F32","shape":[2]})"), std::string::npos)
      << header;
  EXPECT_NE(header.find(R"("__metadata__":{"k":"v"})"), std::string::npos) << header;
  std::remove((path + ".safetensors").c_str());
}

TEST(IoSafetensors, ReadsAFileWrittenFromTheFormatDescription) {
  const std::string header = R"({"__metadata__":{"format":"pt","note":"hand written"},)"
                             R"("half":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},)"
                             R"("brain":{"dtype":"BF16","shape":[],"data_offsets":[4,6]},)"
                             R"("flags":{"dtype":"BOOL","shape":[3],"data_offsets":[6,9]},)"
                             R"("big":{"dtype":"I64","shape":[1,1],"data_offsets":[9,17]},)"
                             R"("none":{"dtype":"F32","shape":[0,5],"data_offsets":[17,17]},)"
                             R"("fp8":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[17,19]},)"
                             R"("z":{"dtype":"C64","shape":[1],"data_offsets":[19,27]}}   )";
  std::string data = test::le<uint16_t>(0x3C00) + test::le<uint16_t>(0xC000);  // 1, -2
  data += test::le<uint16_t>(0x3FC0);                                          // bfloat16 1.5
  data += std::string("\x01\x00\x07", 3);                                      // a non-0/1 byte is true
  data += test::le<int64_t>(-5000000000LL);
  data += std::string("\x38\xC0", 2);  // e4m3: 1.0 and -2.0
  data += test::le<float>(0.5f) + test::le<float>(-3.0f);
  const std::string path = test::temp_file("hand.safetensors");
  test::write_bytes(path, safetensors_bytes(header, data));
  auto [arrays, metadata] = load_safetensors(path);
  EXPECT_EQ(metadata,
            (std::unordered_map<std::string, std::string>{{"format", "pt"}, {"note", "hand written"}}));
  EXPECT_EQ(test::values(arrays.at("half")), (std::vector<double>{1, -2}));
  EXPECT_EQ(arrays.at("brain").dtype(), bfloat16);
  EXPECT_EQ(arrays.at("brain").item<float>(), 1.5f);
  EXPECT_EQ(test::values(arrays.at("flags")), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(arrays.at("big").shape(), (Shape{1, 1}));
  EXPECT_EQ(arrays.at("big").item<int64_t>(), -5000000000LL);
  EXPECT_EQ(arrays.at("none").shape(), (Shape{0, 5}));
  EXPECT_EQ(arrays.at("fp8").dtype(), bfloat16);
  EXPECT_EQ(test::values(arrays.at("fp8")), (std::vector<double>{1, -2}));
  EXPECT_EQ(test::complex_values(arrays.at("z")), (std::vector<std::complex<float>>{{0.5f, -3.0f}}));
  // MLX writes "__metadata__": null when there is none.
  test::write_bytes(
      path, safetensors_bytes(R"({"__metadata__":null,"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
                              "\x09"));
  auto plain = load_safetensors(path);
  EXPECT_TRUE(plain.second.empty());
  EXPECT_EQ(plain.first.at("x").item<uint8_t>(), 9);
  std::remove(path.c_str());
}

TEST(IoSafetensors, DataIsReadWhenAnArrayIsEvaluated) {
  test::MemoryWriter w;
  save_safetensors(std::shared_ptr<io::Writer>(&w, [](io::Writer*) {}),
                   {{"a", arange(1000, float32)}, {"b", ones({4}, int8)}});
  auto reader = std::make_shared<test::MemoryReader>(w.bytes);
  auto arrays = load_safetensors(reader).first;
  const size_t header_bytes = reader->bytes_read;
  EXPECT_LT(header_bytes, 200u);  // only the header so far
  EXPECT_FALSE(arrays.at("a").is_available());
  EXPECT_EQ(test::values(arrays.at("b")), (std::vector<double>{1, 1, 1, 1}));
  EXPECT_EQ(reader->bytes_read, header_bytes + 4);
  // Through the reader's default positional read.
  EXPECT_EQ(test::values(arrays.at("a")), test::values(arange(1000, float32)));
}

TEST(IoSafetensors, ANameThatIsNotUtf8OrReservedIsRejected) {
  const std::string path = test::temp_file("bad_names.safetensors");
  EXPECT_THROW(save_safetensors(path, {{"__metadata__", array(1.0f)}}), std::invalid_argument);
  EXPECT_THROW(save_safetensors(path, {{std::string("\xff\xfe"), array(1.0f)}}), std::invalid_argument);
  std::remove(path.c_str());
}

TEST(IoSafetensors, MalformedHeadersFailWithLoadSafetensorsErrors) {
  const std::string path = test::temp_file("bad.safetensors");
  const std::string entry = R"("dtype":"F32","shape":[2],"data_offsets":[0,8])";
  const std::vector<std::string> headers = {
      "[1, 2]",                                                              // not an object
      "{\"a\":{" + entry + "}",                                              // unterminated
      R"({"a":{"dtype":"F32","shape":[2]}})",                                // no offsets
      R"({"a":{"dtype":"Q9","shape":[2],"data_offsets":[0,8]}})",            // unknown dtype
      R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})",          // negative dim
      R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})",         // fractional dim
      R"({"a":{"dtype":"F32","shape":[4294967296],"data_offsets":[0,8]}})",  // past int32
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,12]}})",          // size mismatch
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})",           // reversed
      R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",          // past the data
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,18446744073709551615]}})",
      R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})",
      R"({"a":{"dtype":"F32","shape":[65536,65536,65536],"data_offsets":[0,8]}})",
      R"({"__metadata__":{"k":1},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
      R"({"__metadata__":[],"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
      R"({"a":7})",
      std::string(100, '[') + std::string(100, ']'),
  };
  for (const std::string& h : headers) {
    test::write_bytes(path, safetensors_bytes(h, std::string(8, '\0')));
    expect_load_error(
        [&] {
          for (auto& [k, a] : load_safetensors(path).first) a.eval();
        },
        h);
  }
  // Header lengths of zero, larger than the file and larger than the limit.
  for (uint64_t n : {uint64_t{0}, uint64_t{1000}, uint64_t{100000000}, ~uint64_t{0}}) {
    test::write_bytes(path, test::le<uint64_t>(n) + "{}");
    expect_load_error([&] { load_safetensors(path); }, "length " + std::to_string(n));
  }
  test::write_bytes(path, "\x02");
  expect_load_error([&] { load_safetensors(path); }, "a 1-byte file");
  expect_load_error([&] { load_safetensors(test::temp_file("missing.safetensors")); }, "a missing file");
  std::remove(path.c_str());
}

TEST(IoSafetensors, AFileShortenedAfterLoadingFailsWhenEvaluated) {
  const std::string path = test::temp_file("shrunk.safetensors");
  save_safetensors(path, {{"a", arange(64, float32)}});
  auto arrays = load_safetensors(path).first;
  const std::string bytes = test::read_bytes(path);
  test::write_bytes(path, bytes.substr(0, bytes.size() - 4));
  expect_load_error([&] { arrays.at("a").eval(); }, "a shortened file");
  std::remove(path.c_str());
}

TEST(IoSafetensors, ThreadsSaveAndLoadAtOnce) {
  braid_test::Watchdog watchdog;
  constexpr int kThreads = 4;
  const std::string shared = test::temp_file("shared.safetensors");
  std::unordered_map<std::string, array> parts;
  for (int i = 0; i < 8; ++i)
    parts.emplace("p" + std::to_string(i), arange(i * 100.0, i * 100.0 + 257, 1.0, int32));
  save_safetensors(shared, parts);
  auto loaded = load_safetensors(shared).first;  // evaluated below by every thread at once
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string own = test::temp_file("thread" + std::to_string(t) + ".safetensors");
      for (int round = 0; round < 5; ++round) {
        array mine = full({16, 3}, static_cast<float>(t * 10 + round));
        save_safetensors(own, {{"m", mine}}, {{"thread", std::to_string(t)}});
        auto [a, m] = load_safetensors(own);
        if (test::values(a.at("m")) != test::values(mine) || m.at("thread") != std::to_string(t))
          ++failures[t];
      }
      for (int i = 0; i < 8; ++i) {
        const array& a = loaded.at("p" + std::to_string((i + t) % 8));
        if (test::values(a) != test::values(parts.at("p" + std::to_string((i + t) % 8)))) ++failures[t];
      }
      std::remove(own.c_str());
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
  std::remove(shared.c_str());
}
