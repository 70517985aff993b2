// Indexing (gather, scatter and friends) and sorting.
#pragma once

#include <vector>

#include "primitives/primitive_base.h"

namespace braid {

/// Inputs: a, then one index array per axis in `axes`, all of one broadcast shape (any
/// integer dtype each). Output: index shape + slice_sizes, out[i, j] = a[start(i) + j] where
/// start(i) is idx_k[i] along axes[k] and 0 elsewhere. Negative indices wrap once; a start
/// still outside [0, dim - slice] is clamped into it (never read out of bounds).
class Gather : public UnaryPrimitive {
 public:
  Gather(Stream s, std::vector<int> axes, Shape slice_sizes)
      : UnaryPrimitive(std::move(s)), axes_(std::move(axes)), slice_sizes_(std::move(slice_sizes)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Gather"; }
  bool is_equivalent(const Primitive& o) const override;
  const std::vector<int>& axes() const { return axes_; }
  const Shape& slice_sizes() const { return slice_sizes_; }

 private:
  std::vector<int> axes_;
  Shape slice_sizes_;
};

/// take_along_axis. Inputs: a and an index array (any integer dtype) of one shape except
/// along `axis`. Output: the index array's shape, out[.., j, ..] = a[.., start(idx[.., j, ..]),
/// ..] with Gather's start along `axis` (negative indices wrap once, then clamp into range).
class GatherAxis : public UnaryPrimitive {
 public:
  GatherAxis(Stream s, int axis) : UnaryPrimitive(std::move(s)), axis_(axis) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "GatherAxis"; }
  bool is_equivalent(const Primitive& o) const override;
  int axis() const { return axis_; }

 private:
  int axis_;
};

/// Inputs: a, one index array per axis (one broadcast shape), then updates of shape
/// index shape + update slice (cast to a's dtype). Output: a copy of a with each update slice
/// combined in at its start. Negative indices wrap once; a slice whose start is still out of
/// range is dropped (never written out of bounds).
class Scatter : public UnaryPrimitive {
 public:
  enum class ReduceType { Max, Min, Sum, Prod, None };
  Scatter(Stream s, ReduceType reduce, std::vector<int> axes)
      : UnaryPrimitive(std::move(s)), reduce_(reduce), axes_(std::move(axes)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override;
  bool is_equivalent(const Primitive& o) const override;
  ReduceType reduce_type() const { return reduce_; }
  const std::vector<int>& axes() const { return axes_; }

 private:
  ReduceType reduce_;
  std::vector<int> axes_;
};

/// Inputs: a, a bool mask of a's shape (any layout), src (1-d, a's dtype). The true positions
/// of the mask, in row-major order, take src's elements in order; positions past the end of
/// src keep a's value.
class MaskedScatter : public UnaryPrimitive {
 public:
  explicit MaskedScatter(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "MaskedScatter"; }
};

/// Sorting along one (non-negative) axis: stable, NaNs last, complex lexicographic.
class Sort : public UnaryPrimitive {
 public:
  Sort(Stream s, int axis) : UnaryPrimitive(std::move(s)), axis_(axis) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Sort"; }
  bool is_equivalent(const Primitive& o) const override;
  int axis() const { return axis_; }

 private:
  int axis_;
};

/// The uint32 positions that sort each row along the axis (stable, NaNs last).
class ArgSort : public UnaryPrimitive {
 public:
  ArgSort(Stream s, int axis) : UnaryPrimitive(std::move(s)), axis_(axis) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "ArgSort"; }
  bool is_equivalent(const Primitive& o) const override;
  int axis() const { return axis_; }

 private:
  int axis_;
};

/// Element kth (non-negative, in range) of each row in its sorted place, nothing larger
/// before it and nothing smaller after it.
class Partition : public UnaryPrimitive {
 public:
  Partition(Stream s, int kth, int axis) : UnaryPrimitive(std::move(s)), kth_(kth), axis_(axis) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Partition"; }
  bool is_equivalent(const Primitive& o) const override;
  int kth() const { return kth_; }
  int axis() const { return axis_; }

 private:
  int kth_;
  int axis_;
};

/// The uint32 positions that partition each row (see Partition).
class ArgPartition : public UnaryPrimitive {
 public:
  ArgPartition(Stream s, int kth, int axis) : UnaryPrimitive(std::move(s)), kth_(kth), axis_(axis) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "ArgPartition"; }
  bool is_equivalent(const Primitive& o) const override;
  int kth() const { return kth_; }
  int axis() const { return axis_; }

 private:
  int kth_;
  int axis_;
};

/// Every primitive of this family, for code that handles each one (e.g. the no_gpu stubs).
#define BRAID_INDEXING_PRIMITIVES(X) \
  X(Gather) X(GatherAxis) X(Scatter) X(MaskedScatter) X(Sort) X(ArgSort) X(Partition) X(ArgPartition)

}  // namespace braid
