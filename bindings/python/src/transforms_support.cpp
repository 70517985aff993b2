// transforms_support.h: GIL-safe shared Python objects, tree structures and the axes walk.
#include "transforms_support.h"

#include <atomic>
#include <mutex>
#include <string>

namespace braid::python {

namespace {

// Objects dropped by threads without the GIL, freed later by a thread that holds it. Both are
// leaked on purpose: workers may still drop objects while the process exits.
std::mutex& dropped_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::vector<py::object*>& dropped() {
  static auto* v = new std::vector<py::object*>;
  return *v;
}
// Set while a pending call is queued, so that a burst of drops queues one call only.
std::atomic<bool> drain_queued{false};

int drain_dropped(void*) {
  drain_queued.store(false);
  release_dropped_objects();
  return 0;
}

void drop(py::object* obj) {
  // During and after finalization Python objects can no longer be freed safely: leak them.
  if (!Py_IsInitialized() || _Py_IsFinalizing()) return;
  if (PyGILState_Check()) {
    delete obj;
    return;
  }
  {
    std::lock_guard<std::mutex> lock(dropped_mutex());
    dropped().push_back(obj);
  }
  if (!drain_queued.exchange(true) && Py_AddPendingCall(&drain_dropped, nullptr) != 0) {
    drain_queued.store(false);  // the queue is full: the next transform call drains instead
  }
}

/// The placeholder standing for an array leaf in a tree structure (created once, never freed).
PyObject* placeholder() {
  static PyObject* p = py::module_::import("builtins").attr("object")().release().ptr();
  return p;
}

[[noreturn]] void not_a_prefix(const char* tag) {
  throw std::invalid_argument(std::string("[") + tag +
                              "] The axes are not a valid prefix of the tree they describe.");
}

}  // namespace

SharedObject::SharedObject(py::object obj) : ptr_(new py::object(std::move(obj)), &drop) {}

void release_dropped_objects() {
  std::vector<py::object*> objects;
  {
    std::lock_guard<std::mutex> lock(dropped_mutex());
    objects.swap(dropped());
  }
  for (auto* obj : objects) delete obj;
}

py::object tree_structure(py::handle tree) {
  return tree_map_arrays(tree,
                         [](const array&) { return py::reinterpret_borrow<py::object>(placeholder()); });
}

py::object tree_fill(py::handle structure, const std::vector<array>& leaves, size_t& next) {
  return tree_map_leaves(
      structure, [](py::handle h) { return h.ptr() == placeholder(); },
      [&](py::handle) -> py::object {
        if (next >= leaves.size())
          throw std::invalid_argument("[tree_unflatten] Fewer arrays than the tree's leaves.");
        return py::cast(leaves[next++]);
      });
}

void visit_with_axes(py::handle tree, py::handle axes, const char* tag,
                     const std::function<void(py::handle, py::handle)>& visit) {
  const bool axes_list = PyList_Check(axes.ptr());
  const bool axes_tuple = PyTuple_Check(axes.ptr());
  const bool axes_dict = PyDict_Check(axes.ptr());
  if (PyList_Check(tree.ptr()) || PyTuple_Check(tree.ptr())) {
    const bool same_kind = PyList_Check(tree.ptr()) ? axes_list : axes_tuple;
    auto items = py::reinterpret_borrow<py::sequence>(tree);
    if (same_kind) {
      auto sub = py::reinterpret_borrow<py::sequence>(axes);
      if (py::len(sub) != py::len(items)) not_a_prefix(tag);
      for (size_t i = 0; i < py::len(items); ++i) visit_with_axes(items[i], sub[i], tag, visit);
      return;
    }
    if (axes_list || axes_tuple || axes_dict) not_a_prefix(tag);
    for (auto item : items) visit_with_axes(item, axes, tag, visit);
    return;
  }
  if (PyDict_Check(tree.ptr())) {
    auto items = py::reinterpret_borrow<py::dict>(tree);
    if (axes_dict) {
      auto sub = py::reinterpret_borrow<py::dict>(axes);
      if (py::len(sub) != py::len(items)) not_a_prefix(tag);
      for (auto item : items) {
        if (!sub.contains(item.first)) not_a_prefix(tag);
        visit_with_axes(item.second, sub[item.first], tag, visit);
      }
      return;
    }
    if (axes_list || axes_tuple) not_a_prefix(tag);
    for (auto item : items) visit_with_axes(item.second, axes, tag, visit);
    return;
  }
  visit(tree, axes);
}

py::object make_transformed(py::object fun, std::vector<py::object> held, Transformed::Body body) {
  return py::cast(Transformed{std::move(fun), std::move(held), std::move(body)});
}

namespace {

struct VisitTransformed {
  template <typename Fn>
  void operator()(const Transformed& t, Fn&& fn) const {
    fn(t.fun);
    for (const auto& o : t.held) fn(o);
  }
};
struct ClearTransformed {
  void operator()(Transformed& t) const {
    // Moved out first: dropping them may run Python code that reaches this object again.
    py::object fun = std::move(t.fun);
    std::vector<py::object> held = std::move(t.held);
    t.fun = py::none();
    t.held.clear();
  }
};

}  // namespace

BRAID_PYTHON_INIT(kInitArray) {
  py::class_<Transformed>(
      m, "_transformed_function", "A function returned by grad, value_and_grad, vmap or checkpoint.",
      py::custom_type_setup(&gc_type_setup<Transformed, VisitTransformed, ClearTransformed>))
      .def("__call__",
           [](const Transformed& self, const py::args& args, const py::kwargs& kwargs) {
             if (!self.body || self.fun.is_none())
               throw std::invalid_argument("[transform] The function was cleared.");
             return self.body(self, args, kwargs);
           })
      // The wrapped function's name, qualified name and docstring, and the function
      // itself as __wrapped__ (so inspect.signature gives its signature), as functools.wraps
      // would give; an attribute the function lacks is missing here too.
      // (__name__ and __qualname__ cannot be properties of a type: __getattr__ answers them.)
      .def_property_readonly("__doc__", [](const Transformed& t) { return t.fun.attr("__doc__"); })
      .def("__getattr__", [](const Transformed& t, const std::string& name) -> py::object {
        if (name == "__wrapped__") return t.fun;
        if (name == "__name__" || name == "__qualname__") return t.fun.attr(name.c_str());
        throw py::attribute_error("'_transformed_function' object has no attribute '" + name + "'");
      });
}

}  // namespace braid::python
