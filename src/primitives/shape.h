// Creation, conversion and data-movement primitives: copies, fills and views.
#pragma once

#include <optional>
#include <vector>

#include "primitives/primitive_base.h"

namespace braid {

/// Converts the input to the output's dtype (a contiguous copy).
class AsType : public UnaryPrimitive {
 public:
  explicit AsType(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "AsType"; }
  bool is_equivalent(const Primitive&) const override { return true; }
};

/// Materializes the (broadcast) input into a contiguous output: used by full/zeros/ones.
class Full : public UnaryPrimitive {
 public:
  explicit Full(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Full"; }
  bool is_equivalent(const Primitive&) const override { return true; }
};

class Arange : public UnaryPrimitive {
 public:
  Arange(Stream s, double start, double step) : UnaryPrimitive(std::move(s)), start_(start), step_(step) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "Arange"; }
  bool is_equivalent(const Primitive& o) const override {
    const auto& p = static_cast<const Arange&>(o);
    return start_ == p.start_ && step_ == p.step_;
  }
  double start() const { return start_; }
  double step() const { return step_; }

 private:
  double start_;
  double step_;
};

/// A view with zero strides where dimensions are broadcast.
class Broadcast : public UnaryPrimitive {
 public:
  explicit Broadcast(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Broadcast"; }
  bool is_equivalent(const Primitive&) const override { return true; }
};

/// The same elements under another shape (a view when the layout allows). Made while a
/// shapeless function is traced, it keeps the shape asked for, a -1 included, and infers its
/// output from that on each replay, as MLX's shapeless reshape does.
class Reshape : public UnaryPrimitive {
 public:
  explicit Reshape(Stream s) : UnaryPrimitive(std::move(s)) {}
  Reshape(Stream s, Shape requested) : UnaryPrimitive(std::move(s)), requested_(std::move(requested)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Reshape"; }
  bool is_equivalent(const Primitive& other) const override {
    return requested_ == static_cast<const Reshape&>(other).requested_;
  }
  /// The shape asked for in a shapeless trace (else none: the output keeps its traced shape).
  const std::optional<Shape>& requested() const { return requested_; }

 private:
  std::optional<Shape> requested_;
};

/// Permuted strides over the same buffer.
class Transpose : public UnaryPrimitive {
 public:
  Transpose(Stream s, std::vector<int> axes) : UnaryPrimitive(std::move(s)), axes_(std::move(axes)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Transpose"; }
  bool is_equivalent(const Primitive& o) const override {
    const auto& p = static_cast<const Transpose&>(o);
    return axes_ == p.axes_;
  }
  const std::vector<int>& axes() const { return axes_; }

 private:
  std::vector<int> axes_;
};

/// Drops size-1 axes (a view).
class Squeeze : public UnaryPrimitive {
 public:
  Squeeze(Stream s, std::vector<int> axes) : UnaryPrimitive(std::move(s)), axes_(std::move(axes)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Squeeze"; }
  bool is_equivalent(const Primitive& o) const override {
    const auto& p = static_cast<const Squeeze&>(o);
    return axes_ == p.axes_;
  }
  const std::vector<int>& axes() const { return axes_; }

 private:
  std::vector<int> axes_;  // sorted
};

/// Inserts size-1 axes (a view).
class ExpandDims : public UnaryPrimitive {
 public:
  ExpandDims(Stream s, std::vector<int> axes) : UnaryPrimitive(std::move(s)), axes_(std::move(axes)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "ExpandDims"; }
  bool is_equivalent(const Primitive& o) const override {
    const auto& p = static_cast<const ExpandDims&>(o);
    return axes_ == p.axes_;
  }
  const std::vector<int>& axes() const { return axes_; }

 private:
  std::vector<int> axes_;  // sorted, output axes
};

/// Elements start + i * strides of each axis (a view); start is in range, strides non-zero.
class Slice : public UnaryPrimitive {
 public:
  Slice(Stream s, Shape start, Shape strides)
      : UnaryPrimitive(std::move(s)), start_(std::move(start)), strides_(std::move(strides)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Slice"; }
  bool is_equivalent(const Primitive& o) const override {
    const auto& p = static_cast<const Slice&>(o);
    return start_ == p.start_ && strides_ == p.strides_;
  }
  const Shape& start() const { return start_; }
  const Shape& strides() const { return strides_; }

 private:
  Shape start_;
  Shape strides_;
};

/// A slice of out.shape() starting at the int64 positions of input 1 along `axes` (clamped
/// so the slice stays inside the input).
class DynamicSlice : public UnaryPrimitive {
 public:
  DynamicSlice(Stream s, std::vector<int> axes) : UnaryPrimitive(std::move(s)), axes_(std::move(axes)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "DynamicSlice"; }
  bool is_equivalent(const Primitive& o) const override {
    const auto& p = static_cast<const DynamicSlice&>(o);
    return axes_ == p.axes_;
  }
  const std::vector<int>& axes() const { return axes_; }

 private:
  std::vector<int> axes_;
};

/// A copy of input 0 with the slice (start, strides) of update's shape replaced by input 1
/// (converted to the output's dtype).
class SliceUpdate : public UnaryPrimitive {
 public:
  SliceUpdate(Stream s, Shape start, Shape strides)
      : UnaryPrimitive(std::move(s)), start_(std::move(start)), strides_(std::move(strides)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "SliceUpdate"; }
  bool is_equivalent(const Primitive& o) const override {
    const auto& p = static_cast<const SliceUpdate&>(o);
    return start_ == p.start_ && strides_ == p.strides_;
  }
  const Shape& start() const { return start_; }
  const Shape& strides() const { return strides_; }

 private:
  Shape start_;
  Shape strides_;
};

/// A copy of input 0 with the box of update's shape (input 1, same dtype) written at the
/// int64 positions of input 2 along `axes` (clamped so the box stays inside).
class DynamicSliceUpdate : public UnaryPrimitive {
 public:
  DynamicSliceUpdate(Stream s, std::vector<int> axes)
      : UnaryPrimitive(std::move(s)), axes_(std::move(axes)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "DynamicSliceUpdate"; }
  bool is_equivalent(const Primitive& o) const override {
    const auto& p = static_cast<const DynamicSliceUpdate&>(o);
    return axes_ == p.axes_;
  }
  const std::vector<int>& axes() const { return axes_; }

 private:
  std::vector<int> axes_;
};

/// The inputs, converted to the output's dtype, one after another along `axis`.
class Concatenate : public UnaryPrimitive {
 public:
  Concatenate(Stream s, int axis) : UnaryPrimitive(std::move(s)), axis_(axis) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Concatenate"; }
  bool is_equivalent(const Primitive& o) const override {
    const auto& p = static_cast<const Concatenate&>(o);
    return axis_ == p.axis_;
  }
  int axis() const { return axis_; }

 private:
  int axis_;
};

/// Input 0 placed at offset `low` (one entry per axis) in an output filled with input 1.
class Pad : public UnaryPrimitive {
 public:
  Pad(Stream s, Shape low) : UnaryPrimitive(std::move(s)), low_(std::move(low)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Pad"; }
  bool is_equivalent(const Primitive& o) const override {
    const auto& p = static_cast<const Pad&>(o);
    return low_ == p.low_;
  }
  const Shape& low() const { return low_; }

 private:
  Shape low_;
};

/// out.shape() with `strides` over the row-contiguous input from element `offset` (a view).
class AsStrided : public UnaryPrimitive {
 public:
  AsStrided(Stream s, Strides strides, int64_t offset)
      : UnaryPrimitive(std::move(s)), strides_(std::move(strides)), offset_(offset) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "AsStrided"; }
  bool is_equivalent(const Primitive& o) const override {
    const auto& p = static_cast<const AsStrided&>(o);
    return strides_ == p.strides_ && offset_ == p.offset_;
  }
  const Strides& strides() const { return strides_; }
  int64_t offset() const { return offset_; }

 private:
  Strides strides_;
  int64_t offset_;
};

/// Diagonal `offset` of axes (axis1, axis2) as the last axis (a view).
class Diagonal : public UnaryPrimitive {
 public:
  Diagonal(Stream s, int offset, int axis1, int axis2)
      : UnaryPrimitive(std::move(s)), offset_(offset), axis1_(axis1), axis2_(axis2) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Diagonal"; }
  bool is_equivalent(const Primitive& o) const override {
    const auto& p = static_cast<const Diagonal&>(o);
    return offset_ == p.offset_ && axis1_ == p.axis1_ && axis2_ == p.axis2_;
  }
  int offset() const { return offset_; }
  int axis1() const { return axis1_; }
  int axis2() const { return axis2_; }

 private:
  int offset_, axis1_, axis2_;
};

/// A new node with the input's values (shares its buffer).
class Copy : public UnaryPrimitive {
 public:
  explicit Copy(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Copy"; }
  bool is_equivalent(const Primitive&) const override { return true; }
};

/// The input if row-contiguous (or column-contiguous when allowed), else a row-major copy.
class Contiguous : public UnaryPrimitive {
 public:
  Contiguous(Stream s, bool allow_col_major)
      : UnaryPrimitive(std::move(s)), allow_col_major_(allow_col_major) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Contiguous"; }
  bool is_equivalent(const Primitive& o) const override {
    const auto& p = static_cast<const Contiguous&>(o);
    return allow_col_major_ == p.allow_col_major_;
  }
  bool allow_col_major() const { return allow_col_major_; }

 private:
  bool allow_col_major_;
};

/// The input's bytes read as the output's dtype (a view of a row-contiguous, aligned input).
class View : public UnaryPrimitive {
 public:
  explicit View(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  const char* name() const override { return "View"; }
  bool is_equivalent(const Primitive&) const override { return true; }
};

/// Input 0, computed only after the other inputs (shares input 0's buffer).
class Depends : public UnaryPrimitive {
 public:
  explicit Depends(Stream s) : UnaryPrimitive(std::move(s)) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "Depends"; }
};

/// The number of elements of input 0 over `axes` (normalized), or its reciprocal, as a 0-d
/// array of the output's dtype (MLX's NumberOfElements). Ops build it instead of a constant
/// count while a shapeless compiled function is traced, so a replay on inputs of another
/// shape divides by their count (a mean's divisor, var's correction).
class NumberOfElements : public UnaryPrimitive {
 public:
  NumberOfElements(Stream s, std::vector<int> axes, bool inverted)
      : UnaryPrimitive(std::move(s)), axes_(std::move(axes)), inverted_(inverted) {}
  BRAID_PRIMITIVE_EVALS
  BRAID_PRIMITIVE_OUTPUT_SHAPES
  BRAID_PRIMITIVE_GRADS
  const char* name() const override { return "NumberOfElements"; }
  bool is_equivalent(const Primitive& o) const override;
  const std::vector<int>& axes() const { return axes_; }
  bool inverted() const { return inverted_; }
  /// The value for an input of `shape` (1 / 0 is inf).
  double value(const Shape& shape) const { return count(shape, axes_, inverted_); }
  static double count(const Shape& shape, const std::vector<int>& axes, bool inverted);

 private:
  std::vector<int> axes_;
  bool inverted_;
};

/// Every primitive of this family, for code that handles each one (e.g. the no_gpu stubs).
#define BRAID_SHAPE_PRIMITIVES(X)                                                                          \
  X(AsType)                                                                                                \
  X(Full) X(Arange) X(Broadcast) X(Reshape) X(Transpose) X(Squeeze) X(ExpandDims) X(Slice) X(DynamicSlice) \
      X(SliceUpdate) X(DynamicSliceUpdate) X(Concatenate) X(Pad) X(AsStrided) X(Diagonal) X(Copy)          \
          X(Contiguous) X(View) X(Depends) X(NumberOfElements)

}  // namespace braid
