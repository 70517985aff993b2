// braid::nn::Module: layers with named parameters in a nested, ordered tree, as MLX's
// mlx.nn.Module, in C++. A model is built from modules held by std::shared_ptr; a module's
// parameters() is a Tree with its own arrays by name, then each child module as a dict (a list
// of children as a list), in registration order.
//
// Threads: a Module behaves like a standard container. Its const members (parameters(),
// forward calls of layers that keep no state, value_and_grad) may run on any number of threads
// at once; update(), freeze(), train() and a forward call of a layer that updates its own state
// (BatchNorm in training mode) need exclusive use. Arrays it hands out may go to any thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "braid/array.h"
#include "braid/transforms.h"
#include "braid/tree.h"

namespace braid::nn {

class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  virtual ~Module() = default;

  /// The layer's type name ("Linear").
  virtual std::string name() const { return "Module"; }
  /// The layer applied to one array. Modules of other inputs (Bilinear, MultiHeadAttention)
  /// have their own call operators and throw std::invalid_argument here.
  virtual array operator()(const array& x);

  /// Every array of this module and its descendants, nested (frozen ones included).
  Tree parameters() const;
  /// parameters() without the frozen arrays; the children stay, possibly as empty dicts.
  Tree trainable_parameters() const;
  /// Replaces the arrays found in `parameters` (any part of parameters()'s tree). With
  /// `strict`, a place the module lacks throws std::invalid_argument("[Module.update] ...").
  Module& update(const Tree& parameters, bool strict = true);
  /// `fn` applied to every array (MLX's apply with the default filter), e.g. a cast.
  Module& apply(const std::function<array(const array&)>& fn);
  /// Casts the floating-point arrays to `dtype`.
  Module& set_dtype(Dtype dtype);

  /// Leaves the named arrays (every array when `keys` is empty) out of trainable_parameters();
  /// with `recurse`, in every descendant too. With `strict`, an unknown key throws.
  Module& freeze(bool recurse = true, const std::vector<std::string>& keys = {}, bool strict = false);
  Module& unfreeze(bool recurse = true, const std::vector<std::string>& keys = {}, bool strict = false);

  /// Training mode (the default) or inference mode, for this module and its descendants.
  Module& train(bool mode = true);
  /// Inference mode (MLX's Module.eval(); call braid::eval for evaluation inside a module).
  Module& eval() { return train(false); }
  bool training() const { return training_; }

  /// This module (named "") and every descendant, with dotted names, parents first.
  std::vector<std::pair<std::string, Module*>> named_modules();
  /// The direct children with their names ("layers.0" for a list's items).
  std::vector<std::pair<std::string, Module*>> children();
  /// Calls `fn(name, module)` on named_modules() in order.
  Module& apply_to_modules(const std::function<void(const std::string&, Module&)>& fn);

  /// Loads weights by dotted name (a .npz or .safetensors file, or pairs). With `strict`, every
  /// parameter must be given, no other name may be, and every shape must match; otherwise
  /// throws std::invalid_argument("[Module.load_weights] ...") and changes nothing.
  Module& load_weights(const std::string& file, bool strict = true);
  Module& load_weights(const std::vector<std::pair<std::string, array>>& weights, bool strict = true);
  /// Writes parameters() by dotted name as a .npz file when `file` ends in ".npz", else as
  /// .safetensors (evaluating them).
  void save_weights(const std::string& file) const;

 protected:
  /// Adds an array at `name` (or replaces the one there). Subclasses call it in their
  /// constructors; BatchNorm also from its forward call for its running statistics.
  void register_parameter(const std::string& name, array value);
  /// The array at `name`. Inside nn::value_and_grad of a module on this thread, the traced
  /// array that stands for it, so that gradients flow to it.
  array param(const std::string& name) const;
  /// True when an array is registered at `name` (optional biases, affine weights).
  bool has_param(const std::string& name) const;
  /// Adds a child module at `name` and returns it.
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> child) {
    add_child(name, child);
    return child;
  }
  /// Adds a list of child modules at `name` ("name.0", "name.1", ...) and returns it.
  template <class M>
  std::vector<std::shared_ptr<M>> register_modules(const std::string& name, std::vector<std::shared_ptr<M>> list) {
    add_children(name, {list.begin(), list.end()});
    return list;
  }
  /// Throws std::invalid_argument("[<name()>] <what>").
  [[noreturn]] void fail(const std::string& what) const;
  /// Whether unfreeze freezes the parameter `name` instead (MLX's quantized layers freeze
  /// their own parameters again after an unfreeze); none by default.
  virtual bool keeps_frozen(const std::string& name) const { return false; }

 private:
  struct Entry {
    std::string name;
    std::optional<array> value;                   // a parameter
    std::vector<std::shared_ptr<Module>> modules;  // one child, or a list of them
    bool is_list = false;
  };
  void add_child(const std::string& name, std::shared_ptr<Module> child);
  void add_children(const std::string& name, std::vector<std::shared_ptr<Module>> list);
  Entry* find(const std::string& name);
  const Entry* find(const std::string& name) const;
  Tree collect(bool trainable_only) const;
  void update_from(const Tree& parameters, bool strict, const std::string& path, bool write);
  void set_frozen(bool frozen, bool recurse, const std::vector<std::string>& keys, bool strict);

  std::vector<Entry> entries_;
  std::set<std::string> frozen_;
  bool training_ = true;
};

/// Values of `fn` and the gradients of its first output (a scalar) with respect to `model`'s
/// trainable parameters, as a tree shaped like trainable_parameters(). `fn` calls the model
/// (and reads no other module's parameters through it). The model is not modified: any number
/// of threads may call the result at once on the same model.
std::function<std::pair<std::vector<array>, Tree>(const std::vector<array>&)> value_and_grad(
    Module& model, std::function<std::vector<array>(const std::vector<array>&)> fn);
/// The same for a function with one output.
std::function<std::pair<array, Tree>(const std::vector<array>&)> value_and_grad(
    Module& model, std::function<array(const std::vector<array>&)> fn);

/// MLX's nn.utils.checkpoint: `fn` (by default `module`'s one-array call operator on the first
/// input) whose intermediates are not kept for the backward pass. `module`'s trainable
/// parameters become inputs of braid::checkpoint, so gradients with respect to them (inside
/// nn::value_and_grad) are those without checkpointing; the backward pass calls `fn` again,
/// so what it captures must outlive the gradient computation. Call the result with the inputs
/// of `fn` only. It does not modify the module: any number of threads may call it at once.
std::function<std::vector<array>(const std::vector<array>&)> checkpoint(
    Module& module, std::function<std::vector<array>(const std::vector<array>&)> fn = {});

}  // namespace braid::nn
