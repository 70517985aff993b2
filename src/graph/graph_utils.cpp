// print_graph and export_to_dot: one iterative walk (graphs of any depth) that lists the
// nodes inputs-first, then two writers.
#include "braid/graph_utils.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "braid/primitive.h"

namespace braid {

const std::string& NodeNamer::get_name(const array& x) {
  auto [it, inserted] = names.try_emplace(x.id());
  if (inserted) it->second = letters(names.size());
  return it->second;
}

std::string NodeNamer::letters(size_t n) {
  // Bijective base 26: 1 -> A, 26 -> Z, 27 -> AA.
  std::string s;
  while (n > 0) {
    s.push_back(static_cast<char>('A' + (n - 1) % 26));
    n = (n - 1) / 26;
  }
  std::reverse(s.begin(), s.end());
  return s;
}

void NodeNamer::set_name(const array& x, std::string n) { names[x.id()] = std::move(n); }

namespace {

/// One computation: a primitive, its inputs and the arrays it produced (several for a
/// multi-output primitive, which its outputs share).
struct GraphNode {
  std::string name;
  std::vector<array> inputs;
  std::vector<array> outputs;
};

struct Graph {
  std::vector<array> leaves;     // arrays with no (remaining) inputs, in first-seen order
  std::vector<GraphNode> nodes;  // inputs before their users
};

Graph walk(const std::vector<array>& outputs) {
  Graph g;
  std::unordered_set<std::uintptr_t> seen_arrays;
  std::unordered_map<const void*, size_t> node_of;
  // Post-order with an explicit stack. An entry's inputs are read (a copy taken under the
  // node's lock) once, when it is first reached; the entry is completed after its inputs.
  struct Entry {
    array a;
    std::optional<std::vector<array>> inputs;  // set once expanded
  };
  std::vector<Entry> stack;
  for (auto it = outputs.rbegin(); it != outputs.rend(); ++it) stack.push_back({*it, std::nullopt});
  while (!stack.empty()) {
    if (seen_arrays.count(stack.back().a.id())) {
      stack.pop_back();
      continue;
    }
    if (!stack.back().inputs) {
      Entry& e = stack.back();
      e.inputs = e.a.primitive_ptr() ? e.a.inputs() : std::vector<array>{};
      std::vector<array> in = *e.inputs;  // e may move as the stack grows
      for (auto it = in.rbegin(); it != in.rend(); ++it) {
        if (!seen_arrays.count(it->id())) stack.push_back({*it, std::nullopt});
      }
      continue;
    }
    Entry e = std::move(stack.back());
    stack.pop_back();
    seen_arrays.insert(e.a.id());
    if (e.inputs->empty()) {
      g.leaves.push_back(e.a);
      continue;
    }
    // The outputs of a multi-output primitive's call share their group: one node for all.
    const detail::ArrayDesc* d = e.a.desc();
    const void* key = d->siblings ? static_cast<const void*>(d->siblings.get()) : d;
    auto [it, inserted] = node_of.try_emplace(key, g.nodes.size());
    if (inserted) g.nodes.push_back(GraphNode{e.a.primitive().name(), std::move(*e.inputs), {}});
    g.nodes[it->second].outputs.push_back(e.a);
  }
  return g;
}

std::string describe(const array& a) {
  std::ostringstream s;
  s << "(";
  for (size_t i = 0; i < a.ndim(); ++i) s << (i ? "," : "") << a.shape(static_cast<int>(i));
  if (a.ndim() == 1) s << ",";
  s << ") " << a.dtype();
  return s.str();
}

}  // namespace

void print_graph(std::ostream& os, NodeNamer namer, const std::vector<array>& outputs) {
  const Graph g = walk(outputs);
  os << "Inputs:";
  for (const array& a : g.leaves) os << " " << namer.get_name(a);
  os << "\n";
  for (const GraphNode& n : g.nodes) {
    os << n.name;
    for (const array& a : n.inputs) os << " " << namer.get_name(a);
    os << " ->";
    for (const array& a : n.outputs) os << " " << namer.get_name(a);
    os << "\n";
  }
  os << "Outputs:";
  for (const array& a : outputs) os << " " << namer.get_name(a);
  os << "\n";
}

void export_to_dot(std::ostream& os, NodeNamer namer, const std::vector<array>& outputs) {
  const Graph g = walk(outputs);
  std::unordered_set<std::uintptr_t> is_output;
  for (const array& a : outputs) is_output.insert(a.id());
  os << "digraph {\n";
  auto array_vertex = [&](const array& a) {
    os << "  \"" << a.id() << "\" [shape=box, label=\"" << namer.get_name(a) << "\\n"
       << describe(a) << "\"" << (is_output.count(a.id()) ? ", style=filled, fillcolor=lightgray" : "")
       << "];\n";
  };
  for (const array& a : g.leaves) array_vertex(a);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    for (const array& a : n.outputs) array_vertex(a);
    os << "  \"node" << i << "\" [label=\"" << n.name << "\"];\n";
    for (const array& a : n.inputs) os << "  \"" << a.id() << "\" -> \"node" << i << "\";\n";
    for (const array& a : n.outputs) os << "  \"node" << i << "\" -> \"" << a.id() << "\";\n";
  }
  os << "}\n";
}

}  // namespace braid
