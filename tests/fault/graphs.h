// The graphs the fault cases evaluate, each with its expected values computed on the host in
// double precision (independently of braid).
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "braid/braid.h"

namespace fault {

/// A graph to evaluate and what each output must hold.
struct CheckedGraph {
  std::vector<braid::array> outputs;
  std::vector<std::vector<double>> expected;  // per output, row-major
};

/// About 45 nodes over three streams with cross-stream edges: adds, a matmul, a transpose,
/// a softmax, reductions, a `where`, and two 256x512 elementwise ops large enough to be split
/// across the worker pool.
CheckedGraph sweep_graph(const std::vector<braid::Stream>& streams);

/// One elementwise op large enough to be split across the worker pool.
CheckedGraph parallel_op_graph(const braid::Stream& s);

/// A graph for start-up cases: two streams, a cross-stream edge, a pool-sized op.
CheckedGraph small_graph(const braid::Stream& a, const braid::Stream& b);

/// Four chains of six 256x256 float32 matmuls and other ops, one per stream (exit cases).
std::vector<braid::array> exit_workload(const std::vector<braid::Stream>& streams);

/// Empty when every output is computed and matches; otherwise what is wrong. Reads the
/// outputs (which evaluates them if needed): call it with injection off.
std::string check_values(const CheckedGraph& g);

/// True when `e` is std::bad_alloc or carries one as a nested cause.
bool caused_by_bad_alloc(const std::exception_ptr& e);
/// The exception's type name and what().
std::string describe(const std::exception_ptr& e);

/// Synchronizes every stream, each even when another reported a failure. synchronize rethrows
/// a kernel's failure that no eval reported: here those must be the injected allocation
/// failures. Empty when they all are; otherwise the first other failure, described.
std::string synchronize_all(const std::vector<braid::Stream>& streams);

}  // namespace fault
