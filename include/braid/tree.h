// Nested, ordered containers of arrays: a module's parameters, their gradients, an optimizer's
// state. They play the part of the Python dicts and lists that MLX's nn and optimizers pass
// around, with mlx.utils' tree_flatten, tree_unflatten and tree_map.
//
// A Tree is a value (copying it copies handles to the same arrays, never their data). Like a
// standard container, concurrent const use from any number of threads is safe; a tree being
// modified must not be used by another thread at the same time.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "braid/array.h"

namespace braid {

class Tree {
 public:
  /// Children by name, in insertion order.
  using Dict = std::vector<std::pair<std::string, Tree>>;
  using List = std::vector<Tree>;

  /// An empty dict.
  Tree() : node_(Dict{}) {}
  /// A leaf.
  Tree(array leaf) : node_(std::move(leaf)) {}  // NOLINT(google-explicit-constructor)
  Tree(List items) : node_(std::move(items)) {}  // NOLINT(google-explicit-constructor)
  Tree(Dict items) : node_(std::move(items)) {}  // NOLINT(google-explicit-constructor)

  bool is_leaf() const { return std::holds_alternative<array>(node_); }
  bool is_list() const { return std::holds_alternative<List>(node_); }
  bool is_dict() const { return std::holds_alternative<Dict>(node_); }
  /// Number of children (1 for a leaf).
  size_t size() const;
  /// True for a dict or list with no leaf anywhere below it.
  bool empty() const;

  /// The leaf; throws std::invalid_argument("[Tree] ...") when this is not one.
  const array& leaf() const;
  array& leaf();
  const List& list() const;
  List& list();
  const Dict& dict() const;
  Dict& dict();

  /// The child named `key` of a dict; throws std::out_of_range naming the key when absent.
  const Tree& at(const std::string& key) const;
  Tree& at(const std::string& key);
  /// The child at `index` of a list; throws std::out_of_range when past the end.
  const Tree& at(size_t index) const;
  Tree& at(size_t index);
  /// The child named `key`, inserted empty at the end when absent (as std::map's operator[]).
  Tree& operator[](const std::string& key);
  bool contains(const std::string& key) const;
  /// Sets child `key` of a dict, replacing one of the same name in place or appending.
  Tree& set(const std::string& key, Tree value);
  /// Appends to a list.
  void push_back(Tree value);

 private:
  std::variant<array, List, Dict> node_;
};

/// The leaves with their dotted paths ("layers.0.weight"), depth first, in order. A non-empty
/// `prefix` is prepended with a dot, as MLX's tree_flatten does.
std::vector<std::pair<std::string, array>> tree_flatten(const Tree& tree, const std::string& prefix = "");
/// The leaves alone, in tree_flatten's order.
std::vector<array> tree_leaves(const Tree& tree);
/// The tree that tree_flatten turns into `leaves`: a path segment of digits indexes a list
/// (MLX's rule), any other a dict. Throws std::invalid_argument("[tree_unflatten] ...") when a
/// path is both a leaf and a node, or a list's indices are not 0..n-1.
Tree tree_unflatten(const std::vector<std::pair<std::string, array>>& leaves);

/// The tree of `fn` applied to every leaf.
Tree tree_map(const std::function<array(const array&)>& fn, const Tree& tree);
/// `fn` applied to the leaves of `trees` found at the same place: the structure is the first
/// tree's; the others are looked up by its keys and indices (extra entries are ignored, as in
/// MLX). Throws std::invalid_argument("[tree_map] ...") when one lacks a place the first has.
Tree tree_map(const std::function<array(const std::vector<array>&)>& fn, const std::vector<Tree>& trees);
/// `a` with the leaves of `b` written over it at the same places; places only `b` has are
/// added (dicts) or must exist (lists). Throws std::invalid_argument("[tree_merge] ...") when
/// `b` puts a leaf where `a` has a node or the reverse.
Tree tree_merge(const Tree& a, const Tree& b);

}  // namespace braid
