// What the transform bindings (transforms.cpp, transforms_custom.cpp) share: Python objects
// that graph nodes may hold and drop on any thread, tree structures kept without their arrays,
// and the walk that pairs a tree with a prefix tree of axes (vmap's in_axes and out_axes).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "python.h"

namespace braid::python {

/// A Python object owned from C++ state that braid may copy or destroy on any thread (the
/// callbacks inside a graph node die wherever the node does). Copies share one reference. The
/// last copy hands the object back on a thread that holds the GIL: at once when the dropping
/// thread holds it, otherwise at the interpreter's next pending call, so a braid worker never
/// waits for the GIL. Construct and dereference only while holding the GIL.
class SharedObject {
 public:
  SharedObject() = default;
  explicit SharedObject(py::object obj);
  const py::object& get() const { return *ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }

 private:
  std::shared_ptr<py::object> ptr_;
};

/// Frees the objects that threads without the GIL have dropped since the last call. Needs the
/// GIL; the transforms call it on entry so the backlog stays short.
void release_dropped_objects();

/// `tree` (lists, tuples, dicts; other leaves kept) with every array leaf replaced by a
/// placeholder, to rebuild the tree later without keeping its arrays alive.
py::object tree_structure(py::handle tree);
/// `structure` with each placeholder replaced by the next of `leaves`.
py::object tree_fill(py::handle structure, const std::vector<array>& leaves, size_t& next);

/// Calls `visit(leaf, axis)` for each leaf of `tree`, `axis` being the node of `axes` found at
/// the same place, or above it when `axes` is a prefix of `tree` (an int or None standing for a
/// whole subtree). Throws std::invalid_argument("[<tag>] ...") when `axes` is no prefix of `tree`.
void visit_with_axes(py::handle tree, py::handle axes, const char* tag,
                     const std::function<void(py::handle leaf, py::handle axis)>& visit);

}  // namespace braid::python
