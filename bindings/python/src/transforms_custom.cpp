// braid.core.custom_function (a decorator whose .vjp, .jvp and .vmap replace the function's
// derivatives and vectorization) and checkpoint, over braid's C++ custom_function and
// checkpoint. The Python callables end up inside graph nodes, which braid may free on any
// thread: they are held as SharedObjects, and every callback takes the GIL before touching them.
#include <optional>

#include "transforms_support.h"

namespace braid::python {

namespace {

using ArrayList = std::vector<array>;
using VjpFn = std::function<ArrayList(const ArrayList&, const ArrayList&, const ArrayList&)>;
using JvpFn = std::function<ArrayList(const ArrayList&, const ArrayList&, const std::vector<int>&)>;
using VmapFn =
    std::function<std::pair<ArrayList, std::vector<int>>(const ArrayList&, const std::vector<int>&)>;

/// The structure of a call's outputs, written when the function runs and read by its vjp.
/// Accessed only under the GIL.
struct OutputStructure {
  SharedObject tree;
};

/// The Python function on arguments rebuilt from the (args, kwargs) structure; records the
/// structure of what it returns.
struct CallFunction {
  SharedObject fun;
  SharedObject input_structure;
  std::shared_ptr<OutputStructure> output;
  bool strict_outputs;

  ArrayList operator()(const ArrayList& inputs) const {
    py::gil_scoped_acquire gil;
    size_t next = 0;
    auto full = py::reinterpret_borrow<py::tuple>(tree_fill(input_structure.get(), inputs, next));
    py::object out = fun.get()(*full[0], **full[1]);
    output->tree = SharedObject(tree_structure(out));
    return tree_flatten_arrays(out, strict_outputs);
  }
};

/// f.vjp's function: (primals, cotangents, outputs, **kwargs) -> cotangents of the primals,
/// primals being the one positional argument or the tuple of them.
struct CallVjp {
  SharedObject vjp_fun;
  SharedObject input_structure;
  std::shared_ptr<OutputStructure> output;

  ArrayList operator()(const ArrayList& primals, const ArrayList& cotangents,
                       const ArrayList& outputs) const {
    py::gil_scoped_acquire gil;
    size_t next = 0;
    auto full = py::reinterpret_borrow<py::tuple>(tree_fill(input_structure.get(), primals, next));
    auto args = py::reinterpret_borrow<py::tuple>(full[0]);
    size_t next_cotangent = 0;
    size_t next_output = 0;
    py::object cots = tree_fill(output->tree.get(), cotangents, next_cotangent);
    py::object outs = tree_fill(output->tree.get(), outputs, next_output);
    py::object primal_tree = args.size() == 1 ? py::object(args[0]) : py::object(args);
    return tree_flatten_arrays(vjp_fun.get()(primal_tree, cots, outs, **full[1]), false);
  }
};

/// The positional arguments rebuilt from `inputs`; custom jvp and vmap take no keywords.
py::tuple positional_only(const SharedObject& input_structure, const ArrayList& inputs, const char* tag) {
  size_t next = 0;
  auto full = py::reinterpret_borrow<py::tuple>(tree_fill(input_structure.get(), inputs, next));
  if (py::len(full[1]) > 0) {
    throw std::invalid_argument(std::string("[") + tag +
                                "] The function must take positional arguments only.");
  }
  return py::reinterpret_borrow<py::tuple>(full[0]);
}

/// f.jvp's function: (primals, tangents) -> tangents of the outputs; a primal without a
/// tangent gets None.
struct CallJvp {
  SharedObject jvp_fun;
  SharedObject input_structure;

  ArrayList operator()(const ArrayList& primals, const ArrayList& tangents,
                       const std::vector<int>& argnums) const {
    py::gil_scoped_acquire gil;
    py::tuple args = positional_only(input_structure, primals, "custom jvp");
    std::vector<bool> has_tangent(primals.size(), false);
    for (int a : argnums) has_tangent[static_cast<size_t>(a)] = true;
    size_t index = 0;
    size_t next_tangent = 0;
    auto tans = py::reinterpret_borrow<py::tuple>(tree_map_arrays(args, [&](const array&) -> py::object {
      return has_tangent[index++] ? py::cast(tangents[next_tangent++]) : py::none();
    }));
    py::object result = args.size() == 1 ? jvp_fun.get()(args[0], tans[0]) : jvp_fun.get()(args, tans);
    return tree_flatten_arrays(result, false);
  }
};

/// f.vmap's function: (inputs, axes) -> (outputs, output axes), None for an axis not vectorized.
struct CallVmap {
  SharedObject vmap_fun;
  SharedObject input_structure;

  std::pair<ArrayList, std::vector<int>> operator()(const ArrayList& inputs,
                                                    const std::vector<int>& axes) const {
    py::gil_scoped_acquire gil;
    py::tuple args = positional_only(input_structure, inputs, "custom vmap");
    size_t index = 0;
    auto in_axes = py::reinterpret_borrow<py::tuple>(tree_map_arrays(args, [&](const array&) -> py::object {
      const int axis = axes[index++];
      return axis >= 0 ? py::object(py::int_(axis)) : py::object(py::none());
    }));
    py::object result =
        args.size() == 1 ? vmap_fun.get()(args[0], in_axes[0]) : vmap_fun.get()(args, in_axes);
    if (!PyTuple_Check(result.ptr()) || py::len(result) != 2) {
      throw std::invalid_argument("[custom vmap] The vmap function must return a tuple (outputs, axes).");
    }
    auto pair = py::reinterpret_borrow<py::tuple>(result);
    ArrayList outputs;
    std::vector<int> out_axes;
    visit_with_axes(pair[0], pair[1], "custom vmap", [&](py::handle leaf, py::handle axis) {
      if (!py::isinstance<array>(leaf)) return;
      if (!axis.is_none() && !PyLong_Check(axis.ptr())) {
        throw std::invalid_argument("[custom vmap] An output axis must be an int or None.");
      }
      outputs.push_back(leaf.cast<array>());
      out_axes.push_back(axis.is_none() ? -1 : axis.cast<int>());
    });
    return {std::move(outputs), std::move(out_axes)};
  }
};

/// The object mx.custom_function(f) makes: calls f, with the transforms given through its
/// decorators (any left out are derived from f).
class CustomFunction {
 public:
  explicit CustomFunction(py::function fun) : fun_(std::move(fun)) {}

  py::object call(const py::args& args, const py::kwargs& kwargs) const {
    if (vjp_.is_none() && jvp_.is_none() && vmap_.is_none()) return fun_(*args, **kwargs);
    release_dropped_objects();
    py::tuple full = py::make_tuple(args, kwargs);
    ArrayList inputs = tree_flatten_arrays(full, false);
    SharedObject structure(tree_structure(full));
    auto output = std::make_shared<OutputStructure>();
    std::optional<VjpFn> vjp;
    std::optional<JvpFn> jvp;
    std::optional<VmapFn> vmap;
    if (!vjp_.is_none()) vjp = CallVjp{SharedObject(vjp_), structure, output};
    if (!jvp_.is_none()) jvp = CallJvp{SharedObject(jvp_), structure};
    if (!vmap_.is_none()) vmap = CallVmap{SharedObject(vmap_), structure};
    auto f =
        braid::custom_function(CallFunction{SharedObject(fun_), structure, output, true}, vjp, jvp, vmap);
    ArrayList outputs = f(inputs);
    size_t next = 0;
    return tree_fill(output->tree.get(), outputs, next);
  }

  py::object fun_;
  py::object vjp_ = py::none();
  py::object jvp_ = py::none();
  py::object vmap_ = py::none();
};

struct VisitCustom {
  template <typename Fn>
  void operator()(const CustomFunction& f, Fn&& fn) const {
    for (const py::object* o : {&f.fun_, &f.vjp_, &f.jvp_, &f.vmap_}) fn(*o);
  }
};
struct ClearCustom {
  void operator()(CustomFunction& f) const {
    // Moved out first: dropping them may run Python code that reaches this object again.
    py::object fun = std::move(f.fun_), vjp = std::move(f.vjp_), jvp = std::move(f.jvp_),
               vmap = std::move(f.vmap_);
    f.fun_ = f.vjp_ = f.jvp_ = f.vmap_ = py::none();
  }
};

py::object checkpoint_call(const py::object& fun, const py::args& args, const py::kwargs& kwargs) {
  release_dropped_objects();
  py::tuple full = py::make_tuple(args, kwargs);
  ArrayList inputs = tree_flatten_arrays(full, false);
  auto output = std::make_shared<OutputStructure>();
  ArrayList outputs = braid::checkpoint(
      CallFunction{SharedObject(fun), SharedObject(tree_structure(full)), output, false})(inputs);
  size_t next = 0;
  return tree_fill(output->tree.get(), outputs, next);
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  py::class_<CustomFunction>(m, "custom_function",
                             py::custom_type_setup(&gc_type_setup<CustomFunction, VisitCustom, ClearCustom>),
                             "Wraps f so that the functions given with the .vjp, .jvp and .vmap decorators "
                             "replace its vector-Jacobian product, Jacobian-vector product and "
                             "vectorization; the others are derived from f. Arrays f captures are "
                             "constants to the transforms.")
      .def(py::init<py::function>(), "f"_a)
      .def("__call__", &CustomFunction::call)
      .def(
          "vjp",
          [](py::object self, py::function f) {
            self.cast<CustomFunction&>().vjp_ = std::move(f);
            return self;
          },
          "f"_a,
          "Sets the vjp: f(primals, cotangents, outputs) returns the cotangents of the primals "
          "(the positional argument, or the tuple of them), in the primals' structure.")
      .def(
          "jvp",
          [](py::object self, py::function f) {
            self.cast<CustomFunction&>().jvp_ = std::move(f);
            return self;
          },
          "f"_a,
          "Sets the jvp: f(primals, tangents) returns the tangents of the outputs; a primal "
          "without a tangent has None.")
      .def(
          "vmap",
          [](py::object self, py::function f) {
            self.cast<CustomFunction&>().vmap_ = std::move(f);
            return self;
          },
          "f"_a,
          "Sets the vectorization: f(inputs, axes) returns (outputs, output axes), None marking "
          "an input or output not vectorized.");

  m.def(
      "checkpoint",
      [](const py::function& fun) {
        return make_transformed(fun, {},
                                [](const Transformed& self, const py::args& args, const py::kwargs& kwargs) {
                                  return checkpoint_call(self.fun, args, kwargs);
                                });
      },
      "fun"_a, "fun, whose intermediate values are computed again for the gradient instead of being kept.");
}

}  // namespace braid::python
