// array: a cheap handle to a shared node of a lazy graph (MLX's array).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "braid/dtype.h"
#include "braid/memory.h"
#include "braid/small_vector.h"
#include "braid/stream.h"

namespace braid {

/// Dimensions and element strides. Up to 6 dimensions live inline (no heap allocation).
using ShapeElem = int32_t;  // MLX's name for a dimension's type
using Shape = SmallVector<ShapeElem, 6>;
using Strides = SmallVector<int64_t, 6>;

class Primitive;
class array;

namespace detail {

/// Lifecycle of a node; see DESIGN.md section 3. Transitions only move forward.
enum class Status : uint8_t { unscheduled, claimed, scheduled, available, failed };

/// Owns one allocator buffer; views share it through shared_ptr<Data>.
struct Data {
  /// Host buffers up to this size made from host values (scalars, small constants) live
  /// inside the Data itself: no allocation, and no separate cache line to load.
  static constexpr size_t kInlineBytes = 16;
  struct Inline {};

  allocator::Buffer buffer;
  bool on_device = false;              // buffer is GPU memory (see src/backend/backend.h)
  bool is_inline = false;              // buffer points into `inline_bytes`
  std::shared_ptr<void> device_state;  // the GPU backend's bookkeeping for this buffer
  // Set for host memory braid does not own (an array made over the caller's memory): the
  // buffer is never freed nor written (no donation); dropping this releases it.
  std::shared_ptr<void> external;
  alignas(16) unsigned char inline_bytes[kInlineBytes];

  explicit Data(allocator::Buffer b, bool device = false) : buffer(b), on_device(device) {}
  Data(Inline, size_t bytes) : buffer{inline_bytes, bytes}, is_inline(true) {}
  Data(allocator::Buffer b, std::shared_ptr<void> owner) : buffer(b), external(std::move(owner)) {}
  ~Data();
  Data(const Data&) = delete;
  Data& operator=(const Data&) = delete;
};

struct Waiter;  // a parked strand or other continuation (src/graph)

struct TraceScope;  // one transform call's tracing (src/graph/trace.h)

struct SiblingGroup;  // the outputs of one multi-output node (src/graph/siblings.h)

struct ArrayFlags {
  bool contiguous = true;      // the data_size elements are dense (in some order)
  bool row_contiguous = true;  // C order, no gaps
  bool col_contiguous = true;  // Fortran order, no gaps
};

struct ArrayDesc {
  Shape shape;
  Strides strides;
  size_t size = 1;
  Dtype dtype;
  std::shared_ptr<Primitive> primitive;

  // Readable by anyone holding `lock` or by the claimer of the node; cleared at detach
  // unless the node is a tracer (see trace.h).
  std::vector<array> inputs;
  // Set at construction (inherited from the inputs), immutable once the node is shared:
  // while this scope is open the node is a tracer of a transform call.
  std::shared_ptr<TraceScope> trace;
  // Set at construction for an output of a primitive with several outputs (make_arrays):
  // the outputs computed together, this one at `position`. Immutable once shared.
  std::shared_ptr<SiblingGroup> siblings;
  uint32_t position = 0;

  // Written by the node's evaluation before `status` becomes available (release store).
  std::shared_ptr<Data> data;
  void* data_ptr = nullptr;
  size_t data_size = 0;
  ArrayFlags flags;

  std::atomic<Status> status{Status::unscheduled};
  std::atomic<bool> lock{false};    // tiny spinlock guarding inputs and waiters
  std::atomic<bool> parked{false};  // a thread has slept on `status` (see runtime/park.h)
  std::exception_ptr error;         // set before `status` becomes failed
  // Intrusive list (through Waiter::next_waiter), guarded by lock; run once when the node
  // completes. Registering a waiter never allocates.
  Waiter* waiters = nullptr;
  // The next node of the strand queue this node waits in (which owns it through this link),
  // or, while the node is torn down, of the teardown chain. Queuing never allocates.
  std::shared_ptr<ArrayDesc> queue_next;

  ArrayDesc(Shape shape, Dtype dtype);
  ArrayDesc(Shape shape, Dtype dtype, std::shared_ptr<Primitive> primitive, std::vector<array> inputs);
  ~ArrayDesc();  // tears input chains down iteratively (no recursion, no allocation)

  /// Moves the node out of `a` (which becomes empty), for queues that take ownership.
  static std::shared_ptr<ArrayDesc> release(array& a) noexcept;
};

void init_from_values(ArrayDesc& desc, const void* src, Dtype src_dtype, size_t count);

}  // namespace detail

class array {
 public:
  /// A scalar (0-d) array.
  template <ArrayScalar T>
  explicit array(T val, Dtype dtype = TypeToDtype<T>()) : array(Shape{}, dtype) {
    init_values(&val, 1);
  }

  /// A 1-d array holding the listed values. Explicit, as MLX's list constructors: a braced
  /// list passed where an array is expected does not become one silently.
  template <typename T>
  explicit array(std::initializer_list<T> data, Dtype dtype = TypeToDtype<T>())
      : array(Shape{static_cast<int32_t>(data.size())}, dtype) {
    init_values(data.begin(), data.size());
  }

  /// A 1-d float32 array of the listed values (MLX's special case): `array({})` is an empty
  /// float32 array, and a list mixing integer and floating literals is float32.
  explicit array(std::initializer_list<float> data);
  /// A 1-d array of `dtype` from listed ints: `array({}, int32)` is an empty int32 array.
  explicit array(std::initializer_list<int> data, Dtype dtype);

  /// An array of `shape` filled from the listed values (count must match).
  template <typename T>
  explicit array(std::initializer_list<T> data, Shape shape, Dtype dtype = TypeToDtype<T>())
      : array(std::move(shape), dtype) {
    check_count(data.size());
    init_values(data.begin(), data.size());
  }

  /// An array of `shape` copied from the shape's count of elements read from `data` (any
  /// input iterator, std::vector<bool>'s included).
  template <typename It>
  explicit array(It data, Shape shape,
                 Dtype dtype = TypeToDtype<typename std::iterator_traits<It>::value_type>())
      : array(std::move(shape), dtype) {
    using T = typename std::iterator_traits<It>::value_type;
    const size_t n = desc_->size;
    std::unique_ptr<T[]> vals(new T[n > 0 ? n : 1]);
    std::copy_n(data, n, vals.get());
    init_values(vals.get(), n);
  }

  /// An array over `data` without copying it (MLX's constructor): the elements are read in
  /// place, in C order, and `deleter(data)` runs once no array uses the memory any more, on
  /// whichever thread drops the last one. The memory must stay valid until then; braid never
  /// writes into it (an operation that could reuse an input's buffer allocates instead).
  array(void* data, Shape shape, Dtype dtype, const std::function<void(void*)>& deleter);
  /// braid's extension of the above for memory laid out with `strides` (in elements, none
  /// negative), as DLPack and the buffer protocol describe a view: a transposed or broadcast
  /// layout is kept, not copied.
  array(void* data, Shape shape, Strides strides, Dtype dtype, const std::function<void(void*)>& deleter);

  /// A lazy node: the output of `primitive` applied to `inputs`. Used by ops.
  array(Shape shape, Dtype dtype, std::shared_ptr<Primitive> primitive, std::vector<array> inputs);

  array(const array&) = default;
  array(array&&) noexcept = default;
  array& operator=(const array&) = default;
  array& operator=(array&&) noexcept = default;
  ~array() = default;

  const Shape& shape() const { return desc_->shape; }
  /// Size of dimension `dim` (negative counts from the end).
  int32_t shape(int dim) const;
  const Strides& strides() const { return desc_->strides; }
  int64_t strides(int dim) const;
  Dtype dtype() const { return desc_->dtype; }
  size_t size() const { return desc_->size; }
  size_t ndim() const { return desc_->shape.size(); }
  size_t itemsize() const { return desc_->dtype.size(); }
  size_t nbytes() const { return desc_->size * desc_->dtype.size(); }

  /// Evaluates the array (and its graph) if needed; rethrows a kernel's error. Any thread.
  /// Called by a kernel on the node it is computing, it returns at once.
  void eval();
  /// True once the value is computed and readable. Any thread; never blocks.
  bool is_available() const;

  /// The single element, converted to T. Evaluates first. Throws if size() != 1.
  template <typename T>
  T item();
  /// The same on a const array (it evaluates too: evaluating changes no value).
  template <typename T>
  T item() const {
    return const_cast<array*>(this)->item<T>();
  }

  /// Pointer to element 0 of the (possibly strided) data. Evaluates first. T must match
  /// dtype, or be void (untyped bytes, as custom kernels read them).
  template <typename T>
  T* data() {
    if constexpr (!std::is_void_v<T>) check_data_type(detail::storage_dtype<T>(), sizeof(T));
    eval();
    return static_cast<T*>(host_data());
  }
  template <typename T>
  const T* data() const {
    return const_cast<array*>(this)->data<T>();
  }

  /// Whether the graph node computing the array is still attached (MLX's has_primitive):
  /// false for a leaf and, as in MLX, for an evaluated array whose graph was dropped (a tracer
  /// keeps its own while its transform runs). primitive() stays readable after evaluation.
  bool has_primitive() const;
  Primitive& primitive() const { return *desc_->primitive; }
  const std::shared_ptr<Primitive>& primitive_ptr() const { return desc_->primitive; }
  /// The stream the node runs on. Throws for leaf arrays, which have none.
  const Stream& stream() const;
  /// The node's inputs (empty once it has been evaluated and detached). Returns a copy, taken
  /// under the node's lock: evaluation detaches inputs on another thread. Thread-safe.
  std::vector<array> inputs() const;
  const detail::ArrayFlags& flags() const { return desc_->flags; }
  size_t data_size() const { return desc_->data_size; }
  /// True while the array is part of a graph that a transform (vjp, jvp, grad, ...) is
  /// tracing: built from a transform call's inputs, inside that call. A tracer keeps its
  /// inputs after evaluation so the transform can walk its graph. Thread-safe.
  bool is_tracer() const;
  /// MLX's set_tracer: marks the array as a tracer of the transform running on this thread
  /// (no effect outside one: a tracer needs an open transform), or, with false, unmarks it.
  /// Mutates the node, which copies of the array share: not while any other thread uses this
  /// array or a copy of it, nor while it is being evaluated (as MLX's, not thread-safe).
  void set_tracer(bool is_tracer);
  /// True once the array has been scheduled for evaluation (eval, async_eval) or holds data
  /// of its own; MLX's is_evaled. Thread-safe; never blocks.
  bool is_evaled() const;
  /// The other outputs of the primitive computing this array (MLX's siblings), in output
  /// order; empty for a single-output primitive and, as in MLX, once the array is evaluated
  /// and its graph dropped. An output nobody holds any more is made again (the same
  /// primitive on the same inputs), so the list is always complete. Thread-safe.
  std::vector<array> siblings() const;
  /// All outputs of the primitive computing this array, this one included, in output order
  /// (MLX's outputs); `{*this}` where siblings() is empty. Thread-safe.
  std::vector<array> outputs() const;
  /// Nodes for the outputs of a primitive with several (MLX's make_arrays): one array per
  /// shape and dtype, computed together by a single call of the primitive's kernel, which
  /// receives them all as its `outputs` (in this order). Evaluating any of them computes
  /// every one; transforms call the primitive's vjp, jvp and vmap once for all of them.
  static std::vector<array> make_arrays(std::vector<Shape> shapes, const std::vector<Dtype>& dtypes,
                                        const std::shared_ptr<Primitive>& primitive,
                                        const std::vector<array>& inputs);
  /// The bytes the allocator set aside for the array's buffer (its size class; the array's
  /// own bytes for external or inline data). Evaluates the array first.
  size_t buffer_size() const;

  /// Iteration over the first axis (MLX's ArrayIterator): each element is `a[i]`, an array
  /// of one dimension fewer. A scalar cannot be iterated (std::invalid_argument).
  class ArrayIterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using difference_type = std::ptrdiff_t;
    using value_type = const array;  // read-only elements, as in MLX
    using reference = value_type;

    ArrayIterator(const array& arr, int idx = 0);
    reference operator*() const;
    ArrayIterator& operator+(difference_type diff) {
      idx += static_cast<int>(diff);
      return *this;
    }
    ArrayIterator& operator++() {
      ++idx;
      return *this;
    }
    friend bool operator==(const ArrayIterator& a, const ArrayIterator& b) {
      return a.arr.id() == b.arr.id() && a.idx == b.idx;
    }
    friend bool operator!=(const ArrayIterator& a, const ArrayIterator& b) { return !(a == b); }

   private:
    const array& arr;
    int idx;
  };
  ArrayIterator begin() const { return ArrayIterator(*this); }
  ArrayIterator end() const { return ArrayIterator(*this, ndim() == 0 ? 0 : shape(0)); }

  /// MLX's interface for a primitive's kernel (custom primitives included): `eval_cpu` gives
  /// each output its buffer through one of these, then writes it through `data<T>()` (which,
  /// called by the kernel on the node it computes, does not wait for that node). Only the
  /// thread running the node's kernel may call them, and only on the node's outputs; an
  /// evaluated array refuses (std::invalid_argument), so no value is ever overwritten. A
  /// refused buffer stays the caller's. Threads a kernel starts must not call data<T>() on
  /// its output (they would wait for the kernel): pass them the pointer.
  using Flags = detail::ArrayFlags;
  using Deleter = std::function<void(allocator::Buffer)>;
  /// The output takes `buffer` (at least nbytes() of it) in row-major order. `d` releases it
  /// when the last array using it goes: allocator::free by default; any other deleter makes
  /// the buffer the caller's (braid never reuses it for another result). Given the buffer the
  /// array already holds, only the layout changes.
  void set_data(allocator::Buffer buffer, Deleter d = allocator::free);
  /// The same with a layout: `data_size` elements addressed through `strides` (in elements).
  void set_data(allocator::Buffer buffer, size_t data_size, Strides strides, Flags flags,
                Deleter d = allocator::free);
  /// The output shares the buffer of the evaluated array `other` (a view), starting `offset`
  /// elements in, with this layout; or, without one, with `other`'s own.
  void copy_shared_buffer(const array& other, const Strides& strides, Flags flags, size_t data_size,
                          int64_t offset = 0);
  void copy_shared_buffer(const array& other);
  /// The buffer behind an array that has one (throws std::invalid_argument otherwise).
  allocator::Buffer& buffer();
  const allocator::Buffer& buffer() const;

  /// Identity of the node (equal for copies of the same array).
  std::uintptr_t id() const { return reinterpret_cast<std::uintptr_t>(desc_.get()); }

  /// Drops the graph behind an evaluated array (a tracer keeps it until its transform call
  /// returns). Mutates this array: not concurrently with other uses of the same object.
  void detach();

  /// Element 0 in host memory (a host copy for GPU-resident data). Requires an evaluated array.
  void* host_data() const;

  detail::ArrayDesc* desc() const { return desc_.get(); }
  const std::shared_ptr<detail::ArrayDesc>& desc_ptr() const { return desc_; }
  explicit array(std::shared_ptr<detail::ArrayDesc> desc) : desc_(std::move(desc)) {}

 private:
  array(Shape shape, Dtype dtype);
  template <typename T>
  void init_values(const T* vals, size_t count) {
    detail::init_from_values(*desc_, vals, detail::storage_dtype<T>(), count);
  }
  void check_count(size_t count) const;
  void check_data_type(Dtype requested, size_t requested_size) const;
  // Writes the single element, converted to `dtype`, to `dst`.
  void item_into(void* dst, Dtype dtype);

  friend struct detail::ArrayDesc;
  std::shared_ptr<detail::ArrayDesc> desc_;
};

template <typename T>
T array::item() {
  T value{};
  item_into(&value, detail::storage_dtype<T>());
  return value;
}

/// Prints the evaluated array as MLX does ("array([1, 2], dtype=int32)"), evaluating it first.
std::ostream& operator<<(std::ostream& os, array a);

/// How arrays print their floating-point and complex elements (MLX's struct): `precision`
/// digits after the point, or, when negative, the stream's own format (6 significant digits).
struct PrintOptions {
  int precision = -1;
};
/// Sets the print options of the whole process (as MLX's global ones). Thread-safe.
void set_printoptions(PrintOptions options);
/// The print options in effect. Thread-safe.
PrintOptions get_printoptions();

}  // namespace braid
