#include "io/common.h"

#include "braid/ops.h"
#include "braid/transforms.h"
#include "graph/node.h"
#include "memory/object_pool.h"

namespace braid::io_detail {

void eval_row_contiguous(std::vector<array*> arrays) {
  std::vector<array> all;
  for (array* a : arrays) all.push_back(*a);
  eval(all);
  std::vector<array> copies;
  for (array* a : arrays) {
    if (a->flags().row_contiguous) continue;
    *a = contiguous(*a, false, Device::cpu);
    copies.push_back(*a);
  }
  if (!copies.empty()) eval(copies);
}

array new_host_array(Shape shape, Dtype dtype, void** data) {
  auto desc = detail::make_pooled<detail::ArrayDesc>(std::move(shape), dtype);
  const size_t bytes = desc->size * dtype.size();
  desc->data = detail::new_host_data(bytes);
  desc->data_ptr = desc->data->buffer.ptr;
  desc->data_size = desc->size;
  desc->status.store(detail::Status::available, std::memory_order_release);
  *data = desc->data_ptr;
  return array(std::move(desc));
}

}  // namespace braid::io_detail
