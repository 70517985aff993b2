// output_shapes: the primitives whose output shape follows from their inputs' shapes, which a
// shapeless compiled function replays on inputs of other shapes. A primitive not here keeps
// Primitive's default (it cannot infer its shapes), and a function using it is traced again
// for each new shape. Every check fails with std::invalid_argument, which the replay takes as
// "trace again", except a shapeless Reshape's detail::ReplayShapeError, which reaches the caller.
#include <algorithm>
#include <string>

#include "backend/common/conv.h"
#include "graph/trace.h"
#include "ops/utils.h"
#include "primitives/primitives.h"

namespace braid {

namespace {

[[noreturn]] void unfit(const Primitive& p) {
  throw std::invalid_argument(std::string("[Primitive::output_shapes] ") + p.name() +
                              " does not fit the shapes of its inputs.");
}

// The shape every input broadcasts to (the element-wise primitives broadcast in the kernel).
Shape broadcast_all(const std::vector<array>& inputs, const char* name) {
  Shape out = inputs.at(0).shape();
  for (size_t i = 1; i < inputs.size(); ++i) out = detail::broadcast_shapes(out, inputs[i].shape(), name);
  return out;
}

// The input's shape with `axes` (in range) set to 1.
Shape reduced(const Primitive& p, const array& in, const std::vector<int>& axes) {
  Shape out = in.shape();
  for (int ax : axes) {
    if (ax < 0 || ax >= static_cast<int>(out.size())) unfit(p);
    out[ax] = 1;
  }
  return out;
}

std::vector<Shape> same_as_first(const Primitive& p, const std::vector<array>& inputs) {
  if (inputs.empty()) unfit(p);
  return {inputs[0].shape()};
}

// A primitive along `axis` of input 0 that keeps its shape: the axis must exist.
std::vector<Shape> same_along(const Primitive& p, const std::vector<array>& inputs, int axis) {
  if (inputs.empty() || axis < 0 || axis >= static_cast<int>(inputs[0].ndim())) unfit(p);
  return {inputs[0].shape()};
}

}  // namespace

std::vector<Shape> Unary::output_shapes(const std::vector<array>& inputs) { return same_as_first(*this, inputs); }
std::vector<Shape> ScaledUnary::output_shapes(const std::vector<array>& inputs) {
  return {broadcast_all(inputs, name())};
}
std::vector<Shape> Binary::output_shapes(const std::vector<array>& inputs) { return {broadcast_all(inputs, name())}; }
std::vector<Shape> Compiled::output_shapes(const std::vector<array>& inputs) {
  return std::vector<Shape>(outputs().size(), broadcast_all(inputs, name()));
}
std::vector<Shape> Select::output_shapes(const std::vector<array>& inputs) { return {broadcast_all(inputs, name())}; }
std::vector<Shape> StopGradient::output_shapes(const std::vector<array>& inputs) {
  return same_as_first(*this, inputs);
}
std::vector<Shape> AsType::output_shapes(const std::vector<array>& inputs) { return same_as_first(*this, inputs); }
std::vector<Shape> Copy::output_shapes(const std::vector<array>& inputs) { return same_as_first(*this, inputs); }
std::vector<Shape> Contiguous::output_shapes(const std::vector<array>& inputs) {
  return same_as_first(*this, inputs);
}
std::vector<Shape> Depends::output_shapes(const std::vector<array>& inputs) { return same_as_first(*this, inputs); }

std::vector<Shape> Reduce::output_shapes(const std::vector<array>& inputs) {
  return {reduced(*this, inputs.at(0), axes_)};
}
std::vector<Shape> ArgReduce::output_shapes(const std::vector<array>& inputs) {
  return {reduced(*this, inputs.at(0), {axis_})};
}
std::vector<Shape> Scan::output_shapes(const std::vector<array>& inputs) { return same_along(*this, inputs, axis_); }
std::vector<Shape> Sort::output_shapes(const std::vector<array>& inputs) { return same_along(*this, inputs, axis_); }
std::vector<Shape> ArgSort::output_shapes(const std::vector<array>& inputs) { return same_along(*this, inputs, axis_); }
std::vector<Shape> Softmax::output_shapes(const std::vector<array>& inputs) {
  if (inputs.empty() || inputs[0].ndim() == 0) unfit(*this);
  return {inputs[0].shape()};
}

std::vector<Shape> Reshape::output_shapes(const std::vector<array>& inputs) {
  if (!requested_) return Primitive::output_shapes(inputs);  // MLX's "cannot infer" error
  if (inputs.empty()) unfit(*this);
  // The shape asked for, inferred again for the new size; one it cannot hold is the caller's
  // error, as in MLX, not a reason to trace again.
  try {
    return {detail::reshaped(inputs[0].size(), *requested_)};
  } catch (const std::invalid_argument& e) {
    throw detail::ReplayShapeError(e.what());
  }
}

std::vector<Shape> Transpose::output_shapes(const std::vector<array>& inputs) {
  const Shape& in = inputs.at(0).shape();
  if (in.size() != axes_.size()) unfit(*this);
  Shape out(in.size());
  for (size_t i = 0; i < axes_.size(); ++i) {
    if (axes_[i] < 0 || static_cast<size_t>(axes_[i]) >= in.size()) unfit(*this);
    out[i] = in[axes_[i]];
  }
  return {out};
}

std::vector<Shape> Squeeze::output_shapes(const std::vector<array>& inputs) {
  const Shape& in = inputs.at(0).shape();
  Shape out;
  size_t next = 0;  // axes_ is sorted
  for (int i = 0; i < static_cast<int>(in.size()); ++i) {
    if (next < axes_.size() && axes_[next] == i) {
      if (in[i] != 1) unfit(*this);
      ++next;
      continue;
    }
    out.push_back(in[i]);
  }
  if (next != axes_.size()) unfit(*this);
  return {out};
}

std::vector<Shape> ExpandDims::output_shapes(const std::vector<array>& inputs) {
  const Shape& in = inputs.at(0).shape();
  const size_t nd = in.size() + axes_.size();
  Shape out;
  size_t next = 0, from = 0;  // axes_ is sorted, in output positions
  for (size_t i = 0; i < nd; ++i) {
    if (next < axes_.size() && axes_[next] == static_cast<int>(i)) {
      out.push_back(1);
      ++next;
    } else {
      if (from >= in.size()) unfit(*this);
      out.push_back(in[from++]);
    }
  }
  if (next != axes_.size()) unfit(*this);
  return {out};
}

// The update (input 1) lands on elements start + i * strides of input 0: every one must be
// inside the new input, or the kernel would write outside it.
std::vector<Shape> SliceUpdate::output_shapes(const std::vector<array>& inputs) {
  const Shape& in = inputs.at(0).shape();
  const Shape& update = inputs.at(1).shape();
  if (update.size() != in.size() || start_.size() != in.size() || strides_.size() != in.size()) unfit(*this);
  for (size_t i = 0; i < in.size(); ++i) {
    if (update[i] == 0) continue;
    const int64_t first = start_[i], last = first + static_cast<int64_t>(update[i] - 1) * strides_[i];
    if (std::min(first, last) < 0 || std::max(first, last) >= in[i]) unfit(*this);
  }
  return {in};
}

// The op gives both operands the output's batch dimensions (the kernels index each operand
// by the output's batch position): they must still be equal.
std::vector<Shape> Matmul::output_shapes(const std::vector<array>& inputs) {
  const Shape &a = inputs.at(0).shape(), &b = inputs.at(1).shape();
  if (a.size() < 2 || a.size() != b.size() || a.back() != b[b.size() - 2] ||
      !std::equal(a.begin(), a.end() - 2, b.begin())) {
    unfit(*this);
  }
  Shape out(a.begin(), a.end() - 1);
  out.push_back(b.back());
  return {out};
}

// [batch, spatial..., channels] by [out channels, kernel..., channels / groups]: each spatial
// size from the input's, the kernel's and the fixed stride, padding and dilations (as the op).
std::vector<Shape> Convolution::output_shapes(const std::vector<array>& inputs) {
  const Shape &in = inputs.at(0).shape(), &wt = inputs.at(1).shape();
  const size_t dims = stride_.size();
  if (in.size() != dims + 2 || wt.size() != dims + 2 ||
      in.back() != static_cast<int64_t>(wt.back()) * groups_ || wt[0] % groups_ != 0) {
    unfit(*this);
  }
  int bad_axis = 0;
  Shape out = common::conv_out_shape(in, wt, stride_, padding_lo_, padding_hi_, kernel_dilation_,
                                     input_dilation_, bad_axis);
  if (bad_axis != 0) unfit(*this);
  return {out};
}

std::vector<Shape> NumberOfElements::output_shapes(const std::vector<array>& inputs) {
  const int nd = static_cast<int>(inputs.at(0).ndim());
  if (std::any_of(axes_.begin(), axes_.end(), [nd](int ax) { return ax < 0 || ax >= nd; })) unfit(*this);
  return {Shape{}};
}

}  // namespace braid
