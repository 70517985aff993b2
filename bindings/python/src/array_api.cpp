// The Python array API's entry points, as MLX has them: array.__array_namespace__() (braid.core
// itself), braid.core.__array_namespace_info__() (asarray is with the imports in
// array_export.cpp), the dtype queries
// result_type, can_cast and isdtype, and the ops MLX's Python module composes from others
// (vecdot, trunc, positive, logical_xor, count_nonzero, minmax, diff, searchsorted).
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ops_args.h"
#include "python.h"

namespace braid::python {

namespace {

// The dtypes of the array API standard that braid has, by name, in the standard's order.
const std::pair<const char*, Dtype> kApiDtypes[] = {
    {"bool", bool_},    {"int8", int8},       {"int16", int16},     {"int32", int32},
    {"int64", int64},   {"uint8", uint8},     {"uint16", uint16},   {"uint32", uint32},
    {"uint64", uint64}, {"float32", float32}, {"float64", float64}, {"complex64", complex64},
};

/// Whether `d` is of the array API's kind `kind` ("bool", "signed integer", "unsigned
/// integer", "integral", "real floating", "complex floating" or "numeric").
bool is_kind(Dtype d, const std::string& kind) {
  if (kind == "bool") return d == bool_;
  if (kind == "signed integer") return issubdtype(d, Dtype::Category::signedinteger);
  if (kind == "unsigned integer") return issubdtype(d, Dtype::Category::unsignedinteger);
  if (kind == "integral") return issubdtype(d, Dtype::Category::integer);
  if (kind == "real floating") return issubdtype(d, Dtype::Category::floating);
  if (kind == "complex floating") return issubdtype(d, Dtype::Category::complexfloating);
  if (kind == "numeric") return issubdtype(d, Dtype::Category::number);
  throw std::invalid_argument(
      "[isdtype] Unknown kind '" + kind +
      "'; expected a Dtype, one of 'bool', 'signed integer', 'unsigned integer', "
      "'integral', 'real floating', 'complex floating', 'numeric', or a tuple of these.");
}

/// isdtype's `kind`: a Dtype, a kind name, or a tuple of either (any matches).
bool matches(Dtype d, py::handle kind, const char* fn) {
  if (py::isinstance<Dtype>(kind)) return d == kind.cast<Dtype>();
  if (py::isinstance<py::str>(kind)) return is_kind(d, kind.cast<std::string>());
  if (PyTuple_Check(kind.ptr())) {
    bool any = false;
    for (auto k : py::reinterpret_borrow<py::tuple>(kind)) {
      if (PyTuple_Check(k.ptr())) {
        throw std::invalid_argument(std::string("[") + fn + "] A tuple of kinds cannot nest tuples.");
      }
      any = matches(d, k, fn) || any;  // every entry is checked, so a bad one always errors
    }
    return any;
  }
  throw std::invalid_argument(std::string("[") + fn + "] Expected a Dtype, a kind name or a tuple, got " +
                              type_name(kind) + ".");
}

/// An array or a Dtype as a Dtype (result_type's and can_cast's arguments).
Dtype dtype_of(py::handle h, const char* fn) {
  if (py::isinstance<Dtype>(h)) return h.cast<Dtype>();
  if (py::isinstance<array>(h)) return h.cast<const array&>().dtype();
  throw std::invalid_argument(std::string("[") + fn + "] Expected an array or a Dtype, got " + type_name(h) +
                              ".");
}

/// What __array_namespace_info__() returns: the inspection functions of the array API.
struct NamespaceInfo {};

py::dict capabilities() {
  py::dict d;
  // Indexing by a boolean array and ops such as nonzero would give data-dependent shapes,
  // which a lazy graph cannot have.
  d["boolean indexing"] = false;
  d["data-dependent shapes"] = false;
  d["max dimensions"] = py::none();
  return d;
}

void check_device(const std::optional<Device>& device, const char* fn) {
  if (device && !is_available(*device)) {
    throw std::invalid_argument(std::string("[") + fn + "] The device is not available.");
  }
}

py::dict default_dtypes(const std::optional<Device>& device) {
  check_device(device, "default_dtypes");
  py::dict d;
  d["real floating"] = float32;
  d["complex floating"] = complex64;
  d["integral"] = int32;
  d["indexing"] = int32;
  return d;
}

py::dict dtypes(const std::optional<Device>& device, py::object kind) {
  check_device(device, "dtypes");
  py::dict d;
  for (const auto& [name, dtype] : kApiDtypes) {
    // braid has every one of these on both devices (float64 included, on the GPU too).
    if (kind.is_none() || matches(dtype, kind, "dtypes")) d[name] = dtype;
  }
  return d;
}

py::list devices() {
  py::list out;
  out.append(Device(Device::cpu));
  if (is_available(Device::gpu)) out.append(Device(Device::gpu));
  return out;
}

// --- Ops composed from others (mlx.core has them in Python only) ----------------------------

/// The axes argument of a reduction: None (every axis), an int or a sequence of ints.
std::vector<int> reduce_axes(py::handle axis, const array& a) {
  if (!axis.is_none()) return to_axes(axis);
  std::vector<int> all(a.ndim());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  return all;
}

array vecdot(const array& a, const array& b, int axis, StreamOrDevice s) {
  // The array API's definition: conj(a) . b, so a complex vector's dot with itself is |a|^2.
  const array x = a.dtype() == complex64 ? conjugate(a, s) : a;
  return sum(multiply(x, b, s), axis, false, s);
}

array trunc(const array& a, StreamOrDevice s) {
  if (a.dtype() == complex64)
    throw std::invalid_argument("[trunc] Complex arrays have no rounding toward zero.");
  if (!issubdtype(a.dtype(), Dtype::Category::inexact)) return braid::copy(a, s);
  return where(less(a, zeros_like(a, s), s), ceil(a, s), floor(a, s), s);
}

array diff(const array& a, int n, int axis, StreamOrDevice s) {
  if (n < 0) throw std::invalid_argument("[diff] n must be non-negative, got " + std::to_string(n) + ".");
  if (a.ndim() == 0) throw std::invalid_argument("[diff] The array must have at least one dimension.");
  const int nd = static_cast<int>(a.ndim());
  if (axis < -nd || axis >= nd) {
    throw std::invalid_argument("[diff] Axis " + std::to_string(axis) +
                                " is out of bounds for an array with " + std::to_string(nd) + " dimensions.");
  }
  const int ax = axis < 0 ? axis + nd : axis;
  array out = a;
  for (int k = 0; k < n && out.shape(ax) > 0; ++k) {
    Shape start(static_cast<size_t>(nd), 0), stop = out.shape();
    Shape start1 = start, stop0 = stop;
    start1[static_cast<size_t>(ax)] = 1;
    stop0[static_cast<size_t>(ax)] = out.shape(ax) - 1;
    const array hi = slice(out, start1, stop, s), lo = slice(out, start, stop0, s);
    out = out.dtype() == bool_ ? not_equal(hi, lo, s) : subtract(hi, lo, s);
  }
  return out;
}

/// The number of elements of the 1-D `seq` less than (side "left") or at most ("right") each
/// value, as uint32. Built from stable sorts, O((n + m) log(n + m)): in the stable sort of the
/// values and the sequence together, with the values first for "left" (so a sequence element
/// equal to a value sorts after it) or last for "right", a value's position minus its rank
/// among the values is the count of sequence elements before it.
array searchsorted(const array& seq, const array& values, const std::string& side, StreamOrDevice s) {
  if (seq.ndim() != 1) {
    throw std::invalid_argument("[searchsorted] sorted_sequence must be 1-D, got " +
                                std::to_string(seq.ndim()) + " dimensions.");
  }
  if (side != "left" && side != "right") {
    throw std::invalid_argument("[searchsorted] side must be 'left' or 'right', got '" + side + "'.");
  }
  const Dtype dt = promote_types(seq.dtype(), values.dtype());
  const array v = reshape(astype(values, dt, s), {-1}, s);
  const array q = astype(seq, dt, s);
  const int32_t n = seq.shape(0), m = v.shape(0);
  if (m == 0 || n == 0) return zeros(values.shape(), uint32, s);
  const bool left = side == "left";
  const array merged = left ? concatenate({v, q}, 0, s) : concatenate({q, v}, 0, s);
  const array position = argsort(argsort(merged, 0, s), 0, s);  // each element's place in sorted order
  const int32_t first = left ? 0 : n;
  const array value_position = slice(position, Shape{first}, Shape{first + m}, s);
  const array rank = argsort(argsort(v, 0, s), 0, s);
  return reshape(astype(subtract(value_position, rank, s), uint32, s), values.shape(), s);
}

/// mx.unique's outputs for `size` slots, built from a stable sort: in sorted order an element
/// starts a new value when it differs from the one before (NaNs count as equal), its rank is
/// the number of such starts up to it, minus one. Slots past the last unique value hold
/// `fill` (count 0); ranks at or past `size` are dropped from values, index and counts, and
/// clamped to the last slot in inverse.
struct Unique {
  array values, index, inverse, counts;
};
Unique unique(const array& a, int size, const array& fill, StreamOrDevice s) {
  const array flat = reshape(a, {-1}, s);
  const int32_t n = flat.shape(0);
  const array dummy_fill = astype(fill, a.dtype(), s);
  if (n == 0) {
    return {full(Shape{size}, dummy_fill, s), zeros({size}, uint32, s), zeros(a.shape(), uint32, s),
            zeros({size}, uint32, s)};
  }
  const array order = argsort(flat, 0, s);
  const array sorted = take(flat, order, 0, s);
  array is_new = ones({1}, bool_, s);
  if (n > 1) {
    const array next = slice(sorted, {1}, {n}, s), prev = slice(sorted, {0}, {n - 1}, s);
    array differs = not_equal(next, prev, s);
    if (issubdtype(a.dtype(), Dtype::Category::inexact)) {
      differs = logical_and(differs, logical_not(logical_and(isnan(next, s), isnan(prev, s), s), s), s);
    }
    is_new = concatenate({is_new, differs}, 0, s);
  }
  const array rank = subtract(cumsum(astype(is_new, int32, s), 0, false, true, s), array(1, int32), s);
  const array last_slot = array(size, int32);
  // Each value's first element writes its slot; every other element writes the spare slot `size`.
  const array slot = where(logical_and(is_new, less(rank, last_slot, s), s), rank, last_slot, s);
  auto first = [&](const array& padded) { return slice(padded, {0}, {size}, s); };
  Unique out{first(put_along_axis(full(Shape{size + 1}, dummy_fill, s), slot, sorted, 0, s)),
             first(put_along_axis(zeros({size + 1}, uint32, s), slot, order, 0, s)), array(0), array(0)};
  const array clamped = astype(minimum(rank, array(std::max(size - 1, 0), int32), s), uint32, s);
  out.inverse =
      reshape(put_along_axis(zeros({n}, uint32, s), astype(order, int32, s), clamped, 0, s), a.shape(), s);
  out.counts = first(scatter_add_axis(zeros({size + 1}, uint32, s), minimum(rank, last_slot, s),
                                      ones({n}, uint32, s), 0, s));
  return out;
}
}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  m.def(
      "result_type",
      [](py::args args) {
        if (args.empty())
          throw std::invalid_argument("[result_type] At least one array or dtype is required.");
        Dtype out = dtype_of(args[0], "result_type");
        for (size_t i = 1; i < args.size(); ++i) out = promote_types(out, dtype_of(args[i], "result_type"));
        return out;
      },
      "The dtype that type promotion gives for the arrays and dtypes passed (at least one).");
  m.def(
      "can_cast",
      [](py::object from, Dtype to) { return promote_types(dtype_of(from, "can_cast"), to) == to; },
      "from_"_a, "to"_a,
      "Whether `from_` (an array or a Dtype) casts to `to` under type promotion: promoting the two "
      "gives `to`.");
  m.def(
      "isdtype", [](Dtype dtype, py::object kind) { return matches(dtype, kind, "isdtype"); }, "dtype"_a,
      "kind"_a,
      "Whether `dtype` is `kind`: a Dtype, one of 'bool', 'signed integer', 'unsigned integer', "
      "'integral', 'real floating', 'complex floating', 'numeric', or a tuple of these (any).");

  m.def(
      "vecdot",
      [](py::handle a, py::handle b, int axis, py::handle s) {
        auto [x, y] = to_arrays(a, b);
        return vecdot(x, y, axis, to_stream_or_device(s));
      },
      "a"_a, "b"_a, py::pos_only(), py::kw_only(), "axis"_a = -1, "stream"_a = py::none(),
      "The dot product of vectors along `axis` (a and b broadcast together): sum(conj(a) * b, axis).");
  m.def(
      "trunc", [](py::handle a, py::handle s) { return trunc(to_array(a), to_stream_or_device(s)); }, "a"_a,
      py::pos_only(), py::kw_only(), "stream"_a = py::none(), "Element-wise rounding toward zero.");
  m.def(
      "positive", [](py::handle a, py::handle s) { return braid::copy(to_array(a), to_stream_or_device(s)); },
      "a"_a, py::pos_only(), py::kw_only(), "stream"_a = py::none(), "Element-wise +a (a copy of a).");
  m.def(
      "logical_xor",
      [](py::handle a, py::handle b, py::handle s) {
        auto [x, y] = to_arrays(a, b);
        const auto st = to_stream_or_device(s);
        return not_equal(astype(x, bool_, st), astype(y, bool_, st), st);
      },
      "a"_a, "b"_a, py::pos_only(), py::kw_only(), "stream"_a = py::none(),
      "Element-wise logical exclusive or.");
  m.def(
      "count_nonzero",
      [](py::handle a_obj, py::handle axis, bool keepdims, py::handle s) {
        const array a = to_array(a_obj);
        const auto st = to_stream_or_device(s);
        const array nonzero = not_equal(a, zeros_like(a, st), st);
        return astype(sum(nonzero, reduce_axes(axis, a), keepdims, st), int32, st);
      },
      "a"_a, py::pos_only(), py::kw_only(), "axis"_a = py::none(), "keepdims"_a = false,
      "stream"_a = py::none(), "How many elements over the axes (all when None) are nonzero, as int32.");
  m.def(
      "minmax",
      [](py::handle a_obj, py::handle axis, bool keepdims, py::handle s) {
        const array a = to_array(a_obj);
        const auto st = to_stream_or_device(s);
        const auto axes = reduce_axes(axis, a);
        return py::make_tuple(min(a, axes, keepdims, st), max(a, axes, keepdims, st));
      },
      "a"_a, py::pos_only(), "axis"_a = py::none(), "keepdims"_a = false, py::kw_only(),
      "stream"_a = py::none(), "The minimum and the maximum over the axes, as a tuple.");
  m.def(
      "diff",
      [](py::handle a, int n, int axis, py::handle s) {
        return diff(to_array(a), n, axis, to_stream_or_device(s));
      },
      "a"_a, py::pos_only(), "n"_a = 1, "axis"_a = -1, py::kw_only(), "stream"_a = py::none(),
      "The n-th discrete difference along `axis` (a[1:] - a[:-1], n times; not_equal for bool).");
  m.def(
      "searchsorted",
      [](py::handle seq, py::handle values, const std::string& side, py::handle s) {
        return searchsorted(to_array(seq), to_array(values), side, to_stream_or_device(s));
      },
      "sorted_sequence"_a, "values"_a, py::pos_only(), "side"_a = "left", py::kw_only(),
      "stream"_a = py::none(),
      "Indices (uint32) that keep the 1-D ascending `sorted_sequence` sorted when each value is inserted: "
      "the count of elements less than the value ('left') or at most it ('right').");
  m.def(
      "unique",
      [](py::handle a_obj, int size, bool return_index, bool return_inverse, bool return_counts,
         py::handle fill_value, py::handle s) -> py::object {
        if (size < 0 || size == std::numeric_limits<int>::max()) {  // one spare slot past `size`
          throw std::invalid_argument("[unique] size must be in [0, 2^31 - 2], got " + std::to_string(size) +
                                      ".");
        }
        const array a = to_array(a_obj);
        const array fill = fill_value.is_none() ? array(0, a.dtype()) : to_array(fill_value);
        if (fill.size() != 1) throw std::invalid_argument("[unique] fill_value must be a scalar.");
        Unique u = unique(a, size, reshape(fill, {}), to_stream_or_device(s));
        if (!return_index && !return_inverse && !return_counts) return py::cast(u.values);
        py::list out;
        out.append(u.values);
        if (return_index) out.append(u.index);
        if (return_inverse) out.append(u.inverse);
        if (return_counts) out.append(u.counts);
        return py::tuple(out);
      },
      "a"_a, py::pos_only(), "size"_a, "return_index"_a = false, "return_inverse"_a = false,
      "return_counts"_a = false, "fill_value"_a = py::none(), py::kw_only(), "stream"_a = py::none(),
      "The sorted unique elements of the flattened array in `size` slots (the output's shape never "
      "depends on the values): extra slots hold fill_value (0 when None) with count 0; with more unique "
      "values than slots, the smallest `size` are kept. Optionally also the index of each value's first "
      "occurrence, the inverse (each element's slot, in a's shape; clamped to the last slot for dropped "
      "values) and the counts, all uint32. NaNs count as one value.");
  py::class_<NamespaceInfo>(m, "ArrayNamespaceInfo", "The array API's inspection functions for braid.core.")
      .def("capabilities", [](const NamespaceInfo&) { return capabilities(); })
      .def("default_device", [](const NamespaceInfo&) { return default_device(); })
      .def(
          "default_dtypes",
          [](const NamespaceInfo&, std::optional<Device> device) { return default_dtypes(device); },
          py::kw_only(), "device"_a = py::none())
      .def(
          "dtypes",
          [](const NamespaceInfo&, std::optional<Device> device, py::object kind) {
            return dtypes(device, kind);
          },
          py::kw_only(), "device"_a = py::none(), "kind"_a = py::none())
      .def("devices", [](const NamespaceInfo&) { return devices(); });
  m.def(
      "__array_namespace_info__", [] { return NamespaceInfo{}; },
      "The array API's inspection namespace: capabilities, default_device, default_dtypes, dtypes, devices.");

  array_class(m).def(
      "__array_namespace__",
      [](const array&, py::object api_version) {
        if (!api_version.is_none()) {
          const auto v = api_version.cast<std::string>();
          if (v != "2021.12" && v != "2022.12" && v != "2023.12" && v != "2024.12") {
            throw std::invalid_argument("[__array_namespace__] Unsupported array API version '" + v + "'.");
          }
        }
        return py::module_::import("braid.core");
      },
      py::kw_only(), "api_version"_a = py::none(), "The array API namespace of the array: braid.core.");
}

}  // namespace braid::python
