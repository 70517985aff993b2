// Compiled::eval_cpu: the fused ops run over tiles of the output, each op through its own
// kernel (elementwise_into.h, copy_into) on arrays that point into per-thread tile buffers, so
// an intermediate never leaves the cache and the values are those of the unfused graph.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <typeinfo>

#include "backend/cpu/convert.h"
#include "backend/cpu/dispatch.h"
#include "backend/cpu/elementwise_into.h"
#include "graph/node.h"
#include "primitives/compiled.h"
#include "primitives/shape.h"
#include "runtime/pool.h"

namespace braid {

namespace {

// Elements per tile: below the kernels' own split (kElementwiseGrain), so a tile runs on the
// thread that has it, and large enough that the per-op cost of a tile (a kernel call) stays
// small against its work. The live intermediates of a tile (slots below) stay in the L2 cache.
constexpr int64_t kTile = 32768;

// An array over memory this file manages (a slot, or a part of an input or of the output):
// read and written by the kernels through its data pointer, which moves per tile.
array tile_array(void* data, Shape shape, Dtype dtype) {
  return array(data, std::move(shape), dtype, [](void*) {});
}

void point_at(array& a, void* data) { a.desc()->data_ptr = data; }

// A buffer from braid's allocator, whose cache keeps it for the next evaluation (memory from
// the C heap went back to the system after each one and was faulted in again).
struct Scratch {
  allocator::Buffer buffer;
  explicit Scratch(size_t bytes) : buffer(allocator::malloc(bytes)) {}
  ~Scratch() { allocator::free(buffer); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

// An input read through its strides (broadcast along some axes, transposed, sliced): each
// tile gathers its part into a buffer of its own, so no copy at the output's size is made.
struct Gathered {
  cpu::StridedLayout<1> layout;  // over the output's index space
  const char* base;
};

// Copies the elements at flat positions [start, start + len) of g's index space to `dst`, in
// order, a run along the innermost dimension at a time.
template <typename T>
void gather_range(const Gathered& g, int64_t start, int64_t len, T* dst) {
  const T* base = reinterpret_cast<const T*>(g.base);
  const int64_t stride = g.layout.inner_stride(0);
  g.layout.for_each_run(start, start + len, [&](const std::array<int64_t, 1>& off, int64_t n) {
    const T* src = base + off[0];
    if (stride == 1) {
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
    } else if (stride == 0) {
      std::fill_n(dst, n, *src);
    } else {
      for (int64_t j = 0; j < n; ++j) dst[j] = src[j * stride];
    }
    dst += n;
  });
}

void gather_range(const Gathered& g, size_t item, int64_t start, int64_t len, void* dst) {
  switch (item) {
    case 1: return gather_range(g, start, len, static_cast<uint8_t*>(dst));
    case 2: return gather_range(g, start, len, static_cast<uint16_t*>(dst));
    case 4: return gather_range(g, start, len, static_cast<uint32_t*>(dst));
    case 8: return gather_range(g, start, len, static_cast<uint64_t*>(dst));
    default: throw std::logic_error("[Compiled] unexpected element size.");
  }
}

enum class Kernel : uint8_t { unary, binary, select, astype };

// An op ready to run: its kernel, where its value lives and what it reads.
struct Plan {
  Kernel kernel;
  Unary::Op unary{};
  Binary::Op binary{};
  int slot = -1;    // a tile buffer, unless the value is an output
  int output = -1;  // the node's output the value is
};

Plan plan_of(const Compiled::Op& op) {
  const Primitive& p = *op.primitive;
  if (const auto* u = dynamic_cast<const Unary*>(&p)) return {Kernel::unary, u->op(), {}};
  if (const auto* b = dynamic_cast<const Binary*>(&p)) return {Kernel::binary, {}, b->op()};
  if (typeid(p) == typeid(Select)) return {Kernel::select};
  if (typeid(p) == typeid(AsType)) return {Kernel::astype};
  throw std::logic_error(std::string("[Compiled] cannot run a fused ") + p.name() + ".");
}

void run(const Plan& plan, const std::vector<const array*>& args, array& out) {
  switch (plan.kernel) {
    case Kernel::unary: return cpu::unary_into(plan.unary, *args[0], out);
    case Kernel::binary: return cpu::binary_into(plan.binary, *args[0], *args[1], out);
    case Kernel::select: return cpu::select_into(*args[0], *args[1], *args[2], out);
    case Kernel::astype: return cpu::copy_into(*args[0], out, common::Region{0, out.strides()}, out.shape());
  }
}

}  // namespace

void Compiled::eval_cpu(const std::vector<array>& inputs, std::vector<array>& outputs) {
  // A donated input is read flat: each tile reads its elements before the last step writes the
  // same elements, and no tile reads another's. (A node of several outputs never donates.)
  for (auto& o : outputs) detail::alloc_contiguous_or_donate(inputs, o);
  const array& out = outputs[0];  // every output has this shape
  const int64_t n = static_cast<int64_t>(out.size());
  if (n == 0) return;
  // Each input read as one element, flat at the tile's offset, or (any other layout: a
  // broadcast along some axes, strides) gathered per tile into a buffer of its own.
  enum class Read : uint8_t { scalar, flat, gathered };
  std::vector<Read> reads;
  std::vector<Gathered> gathered(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const array& in = inputs[i];
    if (in.data_size() == 1) {
      reads.push_back(Read::scalar);
    } else if (in.flags().row_contiguous && in.size() == out.size()) {
      reads.push_back(Read::flat);
    } else {
      reads.push_back(Read::gathered);
      gathered[i] = {cpu::StridedLayout<1>(out.shape(), {cpu::broadcast_strides(in, out.shape())}),
                     static_cast<const char*>(in.desc()->data_ptr)};
    }
  }
  // Slots for the intermediates: a value's slot is free again after its last reader, so a
  // chain needs two however long it is. An output's value is written where it goes.
  std::vector<Plan> plans;
  std::vector<size_t> last_read(ops_.size(), 0);
  for (size_t k = 0; k < ops_.size(); ++k) {
    plans.push_back(plan_of(ops_[k]));
    for (uint32_t a : ops_[k].args) {
      if (a >= num_inputs_) last_read[a - num_inputs_] = k;
    }
  }
  for (size_t o = 0; o < outputs_.size(); ++o) plans[outputs_[o]].output = static_cast<int>(o);
  std::vector<int> free_slots;
  int num_slots = 0;
  for (size_t k = 0; k < ops_.size(); ++k) {
    if (plans[k].output < 0) {
      if (free_slots.empty()) free_slots.push_back(num_slots++);
      plans[k].slot = free_slots.back();
      free_slots.pop_back();
    }
    // Values read last by op k are free once it has run (an op never writes what it reads);
    // each once, though op k may read one twice (e * e).
    const auto& args = ops_[k].args;
    for (size_t i = 0; i < args.size(); ++i) {
      const uint32_t a = args[i];
      const bool again = std::find(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(i), a) !=
                         args.begin() + static_cast<std::ptrdiff_t>(i);
      if (a >= num_inputs_ && last_read[a - num_inputs_] == k && !again && plans[a - num_inputs_].slot >= 0)
        free_slots.push_back(plans[a - num_inputs_].slot);
    }
  }
  size_t item = 1;  // the widest element a slot or a gathered input's buffer holds
  for (const Op& op : ops_) item = std::max<size_t>(item, op.dtype.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (reads[i] == Read::gathered) item = std::max<size_t>(item, inputs[i].itemsize());
  }
  const size_t slot_bytes = (static_cast<size_t>(std::min(kTile, n)) * item + 63) / 64 * 64;
  // Gathered inputs' buffers follow the slots, one slot's size each.
  const size_t num_gathered = static_cast<size_t>(std::count(reads.begin(), reads.end(), Read::gathered));
  std::vector<char*> out_data;
  for (const auto& o : outputs) out_data.push_back(static_cast<char*>(o.desc()->data_ptr));
  detail::parallel_for(n, kTile, [&](int64_t begin, int64_t end) {
    Scratch scratch(std::max<size_t>(slot_bytes * (static_cast<size_t>(num_slots) + num_gathered), 1));
    char* slots = static_cast<char*>(scratch.buffer.ptr);
    std::vector<array> in_tiles, values;
    int64_t built = -1;  // the tile length the arrays have
    std::vector<const array*> args;
    for (int64_t start = begin; start < end; start += kTile) {
      const int64_t len = std::min(kTile, end - start);
      if (len != built) {
        // Made for the first tile and again for a shorter last one.
        in_tiles.clear();
        values.clear();
        const Shape shape{static_cast<int32_t>(len)};
        char* gather_buffer = slots + slot_bytes * static_cast<size_t>(num_slots);
        for (size_t i = 0; i < inputs.size(); ++i) {
          void* data = inputs[i].desc()->data_ptr;
          if (reads[i] == Read::gathered) {
            data = gather_buffer;
            gather_buffer += slot_bytes;
          }
          in_tiles.push_back(tile_array(data, reads[i] == Read::scalar ? Shape{} : shape, inputs[i].dtype()));
        }
        for (size_t k = 0; k < ops_.size(); ++k) {
          void* data = plans[k].output >= 0 ? out_data[plans[k].output]
                                            : slots + slot_bytes * static_cast<size_t>(plans[k].slot);
          values.push_back(tile_array(data, shape, ops_[k].dtype));
        }
        built = len;
      }
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (reads[i] == Read::flat) {
          point_at(in_tiles[i], static_cast<char*>(inputs[i].desc()->data_ptr) +
                                    start * static_cast<int64_t>(inputs[i].itemsize()));
        } else if (reads[i] == Read::gathered) {
          gather_range(gathered[i], inputs[i].itemsize(), start, len, in_tiles[i].desc()->data_ptr);
        }
      }
      for (size_t o = 0; o < outputs_.size(); ++o) {
        point_at(values[outputs_[o]], out_data[o] + start * static_cast<int64_t>(outputs[o].itemsize()));
      }
      for (size_t k = 0; k < ops_.size(); ++k) {
        args.clear();
        for (uint32_t a : ops_[k].args)
          args.push_back(a < num_inputs_ ? &in_tiles[a] : &values[a - num_inputs_]);
        run(plans[k], args, values[k]);
      }
    }
  });
}

// compile fuses only steps on CPU streams (transforms/fuse.cpp): no GPU node is ever made.
void Compiled::eval_gpu(const std::vector<array>&, std::vector<array>&) {
  throw std::logic_error("[Compiled] fused nodes run on the CPU only.");
}

}  // namespace braid
