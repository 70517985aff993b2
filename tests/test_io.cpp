// .npy files: round trips for every dtype and layout, files NumPy writes (C and Fortran
// order, both byte orders), and malformed or truncated files that must fail cleanly.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <unistd.h>
#include <string>

#include "support.h"

using namespace braid;

namespace {

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/braid_io_" + std::to_string(::getpid()) + "_" + name;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A hand-written .npy file (version 1.0) with the given dict and payload.
std::string npy_bytes(const std::string& dict, const std::string& payload) {
  std::string d = dict;
  size_t total = 10 + d.size() + 1;
  d.append((total + 63) / 64 * 64 - total, ' ');
  d += '\n';
  std::string h = "\x93NUMPY";
  h += '\x01';
  h += '\0';
  h += static_cast<char>(d.size() & 0xff);
  h += static_cast<char>(d.size() >> 8);
  return h + d + payload;
}

}  // namespace

TEST(IoNpy, EveryDtypeRoundTripsExactly) {
  for (Dtype dt : test::kEveryDtype) {
    array a = test::make({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4}, dt);
    const std::string path = temp_path("every.npy");
    save(path, a);
    array b = load(path);
    EXPECT_EQ(b.dtype(), dt);
    EXPECT_EQ(b.shape(), a.shape());
    EXPECT_EQ(test::values(b), test::values(a)) << dt;
    std::remove(path.c_str());
  }
}

TEST(IoNpy, SaveAppendsTheExtensionAndWritesNumPysHeader) {
  const std::string path = temp_path("noext");
  save(path, array({1.0f, 2.0f}));
  const std::string bytes = read_file(path + ".npy");
  ASSERT_GE(bytes.size(), 64u + 8u);
  EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
  const size_t header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_NE(bytes.find("'descr': '<f4'"), std::string::npos);
  EXPECT_NE(bytes.find("'shape': (2,)"), std::string::npos);
  std::remove((path + ".npy").c_str());
}

TEST(IoNpy, NonContiguousScalarAndEmptyArrays) {
  const std::string path = temp_path("layouts.npy");
  array base = test::make({1, 2, 3, 4, 5, 6}, {2, 3}, int32);
  for (array a : {transpose(base), broadcast_to(array(7, int16), {2, 3}), array(3.5, float64),
                  zeros({0, 4}, float32), reshape(transpose(base), {3, 2})}) {
    save(path, a);
    array b = load(path);
    EXPECT_EQ(b.shape(), a.shape());
    EXPECT_EQ(b.dtype(), a.dtype());
    EXPECT_EQ(test::values(b), test::values(a));
  }
  std::remove(path.c_str());
}

TEST(IoNpy, FortranOrderAndBigEndianFilesAsNumPyWritesThem) {
  const std::string path = temp_path("fortran.npy");
  // Column-major 2x3 int16 [[1, 2, 3], [4, 5, 6]]: memory holds 1 4 2 5 3 6.
  std::string payload;
  for (int16_t v : {1, 4, 2, 5, 3, 6}) payload.append(reinterpret_cast<const char*>(&v), 2);
  write_file(path, npy_bytes("{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }", payload));
  EXPECT_EQ(test::values(load(path)), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  // Big-endian float32 1.5 and -2.
  std::string be = {'\x3f', '\xc0', '\0', '\0', '\xc0', '\0', '\0', '\0'};
  write_file(path, npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", be));
  EXPECT_EQ(test::values(load(path)), (std::vector<double>{1.5, -2}));
  std::remove(path.c_str());
}

TEST(IoNpy, EveryTruncationOfAFileFailsCleanly) {
  const std::string path = temp_path("trunc.npy");
  save(path, test::make({1, 2, 3, 4, 5, 6}, {2, 3}, float32));
  const std::string full = read_file(path);
  for (size_t n = 0; n < full.size(); ++n) {
    write_file(path, full.substr(0, n));
    try {
      load(path).eval();
      ADD_FAILURE() << "a file cut at " << n << " bytes loaded";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("[load]", 0), 0u) << e.what();
    }
  }
  std::remove(path.c_str());
}

TEST(IoNpy, CorruptedHeadersFailWithLoadErrors) {
  const std::string path = temp_path("bad.npy");
  const std::vector<std::string> dicts = {
      "{'descr': '<f4', 'fortran_order': False, }",                          // no shape
      "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }",           // bad bool
      "{'descr': '<x4', 'fortran_order': False, 'shape': (1,), }",           // unknown type
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",          // negative dim
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296,), }",  // past int32
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483647, 2147483647), }",  // no data
      "{'descr': 'O', 'fortran_order': False, 'shape': (1,), }",             // objects
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",     // unknown key
      "['descr', '<f4']",                                                    // not a dict
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,",               // unterminated
  };
  for (const std::string& d : dicts) {
    write_file(path, npy_bytes(d, std::string(16, '\0')));
    try {
      load(path).eval();
      ADD_FAILURE() << "loaded: " << d;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("[load]", 0), 0u) << e.what();
    }
  }
  // Random bytes after a valid magic string never crash.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::string bytes = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0'));
    for (int k = 0; k < 4; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    write_file(path, bytes);
    try {
      load(path).eval();
    } catch (const std::invalid_argument&) {
    }
  }
  EXPECT_THROW(load(temp_path("does-not-exist.npy")), std::invalid_argument);
  std::remove(path.c_str());
}
