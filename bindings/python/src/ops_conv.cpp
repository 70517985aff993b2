// Convolutions of braid.core with mlx.core's signatures: conv1d/2d/3d, their transposes,
// conv_general and NumPy's 1-d convolve. Per-axis arguments take an int (every spatial axis)
// or a tuple with one value per spatial axis.
#include "ops_args.h"

namespace braid::python {

namespace {

std::pair<int, int> pair_of(py::handle obj, const char* fn, const char* name) {
  auto v = arg_int_or_ints(obj, 2, fn, name);
  return {v[0], v[1]};
}

std::tuple<int, int, int> triple_of(py::handle obj, const char* fn, const char* name) {
  auto v = arg_int_or_ints(obj, 3, fn, name);
  return {v[0], v[1], v[2]};
}

/// conv_general's padding: an int, one value per axis, or a (low, high) pair of lists.
std::pair<std::vector<int>, std::vector<int>> general_padding(py::handle obj) {
  if (is_list_or_tuple(obj)) {
    auto seq = py::reinterpret_borrow<py::sequence>(obj);
    if (seq.size() == 2 && is_list_or_tuple(seq[0]) && is_list_or_tuple(seq[1])) {
      return {arg_ints(seq[0], "conv_general", "padding"), arg_ints(seq[1], "conv_general", "padding")};
    }
  }
  auto both = arg_int_or_ints(obj, 0, "conv_general", "padding");
  return {both, both};
}

/// np.convolve of two 1-d arrays: the longer one slides under the reversed shorter one.
array convolve_1d(const array& a, const array& v, const std::string& mode, StreamOrDevice s) {
  if (a.ndim() != 1 || v.ndim() != 1) throw std::invalid_argument("[convolve] Inputs must be 1D.");
  if (a.size() == 0 || v.size() == 0) throw std::invalid_argument("[convolve] Inputs cannot be empty.");
  const bool swap = a.size() < v.size();
  const array& signal = swap ? v : a;
  const array& kernel = swap ? a : v;
  const int k = kernel.shape(0);
  int low = 0;
  int high = 0;
  if (mode == "full") {
    low = high = k - 1;
  } else if (mode == "same") {
    // The full result's middle: (k - 1) / 2 elements off its start, the rest off its end.
    low = k / 2;
    high = k - 1 - low;
  } else if (mode != "valid") {
    throw std::invalid_argument("[convolve] Invalid mode '" + mode +
                                "': expected 'full', 'same' or 'valid'.");
  }
  auto out = conv_general(reshape(signal, {1, -1, 1}, s), reshape(kernel, {1, -1, 1}, s), {1}, {low}, {high},
                          {1}, {1}, 1, /*flip=*/true, s);
  return reshape(out, {-1}, s);
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  m.def(
      "conv1d",
      [](py::object input, py::object weight, int stride, int padding, int dilation, int groups,
         StreamOrDevice s) {
        return conv1d(arg_array(input, "conv1d", "input"), arg_array(weight, "conv1d", "weight"), stride,
                      padding, dilation, groups, s);
      },
      "input"_a, "weight"_a, py::pos_only(), "stride"_a = 1, "padding"_a = 0, "dilation"_a = 1,
      "groups"_a = 1, py::kw_only(), "stream"_a = py::none(),
      "1-d convolution of input [N, L, C_in] with weight [C_out, K, C_in/groups].");
  m.def(
      "conv2d",
      [](py::object input, py::object weight, py::object stride, py::object padding, py::object dilation,
         int groups, StreamOrDevice s) {
        constexpr const char* fn = "conv2d";
        return conv2d(arg_array(input, fn, "input"), arg_array(weight, fn, "weight"),
                      pair_of(stride, fn, "stride"), pair_of(padding, fn, "padding"),
                      pair_of(dilation, fn, "dilation"), groups, s);
      },
      "input"_a, "weight"_a, py::pos_only(), "stride"_a = 1, "padding"_a = 0, "dilation"_a = 1,
      "groups"_a = 1, py::kw_only(), "stream"_a = py::none(),
      "2-d convolution of input [N, H, W, C_in] with weight [C_out, KH, KW, C_in/groups].");
  m.def(
      "conv3d",
      [](py::object input, py::object weight, py::object stride, py::object padding, py::object dilation,
         int groups, StreamOrDevice s) {
        constexpr const char* fn = "conv3d";
        return conv3d(arg_array(input, fn, "input"), arg_array(weight, fn, "weight"),
                      triple_of(stride, fn, "stride"), triple_of(padding, fn, "padding"),
                      triple_of(dilation, fn, "dilation"), groups, s);
      },
      "input"_a, "weight"_a, py::pos_only(), "stride"_a = 1, "padding"_a = 0, "dilation"_a = 1,
      "groups"_a = 1, py::kw_only(), "stream"_a = py::none(),
      "3-d convolution of input [N, D, H, W, C_in] with weight [C_out, KD, KH, KW, C_in].");
  m.def(
      "conv_transpose1d",
      [](py::object input, py::object weight, int stride, int padding, int dilation, int output_padding,
         int groups, StreamOrDevice s) {
        return conv_transpose1d(arg_array(input, "conv_transpose1d", "input"),
                                arg_array(weight, "conv_transpose1d", "weight"), stride, padding, dilation,
                                output_padding, groups, s);
      },
      "input"_a, "weight"_a, py::pos_only(), "stride"_a = 1, "padding"_a = 0, "dilation"_a = 1,
      "output_padding"_a = 0, "groups"_a = 1, py::kw_only(), "stream"_a = py::none(),
      "1-d transposed convolution (weight [C_out, K, C_in]).");
  m.def(
      "conv_transpose2d",
      [](py::object input, py::object weight, py::object stride, py::object padding, py::object dilation,
         py::object output_padding, int groups, StreamOrDevice s) {
        constexpr const char* fn = "conv_transpose2d";
        return conv_transpose2d(arg_array(input, fn, "input"), arg_array(weight, fn, "weight"),
                                pair_of(stride, fn, "stride"), pair_of(padding, fn, "padding"),
                                pair_of(dilation, fn, "dilation"),
                                pair_of(output_padding, fn, "output_padding"), groups, s);
      },
      "input"_a, "weight"_a, py::pos_only(), "stride"_a = 1, "padding"_a = 0, "dilation"_a = 1,
      "output_padding"_a = 0, "groups"_a = 1, py::kw_only(), "stream"_a = py::none(),
      "2-d transposed convolution (weight [C_out, KH, KW, C_in]).");
  m.def(
      "conv_transpose3d",
      [](py::object input, py::object weight, py::object stride, py::object padding, py::object dilation,
         py::object output_padding, int groups, StreamOrDevice s) {
        constexpr const char* fn = "conv_transpose3d";
        return conv_transpose3d(arg_array(input, fn, "input"), arg_array(weight, fn, "weight"),
                                triple_of(stride, fn, "stride"), triple_of(padding, fn, "padding"),
                                triple_of(dilation, fn, "dilation"),
                                triple_of(output_padding, fn, "output_padding"), groups, s);
      },
      "input"_a, "weight"_a, py::pos_only(), "stride"_a = 1, "padding"_a = 0, "dilation"_a = 1,
      "output_padding"_a = 0, "groups"_a = 1, py::kw_only(), "stream"_a = py::none(),
      "3-d transposed convolution (weight [C_out, KD, KH, KW, C_in]).");
  m.def(
      "conv_general",
      [](py::object input, py::object weight, py::object stride, py::object padding,
         py::object kernel_dilation, py::object input_dilation, int groups, bool flip, StreamOrDevice s) {
        constexpr const char* fn = "conv_general";
        auto [low, high] = general_padding(padding);
        return conv_general(arg_array(input, fn, "input"), arg_array(weight, fn, "weight"),
                            arg_int_or_ints(stride, 0, fn, "stride"), std::move(low), std::move(high),
                            arg_int_or_ints(kernel_dilation, 0, fn, "kernel_dilation"),
                            arg_int_or_ints(input_dilation, 0, fn, "input_dilation"), groups, flip, s);
      },
      "input"_a, "weight"_a, py::pos_only(), "stride"_a = 1, "padding"_a = 0, "kernel_dilation"_a = 1,
      "input_dilation"_a = 1, "groups"_a = 1, "flip"_a = false, py::kw_only(), "stream"_a = py::none(),
      "Convolution over any number of spatial axes with per-axis stride, padding (or (low, high) lists) and "
      "dilations.");
  m.def(
      "convolve",
      [](py::object a, py::object v, const std::string& mode, StreamOrDevice s) {
        return convolve_1d(arg_array(a, "convolve", "a"), arg_array(v, "convolve", "v"), mode, s);
      },
      "a"_a, "v"_a, py::pos_only(), "mode"_a = "full", py::kw_only(), "stream"_a = py::none(),
      "The discrete convolution of two 1-d arrays (np.convolve): mode 'full', 'same' or 'valid'.");
}

}  // namespace braid::python
