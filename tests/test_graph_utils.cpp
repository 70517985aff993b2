// print_graph and export_to_dot: the text and DOT forms of a lazy graph, multi-output
// nodes, names set by the caller, and a graph deeper than any recursion would survive.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "braid/braid.h"
#include "support.h"

using namespace braid;

namespace {
size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST(GraphUtils, NamerCountsInBase26) {
  NodeNamer namer;
  std::vector<array> xs;
  for (int i = 0; i < 28; ++i) xs.push_back(array(static_cast<float>(i)));
  for (const array& x : xs) namer.get_name(x);
  EXPECT_EQ(namer.get_name(xs[0]), "A");
  EXPECT_EQ(namer.get_name(xs[25]), "Z");
  EXPECT_EQ(namer.get_name(xs[26]), "AA");
  EXPECT_EQ(namer.get_name(xs[27]), "AB");
  namer.set_name(xs[1], "weights");
  EXPECT_EQ(namer.get_name(xs[1]), "weights");
}

TEST(GraphUtils, PrintGraphListsInputsNodesAndOutputs) {
  array a(1.0f), b(2.0f);
  array c = add(a, b);
  array d = multiply(c, a);
  std::ostringstream os;
  print_graph(os, d);
  const std::string text = os.str();
  EXPECT_EQ(text, "Inputs: A B\nAdd A B -> C\nMultiply C A -> D\nOutputs: D\n") << text;
}

TEST(GraphUtils, DotHasEveryArrayAndNodeOnce) {
  array a(7.0f), b(2.0f);
  array c = add(a, b);
  array d = multiply(c, a);
  std::ostringstream os;
  NodeNamer namer;
  namer.set_name(a, "numerator");
  export_to_dot(os, namer, {c, d});
  const std::string dot = os.str();
  EXPECT_EQ(dot.rfind("digraph {", 0), 0u);
  EXPECT_NE(dot.find("numerator"), std::string::npos);
  EXPECT_EQ(count(dot, "shape=box"), 4u) << dot;  // a, b, c, d
  EXPECT_EQ(count(dot, "fillcolor"), 2u) << dot;  // the outputs c and d
  EXPECT_EQ(count(dot, "[label=\"Add\"]"), 1u) << dot;
  EXPECT_EQ(count(dot, "[label=\"Multiply\"]"), 1u) << dot;
  EXPECT_EQ(count(dot, " -> "), 6u) << dot;  // a, b -> add -> c; c, a -> multiply -> d
}

TEST(GraphUtils, DeepGraphsPrintWithoutRecursion) {
  // Deep enough that a recursive walk overflows the stack; fewer nodes under the sanitizers
  // (whose frames are larger still), where the full depth took 29 s.
  const int n = test::kSanitized ? 50000 : 200000;
  array x(0.0f);
  for (int i = 0; i < n; ++i) x = add(x, array(1.0f));
  std::ostringstream os;
  print_graph(os, x);
  EXPECT_EQ(count(os.str(), "Add "), static_cast<size_t>(n));
  export_to_dot(os, x);
  eval(x);
  EXPECT_EQ(x.item<float>(), static_cast<float>(n));
}
