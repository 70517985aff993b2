// mlx.core's export_function, exporter and import_function (include/braid/export.h).
//
// Arguments follow MLX's forms: arrays as positional and keyword arguments, or one list or
// tuple of arrays (the positional ones) optionally followed by a dict (the keyword ones), or
// one dict alone. Anything else (a nested list, a Python number) is a ValueError, as is a
// function returning anything but an array or a flat list or tuple of arrays.
//
// In place of the file, export_function and exporter take a callable (MLX's callback form),
// called with one dict per record of each trace (braid::ExportCallbackInput): shapes as
// lists, dtypes as Dtype objects, pairs and triples as tuples.
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "braid/export.h"
#include "python.h"

namespace braid::python {

namespace {

array array_argument(py::handle h, const char* tag) {
  if (!py::isinstance<array>(h)) {
    throw std::invalid_argument(std::string("[") + tag + "] Inputs must be arrays, got " +
                                std::string(py::str(py::type::handle_of(h).attr("__name__"))) + ".");
  }
  return h.cast<array>();
}

// The positional and keyword arrays of a call in any of MLX's forms (see the top).
std::pair<Args, Kwargs> call_arrays(const py::args& args, const py::kwargs& kwargs, const char* tag) {
  Args positional;
  Kwargs keywords;
  py::sequence items = args;
  const bool grouped = (args.size() == 1 || args.size() == 2) &&
                       (py::isinstance<py::list>(args[0]) || py::isinstance<py::tuple>(args[0]));
  if (grouped) {
    items = py::reinterpret_borrow<py::sequence>(args[0]);
    if (args.size() == 2) {
      if (!py::isinstance<py::dict>(args[1])) {
        throw std::invalid_argument(
            std::string("[") + tag +
            "] A list or tuple of positional arrays may only be followed by a dict of "
            "keyword arrays.");
      }
      for (auto item : py::reinterpret_borrow<py::dict>(args[1])) {
        keywords.insert_or_assign(item.first.cast<std::string>(), array_argument(item.second, tag));
      }
    }
  } else if (args.size() == 1 && py::isinstance<py::dict>(args[0])) {
    for (auto item : py::reinterpret_borrow<py::dict>(args[0])) {
      keywords.insert_or_assign(item.first.cast<std::string>(), array_argument(item.second, tag));
    }
    items = py::tuple();
  }
  for (auto item : items) positional.push_back(array_argument(item, tag));
  for (auto item : kwargs) {
    auto key = item.first.cast<std::string>();
    if (keywords.contains(key)) {
      throw std::invalid_argument(std::string("[") + tag + "] Keyword argument " + key + " given twice.");
    }
    keywords.emplace(std::move(key), array_argument(item.second, tag));
  }
  return {std::move(positional), std::move(keywords)};
}

// `fun` as the C++ exporter calls it: with the GIL, on arrays, returning its flat outputs.
std::function<std::vector<array>(const Args&, const Kwargs&)> wrap(py::function fun) {
  return [fun = std::move(fun)](const Args& args, const Kwargs& kwargs) {
    py::gil_scoped_acquire gil;
    py::tuple call_args(args.size());
    for (size_t i = 0; i < args.size(); ++i) call_args[i] = py::cast(args[i]);
    py::dict call_kwargs;
    for (const auto& [key, a] : kwargs) call_kwargs[py::str(key)] = py::cast(a);
    py::object out = fun(*call_args, **call_kwargs);
    std::vector<array> outputs;
    if (py::isinstance<array>(out)) {
      outputs.push_back(out.cast<array>());
    } else if (py::isinstance<py::list>(out) || py::isinstance<py::tuple>(out)) {
      for (auto item : py::reinterpret_borrow<py::sequence>(out)) {
        if (!py::isinstance<array>(item)) {
          throw std::invalid_argument(
              "[export_function] The function must return an array or a flat list or tuple of arrays.");
        }
        outputs.push_back(item.cast<array>());
      }
    } else {
      throw std::invalid_argument(
          "[export_function] The function must return an array or a flat list or tuple of arrays.");
    }
    return outputs;
  };
}

template <typename Ints>
py::list int_list(const Ints& values) {
  py::list out;
  for (auto v : values) out.append(v);
  return out;
}

py::object state_value(const StateT& v) {
  return std::visit(
      [](const auto& x) -> py::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Shape> || std::is_same_v<T, Strides> ||
                      std::is_same_v<T, std::vector<int>> || std::is_same_v<T, std::vector<size_t>>) {
          return int_list(x);
        } else if constexpr (std::is_same_v<T, std::vector<std::tuple<bool, bool, bool>>>) {
          py::list out;
          for (const auto& [a, b, c] : x) out.append(py::make_tuple(a, b, c));
          return std::move(out);
        } else if constexpr (std::is_same_v<T, std::vector<std::variant<bool, int, float>>>) {
          py::list out;
          for (const auto& item : x) std::visit([&](auto y) { out.append(y); }, item);
          return std::move(out);
        } else if constexpr (std::is_same_v<T, std::optional<float>>) {
          return x ? py::object(py::float_(*x)) : py::object(py::none());
        } else {
          return py::cast(x);
        }
      },
      v);
}

// One record as MLX's callback receives it: a dict of Python values.
py::dict record_dict(const ExportCallbackInput& record) {
  py::dict out;
  for (const auto& [key, value] : record) {
    out[py::str(key)] = std::visit(
        [](const auto& x) -> py::object {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::string>) {
            return py::str(x);
          } else if constexpr (std::is_same_v<T, std::vector<std::tuple<std::string, Shape, Dtype>>>) {
            py::list specs;
            for (const auto& [name, shape, dtype] : x)
              specs.append(py::make_tuple(name, int_list(shape), dtype));
            return std::move(specs);
          } else if constexpr (std::is_same_v<T, std::vector<StateT>>) {
            py::list values;
            for (const auto& v : x) values.append(state_value(v));
            return std::move(values);
          } else {  // (name, array) and (keyword, name) pairs
            py::list pairs;
            for (const auto& [a, b] : x) pairs.append(py::make_tuple(a, b));
            return std::move(pairs);
          }
        },
        value);
  }
  return out;
}

// A Python callable as an ExportCallback: called with the GIL, one dict per record.
ExportCallback wrap_callback(py::function callback) {
  return [callback = std::move(callback)](const ExportCallbackInput& record) {
    py::gil_scoped_acquire gil;
    callback(record_dict(record));
  };
}

// The exporter for export_function's or exporter's first argument: a path, or a callable.
// `metadata` (None or a dict of str to str) goes with a file only.
FunctionExporter exporter_for(const py::object& file_or_callback, const py::function& fun, bool shapeless,
                              const std::optional<Metadata>& metadata) {
  if (py::isinstance<py::str>(file_or_callback)) {
    return exporter(file_or_callback.cast<std::string>(), wrap(fun), shapeless,
                    metadata.value_or(Metadata{}));
  }
  if (!PyCallable_Check(file_or_callback.ptr())) {
    throw std::invalid_argument("[export_function] The first argument must be a file path or a callable.");
  }
  if (metadata && !metadata->empty()) {
    throw std::invalid_argument(
        "[export_function] The metadata argument is only supported when exporting to a file, not to a "
        "callback.");
  }
  return exporter(wrap_callback(py::reinterpret_borrow<py::function>(file_or_callback)), wrap(fun),
                  shapeless);
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  py::class_<FunctionExporter>(m, "FunctionExporter",
                               "Adds a trace of its function to its file on each call with a new signature "
                               "(made by mx.exporter); a context manager that closes it on exit.")
      .def(
          "__call__",
          [](FunctionExporter& self, const py::args& args, const py::kwargs& kwargs) {
            auto [positional, keywords] = call_arrays(args, kwargs, "export_function");
            py::gil_scoped_release release;
            self(positional, keywords);
          },
          "Traces the function on the arrays (as export_function takes them) and adds the trace.")
      .def("close", &FunctionExporter::close, "Stops adding traces; a later call raises RuntimeError.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](FunctionExporter& self, const py::args&) { self.close(); });

  py::class_<ImportedFunction>(m, "ImportedFunction", "A function read by mx.import_function.")
      .def(
          "__call__",
          [](const ImportedFunction& self, const py::args& args, const py::kwargs& kwargs) {
            auto [positional, keywords] = call_arrays(args, kwargs, "import_function");
            std::vector<array> outs;
            {
              py::gil_scoped_release release;
              outs = self(positional, keywords);
            }
            return py::tuple(py::cast(outs));
          },
          "Runs the imported graph on the arrays (the traced signature's forms); returns a tuple of arrays.");

  m.def(
      "export_function",
      [](const py::object& file_or_callback, const py::function& fun, const py::args& args, bool shapeless,
         const std::optional<Metadata>& metadata, const py::kwargs& kwargs) {
        auto [positional, keywords] = call_arrays(args, kwargs, "export_function");
        FunctionExporter ex = exporter_for(file_or_callback, fun, shapeless, metadata);
        {
          py::gil_scoped_release release;
          ex(positional, keywords);
        }
      },
      "file_or_callback"_a, "fun"_a, "shapeless"_a = false, "metadata"_a = py::none(),
      "Traces fun on the example arrays (positional and keyword, or a list or tuple of them and a dict) "
      "and writes the trace to file, or gives it to a callable, one dict per record ('type': 'inputs', "
      "'keyword_inputs', 'outputs', 'constants', then one 'primitive' per step). shapeless: the trace "
      "serves inputs of any shape of the same ranks. metadata: a dict of str to str stored with the file "
      "(import_function(file, return_metadata=True) returns it).");
  m.def(
      "exporter",
      [](const py::object& file_or_callback, const py::function& fun, bool shapeless,
         const std::optional<Metadata>& metadata) {
        return exporter_for(file_or_callback, fun, shapeless, metadata);
      },
      "file_or_callback"_a, "fun"_a, py::kw_only(), "shapeless"_a = false, "metadata"_a = py::none(),
      "A FunctionExporter adding traces of fun to file (or giving them to a callable, as export_function "
      "does), one per call with a new signature.");
  m.def(
      "import_function",
      [](const std::string& file, bool return_metadata) -> py::object {
        std::optional<ImportedFunction> imported;
        {
          py::gil_scoped_release release;
          imported.emplace(import_function(file));
        }
        if (!return_metadata) return py::cast(*imported);
        py::dict metadata;
        for (const auto& [key, value] : imported->metadata()) metadata[py::str(key)] = py::str(value);
        return py::make_tuple(py::cast(*imported), metadata);
      },
      "file"_a, py::kw_only(), "return_metadata"_a = false,
      "Reads a function written by export_function or an exporter; with return_metadata, returns (function, "
      "metadata dict).");
}

}  // namespace braid::python
