// Internal helpers over graph nodes, shared by the runtime, ops and backends.
#pragma once

#include <cstdint>
#include <string>

#include "braid/array.h"
#include "braid/primitive.h"

namespace braid::detail {

/// Row-major (C order) element strides for `shape`.
Strides row_major_strides(const Shape& shape);
/// Number of elements of `shape`; throws std::invalid_argument("[op] ...") for negative
/// dimensions or when the element count or byte size overflows.
size_t checked_size(const Shape& shape, Dtype dtype, const char* op);

/// A fresh host buffer of `bytes` in its holder; nothing leaks if either allocation fails.
std::shared_ptr<Data> new_host_data(size_t bytes);
/// Gives `out` a fresh row-contiguous buffer of out.nbytes().
void alloc_contiguous(array& out);
/// Makes `out` a view of `in`'s buffer with the given layout; `offset` is in elements,
/// relative to `in`'s first element.
void copy_shared_buffer(array& out, const array& in, const Strides& strides, const ArrayFlags& flags,
                        size_t data_size, int64_t offset = 0);
/// Makes `out` share `in`'s buffer and layout.
void share_buffer(array& out, const array& in);

/// Whether the node being computed (`out`) may write its result into the buffer of
/// `inputs[i]` (buffer donation, as MLX's): nothing but that node references the input,
/// nothing but the input holds the buffer (no view, no other array), the input fills it
/// row-contiguously with out's shape and byte size, and `out` is not traced by a transform
/// (whose vjp may read the input later). Then no one can read the old contents again.
/// `inputs` is what the backend's eval received: the node's own input list, or a copy of it
/// (which holds one more reference). The backend adds its own conditions.
bool donation_allowed(const std::vector<array>& inputs, size_t i, const array& out);
/// Host buffers: donation_allowed, the buffer on the host with no device copy made from it;
/// then `out` takes it over (row-contiguous) and true. Otherwise false, nothing done.
bool donate_host(const std::vector<array>& inputs, size_t i, array& out);
/// Element-wise outputs: takes over the first input buffer donate_host allows, else
/// allocates like alloc_contiguous. Only for kernels that read each element of an input
/// before they write the same element of out, and no other element after it.
void alloc_contiguous_or_donate(const std::vector<array>& inputs, array& out);
/// Contiguity flags of a layout.
ArrayFlags flags_for(const Shape& shape, const Strides& strides, size_t data_size);

/// Views every backend computes the same way: `out` shares `in`'s buffer.
void broadcast_view(const array& in, array& out);
void transpose_view(const array& in, array& out, const std::vector<int>& axes);
/// A reshape view when `in` is row-contiguous; false (nothing done) otherwise.
bool reshape_view(const array& in, array& out);
/// Elements between the lowest and highest address a layout reaches, inclusive (0 when
/// empty): a view's data_size. A span of 1 means every element is the first one.
size_t layout_span(const Shape& shape, const Strides& strides);
/// `out` views `in`'s buffer with `strides`, starting `offset` elements from in's first.
void strided_view(const array& in, array& out, const Strides& strides, int64_t offset);
/// `out` views `in`'s elements in row-major order with element `strides` from `offset`; false
/// (nothing done) unless `in` is row-contiguous or 1-d.
bool as_strided_view(const array& in, array& out, const Strides& strides, int64_t offset);
/// Drops the (sorted, size-1) `axes`; inserts the (sorted, output-indexed) unit `axes`.
void squeeze_view(const array& in, array& out, const std::vector<int>& axes);
void expand_dims_view(const array& in, array& out, const std::vector<int>& axes);
/// Diagonal `offset` of axes (axis1, axis2) as out's last axis.
void diagonal_view(const array& in, array& out, int offset, int axis1, int axis2);

/// Test hook: called on the worker before each node is computed (not for leaves).
using EvalHook = void (*)(const array& node);
void set_eval_hook(EvalHook hook);
/// Whether this thread is running the kernel of node `d` (a kernel's own eval of it is a no-op).
bool running_here(const ArrayDesc* d) noexcept;

/// Whether a node has completed (available or failed).
inline bool is_complete(const ArrayDesc* d) {
  return d->status.load(std::memory_order_acquire) >= Status::available;
}

}  // namespace braid::detail
