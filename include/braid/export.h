// Function export (MLX's mlx/export.h): a function traced on example inputs and written to a
// file with its graph and the arrays it captured, then imported (in this or another process)
// as a callable that runs the same graph on new inputs, without the function's code.
//
// A file holds one trace per input signature (positional count, keyword names, and each
// input's dtype and shape, or rank when shapeless); importing picks the trace whose
// signature the call matches. The format is braid's own (.mlxfn by convention, as MLX's):
// braid does not read MLX's files, nor MLX braid's. Its reader never reads past the file nor
// allocates more than the file describes, but the graph it holds runs as written: import only
// files you trust, as you would run only code you trust.
//
// Instead of a file, a trace can go to a callback (MLX's ExportCallback), which receives the
// graph as records: to convert a function to another format, or to inspect it.
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "braid/array.h"

namespace braid {

using Args = std::vector<array>;
using Kwargs = std::map<std::string, array>;
/// String pairs stored with an exported function (MLX's metadata), read back by
/// ImportedFunction::metadata().
using Metadata = std::unordered_map<std::string, std::string>;

/// One value of a primitive's state, as an export callback receives it (MLX's StateT).
using StateT = std::variant<bool, int, size_t, float, double, Dtype, Shape, Strides, std::vector<int>,
                            std::vector<size_t>, std::vector<std::tuple<bool, bool, bool>>,
                            std::vector<std::variant<bool, int, float>>, std::optional<float>, std::string>;

/// One record of a trace given to an export callback (MLX's ExportCallbackInput). Its "type"
/// (a std::string) says what it holds; the records of one trace come in this order:
/// - "inputs": "inputs", each input's (name, shape, dtype), positional ones first, then the
///   keyword ones in name order;
/// - "keyword_inputs": "keywords", (keyword, input name) for each keyword input;
/// - "outputs": "outputs", each output's (name, shape, dtype);
/// - "constants": "constants", (name, array) for each array the function captured that no
///   earlier trace of the same exporter reported;
/// - one "primitive" per step, inputs before their users: "name" (the primitive's name, as
///   MLX names it), "inputs" and "outputs" (name, shape, dtype; every output of a
///   multi-output primitive, in order, as MLX lists them), and "arguments" (its state:
///   as MLX's for the element-wise ops, AsType, Broadcast and Reshape; braid's constructor
///   arguments, in order, for the others).
/// Names are A, B, ..., Z, AA, ... as NodeNamer gives them, unique within an exporter.
using ExportCallbackInput =
    std::unordered_map<std::string, std::variant<std::vector<std::tuple<std::string, Shape, Dtype>>,
                                                 std::vector<std::pair<std::string, array>>,
                                                 std::vector<std::pair<std::string, std::string>>,
                                                 std::vector<StateT>, std::string>>;
using ExportCallback = std::function<void(const ExportCallbackInput&)>;

namespace detail {
struct ExportState;
struct ImportState;
struct ExporterAccess;
}  // namespace detail

/// Adds traces of one function to a file, one per call with a new signature (see the top of
/// this file); the file on disk is complete after every call. Any thread may call it; calls
/// are serialized. Calling it after close() throws std::runtime_error. An exporter made with a
/// callback calls it with each new trace's records instead (on the calling thread, holding the
/// exporter: the callback must not call the same exporter).
class FunctionExporter {
 public:
  void operator()(std::initializer_list<array> args) { (*this)(Args(args)); }
  void operator()(const Args& args);
  void operator()(const Kwargs& kwargs);
  void operator()(const Args& args, const Kwargs& kwargs);
  /// Stops adding traces (the destructor does too).
  void close();

  FunctionExporter(const FunctionExporter&) = delete;
  FunctionExporter& operator=(const FunctionExporter&) = delete;
  FunctionExporter(FunctionExporter&&) noexcept = default;
  FunctionExporter& operator=(FunctionExporter&&) noexcept = default;
  ~FunctionExporter();

 private:
  friend struct detail::ExporterAccess;
  explicit FunctionExporter(std::shared_ptr<detail::ExportState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::ExportState> state_;
};

/// An exporter writing traces of `fun` to `path` (created or truncated now). `shapeless`: each
/// trace serves inputs of any shape with the traced ranks and dtypes (as compile's shapeless).
/// `metadata` is stored with the file.
FunctionExporter exporter(const std::string& path, const std::function<std::vector<array>(const Args&)>& fun,
                          bool shapeless = false, const Metadata& metadata = {});
FunctionExporter exporter(const std::string& path,
                          const std::function<std::vector<array>(const Kwargs&)>& fun, bool shapeless = false,
                          const Metadata& metadata = {});
FunctionExporter exporter(const std::string& path,
                          const std::function<std::vector<array>(const Args&, const Kwargs&)>& fun,
                          bool shapeless = false, const Metadata& metadata = {});

/// Traces `fun` on the example inputs and writes the trace to `path`. Throws
/// std::invalid_argument for a graph that cannot be exported (a primitive holding a callback,
/// such as custom_function's) and std::runtime_error when the file cannot be written.
void export_function(const std::string& path, const std::function<std::vector<array>(const Args&)>& fun,
                     const Args& args, bool shapeless = false, const Metadata& metadata = {});
void export_function(const std::string& path, const std::function<std::vector<array>(const Kwargs&)>& fun,
                     const Kwargs& kwargs, bool shapeless = false, const Metadata& metadata = {});
void export_function(const std::string& path,
                     const std::function<std::vector<array>(const Args&, const Kwargs&)>& fun,
                     const Args& args, const Kwargs& kwargs, bool shapeless = false,
                     const Metadata& metadata = {});

/// The same, giving each trace to `callback` as records (ExportCallbackInput) instead of
/// writing a file. Throws what the file forms throw for a graph that cannot be exported, and
/// what the callback throws (the trace is then not added).
FunctionExporter exporter(const ExportCallback& callback,
                          const std::function<std::vector<array>(const Args&)>& fun, bool shapeless = false);
FunctionExporter exporter(const ExportCallback& callback,
                          const std::function<std::vector<array>(const Kwargs&)>& fun,
                          bool shapeless = false);
FunctionExporter exporter(const ExportCallback& callback,
                          const std::function<std::vector<array>(const Args&, const Kwargs&)>& fun,
                          bool shapeless = false);
void export_function(const ExportCallback& callback,
                     const std::function<std::vector<array>(const Args&)>& fun, const Args& args,
                     bool shapeless = false);
void export_function(const ExportCallback& callback,
                     const std::function<std::vector<array>(const Kwargs&)>& fun, const Kwargs& kwargs,
                     bool shapeless = false);
void export_function(const ExportCallback& callback,
                     const std::function<std::vector<array>(const Args&, const Kwargs&)>& fun,
                     const Args& args, const Kwargs& kwargs, bool shapeless = false);

/// A function read by import_function. Calling it builds the traced graph on the inputs
/// (lazily, as any op) and returns its outputs; a call whose inputs match no trace throws
/// std::invalid_argument. Copies share one state; callable from any thread at once: work
/// runs on the calling thread's default streams (and on streams the importer made for the
/// exported function's other streams).
class ImportedFunction {
 public:
  std::vector<array> operator()(std::initializer_list<array> args) const { return (*this)(Args(args)); }
  std::vector<array> operator()(const Args& args) const;
  std::vector<array> operator()(const Kwargs& kwargs) const;
  std::vector<array> operator()(const Args& args, const Kwargs& kwargs) const;
  /// The metadata exported with the function (empty for a file written without any).
  const Metadata& metadata() const;

 private:
  friend ImportedFunction import_function(const std::string&);
  explicit ImportedFunction(std::shared_ptr<const detail::ImportState> state) : state_(std::move(state)) {}
  std::shared_ptr<const detail::ImportState> state_;
};

/// Reads a function written by export_function or an exporter. Throws std::runtime_error when
/// the file cannot be read or is not a valid exported function.
ImportedFunction import_function(const std::string& path);

}  // namespace braid
