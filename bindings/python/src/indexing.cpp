// Reading with NumPy's indexing rules: a[idx] for ints, slices, None, Ellipsis, integer arrays
// (braid arrays, lists, NumPy arrays) and bool scalars, mixed in a tuple. Basic indices become
// one strided slice (a view); array indices a take or gather on that view. Boolean arrays are
// refused as in MLX (their result's shape depends on the data); they may be assigned to.
#include "indexing.h"

#include <pybind11/numpy.h>

#include <algorithm>
#include <limits>
#include <string>

namespace braid::python::indexing {

namespace {

enum class ItemKind { integer, slice, new_axis, ellipsis, array, boolean };

struct Item {
  ItemKind kind;
  py::handle obj;      // slice
  int64_t value = 0;   // integer
  bool truth = false;  // boolean
  std::optional<array> indices;
};

std::string type_name(py::handle obj) {
  return py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>();
}

[[noreturn]] void unsupported(py::handle obj) {
  throw py::value_error("Cannot index an array with an object of type " + type_name(obj) +
                        " (ints, slices, None, Ellipsis and integer arrays are supported).");
}

int64_t index_value(py::handle obj) {
  py::object as_int = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
  if (!as_int) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(as_int.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  // Dimensions are 32-bit (as MLX's): an index beyond that range is a ValueError, as in MLX.
  if (overflow != 0 || v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    throw py::value_error("Index " + py::repr(as_int).cast<std::string>() +
                          " is outside the 32-bit range of array dimensions.");
  }
  return v;
}

/// A slice's start or stop: None, or an int within the 32-bit range of dimensions.
void check_slice_bound(py::handle slice, const char* name) {
  py::object bound = slice.attr(name);
  if (bound.is_none()) return;
  py::object as_int = py::reinterpret_steal<py::object>(PyNumber_Index(bound.ptr()));
  if (!as_int) {
    PyErr_Clear();
    return;  // PySlice_Unpack reports it
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(as_int.ptr(), &overflow);
  PyErr_Clear();
  if (overflow != 0 || v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    throw py::value_error(std::string("Slice ") + name + " " + py::repr(as_int).cast<std::string>() +
                          " is outside the 32-bit range of array dimensions.");
  }
}

/// NumPy's bool scalars have a (deprecated) __index__, yet index as booleans.
bool is_numpy_bool_scalar(py::handle obj) {
  if (!py::hasattr(obj, "dtype")) return false;
  py::object dtype = obj.attr("dtype");
  return py::hasattr(dtype, "kind") && dtype.attr("kind").cast<std::string>() == "b";
}

/// An array used as an index: integer dtypes index, a 0-d bool is a bool scalar (as in NumPy).
Item array_item(array idx, py::handle obj) {
  if (idx.dtype() == bool_) {
    if (idx.ndim() == 0) return Item{ItemKind::boolean, obj, 0, to_scalar(idx).cast<bool>(), std::nullopt};
    throw py::value_error(
        "Boolean indices are not supported (the result's shape would depend on the data); "
        "use where() or assign through the mask: a[mask] = v.");
  }
  if (idx.size() == 0 && !issubdtype(idx.dtype(), integer)) idx = astype(idx, int32);  // a[[]]
  if (!issubdtype(idx.dtype(), integer)) {
    throw py::value_error("Arrays used as indices must be of integer type, got " + dtype_name(idx.dtype()) +
                          ".");
  }
  return Item{ItemKind::array, obj, 0, false, std::move(idx)};
}

Item classify(py::handle obj) {
  if (obj.is_none()) return Item{ItemKind::new_axis, obj};
  if (obj.is(py::ellipsis())) return Item{ItemKind::ellipsis, obj};
  if (PySlice_Check(obj.ptr())) return Item{ItemKind::slice, obj};
  if (PyBool_Check(obj.ptr())) return Item{ItemKind::boolean, obj, 0, obj.ptr() == Py_True};
  if (py::isinstance<array>(obj)) return array_item(obj.cast<array>(), obj);
  if (PyLong_Check(obj.ptr())) return Item{ItemKind::integer, obj, index_value(obj)};
  if (!py::isinstance<py::array>(obj) && PyIndex_Check(obj.ptr())) {
    // NumPy's scalars and anything else with __index__.
    if (is_numpy_bool_scalar(obj)) return Item{ItemKind::boolean, obj, 0, PyObject_IsTrue(obj.ptr()) == 1};
    return Item{ItemKind::integer, obj, index_value(obj)};
  }
  if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr()) || py::isinstance<py::array>(obj) ||
      py::hasattr(obj, "__array__")) {
    return array_item(to_array(obj), obj);
  }
  unsupported(obj);
}

/// Python's slice rules (as slice.indices(n)): the first position, step and length.
Entry slice_entry(py::handle obj, int64_t n) {
  Py_ssize_t start = 0, stop = 0, step = 0;
  check_slice_bound(obj, "start");
  check_slice_bound(obj, "stop");
  if (PySlice_Unpack(obj.ptr(), &start, &stop, &step) < 0) {
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      throw py::value_error("Slice indices must be integers or None.");
    }
    throw py::error_already_set();
  }
  const Py_ssize_t length = PySlice_AdjustIndices(static_cast<Py_ssize_t>(n), &start, &stop, step);
  return Entry{Entry::Kind::slice, start, step, length, std::nullopt};
}

}  // namespace

std::optional<array> boolean_mask(py::handle key) {
  py::handle obj = key;
  if (PyTuple_Check(key.ptr())) {
    if (PyTuple_GET_SIZE(key.ptr()) != 1) return std::nullopt;
    obj = PyTuple_GET_ITEM(key.ptr(), 0);
  }
  std::optional<array> mask;
  if (py::isinstance<array>(obj)) {
    mask = obj.cast<array>();
  } else if (PyList_Check(obj.ptr()) || py::isinstance<py::array>(obj)) {
    mask = to_array(obj);
  }
  if (mask && mask->dtype() == bool_ && mask->ndim() > 0) return mask;
  return std::nullopt;
}

namespace {

bool consumes_axis(ItemKind k) {
  return k == ItemKind::integer || k == ItemKind::slice || k == ItemKind::array;
}
bool is_advanced(ItemKind k) {
  return k == ItemKind::integer || k == ItemKind::array || k == ItemKind::boolean;
}

/// NumPy's placement rule: advanced indices (integers count once an array is present) separated
/// by a slice, None or an ellipsis put the broadcast dimensions first.
bool adjacent(const std::vector<Item>& items) {
  size_t first = items.size(), last = 0, count = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (is_advanced(items[i].kind)) {
      first = std::min(first, i);
      last = i;
      ++count;
    }
  }
  return count == 0 || last - first + 1 == count;
}

}  // namespace

Index parse(const array& a, py::handle key) {
  std::vector<Item> items;
  if (PyTuple_Check(key.ptr())) {
    for (auto obj : py::reinterpret_borrow<py::tuple>(key)) items.push_back(classify(obj));
  } else {
    items.push_back(classify(key));
  }
  const int ndim = static_cast<int>(a.ndim());
  int consumed = 0, ellipses = 0;
  Index r{a};
  for (const Item& item : items) {
    consumed += consumes_axis(item.kind);
    ellipses += item.kind == ItemKind::ellipsis;
    r.advanced = r.advanced || item.kind == ItemKind::array || item.kind == ItemKind::boolean;
  }
  if (ellipses > 1) throw py::value_error("An index can only have a single ellipsis (...).");
  if (consumed > ndim) {
    throw py::value_error("Too many indices for array with " + std::to_string(ndim) + " dimensions.");
  }
  r.adjacent = adjacent(items);

  int axis = 0;  // of a; r.src also has the boolean scalars' axes, one per entry but new axes
  auto full_slice = [&]() {
    r.entries.push_back(Entry{Entry::Kind::slice, 0, 1, a.shape(axis++), std::nullopt});
  };
  for (const Item& item : items) {
    switch (item.kind) {
      case ItemKind::new_axis: r.entries.push_back(Entry{Entry::Kind::new_axis}); break;
      case ItemKind::ellipsis:
        for (int i = 0; i < ndim - consumed; ++i) full_slice();
        break;
      case ItemKind::slice: r.entries.push_back(slice_entry(item.obj, a.shape(axis++))); break;
      case ItemKind::integer: {
        const int64_t n = a.shape(axis);
        if (item.value < -n || item.value >= n) {
          throw py::index_error("Index " + std::to_string(item.value) + " is out of bounds for axis " +
                                std::to_string(axis) + " with size " + std::to_string(n) + ".");
        }
        r.entries.push_back(Entry{Entry::Kind::integer, item.value < 0 ? item.value + n : item.value});
        ++axis;
        break;
      }
      case ItemKind::array:
        r.entries.push_back(Entry{Entry::Kind::array, 0, 1, 0, item.indices});
        ++axis;
        break;
      case ItemKind::boolean:
        // A new length-1 axis, indexed by [0] (True) or by no position (False).
        r.inserted.push_back(static_cast<int>(by_axis(r).size()));
        r.entries.push_back(Entry{Entry::Kind::array, 0, 1, 0, zeros(Shape{item.truth ? 1 : 0}, int32)});
        break;
    }
  }
  while (axis < ndim) full_slice();
  if (!r.inserted.empty()) r.src = expand_dims(a, r.inserted);
  return r;
}

std::vector<const Entry*> by_axis(const Index& index) {
  std::vector<const Entry*> out;
  for (const Entry& e : index.entries) {
    if (e.kind != Entry::Kind::new_axis) out.push_back(&e);
  }
  return out;
}

int64_t size_of(const Shape& shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

Layout layout_of(const Index& index) {
  Layout l;
  if (index.advanced) {
    // NumPy's broadcasting of the index arrays (integers are 0-d).
    std::vector<Shape> shapes;
    size_t nd = 0;
    for (const Entry& e : index.entries) {
      if (e.kind == Entry::Kind::array) {
        shapes.push_back(e.indices->shape());
        nd = std::max(nd, e.indices->ndim());
      }
    }
    l.broadcast = Shape(nd, 1);
    for (const Shape& s : shapes) {
      for (size_t i = 0; i < s.size(); ++i) {
        int32_t& out = l.broadcast[nd - s.size() + i];
        const int32_t d = s[i];
        if (d != out && d != 1 && out != 1) {
          std::string msg = "Shape mismatch: indexing arrays could not be broadcast together with shapes";
          for (const Shape& t : shapes) {
            msg += " (";
            for (size_t j = 0; j < t.size(); ++j) {
              if (j > 0) msg += ',';
              msg += std::to_string(t[j]);
            }
            msg += ")";
          }
          throw py::value_error(msg + ".");
        }
        if (d != 1) out = d;
      }
    }
  }
  bool placed = false;
  if (index.advanced && !index.adjacent) {
    l.tokens.push_back(kBroadcast);
    placed = true;
  }
  int axis = 0;
  for (const Entry& e : index.entries) {
    if (e.kind == Entry::Kind::new_axis) {
      l.tokens.push_back(kNewAxis);
      continue;
    }
    if (e.kind == Entry::Kind::slice) {
      l.tokens.push_back(axis);
    } else if (index.advanced && !placed) {
      l.tokens.push_back(kBroadcast);
      placed = true;
    }
    ++axis;
  }
  // The shape, token by token.
  const std::vector<const Entry*> entry = by_axis(index);
  for (int t : l.tokens) {
    if (t == kNewAxis) {
      l.shape.push_back(1);
    } else if (t == kBroadcast) {
      l.shape.insert(l.shape.end(), l.broadcast.begin(), l.broadcast.end());
    } else {
      l.shape.push_back(static_cast<int32_t>(entry[t]->length));
    }
  }
  return l;
}

void bounds_of(const Index& index, Shape& start, Shape& stop, Shape& strides) {
  start.clear();
  stop.clear();
  strides.clear();
  int axis = 0;
  for (const Entry& e : index.entries) {
    switch (e.kind) {
      case Entry::Kind::new_axis: continue;
      case Entry::Kind::integer:
        start.push_back(static_cast<int32_t>(e.start));
        stop.push_back(static_cast<int32_t>(e.start + 1));
        strides.push_back(1);
        break;
      case Entry::Kind::array:
        start.push_back(0);
        stop.push_back(index.src.shape(axis));
        strides.push_back(1);
        break;
      case Entry::Kind::slice: {
        // (Up to one position: step 1, which also keeps a huge step out of the int32 strides.)
        if (e.length <= 1) {
          start.push_back(static_cast<int32_t>(e.length == 0 ? 0 : e.start));
          stop.push_back(static_cast<int32_t>(e.length == 0 ? 0 : e.start + 1));
          strides.push_back(1);
          break;
        }
        // braid's slice reads negative bounds from the end: a walk down to position 0 stops
        // before -n instead of at -1.
        const int64_t last = e.start + (e.length - 1) * e.step;
        const int64_t end = e.step > 0 ? last + 1 : last - 1;
        start.push_back(static_cast<int32_t>(e.start));
        stop.push_back(
            static_cast<int32_t>(end < 0 ? -static_cast<int64_t>(index.src.shape(axis)) - 1 : end));
        strides.push_back(static_cast<int32_t>(e.step));
        break;
      }
    }
    ++axis;
  }
}

array reorder(const array& x, const std::vector<int>& have, const std::vector<int>& want, size_t nb) {
  if (have == want) return x;
  std::vector<int> first(have.size());
  for (size_t i = 0, dim = 0; i < have.size(); ++i) {
    first[i] = static_cast<int>(dim);
    dim += have[i] == kBroadcast ? nb : 1;
  }
  std::vector<int> perm;
  for (int t : want) {
    const size_t i = static_cast<size_t>(std::find(have.begin(), have.end(), t) - have.begin());
    const size_t n = t == kBroadcast ? nb : 1;
    for (size_t k = 0; k < n; ++k) perm.push_back(first[i] + static_cast<int>(k));
  }
  return transpose(x, perm);
}

std::vector<int> new_axis_positions(const std::vector<int>& tokens, size_t nb) {
  std::vector<int> out;
  int pos = 0;
  for (int t : tokens) {
    if (t == kNewAxis) out.push_back(pos);
    pos += t == kBroadcast ? static_cast<int>(nb) : 1;
  }
  return out;
}

namespace {

array get_item(const array& a, py::handle key) {
  Index index = parse(a, key);
  Layout layout = layout_of(index);
  Shape start, stop, strides;
  bounds_of(index, start, stop, strides);
  array x = slice(index.src, start, stop, strides);

  // Integers drop their axis (as basic indices they are slices of length 1).
  std::vector<int> kept;  // the tokens of x's axes once integers are dropped
  std::vector<int> dropped;
  int axis = 0;
  for (const Entry& e : index.entries) {
    if (e.kind == Entry::Kind::new_axis) continue;
    if (e.kind == Entry::Kind::integer) {
      dropped.push_back(axis);
    } else {
      kept.push_back(axis);
    }
    ++axis;
  }
  if (!dropped.empty()) x = squeeze(x, dropped);
  const size_t nb = layout.broadcast.size();

  if (index.advanced) {
    const std::vector<const Entry*> entry = by_axis(index);
    std::vector<array> indices;
    std::vector<int> axes;  // of x
    for (size_t i = 0; i < kept.size(); ++i) {
      if (entry[kept[i]]->kind == Entry::Kind::array) {
        indices.push_back(*entry[kept[i]]->indices);
        axes.push_back(static_cast<int>(i));
      }
    }
    if (size_of(layout.broadcast) > 0) {
      for (int ax : axes) {
        if (x.shape(ax) == 0) throw py::index_error("Index out of bounds for an axis of size 0.");
      }
    }
    if (size_of(layout.shape) == 0) return zeros(layout.shape, a.dtype());
    std::vector<int> have;
    if (indices.size() == 1) {
      // take puts the index dimensions where the indexed axis was.
      x = take(x, indices[0], axes[0]);
      for (size_t i = 0; i < kept.size(); ++i)
        have.push_back(static_cast<int>(i) == axes[0] ? kBroadcast : kept[i]);
    } else {
      Shape sizes = x.shape();
      for (int ax : axes) sizes[ax] = 1;
      x = gather(x, indices, axes, sizes);
      std::vector<int> gathered;
      for (int ax : axes) gathered.push_back(static_cast<int>(nb) + ax);
      x = squeeze(x, gathered);
      have.push_back(kBroadcast);
      for (size_t i = 0; i < kept.size(); ++i) {
        if (std::find(axes.begin(), axes.end(), static_cast<int>(i)) == axes.end()) have.push_back(kept[i]);
      }
    }
    std::vector<int> want;
    for (int t : layout.tokens) {
      if (t != kNewAxis) want.push_back(t);
    }
    x = reorder(x, have, want, nb);
  }
  std::vector<int> news = new_axis_positions(layout.tokens, nb);
  if (!news.empty()) x = expand_dims(x, news);
  return x;
}

}  // namespace

}  // namespace braid::python::indexing

namespace braid::python {

BRAID_PYTHON_INIT(kInitArrayMethods) {
  array_class(m).def(
      "__getitem__", [](const array& a, py::object key) { return indexing::get_item(a, key); }, "key"_a,
      "NumPy's indexing: ints, slices, None, Ellipsis and integer arrays, mixed in a tuple.");
}

}  // namespace braid::python
