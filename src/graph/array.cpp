#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <sstream>

#include "backend/backend.h"
#include "backend/cpu/convert.h"
#include "braid/ops.h"
#include "braid/transforms.h"
#include "graph/node.h"
#include "graph/siblings.h"
#include "graph/trace.h"
#include "memory/object_pool.h"
#include "runtime/mutex.h"

namespace braid {

namespace detail {

Data::~Data() {
  if (is_inline || external) return;  // `external` releases the caller's memory itself
  if (on_device) {
    gpu::free_device(*this);
  } else {
    allocator::free(buffer);
  }
}

Strides row_major_strides(const Shape& shape) {
  Strides strides(shape.size(), 1);
  // Unsigned: an empty array's other dimensions may multiply past 2^63 (its strides are
  // never used to address anything); a non-empty one was checked by checked_size.
  uint64_t stride = 1;
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) {
    stride *= static_cast<uint64_t>(std::max<int32_t>(shape[i + 1], 1));
    strides[i] = static_cast<int64_t>(stride);
  }
  return strides;
}

size_t checked_size(const Shape& shape, Dtype dtype, const char* op) {
  uint64_t size = 1;
  const uint64_t max_bytes = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  bool empty = false;
  for (auto d : shape) {
    if (d < 0) {
      std::ostringstream msg;
      msg << "[" << op << "] Negative dimensions are not allowed (got " << d << ").";
      throw std::invalid_argument(msg.str());
    }
    empty = empty || d == 0;
  }
  if (empty) return 0;  // any other dimensions are fine: nothing is stored
  for (auto d : shape) {
    if (size > max_bytes / static_cast<uint64_t>(d)) {
      throw std::invalid_argument(std::string("[") + op + "] The shape's element count overflows.");
    }
    size *= static_cast<uint64_t>(d);
  }
  if (size > max_bytes / dtype.size()) {
    throw std::invalid_argument(std::string("[") + op + "] The array's size in bytes overflows.");
  }
  return static_cast<size_t>(size);
}

ArrayFlags flags_for(const Shape& shape, const Strides& strides, size_t data_size) {
  ArrayFlags f;
  size_t size = 1;
  for (auto d : shape) size *= static_cast<size_t>(d);
  uint64_t expect = 1;  // unsigned: an empty array's dimensions may multiply past 2^63
  f.row_contiguous = true;
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    if (shape[i] == 1) continue;
    if (static_cast<uint64_t>(strides[i]) != expect) {
      f.row_contiguous = false;
      break;
    }
    expect *= static_cast<uint64_t>(shape[i]);
  }
  expect = 1;
  f.col_contiguous = true;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (static_cast<uint64_t>(strides[i]) != expect) {
      f.col_contiguous = false;
      break;
    }
    expect *= static_cast<uint64_t>(shape[i]);
  }
  // Dense, as MLX's flag: the elements the axes that are not broadcast (stride 0) address fill
  // the data_size elements of the buffer without gaps, in whatever order (a transpose or a
  // broadcast of a dense array is; a slice with steps is not), walking forward from the data
  // pointer: a reversed axis (negative stride) reaches elements before it, so kernels that
  // read the data_size elements flat must not take it as dense.
  size_t addressed = 1;
  bool forward = true;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (strides[i] != 0) addressed *= static_cast<size_t>(shape[i]);
    if (strides[i] < 0 && shape[i] > 1) forward = false;
  }
  f.contiguous = forward && addressed == data_size;
  if (size == 0) f.contiguous = f.row_contiguous = f.col_contiguous = true;
  return f;
}

std::shared_ptr<Data> new_host_data(size_t bytes) {
  allocator::Buffer buffer = allocator::malloc(bytes);
  try {
    return make_pooled<Data>(buffer);
  } catch (...) {
    allocator::free(buffer);  // the holder could not be made: the buffer must not leak
    throw;
  }
}

void alloc_contiguous(array& out) {
  ArrayDesc& d = *out.desc();
  d.data = new_host_data(out.nbytes());
  d.data_ptr = d.data->buffer.ptr;
  if (!d.flags.row_contiguous) d.strides = row_major_strides(d.shape);  // fresh nodes already are
  d.data_size = d.size;
  d.flags = flags_for(d.shape, d.strides, d.size);
}

void copy_shared_buffer(array& out, const array& in, const Strides& strides, const ArrayFlags& flags,
                        size_t data_size, int64_t offset) {
  ArrayDesc& d = *out.desc();
  const ArrayDesc& s = *in.desc();
  d.data = s.data;
  d.data_ptr = static_cast<char*>(s.data_ptr) + offset * static_cast<int64_t>(s.dtype.size());
  d.strides = strides;
  d.flags = flags;
  d.data_size = data_size;
}

void share_buffer(array& out, const array& in) {
  copy_shared_buffer(out, in, in.strides(), in.flags(), in.data_size());
}

bool donation_allowed(const std::vector<array>& inputs, size_t i, const array& out) {
  const array& in = inputs[i];
  const ArrayDesc& d = *in.desc();
  // A multi-output kernel never donates: another of its outputs may still read the input.
  // Nor is an output of one donated: its siblings can reach it (array::siblings) without
  // holding it.
  if (is_tracer(out.desc()) || out.desc()->siblings || d.siblings || !d.data || !d.flags.row_contiguous ||
      d.data_size != d.size || d.data_ptr != d.data->buffer.ptr || in.shape() != out.shape() ||
      in.nbytes() != out.nbytes()) {
    return false;
  }
  // The node's input list holds one reference; a copy of the list passed to the kernel one
  // more; our probe below one more. The counts are read through fresh copies: copying
  // increments with acquire-release, which orders every earlier release of another reference
  // (and the reads before it) before this node's writes, where use_count() alone is a
  // relaxed load.
  const long holders = &inputs == &out.desc()->inputs ? 1 : 2;
  // A look at the counts as they are (relaxed) first: one above the bound rules donation out
  // without the atomic round trips below (a count read too high only misses a donation).
  if (in.desc_ptr().use_count() > holders || d.data.use_count() > 1) return false;
  const std::shared_ptr<ArrayDesc> node = in.desc_ptr();
  const std::shared_ptr<Data> data = d.data;
  return node.use_count() == holders + 1 && data.use_count() == 2;
}

bool donate_host(const std::vector<array>& inputs, size_t i, array& out) {
  const array& in = inputs[i];
  const ArrayDesc& d = *in.desc();
  // Checked after donation_allowed: then no other thread can reach the buffer's state.
  if (!donation_allowed(inputs, i, out) || d.data->on_device || d.data->device_state || d.data->external) {
    return false;
  }
  const Strides st = row_major_strides(out.shape());
  copy_shared_buffer(out, in, st, flags_for(out.shape(), st, out.size()), out.size());
  return true;
}

void alloc_contiguous_or_donate(const std::vector<array>& inputs, array& out) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (donate_host(inputs, i, out)) return;
  }
  alloc_contiguous(out);
}

void init_from_values(ArrayDesc& desc, const void* src, Dtype src_dtype, size_t count) {
  const size_t bytes = desc.size * desc.dtype.size();  // checked when the shape was made
  desc.data = bytes <= Data::kInlineBytes ? make_pooled<Data>(Data::Inline{}, bytes) : new_host_data(bytes);
  desc.data_ptr = desc.data->buffer.ptr;
  desc.data_size = desc.size;
  convert_contiguous(src, src_dtype, desc.data_ptr, desc.dtype, std::min(count, desc.size));
  desc.status.store(Status::available, std::memory_order_release);
}

ArrayDesc::ArrayDesc(Shape shape_in, Dtype dtype_in) : shape(std::move(shape_in)), dtype(dtype_in) {
  size = checked_size(shape, dtype, "array");
  strides = row_major_strides(shape);
  flags = flags_for(shape, strides, size);
}

ArrayDesc::ArrayDesc(Shape shape_in, Dtype dtype_in, std::shared_ptr<Primitive> prim,
                     std::vector<array> inputs_in)
    : shape(std::move(shape_in)),
      dtype(dtype_in),
      primitive(std::move(prim)),
      inputs(std::move(inputs_in)),
      trace(inherit_trace(inputs)) {
  size = checked_size(shape, dtype, "array");
  strides = row_major_strides(shape);
  flags = flags_for(shape, strides, size);
}

ArrayDesc::~ArrayDesc() {
  // Unlinks input chains iteratively (a 10^6-node graph must not recurse 10^6 destructors
  // deep) and without allocating (destructors run exactly when memory is short): the nodes
  // we are the last owner of form a stack through their own queue_next links, unused in a
  // node nobody else can reach, and are emptied one input at a time.
  std::shared_ptr<ArrayDesc> stack;
  auto drop = [&stack](std::shared_ptr<ArrayDesc> node) noexcept {
    // A count of one means nobody else can reach it.
    if (!node || node.use_count() != 1) return;
    if (node->siblings) {
      // An output of a multi-output primitive: its group reaches it through a weak reference,
      // which is only ever locked under the group's lock. With that lock held, a count of one
      // still means nobody holds it, and once unregistered nobody can reach it again.
      SiblingGroup& g = *node->siblings;
      SpinGuard guard(g.lock);
      if (node.use_count() != 1) return;
      auto& slot = g.members[node->position];
      if (!slot.owner_before(node) && !node.owner_before(slot)) slot.reset();
    }
    {
      // use_count() is a relaxed load: it does not order us after the evaluation that last
      // wrote this node (complete_node detaches its inputs under the node's lock), so the
      // lock is taken to see those writes.
      SpinGuard guard(node->lock);
      if (node->inputs.empty()) return;
    }
    node->queue_next = std::move(stack);
    stack = std::move(node);
  };
  while (!inputs.empty()) {
    std::shared_ptr<ArrayDesc> in = std::move(inputs.back().desc_);
    inputs.pop_back();
    drop(std::move(in));
  }
  while (stack) {
    ArrayDesc& top = *stack;
    if (top.inputs.empty()) {
      stack = std::move(top.queue_next);  // frees `top`, which has nothing left to unlink
      continue;
    }
    std::shared_ptr<ArrayDesc> in = std::move(top.inputs.back().desc_);
    top.inputs.pop_back();
    drop(std::move(in));
  }
}

std::shared_ptr<ArrayDesc> ArrayDesc::release(array& a) noexcept { return std::move(a.desc_); }

}  // namespace detail

array::array(Shape shape, Dtype dtype)
    : desc_(detail::make_pooled<detail::ArrayDesc>(std::move(shape), dtype)) {}

array::array(std::initializer_list<float> data) : array(Shape{static_cast<int32_t>(data.size())}, float32) {
  init_values(data.begin(), data.size());
}

array::array(std::initializer_list<int> data, Dtype dtype)
    : array(Shape{static_cast<int32_t>(data.size())}, dtype) {
  init_values(data.begin(), data.size());
}

bool array::has_primitive() const {
  if (desc_->primitive == nullptr) return false;
  // Evaluated and not a tracer: its graph is (or is about to be) detached, as MLX's.
  return !(detail::is_complete(desc_.get()) && !detail::is_tracer(desc_.get()));
}

void array::set_tracer(bool is_tracer) {
  if (!is_tracer) {
    desc_->trace = nullptr;
  } else if (auto scope = detail::innermost_scope()) {
    desc_->trace = std::move(scope);
  }
}

bool array::is_evaled() const {
  return desc_->status.load(std::memory_order_acquire) != detail::Status::unscheduled;
}

array::ArrayIterator::ArrayIterator(const array& arr, int idx) : arr(arr), idx(idx) {
  if (arr.ndim() == 0) throw std::invalid_argument("[ArrayIterator] Cannot iterate over 0-d array.");
}

array::ArrayIterator::reference array::ArrayIterator::operator*() const {
  Shape start(arr.ndim(), 0), stop = arr.shape();
  start[0] = idx;
  stop[0] = idx + 1;
  return squeeze(slice(arr, std::move(start), std::move(stop)), 0);
}

namespace {

/// The caller's memory under an array made over it: runs the deleter once the last array
/// using it is gone. Armed only once the array exists, so a constructor that throws leaves
/// the memory with the caller.
struct ExternalMemory {
  void* data;
  std::function<void(void*)> deleter;
  bool armed = false;
  ExternalMemory(void* d, const std::function<void(void*)>& del) : data(d), deleter(del) {}
  ExternalMemory(const ExternalMemory&) = delete;
  ExternalMemory& operator=(const ExternalMemory&) = delete;
  ~ExternalMemory() {
    if (!armed || !deleter) return;
    try {
      deleter(data);
    } catch (...) {
      // A destructor cannot report it; the memory is the caller's to account for.
    }
  }
};

}  // namespace

array::array(void* data, Shape shape, Dtype dtype, const std::function<void(void*)>& deleter)
    : array(data, shape, detail::row_major_strides(shape), dtype, deleter) {}

array::array(void* data, Shape shape, Strides strides, Dtype dtype, const std::function<void(void*)>& deleter)
    : array(std::move(shape), dtype) {
  detail::ArrayDesc& d = *desc_;
  if (strides.size() != d.shape.size()) {
    std::ostringstream msg;
    msg << "[array] Got " << strides.size() << " strides for a shape of " << d.shape.size() << " dimensions.";
    throw std::invalid_argument(msg.str());
  }
  // The elements span [data, data + extent) elements; strides are in elements.
  uint64_t extent = d.size > 0 ? 1 : 0;
  for (size_t i = 0; i < strides.size(); ++i) {
    if (d.shape[i] <= 1 && strides[i] < 0) strides[i] = 0;  // addresses nothing: its sign does not matter
    if (strides[i] < 0) throw std::invalid_argument("[array] Strides must not be negative.");
    if (d.size == 0) continue;
    uint64_t span = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(d.shape[i] - 1), static_cast<uint64_t>(strides[i]),
                               &span) ||
        __builtin_add_overflow(extent, span, &extent)) {
      throw std::invalid_argument("[array] The strides address more memory than exists.");
    }
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(extent, static_cast<uint64_t>(dtype.size()), &bytes) ||
      bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    throw std::invalid_argument("[array] The strides address more memory than exists.");
  }
  if (data == nullptr && bytes > 0) throw std::invalid_argument("[array] The data pointer is null.");
  auto owner = std::make_shared<ExternalMemory>(data, deleter);
  d.data = detail::make_pooled<detail::Data>(allocator::Buffer{data, static_cast<size_t>(bytes)}, owner);
  d.data_ptr = data;
  d.data_size = static_cast<size_t>(extent);
  d.strides = std::move(strides);
  d.flags = detail::flags_for(d.shape, d.strides, d.data_size);
  d.status.store(detail::Status::available, std::memory_order_release);
  owner->armed = true;  // nothing after this throws: from here the array owns the memory
}

array::array(Shape shape, Dtype dtype, std::shared_ptr<Primitive> primitive, std::vector<array> inputs)
    : desc_(detail::make_pooled<detail::ArrayDesc>(std::move(shape), dtype, std::move(primitive),
                                                   std::move(inputs))) {}

int32_t array::shape(int dim) const {
  int n = static_cast<int>(ndim());
  if (dim < -n || dim >= n) {
    std::ostringstream msg;
    msg << "[array::shape] Dimension " << dim << " is out of range for an array with " << n << " dimensions.";
    throw std::out_of_range(msg.str());
  }
  return desc_->shape[dim < 0 ? dim + n : dim];
}

int64_t array::strides(int dim) const {
  int n = static_cast<int>(ndim());
  if (dim < -n || dim >= n) {
    std::ostringstream msg;
    msg << "[array::strides] Dimension " << dim << " is out of range for an array with " << n
        << " dimensions.";
    throw std::out_of_range(msg.str());
  }
  return desc_->strides[dim < 0 ? dim + n : dim];
}

void array::check_count(size_t count) const {
  if (count != desc_->size) {
    std::ostringstream msg;
    msg << "[array] Got " << count << " values for a shape of " << desc_->size << " elements.";
    throw std::invalid_argument(msg.str());
  }
}

void array::check_data_type(Dtype requested, size_t requested_size) const {
  bool ok = requested == desc_->dtype ||
            (requested_size == desc_->dtype.size() && kindof(requested) == kindof(desc_->dtype) &&
             desc_->dtype != bfloat16 && requested != bfloat16);
  if (!ok) {
    std::ostringstream msg;
    msg << "[array::data] Requested " << requested << " data from an array of " << desc_->dtype << ".";
    throw std::invalid_argument(msg.str());
  }
}

const Stream& array::stream() const {
  if (!desc_->primitive) throw std::invalid_argument("[array::stream] A leaf array has no stream.");
  return desc_->primitive->stream();
}

std::vector<array> array::inputs() const {
  detail::SpinGuard guard(desc_->lock);
  return desc_->inputs;
}

bool array::is_tracer() const { return detail::is_tracer(desc_.get()); }

bool array::is_available() const {
  return desc_->status.load(std::memory_order_acquire) == detail::Status::available;
}

void array::eval() {
  auto st = desc_->status.load(std::memory_order_acquire);
  if (st == detail::Status::available || detail::running_here(desc_.get())) return;
  braid::eval(std::vector<array>{*this});
}

namespace {

// The array a kernel may give a buffer to: not evaluated (an evaluated array's value is
// never replaced) and, for a node, the one this thread's kernel computes.
void check_settable(const array& a, const char* what, size_t num_strides) {
  const detail::ArrayDesc* d = a.desc();
  const auto st = d->status.load(std::memory_order_acquire);
  if (st == detail::Status::available || st == detail::Status::failed ||
      (d->primitive && !detail::running_here(d))) {
    throw std::invalid_argument(std::string("[array::") + what +
                                "] Only the kernel computing an array may give it its data.");
  }
  if (d->primitive && d->primitive->device() == Device::gpu) {
    throw std::invalid_argument(std::string("[array::") + what +
                                "] A GPU kernel's outputs live in device memory, which custom primitives "
                                "cannot give yet: run the primitive on a CPU stream.");
  }
  if (num_strides != a.ndim()) {
    throw std::invalid_argument(std::string("[array::") + what + "] Expected " + std::to_string(a.ndim()) +
                                " strides but got " + std::to_string(num_strides) + ".");
  }
}

bool is_allocator_free(const array::Deleter& d) {
  if (!d) return true;
  using Fn = void (*)(allocator::Buffer);
  using NoexceptFn = void (*)(allocator::Buffer) noexcept;
  if (const auto* f = d.target<NoexceptFn>()) return *f == &allocator::free;
  if (const auto* f = d.target<Fn>()) return *f == static_cast<Fn>(&allocator::free);
  return false;
}

}  // namespace

void array::set_data(allocator::Buffer buffer, Deleter d) {
  detail::ArrayDesc& desc = *desc_;
  Strides strides = detail::row_major_strides(desc.shape);
  const Flags flags = detail::flags_for(desc.shape, strides, desc.size);
  set_data(buffer, desc.size, std::move(strides), flags, std::move(d));
}

void array::set_data(allocator::Buffer buffer, size_t data_size, Strides strides, Flags flags, Deleter d) {
  check_settable(*this, "set_data", strides.size());
  const size_t item = itemsize();
  if (data_size > std::numeric_limits<size_t>::max() / item || buffer.size < data_size * item ||
      (buffer.ptr == nullptr && data_size > 0)) {
    throw std::invalid_argument("[array::set_data] The buffer holds " + std::to_string(buffer.size) +
                                " bytes, fewer than the " + std::to_string(data_size) + " elements need.");
  }
  detail::ArrayDesc& desc = *desc_;
  // The buffer the array already holds is only laid out anew: kept, not taken a second time.
  if (!desc.data || desc.data->buffer.ptr != buffer.ptr || buffer.ptr == nullptr) {
    // The caller's buffer (a deleter of its own): released by that deleter, never reused for
    // another result (as memory an array is made over).
    std::shared_ptr<ExternalMemory> holder;
    if (!is_allocator_free(d)) {
      try {
        holder = std::make_shared<ExternalMemory>(buffer.ptr, [d, buffer](void*) { d(buffer); });
      } catch (...) {
        d(buffer);  // taken, as the caller expected, and released at once
        throw;
      }
      holder->armed = true;
    }
    std::shared_ptr<detail::Data> data;
    try {
      data = holder ? detail::make_pooled<detail::Data>(buffer, holder)
                    : detail::make_pooled<detail::Data>(buffer);
    } catch (...) {
      if (!holder) allocator::free(buffer);  // else the holder releases it as it goes
      throw;
    }
    desc.data = std::move(data);
    desc.data_ptr = buffer.ptr;
  }
  desc.strides = std::move(strides);
  desc.flags = flags;
  desc.data_size = data_size;
}

void array::copy_shared_buffer(const array& other, const Strides& strides, Flags flags, size_t data_size,
                               int64_t offset) {
  check_settable(*this, "copy_shared_buffer", strides.size());
  // Read only once computed (the acquire load orders the reads of its buffer after it).
  const detail::ArrayDesc& src = *other.desc();
  if (src.status.load(std::memory_order_acquire) != detail::Status::available || !src.data) {
    throw std::invalid_argument("[array::copy_shared_buffer] The array shared from holds no data.");
  }
  if (src.data->on_device) {
    throw std::invalid_argument("[array::copy_shared_buffer] The array shared from lives in GPU memory.");
  }
  const size_t item = itemsize();
  const auto first = static_cast<char*>(src.data_ptr) - static_cast<char*>(src.data->buffer.ptr);
  if (dtype() != other.dtype() || offset < 0 ||
      first + (static_cast<size_t>(offset) + data_size) * item > src.data->buffer.size) {
    throw std::invalid_argument("[array::copy_shared_buffer] The view reaches past the shared buffer.");
  }
  detail::copy_shared_buffer(*this, other, strides, flags, data_size, offset);
}

void array::copy_shared_buffer(const array& other) {
  if (other.desc()->status.load(std::memory_order_acquire) != detail::Status::available) {
    throw std::invalid_argument("[array::copy_shared_buffer] The array shared from holds no data.");
  }
  copy_shared_buffer(other, other.strides(), other.flags(), other.data_size());
}

allocator::Buffer& array::buffer() {
  const auto st = desc_->status.load(std::memory_order_acquire);
  if ((st != detail::Status::available && !detail::running_here(desc_.get())) || !desc_->data) {
    throw std::invalid_argument("[array::buffer] The array holds no data yet.");
  }
  return desc_->data->buffer;
}

const allocator::Buffer& array::buffer() const { return const_cast<array*>(this)->buffer(); }

void* array::host_data() const {
  if (detail::gpu::on_device(*this)) return detail::gpu::host_pointer(*this);
  return desc_->data_ptr;
}

void array::detach() {
  // A tracer keeps its inputs while its transform call runs: the call walks them.
  if (!detail::is_complete(desc_.get()) || detail::is_tracer(desc_.get())) return;
  std::vector<array> dropped;
  {
    detail::SpinGuard guard(desc_->lock);
    dropped.swap(desc_->inputs);
  }
}

void array::item_into(void* dst, Dtype dtype) {
  if (size() != 1) throw std::invalid_argument("[item] Only size 1 arrays can be converted to scalars.");
  eval();
  detail::convert_contiguous(host_data(), desc_->dtype, dst, dtype, 1);
}

namespace {
std::atomic<int> print_precision{-1};
}  // namespace

void set_printoptions(PrintOptions options) {
  print_precision.store(options.precision, std::memory_order_relaxed);
}

PrintOptions get_printoptions() { return PrintOptions{print_precision.load(std::memory_order_relaxed)}; }

std::ostream& operator<<(std::ostream& os, array a) {
  a.eval();
  const auto& d = *a.desc();
  // A fixed precision applies to the floating-point parts only; the stream's own state comes back.
  const int precision = print_precision.load(std::memory_order_relaxed);
  auto print_real = [&os, precision](double v) {
    if (precision < 0) {
      os << v;
      return;
    }
    const auto flags = os.flags();
    const auto old_precision = os.precision(precision);
    os << std::fixed << v;
    os.flags(flags);
    os.precision(old_precision);
  };
  const int nd = static_cast<int>(a.ndim());
  auto print_elem = [&](int64_t offset) {
    const char* base =
        static_cast<const char*>(a.host_data()) + offset * static_cast<int64_t>(d.dtype.size());
    if (d.dtype == bool_) {
      os << (*reinterpret_cast<const bool*>(base) ? "true" : "false");
    } else if (d.dtype == complex64) {
      complex64_t c;
      std::memcpy(&c, base, sizeof(c));
      print_real(c.real());
      os << (c.imag() < 0 || std::signbit(c.imag()) ? "-" : "+");
      print_real(std::abs(c.imag()));
      os << "j";
    } else if (d.dtype == uint64) {
      uint64_t v;
      std::memcpy(&v, base, sizeof(v));
      os << v;
    } else if (is_integral(d.dtype)) {
      int64_t v;
      detail::convert_contiguous(base, d.dtype, &v, int64, 1);
      os << v;
    } else {
      double v;
      detail::convert_contiguous(base, d.dtype, &v, float64, 1);
      print_real(v);
    }
  };
  os << "array(";
  if (nd == 0) {
    print_elem(0);
  } else {
    // MLX's layout: an axis of more than 2 * kEdge entries shows its first and last kEdge and
    // "..." between; the entries of every axis but the last go one per line, indented under
    // the opening bracket. The walk over the axes keeps its own stack (one frame per axis).
    constexpr int32_t kEdge = 3;
    struct Frame {
      int32_t i;       // next entry of this axis
      int64_t offset;  // element offset of entry i
    };
    std::vector<Frame> stack{{0, 0}};
    os << "[";
    while (!stack.empty()) {
      const int dim = static_cast<int>(stack.size()) - 1;
      Frame& f = stack.back();
      const int32_t n = d.shape[dim];
      if (f.i == n) {
        os << "]";
        stack.pop_back();
        if (!stack.empty()) {
          Frame& up = stack.back();
          up.offset += d.strides[dim - 1];
          if (++up.i < d.shape[dim - 1]) os << ",\n" << std::string(static_cast<size_t>(7 + dim - 1), ' ');
        }
        continue;
      }
      const bool last_axis = dim == nd - 1;
      if (f.i == kEdge && n > 2 * kEdge) {
        os << "...";
        f.offset += static_cast<int64_t>(n - 2 * kEdge) * d.strides[dim];
        f.i = n - kEdge;
        os << (last_axis ? ", " : ",\n" + std::string(static_cast<size_t>(7 + dim), ' '));
        continue;
      }
      if (last_axis) {
        print_elem(f.offset);
        f.offset += d.strides[dim];
        if (++f.i < n) os << ", ";
        continue;
      }
      os << "[";
      stack.push_back({0, f.offset});
    }
  }
  os << ", dtype=" << d.dtype << ")";
  return os;
}

const char* version() { return "0.1.0"; }

}  // namespace braid
