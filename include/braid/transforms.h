// Evaluation of lazy graphs.
#pragma once

#include <memory>
#include <vector>

#include "braid/array.h"

namespace braid {

/// Computes `outputs` and everything they need, then returns; rethrows the first error
/// found on an output. Any thread may call it on any arrays, concurrently with other
/// evaluations that share nodes: each node is computed exactly once.
void eval(std::vector<array> outputs);
template <typename... Arrays>
void eval(Arrays&&... outputs) {
  eval(std::vector<array>{std::forward<Arrays>(outputs)...});
}

/// A handle on an asynchronous evaluation. Any thread may wait on it, any number of times.
class EvalHandle {
 public:
  EvalHandle() = default;
  explicit EvalHandle(std::vector<array> outputs) : outputs_(std::move(outputs)) {}
  /// Blocks until every output is computed; rethrows the first error.
  void wait() const;
  /// True when every output has finished (computed or failed). Never blocks.
  bool ready() const;

 private:
  std::vector<array> outputs_;
};

/// Submits `outputs` for evaluation and returns at once; the work runs on the streams'
/// workers. The returned handle (ignorable, as in MLX) waits for it.
EvalHandle async_eval(std::vector<array> outputs);
template <typename... Arrays>
EvalHandle async_eval(Arrays&&... outputs) {
  return async_eval(std::vector<array>{std::forward<Arrays>(outputs)...});
}

}  // namespace braid
