// Compiled: element-wise primitives of a compiled function fused into one node (MLX's
// Compiled). compile's fusion pass (transforms/fuse.cpp) makes it from a group of Unary,
// Binary, Select and AsType steps on a CPU stream whose intermediates nothing else reads. The
// CPU runs the group tile by tile with the ops' own kernels, so intermediates stay in cache
// and the results are bit for bit those of the unfused ops. An op whose value is also read
// outside the group (or returned) at the group's shape is an output too: the node has several
// outputs then (siblings), written in the same pass.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "braid/primitive.h"

namespace braid {

class Compiled : public Primitive {
 public:
  /// One fused op: its primitive (Unary, Binary, Select or AsType) and its arguments, each
  /// an input of the node (index < num_inputs) or an earlier op (num_inputs + its index).
  struct Op {
    std::shared_ptr<Primitive> primitive;
    std::vector<uint32_t> args;
    Dtype dtype;
  };

  /// `name` is "Compiled" followed by the fused primitives' names in order (a broadcast of
  /// an input, done by reading the input broadcast, included), as MLX names the node.
  /// `outputs` lists the ops whose values are the node's outputs, in output order (the
  /// outputs of one node are siblings, array::make_arrays); by default the last op's alone.
  Compiled(Stream s, std::vector<Op> ops, uint32_t num_inputs, std::string name,
           std::vector<uint32_t> outputs = {})
      : Primitive(std::move(s)),
        ops_(std::move(ops)),
        num_inputs_(num_inputs),
        name_(std::move(name)),
        outputs_(std::move(outputs)) {
    if (outputs_.empty()) outputs_.push_back(static_cast<uint32_t>(ops_.size() - 1));
  }
  void eval_cpu(const std::vector<array>& inputs, std::vector<array>& outputs) override;
  void eval_gpu(const std::vector<array>& inputs, std::vector<array>& outputs) override;
  /// Element-wise: the inputs' shapes broadcast together (a shapeless replay follows them),
  /// for every output.
  std::vector<Shape> output_shapes(const std::vector<array>& inputs) override;
  const char* name() const override { return name_.c_str(); }
  /// The same steps (each op equivalent, with the same arguments and dtype) on as many
  /// inputs, with the same outputs.
  bool is_equivalent(const Primitive& other) const override;
  const std::vector<Op>& ops() const { return ops_; }
  uint32_t num_inputs() const { return num_inputs_; }
  const std::vector<uint32_t>& outputs() const { return outputs_; }

 private:
  std::vector<Op> ops_;
  uint32_t num_inputs_;
  std::string name_;
  std::vector<uint32_t> outputs_;
};

}  // namespace braid
