// The optimizer base: its state tree, walked alongside the gradient and parameter trees, the
// step count and schedules, state files; MultiOptimizer; clip_grad_norm.
#include <stdexcept>
#include <unordered_map>

#include "braid/io.h"
#include "braid/ops.h"
#include "braid/optimizers.h"
#include "python_scalars.h"

namespace braid::optimizers {

namespace {

std::string joined(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string shown(const std::string& path) { return path.empty() ? "the root" : "'" + path + "'"; }

}  // namespace

Optimizer::Optimizer(std::optional<LearningRate> learning_rate) {
  state_.set("step", array(uint64_t{0}, uint64));
  if (!learning_rate) return;
  if (!learning_rate->is_schedule() && !learning_rate->value()) {
    throw std::invalid_argument("[Optimizer] The learning rate is an empty schedule.");
  }
  if (learning_rate->is_schedule()) {
    schedules_["learning_rate"] = learning_rate->schedule();
    state_.set("learning_rate", learning_rate->schedule()(step()));
  } else {
    state_.set("learning_rate", *learning_rate->value());
  }
}

void Optimizer::fail(const std::string& what) const {
  throw std::invalid_argument("[" + name() + "] " + what);
}

void Optimizer::init_state(const Tree& parameters, Tree& state, const std::string& path) {
  if (!parameters.is_leaf() && parameters.size() == 0) return;
  if (parameters.is_leaf()) {
    if (!state.is_dict()) fail("The state at " + shown(path) + " is not a dict of arrays.");
    if (state.size() == 0) init_single(parameters.leaf(), state);
    return;
  }
  if (parameters.is_list()) {
    if (state.is_dict() && state.size() == 0) state = Tree(Tree::List{});
    if (!state.is_list()) fail("The state at " + shown(path) + " is not a list as the parameters are.");
    while (state.size() < parameters.size()) state.push_back(Tree());
    for (size_t i = 0; i < parameters.size(); ++i) {
      init_state(parameters.at(i), state.at(i), joined(path, std::to_string(i)));
    }
    return;
  }
  if (!state.is_dict()) fail("The state at " + shown(path) + " is not a dict as the parameters are.");
  for (const auto& [key, child] : parameters.dict()) init_state(child, state[key], joined(path, key));
}

void Optimizer::init(const Tree& parameters) { init_state(parameters, state_, ""); }

Tree Optimizer::apply_tree(const Tree& gradients, const Tree& parameters, Tree& state,
                           const std::string& path) {
  if (!gradients.is_leaf() && gradients.size() == 0) return gradients;  // a frozen or unselected place
  if (gradients.is_leaf()) {
    if (!parameters.is_leaf()) fail("The parameters have no array at " + shown(path) + ".");
    return apply_single(gradients.leaf(), parameters.leaf(), state);
  }
  if (gradients.is_list()) {
    if (!parameters.is_list() || parameters.size() < gradients.size()) {
      fail("The parameters have no list of " + std::to_string(gradients.size()) + " at " + shown(path) + ".");
    }
    Tree::List out;
    for (size_t i = 0; i < gradients.size(); ++i) {
      out.push_back(
          apply_tree(gradients.at(i), parameters.at(i), state.at(i), joined(path, std::to_string(i))));
    }
    return Tree(std::move(out));
  }
  if (!parameters.is_dict()) fail("The parameters have no dict at " + shown(path) + ".");
  Tree out;
  for (const auto& [key, child] : gradients.dict()) {
    std::string where = joined(path, key);
    if (!parameters.contains(key)) fail("The parameters have nothing at '" + where + "'.");
    out.set(key, apply_tree(child, parameters.at(key), state.at(key), where));
  }
  return out;
}

Tree Optimizer::apply_gradients(const Tree& gradients, const Tree& parameters) {
  init(gradients);
  array current = step();
  for (const auto& [key, schedule] : schedules_) state_.set(key, schedule(current));
  state_.set("step", current + detail::py_int(1, current));
  return apply_tree(gradients, parameters, state_, "");
}

void Optimizer::update(nn::Module& model, const Tree& gradients) {
  model.update(apply_gradients(gradients, model.parameters()));
}

void Optimizer::set_state(Tree state) {
  if (!state.is_dict()) fail("The state must be a dict.");
  state_ = std::move(state);
}

array Optimizer::step() const { return state().at("step").leaf(); }

array Optimizer::learning_rate() const {
  if (!state().contains("learning_rate")) fail("This optimizer has no learning rate.");
  return state().at("learning_rate").leaf();
}

void Optimizer::set_learning_rate(float learning_rate) { state_.set("learning_rate", array(learning_rate)); }

void Optimizer::set_learning_rate(const array& learning_rate) { state_.set("learning_rate", learning_rate); }

void Optimizer::save_state(const std::string& file) const {
  auto flat = tree_flatten(state());
  save_safetensors(file, std::unordered_map<std::string, array>(flat.begin(), flat.end()));
}

void Optimizer::load_state(const std::string& file) {
  auto loaded = load_safetensors(file).first;
  set_state(tree_unflatten(std::vector<std::pair<std::string, array>>(loaded.begin(), loaded.end())));
}

// ---- MultiOptimizer ----

namespace {

// The leaves of `tree` that `keep` accepts, at their places. Lists keep their length (an empty
// dict stands for a dropped item) so that indices still name the same parameters.
Tree select_leaves(const Tree& tree, const std::string& path,
                   const std::function<bool(const std::string&, const array&)>& keep) {
  if (tree.is_leaf()) return keep(path, tree.leaf()) ? tree : Tree();
  if (tree.is_list()) {
    Tree::List items;
    for (size_t i = 0; i < tree.size(); ++i)
      items.push_back(select_leaves(tree.at(i), joined(path, std::to_string(i)), keep));
    return Tree(std::move(items));
  }
  Tree out;
  for (const auto& [key, child] : tree.dict()) {
    Tree part = select_leaves(child, joined(path, key), keep);
    if (part.is_leaf() || !part.empty()) out.set(key, std::move(part));
  }
  return out;
}

// MLX's tree_merge: an empty dict or list gives way to the other tree.
Tree merge_parts(const Tree& a, const Tree& b) {
  if (!a.is_leaf() && a.size() == 0) return b;
  if (!b.is_leaf() && b.size() == 0) return a;
  if (a.is_dict() && b.is_dict()) {
    Tree out = a;
    for (const auto& [key, child] : b.dict())
      out.set(key, out.contains(key) ? merge_parts(out.at(key), child) : child);
    return out;
  }
  if (a.is_list() && b.is_list() && a.size() == b.size()) {
    Tree::List items;
    for (size_t i = 0; i < a.size(); ++i) items.push_back(merge_parts(a.at(i), b.at(i)));
    return Tree(std::move(items));
  }
  throw std::invalid_argument("[MultiOptimizer] Two optimizers updated the same parameter.");
}

}  // namespace

MultiOptimizer::MultiOptimizer(std::vector<std::shared_ptr<Optimizer>> optimizers,
                               std::vector<Filter> filters)
    : Optimizer(std::nullopt), optimizers_(std::move(optimizers)), filters_(std::move(filters)) {
  if (optimizers_.empty()) fail("At least one optimizer is needed.");
  for (const auto& optimizer : optimizers_) {
    if (!optimizer) fail("An optimizer is null.");
  }
  if (filters_.size() != optimizers_.size() - 1) {
    fail("Given " + std::to_string(filters_.size()) + " filters but " +
         std::to_string(optimizers_.size() - 1) + " needed.");
  }
  for (const auto& filter : filters_) {
    if (!filter) fail("A filter is empty.");
  }
  refresh_state();
}

std::vector<Tree> MultiOptimizer::split(const Tree& gradients) const {
  if (optimizers_.size() == 1) return {gradients};
  // Which optimizer takes each path: the first filter that accepts it, else the last one.
  std::unordered_map<std::string, size_t> owner;
  for (const auto& [path, gradient] : tree_flatten(gradients)) {
    size_t i = 0;
    while (i < filters_.size() && !filters_[i](path, gradient)) ++i;
    owner[path] = i;
  }
  std::vector<Tree> parts;
  for (size_t i = 0; i < optimizers_.size(); ++i) {
    parts.push_back(select_leaves(
        gradients, "", [&](const std::string& path, const array&) { return owner.at(path) == i; }));
  }
  return parts;
}

void MultiOptimizer::refresh_state() {
  Tree::List states;
  for (const auto& optimizer : optimizers_) states.push_back(optimizer->state());
  state_ = Tree();
  state_.set("states", Tree(std::move(states)));
}

void MultiOptimizer::init(const Tree& parameters) {
  auto parts = split(parameters);
  for (size_t i = 0; i < optimizers_.size(); ++i) optimizers_[i]->init(parts[i]);
  refresh_state();
}

Tree MultiOptimizer::apply_gradients(const Tree& gradients, const Tree& parameters) {
  auto parts = split(gradients);
  Tree out;
  for (size_t i = 0; i < optimizers_.size(); ++i)
    out = merge_parts(out, optimizers_[i]->apply_gradients(parts[i], parameters));
  refresh_state();
  return out;
}

void MultiOptimizer::set_state(Tree state) {
  if (!state.is_dict() || !state.contains("states") || !state.at("states").is_list() ||
      state.at("states").size() != optimizers_.size()) {
    fail("Invalid state provided: expected {\"states\": [" + std::to_string(optimizers_.size()) +
         " states]}.");
  }
  for (size_t i = 0; i < optimizers_.size(); ++i) optimizers_[i]->set_state(state.at("states").at(i));
  refresh_state();
}

array MultiOptimizer::step() const { return optimizers_[0]->step(); }
array MultiOptimizer::learning_rate() const { return optimizers_[0]->learning_rate(); }

void MultiOptimizer::set_learning_rate(float learning_rate) {
  for (auto& optimizer : optimizers_) optimizer->set_learning_rate(learning_rate);
  refresh_state();
}

void MultiOptimizer::set_learning_rate(const array& learning_rate) {
  for (auto& optimizer : optimizers_) optimizer->set_learning_rate(learning_rate);
  refresh_state();
}

// ---- clip_grad_norm ----

std::pair<Tree, array> clip_grad_norm(const Tree& grads, double max_norm) {
  std::optional<array> norm_squared;
  for (const auto& leaf : tree_leaves(grads)) {
    array term = sum(square(leaf));
    norm_squared = norm_squared ? *norm_squared + term : term;
  }
  // MLX starts its sum at the Python float 0.0, which gives float32 for no gradients.
  array total_norm = sqrt(norm_squared ? *norm_squared : array(0.0f));
  array normalizer =
      detail::py_float(max_norm, total_norm) / (total_norm + detail::py_float(1e-6, total_norm));
  array below = total_norm < detail::py_float(max_norm, total_norm);
  Tree clipped = tree_map([&](const array& g) { return where(below, g, g * normalizer); }, grads);
  return {std::move(clipped), total_norm};
}

}  // namespace braid::optimizers
