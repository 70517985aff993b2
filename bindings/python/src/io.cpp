// braid.core's load, save, savez, savez_compressed, save_safetensors and save_gguf (mlx.core's
// names and rules). A file is a path (str or os.PathLike) or, except for GGUF, a binary file
// object (readinto/write, seek, tell). braid does the reading and writing with the GIL
// released; a file object's methods take the GIL for each call, on whichever thread reads.
#include <algorithm>

#include "transforms_support.h"

namespace braid::python {

namespace {

bool is_reader_object(py::handle f) {
  return py::hasattr(f, "readinto") && py::hasattr(f, "seek") && py::hasattr(f, "tell") &&
         py::hasattr(f, "closed");
}
bool is_writer_object(py::handle f) {
  return py::hasattr(f, "write") && py::hasattr(f, "seek") && py::hasattr(f, "tell") &&
         py::hasattr(f, "closed");
}

/// A path given as a str or an os.PathLike (pathlib.Path), or nothing for other objects.
std::optional<std::string> as_path(py::handle file) {
  if (PyUnicode_Check(file.ptr())) return file.cast<std::string>();
  if (py::hasattr(file, "__fspath__")) {
    py::object path = py::module_::import("os").attr("fspath")(file);
    if (PyUnicode_Check(path.ptr())) return path.cast<std::string>();
  }
  return std::nullopt;
}

int whence(std::ios_base::seekdir way) {
  if (way == std::ios_base::cur) return 1;
  if (way == std::ios_base::end) return 2;
  return 0;
}

/// What io::Reader and io::Writer over a Python binary file object share: the object (a
/// SharedObject, so any thread may drop it) and is_open/tell/seek, each under the GIL.
/// `Base` is io::Reader or io::Writer.
template <typename Base>
class PyFileBase : public Base {
 public:
  explicit PyFileBase(py::object file) : file_(std::move(file)) {}
  bool is_open() const override {
    py::gil_scoped_acquire gil;
    return !file_.get().attr("closed").cast<bool>();
  }
  bool good() const override { return true; }
  size_t tell() override {
    py::gil_scoped_acquire gil;
    return file_.get().attr("tell")().cast<size_t>();
  }
  void seek(int64_t offset, std::ios_base::seekdir way) override {
    py::gil_scoped_acquire gil;
    file_.get().attr("seek")(offset, whence(way));
  }
  std::string label() const override { return "Python file object"; }

 protected:
  SharedObject file_;
};

/// io::Reader over a Python binary file object. Lazily loaded arrays may read from braid's
/// workers: every call takes the GIL, and the object is a SharedObject so any thread may drop it.
class PyFileReader final : public PyFileBase<io::Reader> {
 public:
  using PyFileBase::PyFileBase;
  void read(char* data, size_t n) override {
    py::gil_scoped_acquire gil;
    read_locked(data, n);
  }
  // Seek and read under the GIL, so positional reads from several threads do not interleave.
  void read(char* data, size_t n, size_t offset) override {
    py::gil_scoped_acquire gil;
    file_.get().attr("seek")(offset, 0);
    read_locked(data, n);
  }

 private:
  void read_locked(char* data, size_t n) {
    size_t done = 0;
    while (done < n) {
      auto view = py::reinterpret_steal<py::object>(
          PyMemoryView_FromMemory(data + done, static_cast<Py_ssize_t>(n - done), PyBUF_WRITE));
      if (!view) throw py::error_already_set();
      py::object got = file_.get().attr("readinto")(view);
      const size_t k = got.is_none() ? 0 : got.cast<size_t>();
      if (k == 0) throw std::runtime_error("[load] Unexpected end of the Python file object.");
      done += k;
    }
  }
};

/// io::Writer over a Python binary file object; every call takes the GIL.
class PyFileWriter final : public PyFileBase<io::Writer> {
 public:
  using PyFileBase::PyFileBase;
  void write(const char* data, size_t n) override {
    py::gil_scoped_acquire gil;
    size_t done = 0;
    while (done < n) {
      auto view = py::reinterpret_steal<py::object>(PyMemoryView_FromMemory(
          const_cast<char*>(data + done), static_cast<Py_ssize_t>(n - done), PyBUF_READ));
      if (!view) throw py::error_already_set();
      py::object wrote = file_.get().attr("write")(view);
      // Some file objects return None for a complete write.
      const size_t k = wrote.is_none() ? n - done : wrote.cast<size_t>();
      if (k == 0) throw std::runtime_error("[save] Could not write to the Python file object.");
      done += k;
    }
  }
};

std::shared_ptr<io::Reader> reader_for(py::handle file, const char* tag) {
  if (!is_reader_object(file)) {
    throw std::invalid_argument(std::string("[") + tag + "] Input must be a path or a binary file object.");
  }
  return std::make_shared<PyFileReader>(py::reinterpret_borrow<py::object>(file));
}

std::shared_ptr<io::Writer> writer_for(py::handle file, const char* tag) {
  if (!is_writer_object(file)) {
    throw std::invalid_argument(std::string("[") + tag + "] Output must be a path or a binary file object.");
  }
  return std::make_shared<PyFileWriter>(py::reinterpret_borrow<py::object>(file));
}

/// A name-to-array map as a dict, in name order.
py::dict to_dict(const std::unordered_map<std::string, array>& arrays) {
  std::vector<std::string> names;
  for (const auto& [name, a] : arrays) names.push_back(name);
  std::sort(names.begin(), names.end());
  py::dict out;
  for (const auto& name : names) out[py::str(name)] = py::cast(arrays.at(name));
  return out;
}

py::object gguf_value(const GGUFMetaData& v) {
  if (const auto* a = std::get_if<array>(&v)) return py::cast(*a);
  if (const auto* s = std::get_if<std::string>(&v)) return py::str(*s);
  if (const auto* l = std::get_if<std::vector<std::string>>(&v)) return py::cast(*l);
  return py::none();
}

GGUFMetaData gguf_metadata_value(py::handle v) {
  if (v.is_none()) return std::monostate{};
  if (PyUnicode_Check(v.ptr())) return v.cast<std::string>();
  if (PyList_Check(v.ptr()) || PyTuple_Check(v.ptr())) {
    auto items = py::reinterpret_borrow<py::sequence>(v);
    const bool strings = py::len(items) > 0 && std::all_of(items.begin(), items.end(), [](py::handle item) {
                           return PyUnicode_Check(item.ptr());
                         });
    if (strings) return items.cast<std::vector<std::string>>();
  }
  return to_array(v);
}

std::unordered_map<std::string, array> array_map(const py::dict& arrays, const char* tag) {
  std::unordered_map<std::string, array> out;
  for (auto item : arrays) {
    if (!PyUnicode_Check(item.first.ptr())) {
      throw std::invalid_argument(std::string("[") + tag + "] Array names must be strings.");
    }
    out.insert_or_assign(item.first.cast<std::string>(), to_array(item.second));
  }
  return out;
}

py::object load_file(py::object file, std::optional<std::string> format, bool return_metadata,
                     py::object stream) {
  const StreamOrDevice s = to_stream_or_device(stream);
  const auto path = as_path(file);
  if (!format) {
    std::string name;
    if (path) {
      name = *path;
    } else if (is_reader_object(file) && py::hasattr(file, "name") &&
               PyUnicode_Check(file.attr("name").ptr())) {
      name = file.attr("name").cast<std::string>();
    } else if (is_reader_object(file)) {
      throw std::invalid_argument(
          "[load] Could not infer the format of a file object without a name: give format.");
    } else {
      throw std::invalid_argument("[load] Input must be a path or a binary file object.");
    }
    const size_t dot = name.find_last_of('.');
    if (dot == std::string::npos)
      throw std::invalid_argument("[load] Could not infer file format from extension.");
    format = name.substr(dot + 1);
  }
  if (return_metadata && (*format == "npy" || *format == "npz")) {
    throw std::invalid_argument("[load] metadata not supported for format " + *format + ".");
  }

  if (*format == "npy") {
    auto in = path ? nullptr : reader_for(file, "load");
    array a = [&] {
      py::gil_scoped_release release;
      return path ? load(*path, s) : load(in, s);
    }();
    return py::cast(a);
  }
  if (*format == "npz") {
    auto in = path ? nullptr : reader_for(file, "load");
    std::unordered_map<std::string, array> arrays;
    {
      py::gil_scoped_release release;
      arrays = path ? load_npz(*path, s) : load_npz(in, s);
    }
    return to_dict(arrays);
  }
  if (*format == "safetensors") {
    auto in = path ? nullptr : reader_for(file, "load");
    SafetensorsLoad loaded;
    {
      py::gil_scoped_release release;
      loaded = path ? load_safetensors(*path, s) : load_safetensors(in, s);
      if (!path) {
        // The caller owns the file object and may close it: read everything now.
        std::vector<array> all;
        for (const auto& [name, a] : loaded.first) all.push_back(a);
        eval(std::move(all));
      }
    }
    py::dict arrays = to_dict(loaded.first);
    if (!return_metadata) return std::move(arrays);
    py::dict metadata;
    for (const auto& [k, v] : loaded.second) metadata[py::str(k)] = py::str(v);
    return py::make_tuple(arrays, metadata);
  }
  if (*format == "gguf") {
    if (!path) throw std::invalid_argument("[load] GGUF files are read from a path only, not a file object.");
    GGUFLoad loaded;
    {
      py::gil_scoped_release release;
      loaded = load_gguf(*path, s);
    }
    py::dict arrays = to_dict(loaded.first);
    if (!return_metadata) return std::move(arrays);
    py::dict metadata;
    for (const auto& [k, v] : loaded.second) metadata[py::str(k)] = gguf_value(v);
    return py::make_tuple(arrays, metadata);
  }
  throw std::invalid_argument("[load] Unknown file format " + *format + ".");
}

void savez_file(py::object file, const py::args& args, const py::kwargs& kwargs, bool compressed) {
  std::unordered_map<std::string, array> arrays;
  for (auto item : kwargs) arrays.insert_or_assign(item.first.cast<std::string>(), to_array(item.second));
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string name = "arr_" + std::to_string(i);
    if (arrays.count(name) != 0) {
      throw std::invalid_argument("[savez] Cannot use un-named variables and keyword " + name + ".");
    }
    arrays.insert_or_assign(name, to_array(args[i]));
  }
  // braid adds ".npz" to a path without it.
  if (auto path = as_path(file)) {
    py::gil_scoped_release release;
    savez(*path, arrays, compressed);
    return;
  }
  auto out = writer_for(file, "savez");
  py::gil_scoped_release release;
  savez(out, arrays, compressed);
}

}  // namespace

BRAID_PYTHON_INIT(kInitFunctions) {
  m.def("load", &load_file, "file"_a, py::pos_only(), "format"_a = py::none(), "return_metadata"_a = false,
        py::kw_only(), "stream"_a = py::none(),
        "Arrays from a .npy (an array), .npz, .safetensors or .gguf file (a dict of arrays; with "
        "return_metadata, safetensors and GGUF give (arrays, metadata)). The format comes from the "
        "extension unless given.");
  m.def(
      "save",
      [](py::object file, py::object arr) {
        array a = to_array(arr);
        if (auto path = as_path(file)) {
          py::gil_scoped_release release;
          save(*path, a);  // adds ".npy" when missing
          return;
        }
        auto out = writer_for(file, "save");
        py::gil_scoped_release release;
        save(out, a);
      },
      "file"_a, "arr"_a, "Saves an array in .npy format (a path without the extension gets \".npy\").");
  m.def(
      "savez",
      [](py::object file, const py::args& args, const py::kwargs& kwargs) {
        savez_file(file, args, kwargs, false);
      },
      "file"_a,
      "Saves arrays as a .npz archive: positional ones as arr_0, arr_1, ..., keyword ones by name "
      "(a path without the extension gets \".npz\").");
  m.def(
      "savez_compressed",
      [](py::object file, const py::args& args, const py::kwargs& kwargs) {
        savez_file(file, args, kwargs, true);
      },
      "file"_a, "As savez, with the members deflated.");
  m.def(
      "save_safetensors",
      [](py::object file, py::dict arrays, std::optional<py::dict> metadata) {
        auto map = array_map(arrays, "save_safetensors");
        std::unordered_map<std::string, std::string> meta;
        if (metadata) {
          for (auto item : *metadata) {
            if (!PyUnicode_Check(item.first.ptr()) || !PyUnicode_Check(item.second.ptr())) {
              throw std::invalid_argument(
                  "[save_safetensors] Metadata must be a dictionary with string keys and values.");
            }
            meta[item.first.cast<std::string>()] = item.second.cast<std::string>();
          }
        }
        if (auto path = as_path(file)) {
          py::gil_scoped_release release;
          save_safetensors(*path, std::move(map), std::move(meta));  // adds ".safetensors"
          return;
        }
        auto out = writer_for(file, "save_safetensors");
        py::gil_scoped_release release;
        save_safetensors(out, std::move(map), std::move(meta));
      },
      "file"_a, "arrays"_a, "metadata"_a = py::none(),
      "Saves a dict of arrays and string metadata in safetensors format (a path without the "
      "extension gets \".safetensors\").");
  m.def(
      "save_gguf",
      [](py::object file, py::dict arrays, std::optional<py::dict> metadata) {
        auto path = as_path(file);
        if (!path) throw std::invalid_argument("[save_gguf] GGUF files are written to a path only.");
        auto map = array_map(arrays, "save_gguf");
        std::unordered_map<std::string, GGUFMetaData> meta;
        if (metadata) {
          for (auto item : *metadata) {
            if (!PyUnicode_Check(item.first.ptr())) {
              throw std::invalid_argument("[save_gguf] Metadata keys must be strings.");
            }
            meta[item.first.cast<std::string>()] = gguf_metadata_value(item.second);
          }
        }
        py::gil_scoped_release release;
        save_gguf(*path, std::move(map), std::move(meta));  // adds ".gguf"
      },
      "file"_a, "arrays"_a, "metadata"_a = py::none(),
      "Saves a dict of arrays and metadata (str, list of str, or array) in GGUF format (a path "
      "without the extension gets \".gguf\").");
}

}  // namespace braid::python
