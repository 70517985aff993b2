// Trees of arrays. The walks recurse over the tree's nesting, which is a model's module depth
// (a handful of levels), never over a graph.
#include "braid/tree.h"

#include <stdexcept>

namespace braid {

namespace {

[[noreturn]] void fail(const char* where, const std::string& what) {
  throw std::invalid_argument(std::string("[") + where + "] " + what);
}

bool is_index(const std::string& segment) {
  if (segment.empty()) return false;
  for (char c : segment) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

size_t Tree::size() const {
  if (is_leaf()) return 1;
  return is_list() ? list().size() : dict().size();
}

bool Tree::empty() const {
  if (is_leaf()) return false;
  if (is_list()) {
    for (const auto& item : list()) {
      if (!item.empty()) return false;
    }
    return true;
  }
  for (const auto& [key, item] : dict()) {
    if (!item.empty()) return false;
  }
  return true;
}

const array& Tree::leaf() const {
  if (!is_leaf()) fail("Tree", "This tree is a node, not a leaf.");
  return std::get<array>(node_);
}
array& Tree::leaf() { return const_cast<array&>(std::as_const(*this).leaf()); }

const Tree::List& Tree::list() const {
  if (!is_list()) fail("Tree", "This tree is not a list.");
  return std::get<List>(node_);
}
Tree::List& Tree::list() { return const_cast<List&>(std::as_const(*this).list()); }

const Tree::Dict& Tree::dict() const {
  if (!is_dict()) fail("Tree", "This tree is not a dict.");
  return std::get<Dict>(node_);
}
Tree::Dict& Tree::dict() { return const_cast<Dict&>(std::as_const(*this).dict()); }

const Tree& Tree::at(const std::string& key) const {
  for (const auto& [name, item] : dict()) {
    if (name == key) return item;
  }
  throw std::out_of_range("[Tree] No entry named '" + key + "'.");
}
Tree& Tree::at(const std::string& key) { return const_cast<Tree&>(std::as_const(*this).at(key)); }

const Tree& Tree::at(size_t index) const {
  const auto& items = list();
  if (index >= items.size()) {
    throw std::out_of_range("[Tree] Index " + std::to_string(index) + " is past the end of a list of " +
                            std::to_string(items.size()) + ".");
  }
  return items[index];
}
Tree& Tree::at(size_t index) { return const_cast<Tree&>(std::as_const(*this).at(index)); }

Tree& Tree::operator[](const std::string& key) {
  auto& items = dict();
  for (auto& [name, item] : items) {
    if (name == key) return item;
  }
  items.emplace_back(key, Tree());
  return items.back().second;
}

bool Tree::contains(const std::string& key) const {
  if (!is_dict()) return false;
  for (const auto& [name, item] : dict()) {
    if (name == key) return true;
  }
  return false;
}

Tree& Tree::set(const std::string& key, Tree value) {
  Tree& slot = (*this)[key];
  slot = std::move(value);
  return slot;
}

void Tree::push_back(Tree value) { list().push_back(std::move(value)); }

namespace {

void flatten_into(const Tree& tree, const std::string& path, std::vector<std::pair<std::string, array>>& out) {
  auto child_path = [&](const std::string& segment) { return path.empty() ? segment : path + "." + segment; };
  if (tree.is_leaf()) {
    out.emplace_back(path, tree.leaf());
  } else if (tree.is_list()) {
    for (size_t i = 0; i < tree.list().size(); ++i) flatten_into(tree.list()[i], child_path(std::to_string(i)), out);
  } else {
    for (const auto& [key, item] : tree.dict()) flatten_into(item, child_path(key), out);
  }
}

// Lists are first built as dicts keyed by their indices, then checked and converted.
Tree lists_from_index_dicts(Tree tree, const std::string& path) {
  if (tree.is_leaf()) return tree;
  bool all_indices = !tree.dict().empty();
  for (const auto& [key, item] : tree.dict()) all_indices = all_indices && is_index(key);
  for (auto& [key, item] : tree.dict()) item = lists_from_index_dicts(std::move(item), path + key + ".");
  if (!all_indices) return tree;
  Tree::List items(tree.dict().size());
  std::vector<bool> seen(items.size(), false);
  for (auto& [key, item] : tree.dict()) {
    size_t index = std::stoull(key);
    if (index >= items.size() || seen[index]) {
      fail("tree_unflatten", "The list at '" + path + "' does not have indices 0.." +
                                 std::to_string(items.size() - 1) + " (found " + key + ").");
    }
    seen[index] = true;
    items[index] = std::move(item);
  }
  return Tree(std::move(items));
}

Tree map_leaves(const std::function<array(const std::vector<array>&)>& fn, const Tree& first,
                const std::vector<const Tree*>& rest, const std::string& path) {
  std::vector<const Tree*> next(rest.size());
  auto describe = [&] { return path.empty() ? std::string("the root") : "'" + path + "'"; };
  if (first.is_leaf()) {
    std::vector<array> leaves{first.leaf()};
    for (const Tree* other : rest) {
      if (!other->is_leaf()) fail("tree_map", "A tree has a node where the first has a leaf, at " + describe() + ".");
      leaves.push_back(other->leaf());
    }
    return Tree(fn(leaves));
  }
  auto child_path = [&](const std::string& segment) { return path.empty() ? segment : path + "." + segment; };
  if (first.is_list()) {
    Tree::List items;
    for (size_t i = 0; i < first.list().size(); ++i) {
      for (size_t t = 0; t < rest.size(); ++t) {
        if (!rest[t]->is_list() || i >= rest[t]->list().size()) {
          fail("tree_map", "A tree lacks item " + std::to_string(i) + " of the list at " + describe() + ".");
        }
        next[t] = &rest[t]->list()[i];
      }
      items.push_back(map_leaves(fn, first.list()[i], next, child_path(std::to_string(i))));
    }
    return Tree(std::move(items));
  }
  Tree::Dict items;
  for (const auto& [key, item] : first.dict()) {
    for (size_t t = 0; t < rest.size(); ++t) {
      if (!rest[t]->contains(key)) fail("tree_map", "A tree lacks '" + child_path(key) + "'.");
      next[t] = &rest[t]->at(key);
    }
    items.emplace_back(key, map_leaves(fn, item, next, child_path(key)));
  }
  return Tree(std::move(items));
}

Tree merge(const Tree& a, const Tree& b, const std::string& path) {
  auto child_path = [&](const std::string& segment) { return path.empty() ? segment : path + "." + segment; };
  if (a.is_leaf() != b.is_leaf()) {
    fail("tree_merge", "One tree has a leaf and the other a node at '" + path + "'.");
  }
  if (b.is_leaf()) return b;
  if (a.is_list() != b.is_list()) fail("tree_merge", "One tree has a list and the other a dict at '" + path + "'.");
  if (a.is_list()) {
    Tree::List items = a.list();
    if (b.list().size() > items.size()) {
      fail("tree_merge", "The second tree's list at '" + path + "' is longer than the first's.");
    }
    for (size_t i = 0; i < b.list().size(); ++i) items[i] = merge(items[i], b.list()[i], child_path(std::to_string(i)));
    return Tree(std::move(items));
  }
  Tree result = a;
  for (const auto& [key, item] : b.dict()) {
    if (result.contains(key)) {
      result.at(key) = merge(result.at(key), item, child_path(key));
    } else {
      result.set(key, item);
    }
  }
  return result;
}

}  // namespace

std::vector<std::pair<std::string, array>> tree_flatten(const Tree& tree, const std::string& prefix) {
  std::vector<std::pair<std::string, array>> out;
  flatten_into(tree, prefix, out);
  return out;
}

std::vector<array> tree_leaves(const Tree& tree) {
  std::vector<array> leaves;
  for (auto& [path, leaf] : tree_flatten(tree)) leaves.push_back(std::move(leaf));
  return leaves;
}

Tree tree_unflatten(const std::vector<std::pair<std::string, array>>& leaves) {
  Tree root;
  for (const auto& [path, leaf] : leaves) {
    Tree* node = &root;
    size_t start = 0;
    while (true) {
      size_t dot = path.find('.', start);
      std::string segment = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (node->is_leaf()) fail("tree_unflatten", "'" + path + "' is below a leaf.");
      bool last = dot == std::string::npos;
      if (last) {
        if (node->contains(segment)) fail("tree_unflatten", "'" + path + "' is given twice or is also a node.");
        node->set(segment, Tree(leaf));
        break;
      }
      node = &(*node)[segment];
      start = dot + 1;
    }
  }
  return lists_from_index_dicts(std::move(root), "");
}

Tree tree_map(const std::function<array(const array&)>& fn, const Tree& tree) {
  return map_leaves([&](const std::vector<array>& leaves) { return fn(leaves[0]); }, tree, {}, "");
}

Tree tree_map(const std::function<array(const std::vector<array>&)>& fn, const std::vector<Tree>& trees) {
  if (trees.empty()) fail("tree_map", "No tree given.");
  std::vector<const Tree*> rest;
  for (size_t i = 1; i < trees.size(); ++i) rest.push_back(&trees[i]);
  return map_leaves(fn, trees[0], rest, "");
}

Tree tree_merge(const Tree& a, const Tree& b) { return merge(a, b, ""); }

}  // namespace braid
