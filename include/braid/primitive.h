// Primitive: the unit of computation behind every lazy array (MLX's Primitive).
#pragma once

#include <utility>
#include <vector>

#include "braid/array.h"
#include "braid/stream.h"

namespace braid {

/// A primitive computes its outputs from its inputs on one stream. Ops build primitives and
/// never compute; a backend supplies eval_cpu / eval_gpu. A primitive object is immutable
/// once built, so any thread may read it.
class Primitive {
 public:
  explicit Primitive(Stream stream) : stream_(std::move(stream)) {}
  virtual ~Primitive() = default;
  Primitive(const Primitive&) = delete;
  Primitive& operator=(const Primitive&) = delete;

  const Stream& stream() const { return stream_; }
  Device device() const { return stream_.device; }

  /// Fills `outputs` (already shaped and typed) from `inputs`, on the calling thread. A
  /// primitive with several outputs (its nodes made by array::make_arrays) gets them all, in
  /// order, in one call.
  virtual void eval_cpu(const std::vector<array>& inputs, std::vector<array>& outputs) = 0;
  virtual void eval_gpu(const std::vector<array>& inputs, std::vector<array>& outputs) = 0;

  /// Vector-Jacobian product: one cotangent per input in `argnums`; the default throws.
  virtual std::vector<array> vjp(const std::vector<array>& primals,
                                 const std::vector<array>& cotangents,
                                 const std::vector<int>& argnums,
                                 const std::vector<array>& outputs);
  /// Jacobian-vector product (MLX's form); the default throws.
  virtual std::vector<array> jvp(const std::vector<array>& primals,
                                 const std::vector<array>& tangents,
                                 const std::vector<int>& argnums);
  /// braid's form of jvp, which also sees the node's outputs (their shapes and dtypes, and
  /// values to reuse); the transforms call this one. The default forwards to MLX's form, so
  /// a primitive ported from MLX works unchanged.
  virtual std::vector<array> jvp(const std::vector<array>& primals,
                                 const std::vector<array>& tangents,
                                 const std::vector<int>& argnums,
                                 const std::vector<array>& outputs) {
    return jvp(primals, tangents, argnums);
  }
  /// Vectorizing map; the default throws.
  virtual std::pair<std::vector<array>, std::vector<int>> vmap(const std::vector<array>& inputs,
                                                               const std::vector<int>& axes);

  /// The output shapes this primitive gives for `inputs` (MLX's output_shapes): how a shapeless
  /// compiled function replays its trace on inputs of other shapes. The default throws
  /// std::invalid_argument ("[Primitive::output_shapes] <name> cannot infer output shapes.");
  /// so does a primitive whose stored arguments do not fit the inputs.
  virtual std::vector<Shape> output_shapes(const std::vector<array>& inputs);

  virtual const char* name() const = 0;
  virtual bool is_equivalent(const Primitive& other) const { return false; }

 private:
  Stream stream_;
};

/// A primitive with exactly one output.
class UnaryPrimitive : public Primitive {
 public:
  using Primitive::Primitive;
  virtual void eval_cpu(const std::vector<array>& inputs, array& out) = 0;
  virtual void eval_gpu(const std::vector<array>& inputs, array& out) = 0;
  void eval_cpu(const std::vector<array>& inputs, std::vector<array>& outputs) final {
    eval_cpu(inputs, outputs[0]);
  }
  void eval_gpu(const std::vector<array>& inputs, std::vector<array>& outputs) final {
    eval_gpu(inputs, outputs[0]);
  }
};

}  // namespace braid
