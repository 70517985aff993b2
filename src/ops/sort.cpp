// Sorting and selection: sort, argsort, partition, argpartition, topk. The overloads without
// an axis sort the flattened array (MLX's C++ API; Python's defaults to the last axis).
#include "braid/ops.h"
#include "memory/object_pool.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

using detail::shape_str;
using detail::throw_invalid;

namespace {

int check_axis(const array& a, int axis, const char* op) {
  const int nd = static_cast<int>(a.ndim());
  if (axis + nd < 0 || axis >= nd) {
    throw_invalid(op, "Received invalid axis " + std::to_string(axis) + " for array with " +
                          std::to_string(nd) + " dimensions.");
  }
  return axis < 0 ? axis + nd : axis;
}

int check_kth(const array& a, int kth, int axis, const char* op) {
  const int n = a.shape()[axis];
  const int k = kth < 0 ? kth + n : kth;
  if (k < 0 || k >= n) {
    throw_invalid(op, "Received invalid kth " + std::to_string(kth) + " along axis " + std::to_string(axis) +
                          " for array with shape: " + shape_str(a.shape()) + ".");
  }
  return k;
}

array flat(const array& a, const Stream& st) { return reshape(a, {-1}, st); }

}  // namespace

array sort(const array& a, int axis, StreamOrDevice s) {
  axis = check_axis(a, axis, "sort");
  Stream st = detail::op_stream(std::move(s), "sort");
  return array(a.shape(), a.dtype(), detail::make_pooled<Sort>(st, axis), {a});
}

array sort(const array& a, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "sort");
  return sort(flat(a, st), 0, st);
}

array argsort(const array& a, int axis, StreamOrDevice s) {
  axis = check_axis(a, axis, "argsort");
  Stream st = detail::op_stream(std::move(s), "argsort");
  return array(a.shape(), uint32, detail::make_pooled<ArgSort>(st, axis), {a});
}

array argsort(const array& a, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "argsort");
  return argsort(flat(a, st), 0, st);
}

array partition(const array& a, int kth, int axis, StreamOrDevice s) {
  axis = check_axis(a, axis, "partition");
  kth = check_kth(a, kth, axis, "partition");
  Stream st = detail::op_stream(std::move(s), "partition");
  return array(a.shape(), a.dtype(), detail::make_pooled<Partition>(st, kth, axis), {a});
}

array partition(const array& a, int kth, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "partition");
  return partition(flat(a, st), kth, 0, st);
}

array argpartition(const array& a, int kth, int axis, StreamOrDevice s) {
  axis = check_axis(a, axis, "argpartition");
  kth = check_kth(a, kth, axis, "argpartition");
  Stream st = detail::op_stream(std::move(s), "argpartition");
  return array(a.shape(), uint32, detail::make_pooled<ArgPartition>(st, kth, axis), {a});
}

array argpartition(const array& a, int kth, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "argpartition");
  return argpartition(flat(a, st), kth, 0, st);
}

array topk(const array& a, int k, int axis, StreamOrDevice s) {
  axis = check_axis(a, axis, "topk");
  const int n = a.shape()[axis];
  if (k < 0 || k > n) {
    throw_invalid("topk", "Received invalid k=" + std::to_string(k) + " along axis " + std::to_string(axis) +
                              " for array with shape: " + shape_str(a.shape()) + ".");
  }
  Stream st = detail::op_stream(std::move(s), "topk");
  if (k == n) return a;
  // The last k of a partition at n - k (the values from MLX's slice, taken with a gather).
  const int kth = k == 0 ? 0 : n - k;  // k == 0 takes nothing; any valid kth will do
  array parted = array(a.shape(), a.dtype(), detail::make_pooled<Partition>(st, kth, axis), {a});
  return take(parted, arange(n - k, n, st), axis, st);
}

array topk(const array& a, int k, StreamOrDevice s) {
  Stream st = detail::op_stream(std::move(s), "topk");
  return topk(flat(a, st), k, 0, st);
}

}  // namespace braid
