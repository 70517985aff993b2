// .npz archives: braid's own round trip (stored and deflated), archives NumPy wrote, and the
// name and error rules. The malformed-archive corpus is in test_io_fuzz.cpp.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "braid/braid.h"
#include "io_format_support.h"
#include "support.h"

using namespace braid;
using test::values;

namespace {

std::unordered_map<std::string, array> sample_arrays() {
  return {{"ramp", reshape(arange(12.0, float32), {3, 4}) / array(4.0f)},
          {"ints", power(arange(10.0, int64) - array(5, int64), array(3, int64))},
          {"flags", equal(remainder(arange(7.0, int32), array(3)), array(0))},
          {"halves", arange(6.0, float16) - array(2.5f, float16)},
          {"fortran", reshape(arange(6.0, int32), {2, 3})},
          {"empty", zeros({0, 3}, uint8)},
          {"scalar", array(7.25, float64)}};
}

void expect_same(const std::unordered_map<std::string, array>& got, const std::unordered_map<std::string, array>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, a] : want) {
    ASSERT_TRUE(got.count(name)) << name;
    const array& b = got.at(name);
    EXPECT_EQ(b.dtype(), a.dtype()) << name;
    EXPECT_EQ(b.shape(), a.shape()) << name;
    EXPECT_EQ(values(b), values(a)) << name;
  }
}

}  // namespace

TEST(IoNpz, RoundTripsStoredAndDeflated) {
  auto arrays = sample_arrays();
  arrays.insert_or_assign("strided", transpose(reshape(arange(24.0, float32), {2, 3, 4}), {2, 0, 1}));
  for (bool compressed : {false, true}) {
    std::string file = ::testing::TempDir() + (compressed ? "braid_npz_deflated" : "braid_npz_stored");
    savez(file, arrays, compressed);  // ".npz" is appended
    expect_same(load_npz(file + ".npz"), arrays);
    std::remove((file + ".npz").c_str());
  }
  std::string file = ::testing::TempDir() + "braid_npz_named.npz";
  savez_compressed(file, {{"x", arange(3.0, float32)}});
  EXPECT_EQ(load_npz(file).count("x"), 1u);
  std::remove(file.c_str());
}

TEST(IoNpz, DeflatingShrinksRepetitiveData) {
  test::MemoryWriter stored, deflated;
  std::unordered_map<std::string, array> big{{"z", zeros({64, 1024}, float32)}};
  savez(std::shared_ptr<io::Writer>(&stored, [](io::Writer*) {}), big, false);
  savez(std::shared_ptr<io::Writer>(&deflated, [](io::Writer*) {}), big, true);
  EXPECT_GT(stored.bytes.size(), 64u * 1024 * 4);
  EXPECT_LT(deflated.bytes.size(), stored.bytes.size() / 100);
  expect_same(load_npz(std::make_shared<test::MemoryReader>(deflated.bytes)), big);
}

TEST(IoNpz, ReadsWhatNumpyWrote) {
  for (const char* name : {"numpy_savez.npz", "numpy_savez_compressed.npz"}) {
    const std::string file = test::numpy_cases_dir() + "/" + name;
    if (!std::ifstream(file).good()) GTEST_SKIP() << "no NumPy-made archives (" << file << ")";
    SCOPED_TRACE(name);
    expect_same(load_npz(file), sample_arrays());
  }
}

TEST(IoNpz, BadInputNamesTheFunction) {
  EXPECT_THROW(savez(::testing::TempDir() + "braid_npz_bad", {{"", array(1.0f)}}), std::invalid_argument);
  try {
    load_npz(std::make_shared<test::MemoryReader>(std::string("PK\x03\x04 not really a zip")));
    ADD_FAILURE() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[load_npz] ", 0), 0u) << e.what();
  }
}
