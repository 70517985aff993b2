// A small fuzz corpus for the file parsers: valid .npy, safetensors and GGUF files cut at every
// byte of their headers, with random bytes changed (fixed seeds, printed), and with absurd
// sizes, offsets and counts written over their fields. Every load (and the evaluation of what
// it returns) must either succeed or throw a "[load...]" std::runtime_error or
// std::invalid_argument: never crash, read out of bounds (the ASan build checks), allocate
// what a claimed size asks for, or hang.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <regex>
#include <string>
#include <typeinfo>
#include <vector>

#include "io/common.h"
#include "io_format_support.h"
#include "support.h"
#include "watchdog.h"

using namespace braid;
using test::le;

namespace {

enum class Format { npy, safetensors, gguf, npz };

struct Outcome {
  int loaded = 0, rejected = 0;
};

// Loads `bytes` as `format` and evaluates every array; a failure other than a clean load
// error is a test failure naming `what`.
void try_load(Format format, const std::string& bytes, const std::string& what, Outcome& out) {
  try {
    std::vector<array> arrays;
    switch (format) {
      case Format::npy: arrays.push_back(load(std::make_shared<test::MemoryReader>(bytes))); break;
      case Format::safetensors:
        for (auto& [name, a] : load_safetensors(std::make_shared<test::MemoryReader>(bytes)).first)
          arrays.push_back(a);
        break;
      case Format::npz:
        for (auto& [name, a] : load_npz(std::make_shared<test::MemoryReader>(bytes))) arrays.push_back(a);
        break;
      case Format::gguf: {
        test::MemoryReader in(bytes);  // load_gguf's body, without the disk
        auto [loaded, meta] = io_detail::load_gguf(in);
        for (auto& [name, a] : loaded) arrays.push_back(a);
        for (auto& [key, v] : meta) {
          if (auto* a = std::get_if<array>(&v)) arrays.push_back(*a);
        }
        break;
      }
    }
    eval(arrays);
    ++out.loaded;
  } catch (const std::runtime_error& e) {
    ++out.rejected;
    EXPECT_EQ(std::string(e.what()).rfind("[load", 0), 0u) << what << ": " << e.what();
  } catch (const std::invalid_argument& e) {
    ++out.rejected;
    EXPECT_EQ(std::string(e.what()).rfind("[load", 0), 0u) << what << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw " << typeid(e).name() << ": " << e.what();
  }
}

std::string npy_seed() {
  test::MemoryWriter w;
  save(std::shared_ptr<io::Writer>(&w, [](io::Writer*) {}), test::make({1, 2, 3, 4, 5, 6}, {2, 3}, float32));
  return w.bytes;
}

std::string safetensors_seed() {
  test::MemoryWriter w;
  save_safetensors(std::shared_ptr<io::Writer>(&w, [](io::Writer*) {}),
                   {{"a", test::make({1, 2, 3, 4, 5, 6}, {2, 3}, float32)},
                    {"b", test::make({1, 0, 1}, {3}, bool_)},
                    {"c", array(2.5f, bfloat16)},
                    {"d", zeros({0, 2}, int64)}},
                   {{"format", "pt"}});
  return w.bytes;
}

// A .npz archive of two members, stored or deflated.
std::string npz_seed(bool compressed) {
  test::MemoryWriter w;
  savez(std::shared_ptr<io::Writer>(&w, [](io::Writer*) {}),
        {{"a", test::make({1, 2, 3, 4, 5, 6}, {2, 3}, float32)}, {"b", test::make({1, 0, 1}, {3}, bool_)}},
        compressed);
  return w.bytes;
}

// A GGUF file with metadata of each kind and plain and quantized tensors.
std::string gguf_seed() {
  auto str = [](const std::string& s) { return le<uint64_t>(s.size()) + s; };
  std::string kv = str("general.alignment") + le<uint32_t>(4) + le<uint32_t>(32);
  kv += str("name") + le<uint32_t>(8) + str("seed");
  kv += str("tokens") + le<uint32_t>(9) + le<uint32_t>(8) + le<uint64_t>(2) + str("x") + str("yz");
  kv += str("ids") + le<uint32_t>(9) + le<uint32_t>(5) + le<uint64_t>(2) + le<int32_t>(7) + le<int32_t>(8);
  auto info = [&](const std::string& name, std::vector<uint64_t> dims, uint32_t type, uint64_t offset) {
    std::string s = str(name) + le<uint32_t>(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) s += le<uint64_t>(d);
    return s + le<uint32_t>(type) + le<uint64_t>(offset);
  };
  std::string head = "GGUF" + le<uint32_t>(3) + le<uint64_t>(3) + le<uint64_t>(4) + kv +
                     info("f", {3, 2}, 0, 0) + info("q.weight", {32}, 8, 32) + info("h", {4}, 1, 96);
  head.append((32 - head.size() % 32) % 32, '\0');
  std::string data(128, '\0');
  for (int i = 0; i < 6; ++i) std::memcpy(&data[4 * i], le<float>(static_cast<float>(i)).data(), 4);
  std::memcpy(&data[32], le<uint16_t>(0x3800).data(), 2);  // Q8_0 scale 0.5
  for (int i = 0; i < 32; ++i) data[34 + i] = static_cast<char>(i - 16);
  return head + data;
}

// Where the header ends: the cuts are made at every byte up to here (and a few past it).
size_t header_end(Format format, const std::string& bytes) {
  switch (format) {
    case Format::npy:
      return 10 + (static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8));
    case Format::safetensors: {
      uint64_t n = 0;
      std::memcpy(&n, bytes.data(), 8);
      return 8 + n;
    }
    case Format::gguf: return bytes.size() - 128;
    case Format::npz: return bytes.size();  // the directory is at the end: every byte counts
  }
  return bytes.size();
}

void fuzz(Format format, const std::string& seed, const std::string& name) {
  Outcome out;
  try_load(format, seed, name + " seed", out);
  ASSERT_EQ(out.loaded, 1) << "the seed itself must load";

  const size_t end = std::min(seed.size(), header_end(format, seed) + 16);
  for (size_t n = 0; n < end; ++n)
    try_load(format, seed.substr(0, n), name + " cut at " + std::to_string(n), out);

  const unsigned rng_seed = 20240611;
  std::mt19937 rng(rng_seed);
  SCOPED_TRACE("random seed " + std::to_string(rng_seed));
  for (int trial = 0; trial < 1000; ++trial) {
    std::string bytes = seed;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) bytes[rng() % header_end(format, seed)] = static_cast<char>(rng());
    try_load(format, bytes, name + " flip trial " + std::to_string(trial), out);
  }

  // Absurd values over every field: 4- and 8-byte words for the binary formats, numbers in
  // the JSON header.
  if (format == Format::safetensors) {
    const std::string header = seed.substr(8, header_end(format, seed) - 8);
    const std::regex number("[0-9]+");
    for (auto it = std::sregex_iterator(header.begin(), header.end(), number); it != std::sregex_iterator();
         ++it) {
      for (const char* v :
           {"18446744073709551615", "99999999999999999999999", "-1", "1e300", "4294967296", "0", "3"}) {
        std::string h = header.substr(0, it->position()) + v + header.substr(it->position() + it->length());
        try_load(format, le<uint64_t>(h.size()) + h + seed.substr(header_end(format, seed)),
                 name + " number at " + std::to_string(it->position()) + " = " + v, out);
      }
    }
  } else {
    for (size_t pos = 0; pos + 4 <= header_end(format, seed); ++pos) {
      for (uint64_t v : {~uint64_t{0}, uint64_t{0x7fffffff}, uint64_t{1} << 62, uint64_t{0x80000000}}) {
        std::string bytes = seed;
        const size_t width = pos + 8 <= bytes.size() ? 8 : 4;
        std::memcpy(&bytes[pos], &v, width);
        try_load(format, bytes, name + " word at " + std::to_string(pos), out);
      }
    }
  }
  EXPECT_GT(out.rejected, 0);
  std::printf("[fuzz %s] %d loaded, %d rejected\n", name.c_str(), out.loaded, out.rejected);
}

}  // namespace

TEST(IoFuzz, MutatedNpyFilesLoadOrFailCleanly) {
  braid_test::Watchdog watchdog;
  fuzz(Format::npy, npy_seed(), "npy");
}

TEST(IoFuzz, MutatedSafetensorsFilesLoadOrFailCleanly) {
  braid_test::Watchdog watchdog;
  fuzz(Format::safetensors, safetensors_seed(), "safetensors");
}

TEST(IoFuzz, MutatedNpzArchivesLoadOrFailCleanly) {
  braid_test::Watchdog watchdog;
  fuzz(Format::npz, npz_seed(false), "npz stored");
  fuzz(Format::npz, npz_seed(true), "npz deflated");
}

TEST(IoFuzz, MutatedGgufFilesLoadOrFailCleanly) {
  braid_test::Watchdog watchdog;
  fuzz(Format::gguf, gguf_seed(), "gguf");
}
