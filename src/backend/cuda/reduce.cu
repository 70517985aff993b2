// Reduce::eval_gpu: checks the output dtype, then runs the engine of reduce.cuh for the op.
// sum lives here; prod, max and min have a file each so that they compile in parallel. all and
// any are min and max of a bool input (the op casts first).
#include "backend/cuda/reduce.cuh"

namespace braid {
namespace cuda {

void reduce_sum(const array& in, array& out, const std::vector<int>& axes, const Stream& s) {
  dispatch_dtype(in.dtype(), [&](auto tag) {
    using In = typename decltype(tag)::type;
    if (out.dtype() == float32 && !std::is_same_v<In, float>) {
      // A float32 sum of 16-bit floats (mean's).
      if constexpr (is_half_v<In>) {
        GpuReducer<SumOp<In, float>, In, float>(in, out, axes, s).run();
      }
    } else {
      GpuReducer<SumOp<In, SumOut<In>>, In, SumOut<In>>(in, out, axes, s).run();
    }
  });
}

}  // namespace cuda

void Reduce::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  if (in.shape() == out.shape()) {
    // Only size-1 axes are reduced: a converting copy.
    cuda::copy_to_contiguous(in, out, stream());
    return;
  }
  bool supported = false;
  switch (op_) {
    case Op::sum:
      supported = out.dtype() == sum_dtype(in.dtype()) ||
                  (out.dtype() == float32 && (in.dtype() == float16 || in.dtype() == bfloat16));
      break;
    case Op::prod: supported = out.dtype() == sum_dtype(in.dtype()); break;
    case Op::max:
    case Op::min: supported = out.dtype() == in.dtype(); break;
    case Op::all:
    case Op::any: supported = in.dtype() == bool_ && out.dtype() == bool_; break;
  }
  if (!supported) {
    throw std::runtime_error(std::string("[") + name() + "] Unsupported output dtype " +
                             dtype_name(out.dtype()) + " for input " + dtype_name(in.dtype()) + ".");
  }
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  switch (op_) {
    case Op::sum: return cuda::reduce_sum(in, out, axes_, stream());
    case Op::prod: return cuda::reduce_prod(in, out, axes_, stream());
    case Op::max:
    case Op::any: return cuda::reduce_max(in, out, axes_, stream());
    case Op::min:
    case Op::all: return cuda::reduce_min(in, out, axes_, stream());
  }
}

}  // namespace braid
