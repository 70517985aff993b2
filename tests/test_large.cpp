// Arrays of more than 2^31 elements (a few GiB of uint8 and bool): fill, element-wise,
// strided copy and reduction, on every device; and allocations no machine could back.
// The large cases need about 10 GiB; they run in the plain build (the sanitizers multiply
// memory use) and skip where the machine cannot give that much.
#include <gtest/gtest.h>

#include <new>
#include <string>

#include <sys/sysinfo.h>

#include "support.h"

using namespace braid;

namespace {

constexpr int kRows = 3;
constexpr int kCols = 1 << 30;  // kRows * kCols > 2^31

void skip_unless_large_memory_ok() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "memory-heavy: runs in the plain build";
#endif
  struct sysinfo info {};
  if (sysinfo(&info) != 0 || static_cast<double>(info.totalram) * info.mem_unit < 16.0 * (1u << 30)) {
    GTEST_SKIP() << "needs 16 GiB of memory";
  }
}

}  // namespace

TEST(LargeArrays, FillElementwiseAndReductionPastTwoToThe31Elements) {
  skip_unless_large_memory_ok();
  if (IsSkipped()) return;  // GTEST_SKIP in a helper returns from the helper only
  for (Device dev : test::test_devices()) {
    SCOPED_TRACE(test::device_name(dev));
    array a = full({kRows, kCols}, array(7, uint8), dev);
    a.eval();
    EXPECT_EQ(a.size(), size_t{3} << 30);
    EXPECT_EQ(a.nbytes(), size_t{3} << 30);
    // Each row counted separately: every element was written.
    array filled = sum(equal(a, array(7, uint8), dev), 1, false, dev);
    EXPECT_EQ(test::values(filled), std::vector<double>(kRows, kCols));
    array b = add(a, array(7, uint8), dev);
    array doubled = sum(equal(b, array(14, uint8), dev), 1, false, dev);
    EXPECT_EQ(test::values(doubled), std::vector<double>(kRows, kCols));
    array m = max(b, dev);
    EXPECT_EQ(m.item<int>(), 14);
  }
}

TEST(LargeArrays, StridedCopyPastTwoToThe31Elements) {
  skip_unless_large_memory_ok();
  if (IsSkipped()) return;  // GTEST_SKIP in a helper returns from the helper only
  for (Device dev : test::test_devices()) {
    SCOPED_TRACE(test::device_name(dev));
    // Rows of 7, 8 and 9; the transposed copy interleaves them: 7 8 9 7 8 9 ...
    array rows = add(full({kRows, kCols}, array(7, uint8), dev), array({0, 1, 2}, {kRows, 1}, uint8), dev);
    // Not a view of the transposed rows: reshape copies through the strided path.
    array pairs = reshape(transpose(rows, dev), {kCols / 2, 2 * kRows}, dev);
    pairs.eval();
    EXPECT_TRUE(pairs.flags().row_contiguous);
    EXPECT_EQ(pairs.size(), size_t{3} << 30);
    array cols = reshape(pairs, {kCols, kRows}, dev);
    array hits = sum(equal(cols, array({7, 8, 9}, {1, kRows}, uint8), dev), 0, false, dev);
    EXPECT_EQ(test::values(hits), std::vector<double>(kRows, kCols));
  }
}

TEST(LargeArrays, BoolReductionPastTwoToThe31Elements) {
  skip_unless_large_memory_ok();
  if (IsSkipped()) return;  // GTEST_SKIP in a helper returns from the helper only
  for (Device dev : test::test_devices()) {
    SCOPED_TRACE(test::device_name(dev));
    array t = full({kRows, kCols}, array(true), dev);
    EXPECT_EQ(test::values(sum(t, 1, false, dev)), std::vector<double>(kRows, kCols));
    // Over both axes the reduced range itself passes 2^31 elements (the int32 total would
    // not hold their count, so count a sparse pattern instead).
    array sparse = equal(reshape(arange(0, 8, uint8, dev), {1, 8}, dev), full({kRows, kCols / 8, 1}, array(0, uint8), dev), dev);
    EXPECT_EQ(test::values(sum(sparse, std::vector<int>{0, 1, 2}, false, dev)), std::vector<double>{3.0 * kCols / 8});
  }
}

TEST(LargeArrays, AnAllocationNoMachineCouldBackThrowsAndTheRuntimeStaysUsable) {
  for (Device dev : test::test_devices()) {
    SCOPED_TRACE(test::device_name(dev));
    // 2^50 bytes: a petabyte, past any memory plus swap, also where the kernel overcommits.
    array huge = full({1 << 25, 1 << 25}, array(1, uint8), dev);
    try {
      huge.eval();
      FAIL() << "a 2^50-byte array was allocated";
    } catch (const std::bad_alloc& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("Cannot allocate"), std::string::npos) << msg;
      EXPECT_NE(msg.find("1125899906842624"), std::string::npos) << msg;
    }
    array small = add(full({4}, array(1.0f), dev), array(2.0f), dev);
    EXPECT_EQ(test::values(small), std::vector<double>(4, 3.0));
  }
}
