// A traced function's graph as data (compile's and export_function's): the steps between a
// function's placeholder inputs and its outputs, recorded once and replayed on new inputs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "braid/array.h"
#include "braid/primitive.h"

namespace braid::detail {

// Where a replayed node's input comes from.
struct Ref {
  enum class Kind : uint8_t { input, step, constant };
  Kind kind;
  uint32_t index;
};

// The outputs a multi-output primitive's call gives (their shapes and dtypes as traced); the
// steps of one call share it, and a replay builds them with one node group.
struct StepGroup {
  std::vector<Shape> shapes;
  std::vector<Dtype> dtypes;
};

struct Step {
  std::shared_ptr<Primitive> primitive;
  std::vector<Ref> inputs;
  Shape shape;
  Dtype dtype;
  bool follows_inputs = true;  // reaches an input (else its shape is the recorded one)
  // A step that reaches no input: the node the trace built. Once something computes it (the
  // caller evaluating a captured array), replays read its value instead of building the
  // step again, as MLX's replay uses an array that no longer has a primitive.
  std::optional<array> traced;
  // Set for an output of a multi-output primitive: its call's outputs, and which one it is.
  std::shared_ptr<const StepGroup> group = nullptr;
  uint32_t position = 0;
};

// One trace: immutable once recorded, read by any number of replays at once.
struct Program {
  std::vector<Step> steps;       // inputs before their users
  std::vector<array> constants;  // arrays the function captured (or made from no input)
  std::vector<Ref> outputs;
  size_t num_inputs = 0;
  std::vector<Shape> input_shapes;  // the shapes it was traced for
  // Traced shapeless and every step's primitive infers its output shape from its inputs': a
  // replay on inputs of other shapes (of the same ranks) recomputes the shapes.
  bool shapeless = false;
  // The graph reached a value-less leaf that is not one of this trace's placeholders: the
  // call happened inside another compile's trace (or a vmap's), whose placeholder this trace
  // captured. Right for this call only: not kept.
  bool nested = false;
  // A constant is a tracer of an enclosing transform (a captured parameter under grad or
  // vmap): the replayed steps are differentiated or vectorized, so they are never fused.
  bool captures_tracer = false;
};

/// The graph between `placeholders` and `outputs`, with an explicit stack (graphs of any
/// depth). Nodes that reach no placeholder are constants, kept as they are. Equal scalar
/// constants and steps that repeat an earlier one (the same equivalent primitive on the same
/// inputs) are recorded once. A node that reaches one of the call's own `inputs` (captured by
/// the function as well as passed, and not yet computed) is MLX's error: the replay could not
/// tell it from the input it stands for. `shapeless`: the program is marked shapeless when
/// every step's primitive infers its output shape. `unfold` (export_function's): a node that
/// reaches no placeholder is recorded as a step too, down to computed arrays and leaves,
/// when its primitive satisfies it (so a file holds a captured array once, not once per
/// expression of it), and is a constant otherwise (compile's unfolds every primitive, as
/// MLX's compile replays every node it traced); a tracer of an enclosing transform stays a
/// constant either way. Steps and constants that no output reads are dropped. `drop_noops` (compile's, as
/// MLX's simplification): a stop_gradient or copy that follows the inputs is not recorded, its input standing
/// for it (a compiled function is never differentiated through its trace). `merge` false (compile under
/// CompileMode::no_simplify): equal scalars and repeated steps are recorded as they were traced, each on its
/// own.
std::shared_ptr<const Program> record(const std::vector<array>& placeholders,
                                      const std::vector<array>& inputs, const std::vector<array>& outputs,
                                      bool shapeless,
                                      const std::function<bool(const Primitive&)>& unfold = {},
                                      bool drop_noops = false, bool merge = true);

/// compile's fusion (MLX's): each group of element-wise steps (Unary, Binary, Select,
/// AsType) that reach an input, on one CPU stream, at least two, whose intermediates nothing outside the
/// group reads, becomes one Compiled step (primitives/compiled.h) computing the group's last value; a
/// broadcast of a group's input is read broadcast instead. `program` itself when nothing fuses. GPU steps are
/// left as they are.
std::shared_ptr<const Program> fuse(const std::shared_ptr<const Program>& program);

/// The program's nodes built from `inputs`; with `infer`, each node's shape is what its
/// primitive computes from its new inputs' (throws std::invalid_argument where one does not
/// fit), else the recorded one.
std::vector<array> replay(const Program& p, const std::vector<array>& inputs, bool infer = false);

}  // namespace braid::detail
