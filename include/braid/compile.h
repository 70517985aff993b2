// compile (MLX's mlx/compile.h): a function traced once per input signature and replayed.
//
// The first call with a given signature (the inputs' count, shapes and dtypes, plus any
// caller's constants; ranks instead of shapes when shapeless) runs the function on placeholder
// inputs that have no value and records the graph between them and the outputs: each node's
// primitive, where its inputs come from (an input, an earlier node, or an array the function
// captured, kept alive) and its shape and dtype. Later calls build the same nodes again from
// the new inputs, reusing the recorded primitive objects; the function itself does not run
// again. As MLX's, the recording is simplified (a repeated expression and equal scalar
// constants are built once, stop_gradient and copy nodes read through), and on CPU streams
// groups of element-wise nodes are fused into Compiled nodes whose values are bit for bit the
// unfused graph's.
//
// Evaluating an array that depends on the inputs while the function is traced throws
// std::invalid_argument (MLX's message). A transform may be compiled (its graph is traced and
// replayed like any other); called inside a transform with its tracers, a compiled function
// runs the function itself, as MLX's do.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "braid/array.h"

namespace braid {

/// MLX's compile modes: `disabled` calls the function directly, `no_simplify` traces without
/// merging repeated steps and equal scalars (nor dropping no-op copies), `no_fuse` replays
/// without fusing. The mode in effect when a function is traced shapes its cached trace.
enum class CompileMode { disabled, no_simplify, no_fuse, enabled };

using CompileFn = std::function<std::vector<array>(const std::vector<array>&)>;

/// The traces of one function, one per signature (see the top of this file). Any number of
/// threads may call one cache at once: a signature (which includes the calling thread's
/// default stream, so each thread has its own) is traced once, a second caller of it waiting
/// for the first trace, and replays run in parallel. Traces are kept for the cache's life.
class CompileCache {
 public:
  /// `shapeless` (MLX's): one trace serves every shape of the same ranks and dtypes. It is
  /// traced with ops that build shape-following nodes (a mean divides by a NumberOfElements
  /// node), and a call with other shapes rebuilds its nodes with the shapes each primitive's
  /// output_shapes computes from its new inputs. As in MLX, what the function computed from
  /// the traced shapes (a reshape's sizes, a slice's bounds, an array the size of the first
  /// input) stays as it was traced. Where MLX raises (a primitive that cannot infer its
  /// output shape, such as Reshape, Slice or Gather, or a stored bound that no longer fits),
  /// braid traces the function again for those shapes, as without `shapeless`.
  explicit CompileCache(bool shapeless = false);
  ~CompileCache();
  CompileCache(const CompileCache&) = delete;
  CompileCache& operator=(const CompileCache&) = delete;

  /// fun(inputs) through the trace of this signature and `constants` (values the caller
  /// wants in the key, such as the non-array arguments of a Python call). `fun` runs only
  /// when that trace does not exist yet, or always while compilation is disabled.
  std::vector<array> call(const CompileFn& fun, const std::vector<array>& inputs,
                          const std::vector<uint64_t>& constants = {});

  /// Number of traces kept (for tests). Thread-safe.
  size_t size() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

/// `fun` traced once per input signature and replayed (see the top of this file). The
/// returned function may be called (and copied) from any thread; all copies share one cache.
CompileFn compile(CompileFn fun, bool shapeless = false);

namespace detail {

/// MLX's detail::compile, the form bindings use (mlx-c's mlx_detail_compile, as mlx-rs and
/// mlx-swift call it): `fun` compiled with the traces kept under `fun_id` in a process-wide
/// cache, shared by every function compiled with that id (and the same `shapeless`), so a
/// binding may make a new closure on each call and still replay the first one's trace.
/// `constants` join every call's key. Thread-safe.
CompileFn compile(CompileFn fun, std::uintptr_t fun_id, bool shapeless = false,
                  std::vector<uint64_t> constants = {});
/// Forgets the traces kept under `fun_id` (functions already returned keep theirs).
void compile_erase(std::uintptr_t fun_id);
/// Forgets every trace kept by id.
void compile_clear_cache();

/// reshape as MLX's Python API does it (mx.reshape, array.reshape): while a function is traced
/// for shapeless compilation the node keeps `shape` as asked, its -1 inferred again on each
/// replay (a size it cannot hold raises). braid's own ops call reshape, whose nodes keep the
/// traced sizes, so a shapeless replay traces those functions again instead.
array reshape_keeping_request(const array& a, Shape shape, StreamOrDevice s = {});

}  // namespace detail

/// Globally disables compilation: compiled functions call their function directly. The
/// environment variable MLX_DISABLE_COMPILE (read at the first use of compile) does the same.
void disable_compile();
/// Globally enables compilation, overriding MLX_DISABLE_COMPILE.
void enable_compile();
/// Sets the compile mode (process-wide; atomic).
void set_compile_mode(CompileMode mode);

}  // namespace braid
