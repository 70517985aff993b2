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

/// What grad, value_and_grad, vmap and checkpoint return: a callable owning the wrapped
/// function and the transform's other Python arguments where Python's cycle collector sees
/// them (tp_traverse / tp_clear). A closure over a cpp_function's captures is invisible to the
/// collector, so a function that reached its own transform (f's globals holding grad(f)) was
/// never freed, nor the arrays it held. `body` must keep no Python object of its own.
struct Transformed {
  using Body = std::function<py::object(const Transformed& self, const py::args&, const py::kwargs&)>;
  py::object fun;
  std::vector<py::object> held;  // the other Python arguments `body` reads (vmap's axes)
  Body body;
};

/// A new callable Transformed (the class is registered by transforms_support.cpp's init).
py::object make_transformed(py::object fun, std::vector<py::object> held, Transformed::Body body);

/// Makes a class whose C++ value owns Python objects visible to the cycle collector: `visit`
/// calls `fn(obj)` on each object the value owns, and `clear` drops them. For py::class_'s
/// custom_type_setup.
template <typename T, typename Visit, typename Clear>
void gc_type_setup(PyHeapTypeObject* heap_type) {
  auto* type = &heap_type->ht_type;
  type->tp_flags |= Py_TPFLAGS_HAVE_GC;
  type->tp_traverse = [](PyObject* self, visitproc visit, void* arg) -> int {
    Py_VISIT(Py_TYPE(self));  // instances of a heap type own a reference to it
    auto vh = reinterpret_cast<py::detail::instance*>(self)->get_value_and_holder();
    if (!vh.holder_constructed()) return 0;
    int status = 0;
    Visit{}(*vh.template value_ptr<T>(), [&](const py::object& o) {
      if (status == 0 && o.ptr() != nullptr) status = visit(o.ptr(), arg);
    });
    return status;
  };
  type->tp_clear = [](PyObject* self) -> int {
    auto vh = reinterpret_cast<py::detail::instance*>(self)->get_value_and_holder();
    if (vh.holder_constructed()) Clear{}(*vh.template value_ptr<T>());
    return 0;
  };
}

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
