// Invalid arguments: every op throws std::invalid_argument (std::out_of_range for an axis out
// of range where MLX's does) whose message starts with "[op_name]", while the graph is built. The inputs are
// lazy and stay unevaluated, which shows that nothing ran before the throw.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "braid/braid.h"
#include "support.h"

using namespace braid;

namespace {

// Lazy inputs: if an op evaluated anything before throwing, these would become available.
struct LazyInputs {
  array m23 = zeros({2, 3});         // float32 [2, 3]
  array m34 = ones({3, 4});          // float32 [3, 4]
  array v4 = zeros({4});             // float32 [4]
  array i23 = zeros({2, 3}, int32);  // int32 [2, 3]
  array b23 = zeros({2, 3}, bool_);  // bool [2, 3]
  array empty = zeros({0, 3});       // float32 [0, 3]
  array s = zeros({});               // 0-d

  void expect_unevaluated() const {
    for (const array* a : {&m23, &m34, &v4, &i23, &b23, &empty, &s}) EXPECT_FALSE(a->is_available());
  }
};

#define EXPECT_BUILD_THROWS(prefix, ...) \
  EXPECT_TRUE(test::throws_bad_input([&] { (void)(__VA_ARGS__); }, prefix))

}  // namespace

TEST(BadInput, CreationRejectsNegativeAndOverflowingShapes) {
  EXPECT_BUILD_THROWS("[full]", zeros({-1}));
  EXPECT_BUILD_THROWS("[full]", zeros({2, -3}, int32));
  EXPECT_BUILD_THROWS("[full]", ones({-2}));
  EXPECT_BUILD_THROWS("[full]", full({3, -1}, 1.0f));
  EXPECT_BUILD_THROWS("[full]", full({-1}, array({1.0f})));
  EXPECT_BUILD_THROWS("[full]", zeros({1 << 30, 1 << 30, 1 << 30}));
  EXPECT_BUILD_THROWS("[full]", ones({1 << 30, 1 << 30, 4}, int64));  // 2^62 elements of 8 bytes
  EXPECT_BUILD_THROWS("[full]", full({1 << 30, 1 << 30, 1 << 30}, 1.0f));
}

TEST(BadInput, FullRejectsValuesThatDoNotBroadcast) {
  LazyInputs in;
  EXPECT_BUILD_THROWS("[full]", full({2, 3}, in.v4));
  EXPECT_BUILD_THROWS("[full]", full({3}, in.m23));
  in.expect_unevaluated();
}

TEST(BadInput, ArangeRejectsZeroStepNonFiniteBoolAndHugeLengths) {
  EXPECT_BUILD_THROWS("[arange]", arange(0, 10, 0));
  EXPECT_BUILD_THROWS("[arange]", arange(0.0, 1.0, 0.0));
  EXPECT_BUILD_THROWS("[arange]", arange(0.0, 1.0, 0.0, int32));
  EXPECT_BUILD_THROWS("[arange]", arange(0.0, std::numeric_limits<double>::infinity(), 1.0));
  EXPECT_BUILD_THROWS("[arange]", arange(std::numeric_limits<double>::quiet_NaN(), 1.0));
  EXPECT_BUILD_THROWS("[arange]", arange(0.0, 4.0, bool_));
  EXPECT_BUILD_THROWS("[arange]", arange(0.0, 1e12, 1.0));
}

TEST(BadInput, ReshapeRejectsWrongSizesAndDimensions) {
  LazyInputs in;
  EXPECT_BUILD_THROWS("[reshape]", reshape(in.m23, {4}));
  EXPECT_BUILD_THROWS("[reshape]", reshape(in.m23, {-1, -1}));
  EXPECT_BUILD_THROWS("[reshape]", reshape(in.m23, {-2, -3}));
  EXPECT_BUILD_THROWS("[reshape]", reshape(in.m23, {-1, 4}));
  EXPECT_BUILD_THROWS("[reshape]", reshape(in.m23, {-1, 0}));
  EXPECT_BUILD_THROWS("[reshape]", reshape(in.empty, {-1, 0}));
  EXPECT_BUILD_THROWS("[reshape]", reshape(in.s, {2}));
  in.expect_unevaluated();
}

TEST(BadInput, TransposeRejectsBadPermutations) {
  LazyInputs in;
  EXPECT_BUILD_THROWS("[transpose]", transpose(in.m23, {0}));
  EXPECT_BUILD_THROWS("[transpose]", transpose(in.m23, {0, 1, 2}));
  EXPECT_BUILD_THROWS("[transpose]", transpose(in.m23, {0, 2}));
  EXPECT_BUILD_THROWS("[transpose]", transpose(in.m23, {0, -3}));
  EXPECT_BUILD_THROWS("[transpose]", transpose(in.m23, {1, 1}));
  EXPECT_BUILD_THROWS("[transpose]", transpose(in.m23, {-1, 1}));
  EXPECT_BUILD_THROWS("[transpose]", transpose(in.s, {0}));
  in.expect_unevaluated();
}

TEST(BadInput, BroadcastToRejectsIncompatibleShapes) {
  LazyInputs in;
  EXPECT_BUILD_THROWS("[broadcast_to]", broadcast_to(in.m23, {2, 4}));
  EXPECT_BUILD_THROWS("[broadcast_to]", broadcast_to(in.m23, {3}));
  EXPECT_BUILD_THROWS("[broadcast_to]", broadcast_to(in.m23, {3, 2}));
  EXPECT_BUILD_THROWS("[broadcast_to]", broadcast_to(in.m23, {-2, 3}));
  EXPECT_BUILD_THROWS("[broadcast_to]", broadcast_to(in.v4, {0, 3}));
  EXPECT_BUILD_THROWS("[broadcast_to]", broadcast_to(in.v4, {1 << 30, 1 << 30, 1 << 30, 4}));
  in.expect_unevaluated();
}

TEST(BadInput, BinaryOpsRejectShapesThatDoNotBroadcast) {
  LazyInputs in;
  EXPECT_BUILD_THROWS("[add]", add(in.m23, in.m34));
  EXPECT_BUILD_THROWS("[subtract]", subtract(in.m23, in.v4));
  EXPECT_BUILD_THROWS("[multiply]", multiply(in.v4, in.i23));
  EXPECT_BUILD_THROWS("[divide]", divide(in.m34, in.m23));
  EXPECT_BUILD_THROWS("[maximum]", maximum(in.m23, in.v4));
  EXPECT_BUILD_THROWS("[minimum]", minimum(in.m23, in.v4));
  EXPECT_BUILD_THROWS("[equal]", equal(in.b23, in.v4));
  EXPECT_BUILD_THROWS("[less]", less(in.m23, in.v4));
  EXPECT_BUILD_THROWS("[greater]", greater(in.m23, in.empty));
  // The operators report the op they call.
  EXPECT_BUILD_THROWS("[add]", in.m23 + in.v4);
  EXPECT_BUILD_THROWS("[subtract]", in.m23 - in.v4);
  EXPECT_BUILD_THROWS("[multiply]", in.m23 * in.v4);
  EXPECT_BUILD_THROWS("[divide]", in.m23 / in.v4);
  in.expect_unevaluated();
}

TEST(BadInput, NegativeRejectsBool) {
  LazyInputs in;
  EXPECT_BUILD_THROWS("[negative]", negative(in.b23));
  EXPECT_BUILD_THROWS("[negative]", -in.b23);
  in.expect_unevaluated();
}

TEST(BadInput, WhereRejectsShapesThatDoNotBroadcast) {
  LazyInputs in;
  EXPECT_BUILD_THROWS("[where]", where(in.b23, in.m23, in.v4));
  EXPECT_BUILD_THROWS("[where]", where(in.v4, in.m23, in.m23));
  EXPECT_BUILD_THROWS("[where]", where(in.b23, in.m34, in.s));
  in.expect_unevaluated();
}

TEST(BadInput, ReductionsRejectBadAxes) {
  LazyInputs in;
  EXPECT_BUILD_THROWS("[sum]", sum(in.m23, 2));
  EXPECT_BUILD_THROWS("[sum]", sum(in.m23, -3));
  EXPECT_BUILD_THROWS("[sum]", sum(in.m23, std::vector<int>{0, 0}));
  EXPECT_BUILD_THROWS("[sum]", sum(in.m23, std::vector<int>{1, -1}));
  EXPECT_BUILD_THROWS("[sum]", sum(in.s, 0));
  EXPECT_BUILD_THROWS("[max]", braid::max(in.m23, 2, true));
  EXPECT_BUILD_THROWS("[max]", braid::max(in.m23, std::vector<int>{0, -2}));
  EXPECT_BUILD_THROWS("[max]", braid::max(in.s, -1));
  EXPECT_BUILD_THROWS("[mean]", mean(in.i23, 5));
  EXPECT_BUILD_THROWS("[mean]", mean(in.m23, std::vector<int>{-1, 1}, true));
  EXPECT_BUILD_THROWS("[mean]", mean(in.s, 0));
  in.expect_unevaluated();
}

TEST(BadInput, MaxRejectsAnEmptyReduction) {
  LazyInputs in;
  EXPECT_BUILD_THROWS("[max] Cannot max reduce zero size array.", braid::max(in.empty));
  EXPECT_BUILD_THROWS("[max] Cannot max reduce zero size array.", braid::max(in.empty, 0));
  EXPECT_BUILD_THROWS("[max]", braid::max(zeros({3, 0}), std::vector<int>{1}, true));
  in.expect_unevaluated();
}

TEST(BadInput, EveryReductionAndScanRejectsBadAxesAndEmptyInputs) {
  LazyInputs in;
  EXPECT_BUILD_THROWS("[prod]", prod(in.m23, 2));
  EXPECT_BUILD_THROWS("[min]", braid::min(in.m23, std::vector<int>{0, 0}));
  EXPECT_BUILD_THROWS("[min] Cannot min reduce zero size array.", braid::min(in.empty));
  EXPECT_BUILD_THROWS("[all]", all(in.b23, -3));
  EXPECT_BUILD_THROWS("[any]", any(in.s, 0));
  EXPECT_BUILD_THROWS("[var]", var(in.i23, 2));
  EXPECT_BUILD_THROWS("[std]", braid::std(in.m23, std::vector<int>{1, 1}));
  EXPECT_BUILD_THROWS("[argmax]", argmax(in.m23, 2));
  EXPECT_BUILD_THROWS("[argmin] Cannot argmin reduce zero size array.", argmin(in.empty));
  EXPECT_BUILD_THROWS("[argmax]", argmax(in.s, 0));
  EXPECT_BUILD_THROWS("[logsumexp] Received empty array.", logsumexp(in.empty, 1));
  EXPECT_BUILD_THROWS("[cumsum]", cumsum(in.m23, 2));
  EXPECT_BUILD_THROWS("[cumprod]", cumprod(in.s, 0));
  EXPECT_BUILD_THROWS("[cummax]", cummax(in.v4, -2));
  EXPECT_BUILD_THROWS("[cummin]", cummin(in.i23, 5, true));
  EXPECT_BUILD_THROWS("[logcumsumexp]", logcumsumexp(in.m23, -3));
  in.expect_unevaluated();
}

TEST(BadInput, MatmulRejectsScalarsMismatchesAndNonFloatTypes) {
  LazyInputs in;
  EXPECT_BUILD_THROWS("[matmul]", matmul(in.s, in.m34));
  EXPECT_BUILD_THROWS("[matmul]", matmul(in.m23, in.s));
  EXPECT_BUILD_THROWS(
      "[matmul] Last dimension of first input with shape (2, 3) must match second to last dimension of "
      "second input with shape (2, 3).",
      matmul(in.m23, in.m23));
  EXPECT_BUILD_THROWS("[matmul] Last dimension", matmul(in.v4, in.m34));
  EXPECT_BUILD_THROWS("[matmul] Last dimension", matmul(in.m34, in.m34));
  EXPECT_BUILD_THROWS("[matmul] Last dimension", matmul(in.v4, zeros({3})));
  EXPECT_BUILD_THROWS("[matmul]", matmul(zeros({2, 2, 3}), zeros({3, 3, 4})));  // batch mismatch
  EXPECT_BUILD_THROWS("[matmul] Only inexact types are supported", matmul(in.i23, zeros({3, 2}, int32)));
  EXPECT_BUILD_THROWS("[matmul] Only inexact types", matmul(in.b23, zeros({3, 2}, bool_)));
  EXPECT_BUILD_THROWS("[matmul] Only inexact types", matmul(zeros({2, 3}, uint8), zeros({3}, int64)));
  EXPECT_BUILD_THROWS("[matmul] Only inexact types", matmul(in.i23, zeros({3, 2}, bool_)));
  in.expect_unevaluated();
}

TEST(BadInput, MatrixProductFamilyRejectsBadShapesDtypesAndParameters) {
  LazyInputs in;
  const array idx = zeros({2}, uint32);
  // addmm: as matmul, and c must broadcast to the result.
  EXPECT_BUILD_THROWS("[addmm] Got 0 dimension input", addmm(in.m23, in.s, in.m34));
  EXPECT_BUILD_THROWS("[addmm] Last dimension of first input with shape (2, 3)",
                      addmm(in.m23, in.m23, in.m23));
  EXPECT_BUILD_THROWS("[addmm] Only real floating point types", addmm(in.i23, in.i23, zeros({3, 3}, int32)));
  EXPECT_BUILD_THROWS("[addmm] input c must broadcast", addmm(zeros({3, 2, 4}), in.m23, in.m34));
  EXPECT_BUILD_THROWS("[addmm]", addmm(zeros({3, 4}), in.m23, in.m34));
  EXPECT_BUILD_THROWS("[addmm]", addmm(in.m23, zeros({2, 2, 3}), zeros({3, 3, 4})));
  // tensordot, inner, kron.
  EXPECT_BUILD_THROWS("[tensordot] axis must be greater", tensordot(in.m23, in.m34, -1));
  EXPECT_BUILD_THROWS("[tensordot] axis must be less", tensordot(in.m23, in.m34, 3));
  EXPECT_BUILD_THROWS("[tensordot] axes must have the same size", tensordot(in.m23, in.m34, {1}, {0, 1}));
  EXPECT_BUILD_THROWS("[tensordot] a and b must have the same shape", tensordot(in.m23, in.m34, {0}, {0}));
  EXPECT_BUILD_THROWS("[tensordot]", tensordot(in.m23, in.m34, {2}, {0}));
  EXPECT_BUILD_THROWS("[tensordot]", tensordot(in.m23, zeros({3, 3}), {1, 1}, {0, 1}));
  EXPECT_BUILD_THROWS("[matmul] Only inexact types", tensordot(in.i23, zeros({3, 2}, int32), 1));
  EXPECT_BUILD_THROWS("[inner] a and b must have the same last dimension", inner(in.m23, in.m34));
  EXPECT_BUILD_THROWS("[kron] Input arrays cannot be empty", kron(in.empty, in.m23));
  // block_masked_mm.
  EXPECT_BUILD_THROWS("[block_masked_mm] Only block_sizes 32, 64",
                      block_masked_mm(in.m23, in.m34, 16, in.b23));
  EXPECT_BUILD_THROWS("[block_masked_mm] Got 0 dimension input", block_masked_mm(in.s, in.m34, 32, in.b23));
  EXPECT_BUILD_THROWS("[block_masked_mm] Last dimension", block_masked_mm(in.m23, in.m23, 32, in.b23));
  EXPECT_BUILD_THROWS("[block_masked_mm] Only real floating point types",
                      block_masked_mm(in.i23, zeros({3, 4}, int32), 32, std::nullopt, in.b23));
  EXPECT_BUILD_THROWS("[broadcast_to]", block_masked_mm(in.m23, in.m34, 32, zeros({2, 2}, bool_)));
  // gather_mm.
  EXPECT_BUILD_THROWS("[gather_mm] Got 0 dimension input", gather_mm(in.s, in.m34, idx));
  EXPECT_BUILD_THROWS("[gather_mm] Last dimension", gather_mm(in.m23, in.m23, idx));
  EXPECT_BUILD_THROWS("[gather_mm] Only real floating point types",
                      gather_mm(in.i23, zeros({3, 4}, int32), idx));
  EXPECT_BUILD_THROWS("[gather_mm] Got indices with invalid dtype", gather_mm(in.m23, in.m34, in.m23));
  EXPECT_BUILD_THROWS("[gather_mm] Got indices with invalid dtype", gather_mm(in.m23, in.m34, idx, in.b23));
  EXPECT_BUILD_THROWS("[gather_mm]", gather_mm(in.m23, in.m34, zeros({3}, uint32), idx));
  // segmented_mm.
  EXPECT_BUILD_THROWS("[segmented_mm] Batched matmul not supported",
                      segmented_mm(zeros({2, 2, 3}), in.m34, zeros({1, 2}, int32)));
  EXPECT_BUILD_THROWS("[segmented_mm] The segments should have shape (..., 2)",
                      segmented_mm(in.m23, in.m34, zeros({3}, uint32)));
  EXPECT_BUILD_THROWS("[segmented_mm] The segments should have shape", segmented_mm(in.m23, in.m34, in.s));
  EXPECT_BUILD_THROWS("[segmented_mm] Only real floating point types",
                      segmented_mm(in.i23, zeros({3, 4}, int32), zeros({1, 2}, int32)));
  EXPECT_BUILD_THROWS("[segmented_mm] Got segments with invalid dtype",
                      segmented_mm(in.m23, in.m34, zeros({1, 2})));
  EXPECT_BUILD_THROWS("[segmented_mm] Last dimension", segmented_mm(in.m23, in.m23, zeros({1, 2}, int32)));
  in.expect_unevaluated();
}

TEST(BadInput, SoftmaxRejectsBadAxes) {
  LazyInputs in;
  EXPECT_BUILD_THROWS("[softmax]", softmax(in.m23, 2));
  EXPECT_BUILD_THROWS("[softmax]", softmax(in.m23, -3, true));
  EXPECT_BUILD_THROWS("[softmax]", softmax(in.m23, std::vector<int>{0, 0}));
  EXPECT_BUILD_THROWS("[softmax]", softmax(in.m23, std::vector<int>{1, -1}));
  EXPECT_BUILD_THROWS("[softmax]", softmax(in.s, 0));
  in.expect_unevaluated();
}

TEST(BadInput, ConvolutionsRejectBadShapesTypesAndParameters) {
  LazyInputs in;
  const array x1 = zeros({2, 8, 4}), w1 = ones({6, 3, 4}), x2 = zeros({1, 6, 6, 4}), w2 = ones({6, 3, 3, 4});
  const array x3 = zeros({1, 4, 4, 4, 2}), w3 = ones({2, 2, 2, 2, 2});
  EXPECT_BUILD_THROWS("[conv] Invalid input array with type int32", conv1d(astype(x1, int32), w1));
  EXPECT_BUILD_THROWS("[conv] Invalid input array with type bool", conv1d(astype(x1, bool_), w1));
  EXPECT_BUILD_THROWS("[conv] Invalid input array with type complex64", conv1d(astype(x1, complex64), w1));
  EXPECT_BUILD_THROWS("[conv] The input and weight types", conv1d(x1, astype(w1, complex64)));
  EXPECT_BUILD_THROWS("[conv] float64 is not supported", conv1d(astype(x1, float64), w1));
  EXPECT_BUILD_THROWS("[conv] float64 is not supported", conv2d(x2, astype(w2, float64)));
  EXPECT_BUILD_THROWS("[conv] Only inputs with 1 to 3 spatial dimensions", conv1d(in.m23, in.m23));
  EXPECT_BUILD_THROWS("[conv] Only inputs with 1 to 3 spatial dimensions", conv1d(zeros({1, 2, 2, 2, 2, 2}), w1));
  EXPECT_BUILD_THROWS("[conv] Invalid weight array", conv1d(x1, w2));
  EXPECT_BUILD_THROWS("[conv] Invalid weight array", conv_transpose1d(x1, ones({6, 4})));
  EXPECT_BUILD_THROWS("[conv] The input channels of the input and the weight must match", conv1d(x1, ones({6, 3, 3})));
  EXPECT_BUILD_THROWS("[conv] The input channels must be divisible", conv1d(x1, ones({6, 3, 1}), 1, 0, 1, 3));
  EXPECT_BUILD_THROWS("[conv] With groups > 1 the output channels", conv1d(x1, ones({5, 3, 2}), 1, 0, 1, 2));
  EXPECT_BUILD_THROWS("[conv] With groups=2", conv2d(x2, ones({6, 3, 3, 4}), {1, 1}, {0, 0}, {1, 1}, 2));
  EXPECT_BUILD_THROWS("[conv] The number of groups must be positive", conv1d(x1, w1, 1, 0, 1, 0));
  EXPECT_BUILD_THROWS("[conv] Groups other than 1", conv3d(x3, ones({2, 2, 2, 2, 1}), {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, 2));
  EXPECT_BUILD_THROWS("[conv] Stride sizes must be positive", conv1d(x1, w1, 0));
  EXPECT_BUILD_THROWS("[conv] Stride sizes must be positive", conv2d(x2, w2, {1, -1}));
  EXPECT_BUILD_THROWS("[conv] Kernel dilation sizes must be positive", conv1d(x1, w1, 1, 0, 0));
  EXPECT_BUILD_THROWS("[conv] Input dilation sizes must be positive", conv_transpose1d(x1, w1, 0));
  EXPECT_BUILD_THROWS("[conv] Invalid strides", conv2d(x1, w1));  // two strides for one spatial axis
  using V = std::vector<int>;  // typed lists pick the overload with padding_lo and padding_hi
  EXPECT_BUILD_THROWS("[conv] Invalid padding", conv_general(x1, w1, V{1}, V{0, 0}, V{0}, V{1}, V{1}));
  EXPECT_BUILD_THROWS("[conv] Invalid kernel dilation", conv_general(x2, w2, V{1}, V{0}, V{0}, V{1, 1, 1}, V{1}));
  EXPECT_BUILD_THROWS("[conv] Invalid input dilation", conv_general(x2, w2, V{1}, V{0}, V{0}, V{1}, V{1, 2, 3}));
  EXPECT_BUILD_THROWS("[conv] The spatial dimensions of the input", conv1d(zeros({1, 2, 4}), w1));
  EXPECT_BUILD_THROWS("[conv] The spatial dimensions of the input", conv1d(x1, w1, 1, 0, 5));
  EXPECT_BUILD_THROWS("[conv] The spatial dimensions of the input", conv_general(x1, w1, V{1}, V{-3}, V{-3}, V{1}, V{1}));
  EXPECT_BUILD_THROWS("[conv] The spatial dimensions of the input", conv_transpose1d(x1, w1, 1, 6));
  EXPECT_BUILD_THROWS("[conv] The spatial dimensions of the input", conv3d(x3, ones({2, 5, 1, 1, 2})));
  in.expect_unevaluated();
}

TEST(BadInput, EveryOpNamesItselfWhenTheDeviceIsUnavailable) {
  if (is_available(Device::gpu)) GTEST_SKIP() << "a GPU is available";
  LazyInputs in;
  const Device gpu = Device::gpu;
  EXPECT_BUILD_THROWS("[full]", zeros({2}, float32, gpu));
  EXPECT_BUILD_THROWS("[full]", ones({2}, gpu));
  EXPECT_BUILD_THROWS("[full]", full({2}, 1.0f, gpu));
  EXPECT_BUILD_THROWS("[arange]", arange(3, gpu));
  EXPECT_BUILD_THROWS("[astype]", astype(in.m23, int32, gpu));
  EXPECT_BUILD_THROWS("[reshape]", reshape(in.m23, {6}, gpu));
  EXPECT_BUILD_THROWS("[transpose]", transpose(in.m23, gpu));
  EXPECT_BUILD_THROWS("[broadcast_to]", broadcast_to(in.v4, {2, 4}, gpu));
  EXPECT_BUILD_THROWS("[add]", add(in.m23, in.m23, gpu));
  EXPECT_BUILD_THROWS("[subtract]", subtract(in.m23, in.m23, gpu));
  EXPECT_BUILD_THROWS("[multiply]", multiply(in.m23, in.m23, gpu));
  EXPECT_BUILD_THROWS("[divide]", divide(in.m23, in.m23, gpu));
  EXPECT_BUILD_THROWS("[maximum]", maximum(in.m23, in.m23, gpu));
  EXPECT_BUILD_THROWS("[minimum]", minimum(in.m23, in.m23, gpu));
  EXPECT_BUILD_THROWS("[equal]", equal(in.m23, in.m23, gpu));
  EXPECT_BUILD_THROWS("[less]", less(in.m23, in.m23, gpu));
  EXPECT_BUILD_THROWS("[greater]", greater(in.m23, in.m23, gpu));
  EXPECT_BUILD_THROWS("[negative]", negative(in.m23, gpu));
  EXPECT_BUILD_THROWS("[exp]", exp(in.m23, gpu));
  EXPECT_BUILD_THROWS("[log]", log(in.m23, gpu));
  EXPECT_BUILD_THROWS("[sqrt]", sqrt(in.m23, gpu));
  EXPECT_BUILD_THROWS("[tanh]", tanh(in.m23, gpu));
  EXPECT_BUILD_THROWS("[where]", where(in.b23, in.m23, in.m23, gpu));
  EXPECT_BUILD_THROWS("[sum]", sum(in.m23, false, gpu));
  EXPECT_BUILD_THROWS("[max]", braid::max(in.m23, 0, false, gpu));
  EXPECT_BUILD_THROWS("[mean]", mean(in.m23, gpu));
  EXPECT_BUILD_THROWS("[matmul]", matmul(in.m23, in.m34, gpu));
  EXPECT_BUILD_THROWS("[addmm]", addmm(in.m23, in.m23, zeros({3, 3}), 1.f, 1.f, gpu));
  EXPECT_BUILD_THROWS("[tensordot]", tensordot(in.m23, in.m34, 1, gpu));
  EXPECT_BUILD_THROWS("[inner]", inner(in.m23, in.m23, gpu));
  EXPECT_BUILD_THROWS("[outer]", outer(in.v4, in.v4, gpu));
  EXPECT_BUILD_THROWS("[kron]", kron(in.m23, in.m23, gpu));
  EXPECT_BUILD_THROWS("[block_masked_mm]",
                      block_masked_mm(in.m23, in.m34, 32, in.b23, std::nullopt, std::nullopt, gpu));
  EXPECT_BUILD_THROWS("[gather_mm]", gather_mm(in.m23, in.m34, zeros({1}, uint32), std::nullopt, false, gpu));
  EXPECT_BUILD_THROWS("[segmented_mm]", segmented_mm(in.m23, in.m34, zeros({1, 2}, uint32), gpu));
  EXPECT_BUILD_THROWS("[softmax]", softmax(in.m23, -1, false, gpu));
  EXPECT_BUILD_THROWS("[conv]", conv1d(zeros({1, 4, 2}), ones({2, 3, 2}), 1, 0, 1, 1, gpu));
  EXPECT_BUILD_THROWS("[conv]", conv_transpose2d(zeros({1, 4, 4, 2}), ones({2, 3, 3, 2}), {1, 1}, {0, 0}, {1, 1},
                                                 {0, 0}, 1, gpu));
  in.expect_unevaluated();
}

TEST(BadInput, IndexingOpsRejectBadIndicesAxesAndShapes) {
  LazyInputs in;
  const array fidx = zeros({2}, float32);
  const array bidx = zeros({2}, bool_);
  const array idx = zeros({2}, int32);
  EXPECT_BUILD_THROWS("[take]", take(in.m23, fidx, 0));
  EXPECT_BUILD_THROWS("[take]", take(in.m23, bidx, 0));
  EXPECT_BUILD_THROWS("[take]", take(in.m23, fidx));
  EXPECT_BUILD_THROWS("[take]", take(in.m23, idx, 2));
  EXPECT_BUILD_THROWS("[take]", take(in.m23, idx, -3));
  EXPECT_BUILD_THROWS("[take]", take(in.s, idx, 0));
  EXPECT_BUILD_THROWS("[take]", take(in.empty, idx, 1));
  EXPECT_BUILD_THROWS("[take]", take(in.m23, -1, 0));
  EXPECT_BUILD_THROWS("[take]", take(in.m23, 2, 0));
  EXPECT_BUILD_THROWS("[take]", take(in.m23, 6));
  EXPECT_BUILD_THROWS("[take]", take(in.empty, 0, 0));
  EXPECT_BUILD_THROWS("[take_along_axis]", take_along_axis(in.m23, in.i23, 2));
  EXPECT_BUILD_THROWS("[take_along_axis]", take_along_axis(in.m23, idx, 0));
  EXPECT_BUILD_THROWS("[take_along_axis]", take_along_axis(in.m23, in.m23, 1));
  EXPECT_BUILD_THROWS("[take_along_axis]", take_along_axis(in.m23, zeros({3, 3}, int32), 1));
  EXPECT_BUILD_THROWS("[put_along_axis]", put_along_axis(in.m23, in.i23, in.m23, 2));
  EXPECT_BUILD_THROWS("[put_along_axis]", put_along_axis(in.m23, idx, in.m23, 0));
  EXPECT_BUILD_THROWS("[put_along_axis]", put_along_axis(in.m23, in.b23, in.m23, 0));
  EXPECT_BUILD_THROWS("[put_along_axis]", put_along_axis(in.m23, in.i23, in.m34, 1));
  EXPECT_BUILD_THROWS("[scatter_add_axis]", scatter_add_axis(in.m23, in.i23, in.m23, 5));
  EXPECT_BUILD_THROWS("[gather]", gather(in.m23, {idx, idx, idx}, {0, 1, 2}, {1, 1}));
  EXPECT_BUILD_THROWS("[gather]", gather(in.m23, {idx, idx}, {0, 0}, {1, 1}));
  EXPECT_BUILD_THROWS("[gather]", gather(in.m23, idx, -1, {1, 1}));
  EXPECT_BUILD_THROWS("[gather]", gather(in.m23, idx, 2, {1, 1}));
  EXPECT_BUILD_THROWS("[gather]", gather(in.m23, {idx}, {0, 1}, {1, 1}));
  EXPECT_BUILD_THROWS("[gather]", gather(in.m23, idx, 0, {1}));
  EXPECT_BUILD_THROWS("[gather]", gather(in.m23, idx, 0, {3, 1}));
  EXPECT_BUILD_THROWS("[gather]", gather(in.m23, idx, 0, {1, -1}));
  EXPECT_BUILD_THROWS("[gather]", gather(in.m23, fidx, 0, {1, 3}));
  EXPECT_BUILD_THROWS("[gather]", gather(in.m23, {idx, zeros({3}, int32)}, {0, 1}, {1, 1}));
  const array upd = zeros({2, 1, 3});
  EXPECT_BUILD_THROWS("[scatter]", scatter(in.m23, fidx, upd, 0));
  EXPECT_BUILD_THROWS("[scatter]", scatter(in.m23, bidx, upd, 0));
  EXPECT_BUILD_THROWS("[scatter]", scatter(in.m23, idx, upd, 2));
  EXPECT_BUILD_THROWS("[scatter]", scatter(in.m23, idx, upd, -1));
  EXPECT_BUILD_THROWS("[scatter]", scatter(in.m23, idx, zeros({2, 3}), 0));
  EXPECT_BUILD_THROWS("[scatter]", scatter(in.m23, idx, zeros({3, 1, 3}), 0));
  EXPECT_BUILD_THROWS("[scatter]", scatter(in.m23, idx, zeros({2, 3, 3}), 0));
  EXPECT_BUILD_THROWS("[scatter]", scatter(in.m23, {idx, idx}, upd, {0, 0}));
  EXPECT_BUILD_THROWS("[scatter_add]", scatter_add(in.m23, fidx, upd, 0));
  EXPECT_BUILD_THROWS("[scatter_prod]", scatter_prod(in.m23, idx, zeros({2, 4, 3}), 0));
  EXPECT_BUILD_THROWS("[scatter_max]", scatter_max(in.m23, {idx}, upd, {0, 1}));
  EXPECT_BUILD_THROWS("[scatter_min]", scatter_min(in.m23, idx, upd, 3));
  EXPECT_BUILD_THROWS("[masked_scatter]", masked_scatter(in.m23, in.i23, in.v4));
  EXPECT_BUILD_THROWS("[masked_scatter]", masked_scatter(in.m23, array(true), in.v4));
  EXPECT_BUILD_THROWS("[masked_scatter]", masked_scatter(in.m23, zeros({2, 3, 1}, bool_), in.v4));
  EXPECT_BUILD_THROWS("[masked_scatter]", masked_scatter(in.m23, zeros({3}, bool_), in.v4));
  in.expect_unevaluated();
}

TEST(BadInput, SortingOpsRejectBadAxesAndKth) {
  LazyInputs in;
  EXPECT_BUILD_THROWS("[sort]", sort(in.m23, 2));
  EXPECT_BUILD_THROWS("[sort]", sort(in.m23, -3));
  EXPECT_BUILD_THROWS("[sort]", sort(in.s, 0));
  EXPECT_BUILD_THROWS("[argsort]", argsort(in.m23, 2));
  EXPECT_BUILD_THROWS("[partition]", partition(in.m23, 3, 1));
  EXPECT_BUILD_THROWS("[partition]", partition(in.m23, -4, 1));
  EXPECT_BUILD_THROWS("[partition]", partition(in.m23, 6));
  EXPECT_BUILD_THROWS("[partition]", partition(in.m23, 0, 2));
  EXPECT_BUILD_THROWS("[partition]", partition(in.empty, 0, 0));
  EXPECT_BUILD_THROWS("[argpartition]", argpartition(in.m23, 2, 0));
  EXPECT_BUILD_THROWS("[argpartition]", argpartition(in.m23, -7));
  EXPECT_BUILD_THROWS("[topk]", topk(in.m23, 4, 1));
  EXPECT_BUILD_THROWS("[topk]", topk(in.m23, -1, 1));
  EXPECT_BUILD_THROWS("[topk]", topk(in.m23, 7));
  EXPECT_BUILD_THROWS("[topk]", topk(in.m23, 1, 2));
  in.expect_unevaluated();
}

TEST(BadInput, MedianHadamardFp8AndGatherQmmRejectBadArguments) {
  LazyInputs in;
  EXPECT_BUILD_THROWS("[median]", median(in.m23, 2));
  EXPECT_BUILD_THROWS("[median]", median(in.m23, std::vector<int>{0, 0}));
  EXPECT_BUILD_THROWS("[median]", median(in.m23, std::vector<int>{}));
  EXPECT_BUILD_THROWS("[median]", median(in.empty));
  EXPECT_BUILD_THROWS("[median]", median(in.empty, 0, true));
  EXPECT_BUILD_THROWS("[hadamard_transform]", hadamard_transform(in.m23));
  EXPECT_BUILD_THROWS("[hadamard_transform]", hadamard_transform(in.empty));
  EXPECT_BUILD_THROWS("[hadamard_transform]", hadamard_transform(zeros({5, 36}), 0.5f));
  EXPECT_BUILD_THROWS("[to_fp8]", to_fp8(in.i23));
  EXPECT_BUILD_THROWS("[to_fp8]", to_fp8(in.b23));
  EXPECT_BUILD_THROWS("[from_fp8]", from_fp8(in.m23, float32));
  EXPECT_BUILD_THROWS("[from_fp8]", from_fp8(zeros({2}, uint8), int8));
  const array w = zeros({2, 4, 8}, uint32);  // 2 batches of [4, 64] at 4 bits
  const array sc = zeros({2, 4, 1});
  const array x = zeros({2, 3, 64});
  const array idx = zeros({2}, int32);
  EXPECT_BUILD_THROWS("[gather_qmm]", gather_qmm(x, w, sc, sc, in.m23, idx));
  EXPECT_BUILD_THROWS("[gather_qmm]", gather_qmm(x, w, sc, sc, idx, zeros({3}, int32)));
  EXPECT_BUILD_THROWS("[gather_qmm]", gather_qmm(zeros({64}), w, sc, sc, idx, idx));
  EXPECT_BUILD_THROWS("[gather_qmm]", gather_qmm(in.m34, w, sc, sc, idx, idx));
  EXPECT_BUILD_THROWS("[gather_qmm]", gather_qmm(x, w, sc, std::nullopt, idx, idx));
  EXPECT_BUILD_THROWS("[gather_qmm]", gather_qmm(x, w, zeros({2, 4, 2}), zeros({2, 4, 2}), idx, idx));
  EXPECT_BUILD_THROWS("[gather_qmm]", gather_qmm(x, astype(w, int32), sc, sc, idx, idx));
  EXPECT_BUILD_THROWS("[gather_qmm]", gather_qmm(x, w, sc, sc, idx, idx, true, 64, 4, "nvfp4"));
  EXPECT_BUILD_THROWS("[gather_qmm]", gather_qmm(x, w, sc, sc, idx, idx, true, 64, 7));
  in.expect_unevaluated();
}

TEST(BadInput, QuantizationModesAndQqmmRejectBadArguments) {
  LazyInputs in;
  const array w = zeros({4, 64});
  const array wq = zeros({4, 8}, uint32);   // [4, 64] at 4 bits
  const array mx = zeros({4, 2}, uint8);    // mxfp4 scale codes (groups of 32)
  const array nv = zeros({4, 4}, uint8);    // nvfp4 scale codes (groups of 16)
  const array gs = zeros({});
  EXPECT_BUILD_THROWS("[quantize]", quantize(w, 32, 4, "int4"));
  EXPECT_BUILD_THROWS("[quantize]", quantize(w, 64, 4, "mxfp4"));
  EXPECT_BUILD_THROWS("[quantize]", quantize(w, 32, 4, "mxfp8"));
  EXPECT_BUILD_THROWS("[quantize]", quantize(w, 16, 8, "nvfp4"));
  EXPECT_BUILD_THROWS("[quantize]", quantize(w, std::nullopt, std::nullopt, "affine", gs));
  EXPECT_BUILD_THROWS("[quantize]", quantize(w, std::nullopt, std::nullopt, "mxfp8", gs));
  EXPECT_BUILD_THROWS("[quantize]", quantize(w, std::nullopt, std::nullopt, "nvfp4", in.i23));
  EXPECT_BUILD_THROWS("[quantize]", quantize(w, std::nullopt, std::nullopt, "nvfp4", in.v4));
  EXPECT_BUILD_THROWS("[quantize]", quantize(in.m23, std::nullopt, std::nullopt, "nvfp4"));
  EXPECT_BUILD_THROWS("[dequantize]", dequantize(wq, mx, mx, std::nullopt, std::nullopt, "mxfp4"));
  EXPECT_BUILD_THROWS("[dequantize]", dequantize(wq, astype(mx, float32), std::nullopt, std::nullopt, std::nullopt, "mxfp4"));
  EXPECT_BUILD_THROWS("[dequantize]", dequantize(wq, mx, std::nullopt, std::nullopt, std::nullopt, "nvfp4"));
  EXPECT_BUILD_THROWS("[dequantize]", dequantize(wq, nv, std::nullopt, std::nullopt, std::nullopt, "nvfp4", in.v4));
  EXPECT_BUILD_THROWS("[dequantize]", dequantize(wq, mx, std::nullopt, std::nullopt, std::nullopt, "mxfp4", gs));
  EXPECT_BUILD_THROWS("[quantized_matmul]", quantized_matmul(zeros({2, 64}), wq, mx, mx, true, std::nullopt, std::nullopt, "mxfp4"));
  EXPECT_BUILD_THROWS("[quantized_matmul]", quantized_matmul(zeros({2, 64}), wq, nv, std::nullopt, true, std::nullopt, std::nullopt, "mxfp4"));
  EXPECT_BUILD_THROWS("[gather_qmm]", gather_qmm(zeros({1, 2, 64}), wq, mx, std::nullopt, zeros({1}, int32), zeros({1}, int32), true, 16, 4, "mxfp4"));
  EXPECT_BUILD_THROWS("[qqmm]", qqmm(zeros({2, 64}), w, std::nullopt, std::nullopt, std::nullopt, "mxfp4"));
  EXPECT_BUILD_THROWS("[qqmm]", qqmm(zeros({2, 64}), w, std::nullopt, std::nullopt, std::nullopt, "affine"));
  EXPECT_BUILD_THROWS("[qqmm]", qqmm(zeros({2, 64}), w, std::nullopt, 32));
  EXPECT_BUILD_THROWS("[qqmm]", qqmm(zeros({1, 2, 64}), w));
  EXPECT_BUILD_THROWS("[qqmm]", qqmm(zeros({2, 64}, float64), w));
  EXPECT_BUILD_THROWS("[qqmm]", qqmm(zeros({2, 64}), astype(w, int32)));
  EXPECT_BUILD_THROWS("[qqmm]", qqmm(in.m23, w));
  EXPECT_BUILD_THROWS("[qqmm]", qqmm(zeros({2, 64}), wq));
  EXPECT_BUILD_THROWS("[qqmm]", qqmm(zeros({2, 64}), wq, mx));
  EXPECT_BUILD_THROWS("[qqmm]", qqmm(zeros({2, 64}), w, nv));
  EXPECT_BUILD_THROWS("[qqmm]", qqmm(zeros({2, 64}), w, std::nullopt, std::nullopt, std::nullopt, "nvfp4", gs));
  EXPECT_BUILD_THROWS("[qqmm]", qqmm(zeros({2, 64}), w, std::nullopt, std::nullopt, std::nullopt, "mxfp8", gs, gs));
  EXPECT_BUILD_THROWS("[qqmm]", qqmm(zeros({2, 64}), w, std::nullopt, std::nullopt, std::nullopt, "nvfp4", in.i23, in.i23));
  EXPECT_BUILD_THROWS("[qqmm]", qqmm(zeros({2, 24}), zeros({4, 24})));
  in.expect_unevaluated();
}

TEST(BadInput, IndexingAndSortingOpsNameThemselvesWhenTheDeviceIsUnavailable) {
  if (is_available(Device::gpu)) GTEST_SKIP() << "a GPU is available";
  LazyInputs in;
  const Device gpu = Device::gpu;
  const array idx = zeros({2}, int32);
  EXPECT_BUILD_THROWS("[take]", take(in.m23, idx, 0, gpu));
  EXPECT_BUILD_THROWS("[take]", take(in.m23, idx, gpu));
  EXPECT_BUILD_THROWS("[take]", take(in.m23, 1, 0, gpu));
  EXPECT_BUILD_THROWS("[take]", take(in.m23, 1, gpu));
  EXPECT_BUILD_THROWS("[take_along_axis]", take_along_axis(in.m23, in.i23, 1, gpu));
  EXPECT_BUILD_THROWS("[put_along_axis]", put_along_axis(in.m23, in.i23, in.m23, 1, gpu));
  EXPECT_BUILD_THROWS("[scatter_add_axis]", scatter_add_axis(in.m23, in.i23, in.m23, 1, gpu));
  EXPECT_BUILD_THROWS("[gather]", gather(in.m23, idx, 0, {1, 3}, gpu));
  const array upd = zeros({2, 1, 3});
  EXPECT_BUILD_THROWS("[scatter]", scatter(in.m23, idx, upd, 0, gpu));
  EXPECT_BUILD_THROWS("[scatter_add]", scatter_add(in.m23, idx, upd, 0, gpu));
  EXPECT_BUILD_THROWS("[scatter_prod]", scatter_prod(in.m23, idx, upd, 0, gpu));
  EXPECT_BUILD_THROWS("[scatter_max]", scatter_max(in.m23, idx, upd, 0, gpu));
  EXPECT_BUILD_THROWS("[scatter_min]", scatter_min(in.m23, idx, upd, 0, gpu));
  EXPECT_BUILD_THROWS("[masked_scatter]", masked_scatter(in.m23, in.b23, in.v4, gpu));
  EXPECT_BUILD_THROWS("[sort]", sort(in.m23, gpu));
  EXPECT_BUILD_THROWS("[sort]", sort(in.m23, 1, gpu));
  EXPECT_BUILD_THROWS("[argsort]", argsort(in.m23, 1, gpu));
  EXPECT_BUILD_THROWS("[partition]", partition(in.m23, 1, 1, gpu));
  EXPECT_BUILD_THROWS("[argpartition]", argpartition(in.m23, 1, gpu));
  EXPECT_BUILD_THROWS("[topk]", topk(in.m23, 1, 1, gpu));
  EXPECT_BUILD_THROWS("[topk]", topk(in.m23, 1, gpu));
  in.expect_unevaluated();
}

TEST(BadInput, RandomOpsRejectBadKeysDtypesAndShapes) {
  LazyInputs in;
  const array k = random::key(0);
  EXPECT_BUILD_THROWS("[bits]", random::bits({2}, 3, k));
  EXPECT_BUILD_THROWS("[bits]", random::bits({2}, 4, in.v4));                     // float32 key
  EXPECT_BUILD_THROWS("[bits]", random::bits({2}, 4, zeros({1, 2}, uint32)));     // key shape
  EXPECT_BUILD_THROWS("[bits]", random::bits({-1}, k));
  EXPECT_BUILD_THROWS("[bits]", random::uniform({2}, in.i23));                     // the key is checked by bits
  EXPECT_BUILD_THROWS("[bits]", random::split(array({1, 2}), 3));
  EXPECT_BUILD_THROWS("[uniform]", random::uniform({2}, int32, k));
  EXPECT_BUILD_THROWS("[uniform]", random::uniform({2}, float64, k));
  EXPECT_BUILD_THROWS("[uniform]", random::uniform(in.m23, in.s, {1, 3}, float32, k));
  EXPECT_BUILD_THROWS("[uniform]", random::uniform(in.m23, in.v4, {2, 3}, float32, k));
  EXPECT_BUILD_THROWS("[normal]", random::normal({2}, int32, k));
  EXPECT_BUILD_THROWS("[multivariate_normal]", random::multivariate_normal(in.v4, in.m34, {}, float16, k));
  EXPECT_BUILD_THROWS("[multivariate_normal]", random::multivariate_normal(in.s, in.m34, {}, float32, k));
  EXPECT_BUILD_THROWS("[multivariate_normal]", random::multivariate_normal(in.v4, in.v4, {}, float32, k));
  EXPECT_BUILD_THROWS("[multivariate_normal]", random::multivariate_normal(in.v4, in.m34, {}, float32, k));
  EXPECT_BUILD_THROWS("[multivariate_normal]", random::multivariate_normal(in.m23, in.m34, {}, float32, k));
  EXPECT_BUILD_THROWS("[randint]", random::randint(0, 10, {2}, float32, k));
  EXPECT_BUILD_THROWS("[randint]", random::randint(in.m23, in.s, {3}, int32, k));
  EXPECT_BUILD_THROWS("[bernoulli]", random::bernoulli(in.i23, k));
  EXPECT_BUILD_THROWS("[bernoulli]", random::bernoulli(in.v4, {2}, k));
  EXPECT_BUILD_THROWS("[trunc_normal]", random::truncated_normal(in.s, in.s, {2}, int32, k));
  EXPECT_BUILD_THROWS("[trunc_normal]", random::truncated_normal(in.m23, in.s, {4, 3}, float32, k));
  EXPECT_BUILD_THROWS("[trunc_normal]", random::truncated_normal(in.m23, in.v4, float32, k));
  EXPECT_BUILD_THROWS("[categorical]", random::categorical(in.m23, 2, k));
  EXPECT_BUILD_THROWS("[categorical]", random::categorical(in.m23, -3, k));
  EXPECT_BUILD_THROWS("[categorical]", random::categorical(in.m23, 1, Shape{3}, k));
  EXPECT_BUILD_THROWS("[laplace]", random::laplace({2}, int32, k));
  EXPECT_BUILD_THROWS("[permutation]", random::permutation(in.m23, 2, k));
  in.expect_unevaluated();
}
