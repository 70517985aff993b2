// Module: the parameter tree of a model, and value_and_grad over it.
//
// value_and_grad never writes the traced arrays into the module. While the loss function runs,
// a thread-local table maps each parameter (by node identity) to the tracer that stands for
// it, and Module::param reads through it. Threads differentiating the same model at once each
// see their own tracers, and a thread only running the model sees its real parameters.
#include "braid/nn/module.h"

#include <stdexcept>
#include <unordered_map>

#include "braid/io.h"
#include "braid/ops.h"
#include "io/common.h"

namespace braid::nn {

namespace {

using Substitution = std::unordered_map<std::uintptr_t, array>;
// The innermost value_and_grad on this thread is last.
thread_local std::vector<const Substitution*> active_substitutions;

class SubstitutionScope {
 public:
  explicit SubstitutionScope(const Substitution& table) { active_substitutions.push_back(&table); }
  ~SubstitutionScope() { active_substitutions.pop_back(); }
  SubstitutionScope(const SubstitutionScope&) = delete;
  SubstitutionScope& operator=(const SubstitutionScope&) = delete;
};

bool is_floating(Dtype dtype) {
  return dtype == float16 || dtype == bfloat16 || dtype == float32 || dtype == float64;
}

std::string joined(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + "." + name;
}

// What Module::param hands out for the stored array `value` on this thread.
array substituted(const array& value) {
  for (auto it = active_substitutions.rbegin(); it != active_substitutions.rend(); ++it) {
    auto found = (*it)->find(value.id());
    if (found != (*it)->end()) return found->second;
  }
  return value;
}

std::string shape_string(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

array Module::operator()(const array&) { fail("This module is not a function of one array."); }

void Module::fail(const std::string& what) const { throw std::invalid_argument("[" + name() + "] " + what); }

Module::Entry* Module::find(const std::string& key) {
  return const_cast<Entry*>(std::as_const(*this).find(key));
}

const Module::Entry* Module::find(const std::string& key) const {
  for (const auto& entry : entries_) {
    if (entry.name == key) return &entry;
  }
  return nullptr;
}

void Module::register_parameter(const std::string& key, array value) {
  if (Entry* entry = find(key)) {
    if (!entry->value) fail("'" + key + "' is a child module, not an array.");
    entry->value = std::move(value);
    return;
  }
  entries_.push_back(Entry{key, std::move(value), {}, false});
}

bool Module::has_param(const std::string& key) const {
  const Entry* entry = find(key);
  return entry != nullptr && entry->value.has_value();
}

array Module::param(const std::string& key) const {
  const Entry* entry = find(key);
  if (entry == nullptr || !entry->value) fail("No parameter named '" + key + "'.");
  return substituted(*entry->value);
}

void Module::add_child(const std::string& key, std::shared_ptr<Module> child) {
  if (!child) fail("The child module '" + key + "' is null.");
  if (find(key)) fail("'" + key + "' is registered twice.");
  entries_.push_back(Entry{key, std::nullopt, {std::move(child)}, false});
}

void Module::add_children(const std::string& key, std::vector<std::shared_ptr<Module>> list) {
  for (const auto& child : list) {
    if (!child) fail("An item of the module list '" + key + "' is null.");
  }
  if (find(key)) fail("'" + key + "' is registered twice.");
  entries_.push_back(Entry{key, std::nullopt, std::move(list), true});
}

Tree Module::collect(bool trainable_only) const {
  Tree tree;
  for (const auto& entry : entries_) {
    if (entry.value) {
      if (!trainable_only || !frozen_.count(entry.name)) tree.set(entry.name, *entry.value);
    } else if (entry.is_list) {
      Tree::List items;
      for (const auto& child : entry.modules) items.push_back(child->collect(trainable_only));
      tree.set(entry.name, Tree(std::move(items)));
    } else {
      tree.set(entry.name, entry.modules[0]->collect(trainable_only));
    }
  }
  return tree;
}

Tree Module::parameters() const { return collect(false); }
Tree Module::trainable_parameters() const { return collect(true); }

void Module::update_from(const Tree& parameters, bool strict, const std::string& path, bool write) {
  if (!parameters.is_dict()) {
    throw std::invalid_argument("[Module.update] Expected a dict of parameters at '" + path + "'.");
  }
  for (const auto& [key, value] : parameters.dict()) {
    Entry* entry = find(key);
    std::string where = joined(path, key);
    if (entry == nullptr) {
      if (strict) throw std::invalid_argument("[Module.update] Module does not have parameter named '" + where + "'.");
      continue;
    }
    if (entry->value) {
      if (!value.is_leaf()) {
        if (strict) throw std::invalid_argument("[Module.update] '" + where + "' is an array, not a node.");
        continue;
      }
      if (write) entry->value = value.leaf();
    } else if (entry->is_list) {
      if (!value.is_list()) {
        if (strict) throw std::invalid_argument("[Module.update] '" + where + "' is a list of modules.");
        continue;
      }
      if (value.list().size() > entry->modules.size()) {
        throw std::invalid_argument("[Module.update] '" + where + "' has " + std::to_string(entry->modules.size()) +
                                    " modules; " + std::to_string(value.list().size()) + " given.");
      }
      for (size_t i = 0; i < value.list().size(); ++i) {
        entry->modules[i]->update_from(value.list()[i], strict, joined(where, std::to_string(i)), write);
      }
    } else {
      entry->modules[0]->update_from(value, strict, where, write);
    }
  }
}

Module& Module::update(const Tree& parameters, bool strict) {
  update_from(parameters, strict, "", false);  // a bad update throws here and changes nothing
  update_from(parameters, strict, "", true);
  return *this;
}

Module& Module::apply(const std::function<array(const array&)>& fn) {
  return update(tree_map(fn, parameters()));
}

Module& Module::set_dtype(Dtype dtype) {
  return apply([dtype](const array& a) { return is_floating(a.dtype()) ? astype(a, dtype) : a; });
}

void Module::set_frozen(bool frozen, bool recurse, const std::vector<std::string>& keys, bool strict) {
  if (keys.empty()) {
    for (const auto& entry : entries_) {
      if (!entry.value) continue;
      if (frozen) {
        frozen_.insert(entry.name);
      } else if (keeps_frozen(entry.name)) {
        frozen_.insert(entry.name);  // frozen again, as MLX's quantized layers' unfreeze does
      } else {
        frozen_.erase(entry.name);
      }
    }
  } else {
    for (const auto& key : keys) {
      if (!has_param(key)) {
        if (strict) fail("No parameter named '" + key + "' to " + (frozen ? "freeze." : "unfreeze."));
        continue;
      }
      if (frozen) {
        frozen_.insert(key);
      } else if (keeps_frozen(key)) {
        frozen_.insert(key);  // frozen again, as MLX's quantized layers' unfreeze does
      } else {
        frozen_.erase(key);
      }
    }
  }
  if (!recurse) return;
  for (auto& [child_name, child] : children()) child->set_frozen(frozen, true, keys, false);
}

Module& Module::freeze(bool recurse, const std::vector<std::string>& keys, bool strict) {
  set_frozen(true, recurse, keys, strict);
  return *this;
}

Module& Module::unfreeze(bool recurse, const std::vector<std::string>& keys, bool strict) {
  set_frozen(false, recurse, keys, strict);
  return *this;
}

Module& Module::train(bool mode) {
  apply_to_modules([mode](const std::string&, Module& m) { m.training_ = mode; });
  return *this;
}

std::vector<std::pair<std::string, Module*>> Module::children() {
  std::vector<std::pair<std::string, Module*>> out;
  for (auto& entry : entries_) {
    if (entry.value) continue;
    if (entry.is_list) {
      for (size_t i = 0; i < entry.modules.size(); ++i) out.emplace_back(joined(entry.name, std::to_string(i)), entry.modules[i].get());
    } else {
      out.emplace_back(entry.name, entry.modules[0].get());
    }
  }
  return out;
}

std::vector<std::pair<std::string, Module*>> Module::named_modules() {
  std::vector<std::pair<std::string, Module*>> out{{"", this}};
  // out grows while it is read: each module's children follow it (parents first).
  for (size_t i = 0; i < out.size(); ++i) {
    auto [path, module] = out[i];
    for (auto& [child_name, child] : module->children()) out.emplace_back(joined(path, child_name), child);
  }
  return out;
}

Module& Module::apply_to_modules(const std::function<void(const std::string&, Module&)>& fn) {
  for (auto& [path, module] : named_modules()) fn(path, *module);
  return *this;
}

Module& Module::load_weights(const std::vector<std::pair<std::string, array>>& weights, bool strict) {
  if (strict) {
    auto own = tree_flatten(parameters());
    std::unordered_map<std::string, const array*> given;
    for (const auto& [key, value] : weights) given[key] = &value;
    for (const auto& [key, value] : own) {
      auto found = given.find(key);
      if (found == given.end()) throw std::invalid_argument("[Module.load_weights] Missing parameter '" + key + "'.");
      if (found->second->shape() != value.shape()) {
        throw std::invalid_argument("[Module.load_weights] Expected shape " + shape_string(value.shape()) +
                                    " for parameter '" + key + "', received " +
                                    shape_string(found->second->shape()) + ".");
      }
      given.erase(found);
    }
    if (!given.empty()) {
      throw std::invalid_argument("[Module.load_weights] Received a parameter not in the model: '" +
                                  given.begin()->first + "'.");
    }
  }
  return update(tree_unflatten(weights), strict);
}

Module& Module::load_weights(const std::string& file, bool strict) {
  auto loaded = io_detail::has_suffix(file, ".npz") ? load_npz(file) : load_safetensors(file).first;
  return load_weights(std::vector<std::pair<std::string, array>>(loaded.begin(), loaded.end()), strict);
}

void Module::save_weights(const std::string& file) const {
  auto flat = tree_flatten(parameters());
  std::unordered_map<std::string, array> arrays(flat.begin(), flat.end());
  if (io_detail::has_suffix(file, ".npz")) {
    savez(file, arrays);
  } else {
    save_safetensors(file, std::move(arrays));
  }
}

std::function<std::pair<std::vector<array>, Tree>(const std::vector<array>&)> value_and_grad(
    Module& model, std::function<std::vector<array>(const std::vector<array>&)> fn) {
  return [&model, fn = std::move(fn)](const std::vector<array>& inputs) {
    Tree trainable = model.trainable_parameters();
    std::vector<array> params = tree_leaves(trainable);
    const size_t num_params = params.size();
    std::vector<int> argnums(num_params);
    for (size_t i = 0; i < num_params; ++i) argnums[i] = static_cast<int>(i);
    std::vector<array> primals = params;
    primals.insert(primals.end(), inputs.begin(), inputs.end());
    auto traced_fn = [&](const std::vector<array>& traced) {
      Substitution table;
      for (size_t i = 0; i < num_params; ++i) table.emplace(params[i].id(), traced[i]);
      SubstitutionScope scope(table);
      return fn(std::vector<array>(traced.begin() + num_params, traced.end()));
    };
    if (num_params == 0) {
      // Nothing to differentiate: MLX returns the values and an empty gradient tree.
      return std::make_pair(fn(inputs), trainable);
    }
    auto [values, grads] = braid::value_and_grad(traced_fn, argnums)(primals);
    size_t next = 0;
    Tree grad_tree = tree_map([&](const array&) { return grads[next++]; }, trainable);
    return std::make_pair(std::move(values), std::move(grad_tree));
  };
}

std::function<std::pair<array, Tree>(const std::vector<array>&)> value_and_grad(
    Module& model, std::function<array(const std::vector<array>&)> fn) {
  auto vg = value_and_grad(model, [fn = std::move(fn)](const std::vector<array>& inputs) {
    return std::vector<array>{fn(inputs)};
  });
  return [vg](const std::vector<array>& inputs) {
    auto [values, grads] = vg(inputs);
    return std::make_pair(values[0], std::move(grads));
  };
}

std::function<std::vector<array>(const std::vector<array>&)> checkpoint(
    Module& module, std::function<std::vector<array>(const std::vector<array>&)> fn) {
  if (!fn) {
    fn = [&module](const std::vector<array>& inputs) { return std::vector<array>{module(inputs.at(0))}; };
  }
  return [&module, fn = std::move(fn)](const std::vector<array>& inputs) {
    // The recomputation runs in the backward pass, after this call returned: it gets its own
    // table from the stored parameters (kept alive here) to the arrays that stand for them.
    std::vector<array> stored = tree_leaves(module.trainable_parameters());
    std::vector<array> args;
    args.reserve(stored.size() + inputs.size());
    for (const auto& p : stored) args.push_back(substituted(p));
    args.insert(args.end(), inputs.begin(), inputs.end());
    auto body = [stored, fn](const std::vector<array>& all) {
      Substitution table;
      for (size_t i = 0; i < stored.size(); ++i) table.emplace(stored[i].id(), all[i]);
      SubstitutionScope scope(table);
      return fn(std::vector<array>(all.begin() + static_cast<std::ptrdiff_t>(stored.size()), all.end()));
    };
    return braid::checkpoint(std::move(body))(args);
  };
}

}  // namespace braid::nn
