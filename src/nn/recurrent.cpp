// Recurrent layers (MLX's recurrent.py): RNN, GRU and LSTM, one lazy step per position.
#include <cmath>
#include <stdexcept>

#include "braid/nn/layers.h"
#include "braid/ops.h"
#include "braid/random.h"
#include "nn/scalars.h"

namespace braid::nn {

using detail::uniform_init;

namespace {

// Position t of the sequence axis (-2).
array step(const array& x, int t) {
  const int nd = static_cast<int>(x.ndim());
  Shape start(nd, 0), stop = x.shape();
  start[nd - 2] = t;
  stop[nd - 2] = t + 1;
  return squeeze(slice(x, start, stop), nd - 2);
}

// Features [begin, end) of the last axis.
array features(const array& x, int begin, int end) {
  const int nd = static_cast<int>(x.ndim());
  Shape start(nd, 0), stop = x.shape();
  start[nd - 1] = begin;
  stop[nd - 1] = end;
  return slice(x, start, stop);
}

// x W^T (+ bias).
array project(const array& x, const array& weight, const std::optional<array>& bias) {
  return bias ? addmm(*bias, x, transpose(weight)) : matmul(x, transpose(weight));
}

void check_sizes(const Module& m, int input_size, int hidden_size) {
  if (input_size <= 0 || hidden_size <= 0) {
    throw std::invalid_argument("[" + m.name() + "] input_size and hidden_size must be positive; got " +
                                std::to_string(input_size) + " and " + std::to_string(hidden_size) + ".");
  }
}

// Sequences [N, L, D] or [L, D] with D = input_size.
void check_input(const std::string& layer, const array& x, int input_size, int hidden_size,
                 const std::optional<array>& state, const char* state_name) {
  if ((x.ndim() != 2 && x.ndim() != 3) || x.shape(-1) != input_size) {
    throw std::invalid_argument("[" + layer + "] Expected input of shape [N, L, " +
                                std::to_string(input_size) + "] or [L, " + std::to_string(input_size) + "].");
  }
  // As in MLX, a state broadcasts against the steps: one [hidden_size] state for a batch, or a
  // batch of states for one sequence.
  if (state && (state->ndim() == 0 || state->ndim() > 2 || state->shape(-1) != hidden_size)) {
    throw std::invalid_argument("[" + layer + "] The " + state_name + " state must be [N, " +
                                std::to_string(hidden_size) + "] or [" + std::to_string(hidden_size) + "].");
  }
}

// pre + prev w_t, with prev a state of either rank (addmm's c must have the product's shape).
array recur(const array& pre, const array& prev, const array& w_t) {
  return prev.ndim() < pre.ndim() ? add(pre, matmul(prev, w_t)) : addmm(pre, prev, w_t);
}

// The state a step starts from: the last step's, else the initial one, else none.
const array* previous(const std::vector<array>& states, const std::optional<array>& initial) {
  if (!states.empty()) return &states.back();
  return initial ? &*initial : nullptr;
}

}  // namespace

RNN::RNN(int input_size, int hidden_size, bool bias, UnaryFunction nonlinearity)
    : hidden_size_(hidden_size), nonlinearity_(std::move(nonlinearity)) {
  check_sizes(*this, input_size, hidden_size);
  if (!nonlinearity_) nonlinearity_ = [](const array& x) { return tanh(x); };
  const double scale = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  register_parameter("Wxh", uniform_init(scale, {hidden_size, input_size}));
  register_parameter("Whh", uniform_init(scale, {hidden_size, hidden_size}));
  if (bias) register_parameter("bias", uniform_init(scale, {hidden_size}));
}

array RNN::operator()(const array& x_in, const std::optional<array>& initial) {
  const array wxh = param("Wxh"), whh = param("Whh");
  check_input(name(), x_in, wxh.shape(1), hidden_size_, initial, "hidden");
  const array x = project(x_in, wxh, has_param("bias") ? std::optional<array>(param("bias")) : std::nullopt);
  const array whh_t = transpose(whh);
  std::vector<array> states;
  for (int t = 0; t < x.shape(-2); ++t) {
    const array* prev = previous(states, initial);
    array pre = step(x, t);
    if (prev) pre = recur(pre, *prev, whh_t);
    states.push_back(nonlinearity_(pre));
  }
  if (states.empty()) return zeros_like(x);
  return stack(states, -2);
}

GRU::GRU(int input_size, int hidden_size, bool bias) : hidden_size_(hidden_size) {
  check_sizes(*this, input_size, hidden_size);
  const double scale = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  register_parameter("Wx", uniform_init(scale, {3 * hidden_size, input_size}));
  register_parameter("Wh", uniform_init(scale, {3 * hidden_size, hidden_size}));
  if (bias) {
    register_parameter("b", uniform_init(scale, {3 * hidden_size}));
    register_parameter("bhn", uniform_init(scale, {hidden_size}));
  }
}

array GRU::operator()(const array& x_in, const std::optional<array>& initial) {
  const array wx = param("Wx"), wh = param("Wh");
  const int h = hidden_size_;
  check_input(name(), x_in, wx.shape(1), h, initial, "hidden");
  const bool bias = has_param("b");
  const array x = project(x_in, wx, bias ? std::optional<array>(param("b")) : std::nullopt);
  const array x_rz = features(x, 0, 2 * h), x_n = features(x, 2 * h, 3 * h);
  const array wh_t = transpose(wh);
  std::vector<array> states;
  for (int t = 0; t < x.shape(-2); ++t) {
    const array* prev = previous(states, initial);
    array rz = step(x_rz, t);
    array n = step(x_n, t);
    if (prev) {
      const array h_proj = matmul(*prev, wh_t);
      rz = sigmoid(add(rz, features(h_proj, 0, 2 * h)));
      array h_n = features(h_proj, 2 * h, 3 * h);
      if (bias) h_n = add(h_n, param("bhn"));
      n = add(n, multiply(features(rz, 0, h), h_n));
    } else {
      rz = sigmoid(rz);
    }
    const array z = features(rz, h, 2 * h);
    array next = multiply(subtract(array(1.0f, z.dtype()), z), tanh(n));
    if (prev) next = add(next, multiply(z, *prev));
    states.push_back(next);
  }
  if (states.empty()) return features(x, 0, h);
  return stack(states, -2);
}

LSTM::LSTM(int input_size, int hidden_size, bool bias) : hidden_size_(hidden_size) {
  check_sizes(*this, input_size, hidden_size);
  const double scale = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  register_parameter("Wx", uniform_init(scale, {4 * hidden_size, input_size}));
  register_parameter("Wh", uniform_init(scale, {4 * hidden_size, hidden_size}));
  if (bias) register_parameter("bias", uniform_init(scale, {4 * hidden_size}));
}

std::pair<array, array> LSTM::operator()(const array& x_in, const std::optional<array>& initial_hidden,
                                         const std::optional<array>& initial_cell) {
  const array wx = param("Wx"), wh = param("Wh");
  const int h = hidden_size_;
  check_input(name(), x_in, wx.shape(1), h, initial_hidden, "hidden");
  check_input(name(), x_in, wx.shape(1), h, initial_cell, "cell");
  const array x = project(x_in, wx, has_param("bias") ? std::optional<array>(param("bias")) : std::nullopt);
  const array wh_t = transpose(wh);
  std::vector<array> hiddens, cells;
  for (int t = 0; t < x.shape(-2); ++t) {
    const array* prev_hidden = previous(hiddens, initial_hidden);
    const array* prev_cell = previous(cells, initial_cell);
    array gates = step(x, t);
    if (prev_hidden) gates = recur(gates, *prev_hidden, wh_t);
    const array i = sigmoid(features(gates, 0, h)), f = sigmoid(features(gates, h, 2 * h));
    const array g = tanh(features(gates, 2 * h, 3 * h)), o = sigmoid(features(gates, 3 * h, 4 * h));
    array cell = prev_cell ? add(multiply(f, *prev_cell), multiply(i, g)) : multiply(i, g);
    hiddens.push_back(multiply(o, tanh(cell)));
    cells.push_back(std::move(cell));
  }
  if (hiddens.empty()) {
    const array none = features(x, 0, h);
    return {none, none};
  }
  return {stack(hiddens, -2), stack(cells, -2)};
}

}  // namespace braid::nn
