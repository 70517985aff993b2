// mlx.core's compile, disable_compile and enable_compile, and mlx.core.random.state.
//
// A compiled Python function keeps one braid::CompileCache. A call flattens its arguments
// (lists, tuples, dicts; arrays and constants: ints, floats, strings, bools, None) into the
// arrays and a key that holds the tree's structure, the constants' values and the arrays'
// shapes and dtypes, as MLX's key does: a new structure, shape, dtype or constant traces again.
// The arrays of the `inputs` trees (captured state: module parameters, mx.random.state) are
// read before the call as extra inputs, and the arrays of the `outputs` trees after the
// traced call as extra outputs, written back into those trees after each call. The Python
// function runs only when a trace is made, with the GIL; the cache is called without it, so a
// thread waiting for another thread's trace of the same signature never holds the GIL.
#include <algorithm>
#include <cstring>
#include <string_view>
#include <map>
#include <optional>
#include <string>

#include "braid/compile.h"
#include "transforms_support.h"

namespace braid::python {

namespace {

// MLX's markers for the structure of the arguments (large primes), and braid's for the other
// kinds of leaves, so that 1, 1.0, True and "1" differ.
constexpr uint64_t kArrayMark = 18446744073709551557ULL;
constexpr uint64_t kListMark = 18446744073709551533ULL;
constexpr uint64_t kDictMark = 18446744073709551521ULL;
constexpr uint64_t kTupleMark = 18446744073709551437ULL;
constexpr uint64_t kNoneMark = 18446744073709551427ULL;
constexpr uint64_t kStrMark = 18446744073709551359ULL;
constexpr uint64_t kIntMark = 18446744073709551337ULL;
constexpr uint64_t kFloatMark = 18446744073709551293ULL;
constexpr uint64_t kBoolMark = 18446744073709551263ULL;

/// mlx.core.random.state: a one-item sequence whose item is the process-wide key sequence's
/// current key (or, inside a trace that captured it, the traced key).
struct KeyState {};

bool is_key_state(py::handle h) { return py::isinstance<KeyState>(h); }

std::string type_name(py::handle obj) { return py::str(py::type::handle_of(obj).attr("__name__")); }

void push_u64(std::vector<uint64_t>& key, uint64_t v) { key.push_back(v); }

/// The exact bytes of `text`: its length, then 8 bytes per word (hashes collide).
void push_bytes(std::vector<uint64_t>& key, std::string_view text) {
  push_u64(key, text.size());
  for (size_t i = 0; i < text.size(); i += 8) {
    uint64_t word = 0;
    std::memcpy(&word, text.data() + i, std::min<size_t>(8, text.size() - i));
    push_u64(key, word);
  }
}

/// An int's exact value (CPython's hash maps -1 and -2, or 0 and 2**61 - 1, together).
void push_int(std::vector<uint64_t>& key, py::handle obj) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
  push_u64(key, static_cast<uint64_t>(overflow));
  if (overflow == 0) {
    push_u64(key, static_cast<uint64_t>(v));
  } else {
    push_bytes(key, py::str(obj).cast<std::string>());
  }
}

/// A dict key: ints and strings by value, anything else by its hash.
void push_dict_key(std::vector<uint64_t>& key, py::handle k) {
  if (PyUnicode_Check(k.ptr())) {
    push_u64(key, kStrMark);
    push_bytes(key, k.cast<std::string>());
  } else if (PyLong_Check(k.ptr()) && !PyBool_Check(k.ptr())) {
    push_u64(key, kIntMark);
    push_int(key, k);
  } else {
    push_u64(key, static_cast<uint64_t>(py::hash(k)));
  }
}

/// Appends the arrays of an argument tree to `arrays` and its structure and constants to `key`
/// (an array's dtype and rank, and its shape unless `shapeless`).
void flatten_argument(py::handle obj, std::vector<array>& arrays, std::vector<uint64_t>& key, bool shapeless) {
  if (py::isinstance<array>(obj)) {
    const auto& a = obj.cast<const array&>();
    push_u64(key, kArrayMark);
    push_u64(key, static_cast<uint64_t>(a.dtype().val()));
    push_u64(key, a.ndim());
    if (!shapeless) {
      for (auto d : a.shape()) push_u64(key, static_cast<uint64_t>(d));
    }
    arrays.push_back(a);
  } else if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) {
    push_u64(key, PyList_Check(obj.ptr()) ? kListMark : kTupleMark);
    push_u64(key, py::len(obj));
    for (auto item : py::reinterpret_borrow<py::sequence>(obj)) flatten_argument(item, arrays, key, shapeless);
  } else if (PyDict_Check(obj.ptr())) {
    push_u64(key, kDictMark);
    push_u64(key, py::len(obj));
    for (auto item : py::reinterpret_borrow<py::dict>(obj)) {
      push_dict_key(key, item.first);
      flatten_argument(item.second, arrays, key, shapeless);
    }
  } else if (obj.is_none()) {
    push_u64(key, kNoneMark);
  } else if (PyBool_Check(obj.ptr())) {
    push_u64(key, kBoolMark);
    push_u64(key, obj.ptr() == Py_True ? 1 : 0);
  } else if (PyLong_Check(obj.ptr())) {
    push_u64(key, kIntMark);
    push_int(key, obj);
  } else if (PyFloat_Check(obj.ptr())) {
    push_u64(key, kFloatMark);
    const double v = PyFloat_AsDouble(obj.ptr());
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    push_u64(key, bits);
  } else if (PyUnicode_Check(obj.ptr())) {
    push_u64(key, kStrMark);
    push_bytes(key, obj.cast<std::string>());
  } else {
    throw std::invalid_argument(
        "[compile] Function arguments must be trees of arrays or constants (floats, ints, strings, or None), "
        "but received type " +
        type_name(obj) + ".");
  }
}

/// The arrays of a captured-state tree (other leaves are skipped, as MLX); mx.random.state
/// stands for the current key, and `key_index` is set to its place.
void flatten_state(py::handle tree, std::vector<array>& out, std::optional<size_t>& key_index) {
  if (is_key_state(tree)) {
    key_index = out.size();
    out.push_back(random::KeySequence::default_().state());
  } else if (py::isinstance<array>(tree)) {
    out.push_back(tree.cast<array>());
  } else if (PyList_Check(tree.ptr()) || PyTuple_Check(tree.ptr())) {
    for (auto item : py::reinterpret_borrow<py::sequence>(tree)) flatten_state(item, out, key_index);
  } else if (PyDict_Check(tree.ptr())) {
    for (auto item : py::reinterpret_borrow<py::dict>(tree)) flatten_state(item.second, out, key_index);
  }
}

/// Writes `leaves` (from `next`) over the arrays of a captured-state tree, in place: list
/// items and dict values are replaced; mx.random.state's leaf is skipped (the caller handles
/// it). An array held directly by a tuple cannot be replaced and raises ValueError.
void replace_state(py::handle tree, const std::vector<array>& leaves, size_t& next) {
  auto replace_item = [&](py::handle item, const std::function<void(py::object)>& assign) {
    if (is_key_state(item)) {
      ++next;
    } else if (py::isinstance<array>(item)) {
      if (next >= leaves.size())
        throw std::invalid_argument("[compile] The captured state changed its arrays.");
      assign(py::cast(leaves[next++]));
    } else {
      replace_state(item, leaves, next);
    }
  };
  if (is_key_state(tree)) {
    ++next;
  } else if (PyList_Check(tree.ptr())) {
    auto list = py::reinterpret_borrow<py::list>(tree);
    for (size_t i = 0; i < list.size(); ++i)
      replace_item(list[i], [&](py::object v) { list[i] = std::move(v); });
  } else if (PyTuple_Check(tree.ptr())) {
    for (auto item : py::reinterpret_borrow<py::tuple>(tree)) {
      replace_item(item, [](py::object) {
        throw std::invalid_argument(
            "[compile] Captured state must hold its arrays in lists or dicts, not tuples.");
      });
    }
  } else if (PyDict_Check(tree.ptr())) {
    auto dict = py::reinterpret_borrow<py::dict>(tree);
    for (auto item : dict) {
      py::object k = py::reinterpret_borrow<py::object>(item.first);
      replace_item(item.second, [&](py::object v) { dict[k] = std::move(v); });
    }
  }
}

/// What one compiled Python function keeps besides its Python arguments (in Transformed).
struct Compiled {
  explicit Compiled(bool shapeless_) : cache(shapeless_), shapeless(shapeless_) {}
  CompileCache cache;
  bool shapeless;
  // The output tree of each traced key, without its arrays. Guarded by the GIL.
  std::map<std::vector<uint64_t>, SharedObject> structures;
};

py::object compiled_call(Compiled& c, const py::object& fun, const py::object& in_state,
                         const py::object& out_state, const py::args& args, const py::kwargs& kwargs) {
  release_dropped_objects();
  std::vector<array> inputs;
  std::vector<uint64_t> key;
  flatten_argument(args, inputs, key, c.shapeless);
  const size_t num_args = inputs.size();
  flatten_argument(kwargs, inputs, key, c.shapeless);
  const size_t num_call_inputs = inputs.size();
  std::optional<size_t> in_key;
  if (!in_state.is_none()) flatten_state(in_state, inputs, in_key);
  if (in_key && !inputs[*in_key].is_available()) {
    // Called while another compiled function that captured the random state is traced: the
    // key is that trace's. Run the function as it is; its draws advance the enclosing trace's
    // key, which that trace records and publishes.
    return fun(*args, **kwargs);
  }  // in_key: its place in `inputs`
  push_u64(key, inputs.size() - num_call_inputs);

  // Runs `fun` on `a` (placeholders when tracing; the inputs themselves while compilation is
  // disabled), with the captured state's arrays swapped for a's and swapped back after.
  auto traced = [&](const std::vector<array>& a) {
    py::gil_scoped_acquire gil;
    std::vector<array> originals(inputs.begin() + static_cast<std::ptrdiff_t>(num_call_inputs), inputs.end());
    std::vector<array> replaced(a.begin() + static_cast<std::ptrdiff_t>(num_call_inputs), a.end());
    struct Restore {
      const py::object& tree;
      const std::vector<array>& originals;
      ~Restore() {
        size_t n = 0;
        try {
          if (!tree.is_none()) replace_state(tree, originals, n);
        } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor; the trace's error wins
        }
      }
    } restore{in_state, originals};
    size_t next = 0;
    // After `restore` exists: a swap that throws half-way (a tuple holding an array) is undone.
    if (!in_state.is_none()) replace_state(in_state, replaced, next);
    std::optional<random::KeyOverride> key_override;
    if (in_key) key_override.emplace(a[*in_key]);

    next = 0;
    py::object call_args = tree_unflatten_arrays(args, a, next);
    py::object call_kwargs = tree_unflatten_arrays(kwargs, a, next);
    py::object out = fun(*call_args, **call_kwargs);
    std::vector<array> outs = tree_flatten_arrays(out, false);
    c.structures[key] = SharedObject(tree_structure(out));
    std::optional<size_t> unused;
    if (!out_state.is_none()) flatten_state(out_state, outs, unused);  // inside the override: its key
    return outs;
  };

  std::vector<array> outs;
  for (;;) {
    {
      py::gil_scoped_release release;
      outs = c.cache.call(traced, inputs, key);
    }
    // The captured outputs close the list; the key's place among them, if it is one.
    std::vector<array> probe;
    std::optional<size_t> out_key;
    if (!out_state.is_none()) flatten_state(out_state, probe, out_key);
    if (probe.size() > outs.size())
      throw std::invalid_argument("[compile] The captured outputs changed their arrays.");
    if (!out_key) break;
    const size_t at = outs.size() - probe.size() + *out_key;
    bool published = true;
    {
      py::gil_scoped_release release;
      if (in_key) {
        published = random::KeySequence::default_().compare_exchange(inputs[*in_key], outs[at]);
      } else {
        random::KeySequence::default_().set_state(outs[at]);
      }
    }
    if (published) break;
    // Another thread drew from the sequence meanwhile: replay on the key it left.
    inputs[*in_key] = random::KeySequence::default_().state();
  }

  auto it = c.structures.find(key);
  if (it == c.structures.end()) throw std::runtime_error("[compile] No output structure was recorded.");
  if (!out_state.is_none()) {
    std::vector<array> probe;
    std::optional<size_t> k;
    flatten_state(out_state, probe, k);
    std::vector<array> state(outs.end() - static_cast<std::ptrdiff_t>(probe.size()), outs.end());
    size_t next = 0;
    replace_state(out_state, state, next);
    outs.erase(outs.end() - static_cast<std::ptrdiff_t>(probe.size()), outs.end());
  }
  size_t next = 0;
  return tree_fill(it->second.get(), outs, next);
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions + 1) {  // after random.cpp made the random submodule
  py::module_ random_module = m.attr("random");
  py::class_<KeyState>(
      random_module, "KeyState",
      "mlx.core.random.state: a one-item sequence holding the global key sequence's current key.")
      .def("__len__", [](const KeyState&) { return 1; })
      .def("__getitem__",
           [](const KeyState&, int i) {
             if (i != 0 && i != -1) throw py::index_error("random.state has one item.");
             return random::KeySequence::default_().state();
           })
      .def("__setitem__",
           [](const KeyState&, int i, const array& key) {
             if (i != 0 && i != -1) throw py::index_error("random.state has one item.");
             py::gil_scoped_release release;
             random::KeySequence::default_().set_state(key);
           })
      .def("__iter__",
           [](const KeyState&) { return py::iter(py::make_tuple(random::KeySequence::default_().state())); })
      .def("__repr__", [](const KeyState&) {
        return "[" + py::repr(py::cast(random::KeySequence::default_().state())).cast<std::string>() + "]";
      });
  random_module.attr("state") = py::cast(KeyState{});

  m.def(
      "compile",
      [](py::object fun, py::object inputs, py::object outputs, bool shapeless) {
        if (!PyCallable_Check(fun.ptr())) throw py::type_error("[compile] Expected a callable.");
        auto compiled = std::make_shared<Compiled>(shapeless);
        return make_transformed(
            fun, {inputs, outputs},
            [compiled](const Transformed& self, const py::args& args, const py::kwargs& kwargs) {
              return compiled_call(*compiled, self.fun, self.held[0], self.held[1], args, kwargs);
            });
      },
      "fun"_a, "inputs"_a = py::none(), "outputs"_a = py::none(), "shapeless"_a = false,
      "fun traced once per signature of its arguments (tree structure, array shapes and dtypes, "
      "constant values) and replayed without running it again. `inputs` and `outputs` are trees "
      "of captured state (module parameters, mx.random.state) read before and written back after "
      "each call. shapeless=True: one trace serves arguments of other shapes with the same ranks "
      "and dtypes where every primitive can infer its output shape (else, where MLX raises, a "
      "new shape traces again).");
  m.def("disable_compile", &braid::disable_compile,
        "Makes compiled functions call their function directly (process-wide).");
  m.def("enable_compile", &braid::enable_compile,
        "Makes compiled functions trace and replay again, overriding MLX_DISABLE_COMPILE.");
}

}  // namespace braid::python
