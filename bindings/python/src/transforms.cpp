// braid.core's eval and the transforms of Python functions: grad, value_and_grad, vjp, jvp and
// vmap (mlx.core's names and rules). Arguments and results are trees of arrays (lists, tuples,
// dicts); their arrays travel as flat lists through braid's C++ transforms, and the Python
// function runs on the calling thread, with the GIL, once per call. Its exceptions reach the
// caller unchanged (pybind11 carries them through the C++ frames as error_already_set).
#include <algorithm>
#include <sstream>
#include <string>

#include "transforms_support.h"

namespace braid::python {

namespace {

using ListFunction = std::function<std::vector<array>(const std::vector<array>&)>;

std::string type_name(py::handle obj) { return py::str(py::type::handle_of(obj).attr("__name__")); }

// --- grad and value_and_grad ------------------------------------------------------------------

struct GradTargets {
  std::vector<int> argnums;           // sorted positional indices
  std::vector<std::string> argnames;  // keyword names
};

GradTargets parse_grad_targets(py::handle argnums, py::handle argnames, const std::string& tag) {
  GradTargets t;
  if (PyUnicode_Check(argnames.ptr())) {
    t.argnames.push_back(argnames.cast<std::string>());
  } else if (PyList_Check(argnames.ptr()) || PyTuple_Check(argnames.ptr())) {
    for (auto name : py::reinterpret_borrow<py::sequence>(argnames)) {
      if (!PyUnicode_Check(name.ptr()))
        throw py::type_error(tag + " argnames must be a str or a sequence of str.");
      auto s = name.cast<std::string>();
      if (std::find(t.argnames.begin(), t.argnames.end(), s) == t.argnames.end()) t.argnames.push_back(s);
    }
  } else {
    throw py::type_error(tag + " argnames must be a str or a sequence of str.");
  }

  if (argnums.is_none()) {
    if (t.argnames.empty()) t.argnums = {0};
  } else if (PyLong_Check(argnums.ptr())) {
    t.argnums = {argnums.cast<int>()};
  } else if (PyList_Check(argnums.ptr()) || PyTuple_Check(argnums.ptr())) {
    for (auto n : py::reinterpret_borrow<py::sequence>(argnums)) {
      if (!PyLong_Check(n.ptr()))
        throw py::type_error(tag + " argnums must be an int or a sequence of ints.");
      t.argnums.push_back(n.cast<int>());
    }
  } else {
    throw py::type_error(tag + " argnums must be an int or a sequence of ints.");
  }

  if (t.argnums.empty() && t.argnames.empty()) {
    throw std::invalid_argument(tag + " Gradient wrt no argument requested.");
  }
  std::sort(t.argnums.begin(), t.argnums.end());
  if (!t.argnums.empty() && t.argnums.front() < 0) {
    throw std::invalid_argument(tag + " Can't compute the gradient of negative argument index " +
                                std::to_string(t.argnums.front()) + ".");
  }
  if (std::adjacent_find(t.argnums.begin(), t.argnums.end()) != t.argnums.end()) {
    throw std::invalid_argument(tag + " Duplicate argument index " +
                                std::to_string(*std::adjacent_find(t.argnums.begin(), t.argnums.end())) +
                                " is not allowed.");
  }
  return t;
}

/// The first output must be an array (the loss); value_and_grad also takes (loss, aux...).
void check_loss_output(py::handle out, const std::string& tag, bool scalar_only) {
  if (py::isinstance<array>(out)) return;
  if (scalar_only) {
    throw std::invalid_argument(tag + " The function to differentiate must return a scalar array, not " +
                                type_name(out) + ".");
  }
  if (!PyTuple_Check(out.ptr()) || py::len(out) == 0 ||
      !py::isinstance<array>(py::reinterpret_borrow<py::tuple>(out)[0])) {
    throw std::invalid_argument(tag +
                                " The function to differentiate must return a scalar array or a tuple whose "
                                "first element is a scalar array, not " +
                                type_name(out) + ".");
  }
}

/// A rebuilt argument as `fun` received it: (container, what each of its slots held), down to
/// the leaves, whose second element is None. `tracers` maps each traced array it holds (by
/// id) to the caller's array it stands for (`original` is the caller's argument).
py::object given_snapshot(py::handle tree, py::handle original, py::dict& tracers) {
  py::object kids = py::none();
  const bool same_kind = Py_TYPE(tree.ptr()) == Py_TYPE(original.ptr()) ||
                         (PyDict_Check(tree.ptr()) && PyDict_Check(original.ptr()));
  if ((PyList_Check(tree.ptr()) || PyTuple_Check(tree.ptr())) && same_kind) {
    py::list each;
    auto items = py::reinterpret_borrow<py::sequence>(tree);
    auto orig = py::reinterpret_borrow<py::sequence>(original);
    for (size_t i = 0; i < py::len(items); ++i) each.append(given_snapshot(items[i], orig[i], tracers));
    kids = std::move(each);
  } else if (PyDict_Check(tree.ptr()) && same_kind) {
    py::dict each;
    auto orig = py::reinterpret_borrow<py::dict>(original);
    for (auto item : py::reinterpret_borrow<py::dict>(tree)) {
      each[item.first] = given_snapshot(item.second, orig[item.first], tracers);
    }
    kids = std::move(each);
  } else if (tree.ptr() != original.ptr()) {
    tracers[py::int_(reinterpret_cast<uintptr_t>(tree.ptr()))] = original;
  }
  return py::make_tuple(py::reinterpret_borrow<py::object>(tree), kids);
}

/// `value` with every traced array in it (through lists, tuples and dicts) replaced by the
/// caller's array it stands for.
py::object untraced(py::handle value, const py::dict& tracers) {
  py::int_ key(reinterpret_cast<uintptr_t>(value.ptr()));
  if (tracers.contains(key)) return tracers[key];
  if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr()) || PyDict_Check(value.ptr())) {
    return tree_map_leaves(
        value,
        [](py::handle h) {
          return !(PyList_Check(h.ptr()) || PyTuple_Check(h.ptr()) || PyDict_Check(h.ptr()));
        },
        [&](py::handle leaf) -> py::object {
          py::int_ k(reinterpret_cast<uintptr_t>(leaf.ptr()));
          return tracers.contains(k) ? py::object(tracers[k]) : py::reinterpret_borrow<py::object>(leaf);
        });
  }
  return py::reinterpret_borrow<py::object>(value);
}

/// Carries the writes `fun` made into the lists and dicts it was given (`snapshot`, taken
/// before the call) over to the caller's `original` containers they were rebuilt from, as if
/// `fun` had been handed the caller's own containers (MLX's behaviour): a slot that no longer
/// holds what it was given takes its new value, with traced arrays put back as the caller's;
/// a list that shrank is cut, and a key `fun` deleted is deleted. Slots `fun` left alone, and
/// keys it never saw (another thread's), stay as they are.
void carry_writes(py::handle original, py::handle snapshot, const py::dict& tracers) {
  auto given = py::reinterpret_borrow<py::tuple>(snapshot);
  py::handle now = given[0];
  py::handle kids = given[1];
  if (kids.is_none()) return;
  if (PyTuple_Check(now.ptr()) && PyTuple_Check(original.ptr())) {
    auto items = py::reinterpret_borrow<py::tuple>(now);
    auto was = py::reinterpret_borrow<py::list>(kids);
    auto orig = py::reinterpret_borrow<py::tuple>(original);
    for (size_t i = 0; i < items.size() && i < orig.size() && i < was.size(); ++i) {
      carry_writes(orig[i], was[i], tracers);
    }
  } else if (PyList_Check(now.ptr()) && PyList_Check(original.ptr())) {
    auto items = py::reinterpret_borrow<py::list>(now);
    auto was = py::reinterpret_borrow<py::list>(kids);
    auto orig = py::reinterpret_borrow<py::list>(original);
    for (size_t i = 0; i < items.size(); ++i) {
      const bool kept = i < was.size() && items[i].ptr() == py::tuple(was[i])[0].ptr();
      if (kept) {
        if (i < orig.size()) carry_writes(orig[i], was[i], tracers);
      } else if (i < orig.size()) {
        orig[i] = untraced(items[i], tracers);
      } else {
        orig.append(untraced(items[i], tracers));
      }
    }
    if (items.size() < was.size() && items.size() < orig.size()) {
      PyList_SetSlice(orig.ptr(), static_cast<Py_ssize_t>(items.size()),
                      static_cast<Py_ssize_t>(std::min(orig.size(), was.size())), nullptr);
    }
  } else if (PyDict_Check(now.ptr()) && PyDict_Check(original.ptr())) {
    auto items = py::reinterpret_borrow<py::dict>(now);
    auto was = py::reinterpret_borrow<py::dict>(kids);
    auto orig = py::reinterpret_borrow<py::dict>(original);
    for (auto item : items) {
      const bool kept = was.contains(item.first) && item.second.ptr() == py::tuple(was[item.first])[0].ptr();
      if (kept) {
        if (orig.contains(item.first)) carry_writes(orig[item.first], was[item.first], tracers);
      } else {
        orig[item.first] = untraced(item.second, tracers);
      }
    }
    for (auto item : was) {
      if (!items.contains(item.first) && orig.contains(item.first))
        PyDict_DelItem(orig.ptr(), item.first.ptr());
    }
  }
}

/// One call of value_and_grad(fun)(*args, **kwargs): (value tree, gradient tree).
///
/// The differentiated arguments reach `fun` rebuilt around the traced arrays, in new lists,
/// tuples and dicts; the others reach it as they are (an nn.Module passed through stays that
/// object). The traced arrays never enter the caller's containers, so threads may share them;
/// what `fun` writes into the containers it was given reaches the caller's (carry_writes).
std::pair<py::object, py::object> value_and_grad_call(const py::object& fun, const GradTargets& t,
                                                      const std::string& tag, bool scalar_only,
                                                      const py::args& args, const py::kwargs& kwargs) {
  release_dropped_objects();
  if (!t.argnums.empty() && static_cast<size_t>(t.argnums.back()) >= args.size()) {
    throw std::invalid_argument(tag + " Can't compute the gradient of argument index " +
                                std::to_string(t.argnums.back()) +
                                " because the function is called with only " + std::to_string(args.size()) +
                                " positional arguments.");
  }
  for (const auto& name : t.argnames) {
    if (!kwargs.contains(name)) {
      std::string given;
      for (auto item : kwargs) given += (given.empty() ? "" : ", ") + item.first.cast<std::string>();
      throw std::invalid_argument(tag + " Can't compute the gradient of keyword argument '" + name +
                                  "' because the function is called with the keyword arguments {" + given +
                                  "}.");
    }
  }
  auto positional = [&](size_t i) {
    return std::binary_search(t.argnums.begin(), t.argnums.end(), static_cast<int>(i));
  };
  auto keyword = [&](py::handle key) {
    return std::find(t.argnames.begin(), t.argnames.end(), key.cast<std::string>()) != t.argnames.end();
  };

  // The arrays to differentiate: those of the positional arguments in argnums, then those of
  // the keyword arguments in argnames (in the call's keyword order); any other leaf is an error.
  std::vector<array> arrays;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!positional(i)) continue;
    auto flat = tree_flatten_arrays(args[i], true);
    arrays.insert(arrays.end(), flat.begin(), flat.end());
  }
  for (auto item : kwargs) {
    if (!keyword(item.first)) continue;
    auto flat = tree_flatten_arrays(item.second, true);
    arrays.insert(arrays.end(), flat.begin(), flat.end());
  }
  std::vector<int> every(arrays.size());
  for (size_t i = 0; i < every.size(); ++i) every[i] = static_cast<int>(i);

  py::object py_out;
  std::vector<std::pair<py::object, py::object>> given;  // (caller's argument, snapshot)
  py::dict tracers;                                      // id(traced array) -> caller's array
  auto traced = [&](const std::vector<array>& inputs) {
    py::gil_scoped_acquire gil;
    size_t next = 0;
    given.clear();
    tracers.clear();
    py::tuple call_args(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      if (!positional(i)) {
        call_args[i] = args[i];
        continue;
      }
      call_args[i] = tree_unflatten_arrays(args[i], inputs, next);
      given.emplace_back(args[i], given_snapshot(call_args[i], args[i], tracers));
    }
    py::dict call_kwargs;
    for (auto item : kwargs) {
      if (!keyword(item.first)) {
        call_kwargs[item.first] = item.second;
        continue;
      }
      call_kwargs[item.first] = tree_unflatten_arrays(item.second, inputs, next);
      given.emplace_back(py::reinterpret_borrow<py::object>(item.second),
                         given_snapshot(call_kwargs[item.first], item.second, tracers));
    }
    py_out = fun(*call_args, **call_kwargs);
    check_loss_output(py_out, tag, scalar_only);
    return tree_flatten_arrays(py_out, false);
  };
  auto [values, grads] = braid::value_and_grad(ListFunction(traced), every)(arrays);

  // Gradients in the shape of their arguments: one argument as itself, several as a tuple,
  // and with argnames a (positional, {name: gradient}) pair.
  size_t next = 0;
  py::object positional_grads = py::none();
  if (t.argnums.size() == 1) {
    positional_grads = tree_unflatten_arrays(args[static_cast<size_t>(t.argnums[0])], grads, next);
  } else if (t.argnums.size() > 1) {
    py::tuple each(t.argnums.size());
    for (size_t i = 0; i < t.argnums.size(); ++i) {
      each[i] = tree_unflatten_arrays(args[static_cast<size_t>(t.argnums[i])], grads, next);
    }
    positional_grads = std::move(each);
  }
  py::object py_grads = positional_grads;
  if (!t.argnames.empty()) {
    py::dict keyword_grads;
    for (auto item : kwargs) {
      if (keyword(item.first)) keyword_grads[item.first] = tree_unflatten_arrays(item.second, grads, next);
    }
    py_grads = py::make_tuple(positional_grads, keyword_grads);
  }
  size_t next_value = 0;
  py::object py_values = tree_unflatten_arrays(py_out, values, next_value);
  // Last: the gradients above take the shape the arguments had when `fun` was called.
  for (const auto& [original, snapshot] : given) carry_writes(original, snapshot, tracers);
  return {py_values, py_grads};
}

// --- vjp and jvp ------------------------------------------------------------------------------

/// `fun` over a flat list of arrays: it takes them as positional arguments and returns an array
/// or a list or tuple of arrays.
ListFunction list_function(const py::function& fun, const char* tag) {
  return [&fun, tag](const std::vector<array>& inputs) {
    py::gil_scoped_acquire gil;
    py::tuple call_args(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) call_args[i] = py::cast(inputs[i]);
    py::object out = fun(*call_args);
    if (py::isinstance<array>(out)) return std::vector<array>{out.cast<array>()};
    if (PyList_Check(out.ptr()) || PyTuple_Check(out.ptr())) {
      std::vector<array> outs;
      for (auto item : py::reinterpret_borrow<py::sequence>(out)) {
        if (!py::isinstance<array>(item)) break;
        outs.push_back(item.cast<array>());
      }
      if (outs.size() == py::len(out)) return outs;
    }
    throw std::invalid_argument(std::string("[") + tag +
                                "] The function must return an array or a list of arrays, not " +
                                type_name(out) + ".");
  };
}

// --- vmap -------------------------------------------------------------------------------------

/// The vectorized axis of each array of `tree` from the prefix tree `axes` (-1 for None),
/// negative axes counted from the end. Outputs (`output`) may put the axis after their last.
std::vector<int> flat_axes(py::handle tree, py::handle axes, bool output) {
  std::vector<int> flat;
  bool saw_tuple = false;
  visit_with_axes(tree, axes, "vmap", [&](py::handle leaf, py::handle axis) {
    if (!py::isinstance<array>(leaf))
      throw std::invalid_argument("[vmap] The arguments should contain only arrays.");
    if (PyTuple_Check(axis.ptr())) {
      // A one-element tuple stands for its element when the whole tree is a single array.
      saw_tuple = true;
      if (py::len(axis) != 1) throw std::invalid_argument("[vmap] axis must be int or None.");
      axis = py::reinterpret_borrow<py::tuple>(axis)[0];
    }
    if (axis.is_none()) {
      flat.push_back(-1);
      return;
    }
    if (!PyLong_Check(axis.ptr())) throw std::invalid_argument("[vmap] axis must be int or None.");
    const auto& a = leaf.cast<const array&>();
    const int ndim = static_cast<int>(a.ndim()) + (output ? 1 : 0);
    int ax = axis.cast<int>();
    if (ax < 0) ax += ndim;
    if (ax < 0 || ax >= ndim) {
      std::ostringstream msg;
      msg << "[vmap] Invalid" << (output ? " output " : " ") << "vectorization axis " << axis.cast<int>()
          << " for an array with " << a.ndim() << " dimensions.";
      throw std::invalid_argument(msg.str());
    }
    flat.push_back(ax);
  });
  if (saw_tuple && !py::isinstance<array>(tree))
    throw std::invalid_argument("[vmap] axis must be int or None.");
  return flat;
}

py::object vmap_call(const py::object& fun, py::handle in_axes, py::handle out_axes, const py::args& args) {
  release_dropped_objects();
  std::vector<array> inputs = tree_flatten_arrays(args, true);
  py::object tree = args.size() == 1 ? py::object(args[0]) : py::object(args);
  std::vector<int> in = flat_axes(tree, in_axes, false);

  py::object py_out;
  std::vector<array> traced_out;
  auto traced = [&](const std::vector<array>& a) {
    py::gil_scoped_acquire gil;
    size_t next = 0;
    py::object call_args = tree_unflatten_arrays(args, a, next);
    py_out = fun(*call_args);
    traced_out = tree_flatten_arrays(py_out, true);
    return traced_out;
  };
  // braid puts every mapped output's axis first; outputs that depend on no mapped input come
  // back as they were traced.
  std::vector<array> outs = braid::vmap(ListFunction(traced), in)(inputs);
  std::vector<int> out = flat_axes(py_out, out_axes, true);

  int size = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (in[i] >= 0) {
      size = inputs[i].shape(in[i]);
      break;
    }
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    const bool mapped = outs[i].id() != traced_out[i].id();
    if (out[i] < 0) {
      if (mapped) {
        throw std::invalid_argument("[vmap] An output whose out_axes is None depends on a vectorized input.");
      }
    } else if (mapped) {
      if (out[i] != 0) outs[i] = moveaxis(outs[i], 0, out[i]);
    } else {
      // Constant across the batch: repeated along the new axis, as MLX does.
      array expanded = expand_dims(outs[i], out[i]);
      Shape shape = expanded.shape();
      shape[static_cast<size_t>(out[i])] = size;
      outs[i] = broadcast_to(expanded, shape);
    }
  }
  size_t next = 0;
  return tree_unflatten_arrays(py_out, outs, next);
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  m.def(
      "eval", [](const py::args& args) { eval_released(tree_flatten_arrays(args, false)); },
      "Computes the arrays in the arguments (arrays or trees of them; other leaves are ignored), "
      "releasing the GIL while it waits.");
  m.def(
      "async_eval",
      [](const py::args& args) {
        auto arrays = tree_flatten_arrays(args, false);
        py::gil_scoped_release release;
        braid::async_eval(std::move(arrays));
      },
      "Starts computing the arrays in the arguments and returns at once; using them waits.");
  m.def(
      "export_to_dot",
      [](py::object file, const py::args& args, const py::kwargs& kwargs) {
        NodeNamer namer;
        std::vector<array> outputs = tree_flatten_arrays(args, false);
        for (const auto& item : kwargs) {
          for (const array& a : tree_flatten_arrays(item.second, false)) {
            namer.set_name(a, item.first.cast<std::string>());
            outputs.push_back(a);
          }
        }
        std::ostringstream dot;
        export_to_dot(dot, std::move(namer), outputs);
        if (py::isinstance<py::str>(file)) {
          py::object f = py::module_::import("builtins").attr("open")(file, "w");
          f.attr("write")(dot.str());
          f.attr("close")();
          return;
        }
        if (!py::hasattr(file, "write"))
          throw py::type_error("[export_to_dot] file must be a path (str) or an object with a write method.");
        file.attr("write")(dot.str());
      },
      "file"_a, "Writes the graph behind the arrays in the arguments (arrays or trees of them; keyword "
      "arguments name their arrays) to `file`, a path or a writable text stream, in Graphviz's DOT format.");

  m.def(
      "vjp",
      [](const py::function& fun, const std::vector<array>& primals, const std::vector<array>& cotangents) {
        release_dropped_objects();
        return braid::vjp(list_function(fun, "vjp"), primals, cotangents);
      },
      "fun"_a, "primals"_a, "cotangents"_a,
      "The outputs of fun(*primals) and the products of the cotangents (one per output) with its "
      "Jacobian, one per primal: (outputs, vjps).");
  m.def(
      "jvp",
      [](const py::function& fun, const std::vector<array>& primals, const std::vector<array>& tangents) {
        release_dropped_objects();
        return braid::jvp(list_function(fun, "jvp"), primals, tangents);
      },
      "fun"_a, "primals"_a, "tangents"_a,
      "The outputs of fun(*primals) and the products of its Jacobian with the tangents (one per "
      "primal), one per output: (outputs, jvps).");

  m.def(
      "value_and_grad",
      [](const py::function& fun, py::object argnums, py::object argnames) {
        const std::string tag = "[value_and_grad]";
        GradTargets t = parse_grad_targets(argnums, argnames, tag);
        return make_transformed(
            fun, {}, [t, tag](const Transformed& self, const py::args& args, const py::kwargs& kwargs) {
              auto [value, grads] = value_and_grad_call(self.fun, t, tag, false, args, kwargs);
              return py::object(py::make_tuple(value, grads));
            });
      },
      "fun"_a, "argnums"_a = py::none(), "argnames"_a = py::list(),
      "A function returning (fun's value, its gradient with respect to the arguments in argnums "
      "(default 0) and the keyword arguments in argnames). fun returns a scalar array or a tuple "
      "whose first element is one; only that element is differentiated.");
  m.def(
      "grad",
      [](const py::function& fun, py::object argnums, py::object argnames) {
        const std::string tag = "[grad]";
        GradTargets t = parse_grad_targets(argnums, argnames, tag);
        return make_transformed(
            fun, {}, [t, tag](const Transformed& self, const py::args& args, const py::kwargs& kwargs) {
              return value_and_grad_call(self.fun, t, tag, true, args, kwargs).second;
            });
      },
      "fun"_a, "argnums"_a = py::none(), "argnames"_a = py::list(),
      "A function returning the gradient of the scalar function fun with respect to the arguments "
      "in argnums (default 0) and the keyword arguments in argnames.");

  m.def(
      "vmap",
      [](const py::function& fun, py::object in_axes, py::object out_axes) {
        return make_transformed(
            fun, {in_axes, out_axes},
            [](const Transformed& self, const py::args& args, const py::kwargs& kwargs) {
              if (!kwargs.empty())
                throw py::type_error("vmap: the function takes positional arguments only.");
              return vmap_call(self.fun, self.held[0], self.held[1], args);
            });
      },
      "fun"_a, "in_axes"_a = 0, "out_axes"_a = 0,
      "fun vectorized over an axis of its inputs: in_axes and out_axes are an int, None (not "
      "vectorized) or a prefix tree of the arguments (of the outputs) holding ints and None.");
}

}  // namespace braid::python
