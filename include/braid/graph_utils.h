// Printing a lazy graph (MLX's mlx/graph_utils.h): as text, or as Graphviz DOT.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "braid/array.h"

namespace braid {

/// Names arrays A, B, ..., Z, AA, AB, ... in the order they are first asked for; a name set
/// with set_name is kept. One namer per printout; not shared between threads.
struct NodeNamer {
  std::unordered_map<std::uintptr_t, std::string> names;

  const std::string& get_name(const array& x);
  void set_name(const array& x, std::string n);
  /// The n-th name given (n from 1): A, ..., Z, AA, AB, ...
  static std::string letters(size_t n);
};

/// Writes the graph behind `outputs` as text: its inputs, one line per node
/// ("Add A B -> C"), inputs before users, then its outputs. Reading a graph that another
/// thread is evaluating is safe (an evaluated node may already have dropped its inputs).
void print_graph(std::ostream& os, NodeNamer namer, const std::vector<array>& outputs);
inline void print_graph(std::ostream& os, const std::vector<array>& outputs) {
  print_graph(os, NodeNamer{}, outputs);
}
template <typename... Arrays>
requires(std::is_same_v<std::decay_t<Arrays>, array>&&...) void print_graph(std::ostream& os,
                                                                            Arrays&&... outputs) {
  print_graph(os, NodeNamer{}, std::vector<array>{std::forward<Arrays>(outputs)...});
}

/// Writes the graph behind `outputs` as a Graphviz digraph: arrays as boxes (name, shape and
/// dtype), nodes as ellipses labelled with their primitive, edges in the direction data flows.
void export_to_dot(std::ostream& os, NodeNamer namer, const std::vector<array>& outputs);
inline void export_to_dot(std::ostream& os, const std::vector<array>& outputs) {
  export_to_dot(os, NodeNamer{}, outputs);
}
template <typename... Arrays>
requires(std::is_same_v<std::decay_t<Arrays>, array>&&...) void export_to_dot(std::ostream& os,
                                                                              Arrays&&... outputs) {
  export_to_dot(os, NodeNamer{}, std::vector<array>{std::forward<Arrays>(outputs)...});
}

}  // namespace braid
