// export_function / import_function (include/braid/export.h): a trace recorded as compile
// records one (transforms/program.h), written with its primitives' states and the arrays it
// captured; importing rebuilds the primitives and replays the trace on the caller's inputs.
//
// File layout (little-endian; format.h): the string "braid.mlxfn", a u32 version, the
// shapeless flag, the streams (device type and whether it was the exporting thread's default
// stream), the constants (dtype, shape, bytes; shared by every trace), then the traces: the
// positional count, the keyword names, each input's dtype and shape, whether the trace replays
// on other shapes, its steps (stream, dtype, shape, primitive, input references, and for an
// output of a multi-output primitive its position, its call's first step and every output's
// dtype and shape) and its
// outputs.
#include "braid/export.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "braid/graph_utils.h"
#include "braid/stream.h"
#include "export/format.h"
#include "graph/node.h"
#include "graph/trace.h"
#include "io/common.h"
#include "runtime/mutex.h"
#include "transforms/program.h"

namespace braid {

namespace detail {

namespace {

constexpr std::string_view kMagic = "braid.mlxfn";
// 2: a shapeless Reshape may hold the shape it was asked for (version 1 files read the same).
// 3: the exporter's metadata (string pairs) after the shapeless flag (none in older files).
// 4: each step says whether it is an output of a multi-output primitive (its position, the
//    first step of its call, every output's dtype and shape); none in older files.
constexpr uint32_t kVersion = 4;

using FullFn = std::function<std::vector<array>(const Args&, const Kwargs&)>;

// What a call passes: its positional count, keyword names and every input (positional first,
// then keyword arrays in name order, as a Kwargs map holds them).
struct Signature {
  size_t num_args = 0;
  std::vector<std::string> keys;
  std::vector<Dtype> dtypes;
  std::vector<Shape> shapes;
};

Signature signature_of(const Args& args, const Kwargs& kwargs) {
  Signature s;
  s.num_args = args.size();
  auto add = [&](const array& a) {
    s.dtypes.push_back(a.dtype());
    s.shapes.push_back(a.shape());
  };
  std::for_each(args.begin(), args.end(), add);
  for (const auto& [key, a] : kwargs) {
    s.keys.push_back(key);
    add(a);
  }
  return s;
}

// Whether a call of signature `call` may use a trace of signature `traced`: the same names
// and dtypes, and the same shapes (the same ranks when shapeless).
bool matches(const Signature& traced, const Signature& call, bool shapeless) {
  if (traced.num_args != call.num_args || traced.keys != call.keys || traced.dtypes != call.dtypes)
    return false;
  for (size_t i = 0; i < traced.shapes.size(); ++i) {
    if (shapeless ? traced.shapes[i].size() != call.shapes[i].size() : traced.shapes[i] != call.shapes[i]) {
      return false;
    }
  }
  return true;
}

std::vector<array> flatten_inputs(const Args& args, const Kwargs& kwargs) {
  std::vector<array> all(args.begin(), args.end());
  for (const auto& [key, a] : kwargs) all.push_back(a);
  return all;
}

void write_signature(ByteWriter& w, const Signature& s) {
  w.u64(s.num_args);
  w.u64(s.keys.size());
  for (const auto& k : s.keys) w.str(k);
  w.u64(s.dtypes.size());
  for (size_t i = 0; i < s.dtypes.size(); ++i) {
    w.dtype(s.dtypes[i]);
    w.ints(s.shapes[i]);
  }
}

Shape read_shape(ByteReader& r) {
  Shape s = r.shape();
  for (int d : s) {
    if (d < 0) ByteReader::fail("a negative dimension");
  }
  return s;
}

Signature read_signature(ByteReader& r) {
  Signature s;
  s.num_args = r.u64();
  s.keys.resize(r.count(8));
  for (auto& k : s.keys) k = r.str();
  if (!std::is_sorted(s.keys.begin(), s.keys.end()) ||
      std::adjacent_find(s.keys.begin(), s.keys.end()) != s.keys.end()) {
    ByteReader::fail("keyword names out of order");
  }
  size_t n = r.count(9);
  if (n < s.keys.size() || n - s.keys.size() != s.num_args)
    ByteReader::fail("inputs do not match their names");
  for (size_t i = 0; i < n; ++i) {
    s.dtypes.push_back(r.dtype());
    s.shapes.push_back(read_shape(r));
  }
  return s;
}

void write_ref(ByteWriter& w, Ref ref) {
  w.u8(static_cast<uint8_t>(ref.kind));
  w.u32(ref.index);
}

// A reference checked against what exists where it is read.
Ref read_ref(ByteReader& r, size_t num_inputs, size_t num_steps, size_t num_constants) {
  auto kind = r.enumerator<Ref::Kind>(3);
  uint32_t index = r.u32();
  size_t limit = kind == Ref::Kind::input ? num_inputs : kind == Ref::Kind::step ? num_steps : num_constants;
  if (index >= limit) ByteReader::fail("a reference to a missing input, step or constant");
  return Ref{kind, index};
}

bool exportable(const Primitive& p) {
  ByteWriter scratch;
  try {
    write_primitive(scratch, p);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

}  // namespace

// One exported trace: its signature and the program, whose constant references are indices
// into the exporter's shared constants.
struct ExportedTrace {
  Signature signature;
  std::shared_ptr<const Program> program;
  std::vector<uint32_t> constant_ids;   // program constant i -> shared constant
  std::vector<bool> on_default_stream;  // per step: on the exporting thread's default stream
};

struct ExportState {
  std::string path;
  ExportCallback callback;  // set: traces go to it, not to `path`
  Metadata metadata;        // written with the file
  FullFn fun;
  bool shapeless = false;
  Mutex mu;
  // Set by close() without `mu`: a trace in progress holds it while the function runs (and a
  // Python function waits there for the GIL that close()'s caller holds).
  std::atomic<bool> closed{false};
  std::vector<ExportedTrace> traces GUARDED_BY(mu);
  std::vector<array> constants GUARDED_BY(mu);  // kept alive: their nodes identify them
  std::unordered_map<const ArrayDesc*, uint32_t> constant_ids GUARDED_BY(mu);
  // For the callback: names given so far, and each shared constant's name once reported.
  size_t names_given GUARDED_BY(mu) = 0;
  std::vector<std::string> constant_names GUARDED_BY(mu);

  void add(const Args& args, const Kwargs& kwargs);
  void write() REQUIRES(mu);
  void report(const ExportedTrace& trace) REQUIRES(mu);
};

void ExportState::add(const Args& args, const Kwargs& kwargs) {
  MutexLock lock(mu);
  if (closed.load()) throw std::runtime_error("[export_function] Attempting to export to a closed exporter.");
  Signature sig = signature_of(args, kwargs);
  for (const auto& t : traces) {
    if (matches(t.signature, sig, shapeless)) {
      throw std::invalid_argument(
          "[export_function] Attempting to export a function twice with the same signature is not allowed.");
    }
  }
  // Placeholders (no value, no primitive) stand for the inputs, as in compile.
  Args arg_placeholders;
  for (const auto& a : args)
    arg_placeholders.emplace_back(a.shape(), a.dtype(), nullptr, std::vector<array>{});
  Kwargs kwarg_placeholders;
  for (const auto& [key, a] : kwargs) {
    kwarg_placeholders.emplace(key, array(a.shape(), a.dtype(), nullptr, std::vector<array>{}));
  }
  std::vector<array> outputs;
  {
    DynamicTracing dynamic(shapeless);
    outputs = fun(arg_placeholders, kwarg_placeholders);
  }
  std::shared_ptr<const Program> program =
      record(flatten_inputs(arg_placeholders, kwarg_placeholders), flatten_inputs(args, kwargs), outputs,
             shapeless, exportable);
  if (program->nested) {
    throw std::invalid_argument(
        "[export_function] Cannot export a function called inside another function's trace (compile, vmap).");
  }
  if (shapeless && !program->shapeless) {
    throw std::invalid_argument(
        "[export_function] The function cannot be exported shapeless: a primitive of its graph cannot infer "
        "its output shape from its inputs' (e.g. a reshape to fixed sizes), or an example input is empty.");
  }
  for (const auto& s : program->steps) {
    ByteWriter scratch;
    write_primitive(scratch, *s.primitive);  // throws for one that cannot be exported, before any change
  }
  ExportedTrace trace{std::move(sig), program, {}, {}};
  for (const auto& s : program->steps) {
    const Stream& st = s.primitive->stream();
    trace.on_default_stream.push_back(st == default_stream(st.device));
  }
  for (const auto& c : program->constants) {
    auto [it, added] = constant_ids.emplace(c.desc(), static_cast<uint32_t>(constants.size()));
    if (added) constants.push_back(c);
    trace.constant_ids.push_back(it->second);
  }
  const size_t num_constants = constants.size();
  const size_t num_names = names_given;
  traces.push_back(std::move(trace));
  try {
    if (callback) {
      report(traces.back());
    } else {
      write();
    }
  } catch (...) {
    // Left as before this call: a later call may succeed (say, once the disk has room).
    traces.pop_back();
    for (size_t i = num_constants; i < constants.size(); ++i) constant_ids.erase(constants[i].desc());
    constants.erase(constants.begin() + static_cast<std::ptrdiff_t>(num_constants), constants.end());
    constant_names.resize(std::min(constant_names.size(), num_constants));
    names_given = num_names;
    throw;
  }
}

// Gives one trace to the callback (the records of ExportCallbackInput, in its order).
void ExportState::report(const ExportedTrace& t) {
  using Specs = std::vector<std::tuple<std::string, Shape, Dtype>>;
  const Program& p = *t.program;
  auto fresh = [&] { return NodeNamer::letters(++names_given); };
  std::vector<std::string> input_names, step_names;
  for (size_t i = 0; i < p.num_inputs; ++i) input_names.push_back(fresh());
  std::vector<std::pair<std::string, array>> new_constants;
  for (uint32_t id : t.constant_ids) {
    if (id < constant_names.size()) continue;
    constant_names.resize(id + 1);
    constant_names[id] = fresh();
    new_constants.emplace_back(constant_names[id], constants[id]);
  }
  for (size_t i = 0; i < p.steps.size(); ++i) step_names.push_back(fresh());
  auto spec = [&](Ref r) {
    switch (r.kind) {
      case Ref::Kind::input:
        return std::make_tuple(input_names[r.index], t.signature.shapes[r.index],
                               t.signature.dtypes[r.index]);
      case Ref::Kind::step:
        return std::make_tuple(step_names[r.index], p.steps[r.index].shape, p.steps[r.index].dtype);
      case Ref::Kind::constant: {
        const array& c = constants[t.constant_ids[r.index]];
        return std::make_tuple(constant_names[t.constant_ids[r.index]], c.shape(), c.dtype());
      }
    }
    throw std::logic_error("[export_function] unknown reference.");
  };
  auto specs = [&](const std::vector<Ref>& refs) {
    Specs out;
    for (Ref r : refs) out.push_back(spec(r));
    return out;
  };

  Specs inputs;
  for (uint32_t i = 0; i < p.num_inputs; ++i) inputs.push_back(spec(Ref{Ref::Kind::input, i}));
  std::vector<std::pair<std::string, std::string>> keywords;
  for (size_t k = 0; k < t.signature.keys.size(); ++k) {
    keywords.emplace_back(t.signature.keys[k], input_names[t.signature.num_args + k]);
  }
  callback({{"type", std::string("inputs")}, {"inputs", std::move(inputs)}});
  callback({{"type", std::string("keyword_inputs")}, {"keywords", std::move(keywords)}});
  callback({{"type", std::string("outputs")}, {"outputs", specs(p.outputs)}});
  callback({{"type", std::string("constants")}, {"constants", std::move(new_constants)}});
  // A multi-output primitive's call is one record listing every output, at its first step (an
  // output the trace does not keep gets a name of its own).
  std::map<std::pair<const StepGroup*, uint32_t>, uint32_t> group_step;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    if (p.steps[i].group) group_step.emplace(std::make_pair(p.steps[i].group.get(), p.steps[i].position), i);
  }
  std::set<const StepGroup*> reported;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const Step& s = p.steps[i];
    Specs outputs;
    if (s.group) {
      if (!reported.insert(s.group.get()).second) continue;
      for (uint32_t k = 0; k < s.group->shapes.size(); ++k) {
        auto it = group_step.find({s.group.get(), k});
        if (it != group_step.end()) {
          outputs.push_back(spec(Ref{Ref::Kind::step, it->second}));
        } else {
          outputs.emplace_back(fresh(), s.group->shapes[k], s.group->dtypes[k]);
        }
      }
    } else {
      outputs.push_back(spec(Ref{Ref::Kind::step, static_cast<uint32_t>(i)}));
    }
    callback({{"type", std::string("primitive")},
              {"name", std::string(s.primitive->name())},
              {"inputs", specs(s.inputs)},
              {"outputs", std::move(outputs)},
              {"arguments", primitive_state(*s.primitive, s.shape, s.dtype)}});
  }
}

// Writes the whole file again: complete after every trace.
void ExportState::write() {
  std::vector<array*> pending;
  for (auto& c : constants) pending.push_back(&c);
  io_detail::eval_row_contiguous(pending);

  // The streams the steps run on: each exported as its device and whether it was the
  // tracing thread's default stream there (imported as the caller's default stream) or
  // another one (imported as a stream of its own).
  std::vector<std::pair<Device::DeviceType, bool>> streams;
  std::map<std::pair<int, bool>, uint32_t> stream_slots;  // (Stream::index, was default) -> slot
  auto slot_of = [&](const Stream& s, bool was_default) {
    auto [it, added] =
        stream_slots.emplace(std::make_pair(s.index, was_default), static_cast<uint32_t>(streams.size()));
    if (added) streams.emplace_back(s.device.type, was_default);
    return it->second;
  };

  ByteWriter body;
  body.u64(traces.size());
  for (const auto& t : traces) {
    write_signature(body, t.signature);
    body.boolean(t.program->shapeless);
    body.u64(t.program->steps.size());
    std::map<const StepGroup*, uint32_t> first_of_group;
    for (size_t i = 0; i < t.program->steps.size(); ++i) {
      const Step& s = t.program->steps[i];
      body.u32(slot_of(s.primitive->stream(), t.on_default_stream[i]));
      body.dtype(s.dtype);
      body.ints(s.shape);
      ByteWriter state;
      write_primitive(state, *s.primitive);
      body.str(state.data());
      body.u64(s.inputs.size());
      for (Ref ref : s.inputs) {
        if (ref.kind == Ref::Kind::constant) ref.index = t.constant_ids[ref.index];
        write_ref(body, ref);
      }
      body.u64(s.group ? s.group->shapes.size() : 0);
      if (s.group) {
        body.u32(s.position);
        body.u32(first_of_group.emplace(s.group.get(), static_cast<uint32_t>(i)).first->second);
        for (size_t k = 0; k < s.group->shapes.size(); ++k) {
          body.dtype(s.group->dtypes[k]);
          body.ints(s.group->shapes[k]);
        }
      }
    }
    body.u64(t.program->outputs.size());
    for (Ref ref : t.program->outputs) {
      if (ref.kind == Ref::Kind::constant) ref.index = t.constant_ids[ref.index];
      write_ref(body, ref);
    }
  }

  ByteWriter head;
  head.str(kMagic);
  head.u32(kVersion);
  head.boolean(shapeless);
  std::map<std::string, std::string> sorted(metadata.begin(), metadata.end());  // the same bytes every time
  head.u64(sorted.size());
  for (const auto& [key, value] : sorted) {
    head.str(key);
    head.str(value);
  }
  head.u64(streams.size());
  for (auto [type, is_default] : streams) {
    head.u8(static_cast<uint8_t>(type));
    head.boolean(is_default);
  }
  head.u64(constants.size());
  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  if (!os) throw std::runtime_error("[export_function] Failed to open " + path + " for writing.");
  os.write(head.data().data(), static_cast<std::streamsize>(head.data().size()));
  for (const auto& c : constants) {
    ByteWriter meta;
    meta.dtype(c.dtype());
    meta.ints(c.shape());
    meta.u64(c.nbytes());
    os.write(meta.data().data(), static_cast<std::streamsize>(meta.data().size()));
    os.write(static_cast<const char*>(c.host_data()), static_cast<std::streamsize>(c.nbytes()));
  }
  os.write(body.data().data(), static_cast<std::streamsize>(body.data().size()));
  os.close();
  if (!os) throw std::runtime_error("[export_function] Failed to write " + path + ".");
}

// An imported trace: its steps as read (each primitive's state kept as bytes, rebuilt per
// set of streams), its outputs.
struct ImportedStep {
  uint32_t stream = 0;
  Dtype dtype = float32;
  Shape shape;
  bool follows_inputs;
  std::string state;
  std::vector<Ref> inputs;
  // An output of a multi-output primitive: every output's dtype and shape (empty otherwise),
  // its position, and the first step of its call.
  std::vector<Dtype> group_dtypes;
  std::vector<Shape> group_shapes;
  uint32_t position = 0;
  uint32_t group_first = 0;
};

struct ImportedTrace {
  Signature signature;
  bool shapeless = false;
  std::vector<ImportedStep> steps;
  std::vector<Ref> outputs;
};

struct ImportState {
  Metadata metadata;
  std::vector<std::pair<Device::DeviceType, bool>> streams;  // device, was the default stream
  std::vector<array> constants;
  std::vector<ImportedTrace> traces;
  bool shapeless = false;

  // The traces' programs with their primitives on the calling thread's default streams (and
  // streams made here for the others), built on first use per set of default streams.
  mutable Mutex mu;
  mutable std::vector<Stream> other_streams GUARDED_BY(mu);  // per slot, made on first use
  mutable std::map<std::vector<int>, std::vector<std::shared_ptr<const Program>>> programs GUARDED_BY(mu);

  std::vector<std::shared_ptr<const Program>> programs_for_caller() const;
  std::vector<array> call(const Args& args, const Kwargs& kwargs) const;
};

// Reads whether step `i` is an output of a multi-output primitive. The steps of one call
// must agree (the same primitive, inputs and outputs), and the step be one of its outputs.
void read_step_group(ByteReader& r, std::vector<ImportedStep>& steps, size_t i) {
  ImportedStep& s = steps[i];
  const size_t n = r.count(1 + 4 + 4);
  if (n == 0) return;
  if (n == 1) ByteReader::fail("a multi-output step with one output");
  s.position = r.u32();
  s.group_first = r.u32();
  for (size_t k = 0; k < n; ++k) {
    s.group_dtypes.push_back(r.dtype());
    s.group_shapes.push_back(read_shape(r));
  }
  if (s.position >= n || s.group_dtypes[s.position] != s.dtype || s.group_shapes[s.position] != s.shape)
    ByteReader::fail("a step that is not an output of its call");
  if (s.group_first > i) ByteReader::fail("a multi-output step names a later step");
  const ImportedStep& first = steps[s.group_first];
  if (first.group_first != s.group_first || first.state != s.state || first.stream != s.stream ||
      first.group_dtypes != s.group_dtypes || first.group_shapes != s.group_shapes ||
      first.inputs.size() != s.inputs.size()) {
    ByteReader::fail("the steps of a multi-output call disagree");
  }
  for (size_t j = 0; j < s.inputs.size(); ++j) {
    if (first.inputs[j].kind != s.inputs[j].kind || first.inputs[j].index != s.inputs[j].index)
      ByteReader::fail("the steps of a multi-output call disagree");
  }
}

std::vector<std::shared_ptr<const Program>> ImportState::programs_for_caller() const {
  // The calling thread's default stream of each device a default slot names.
  std::vector<Stream> resolved;
  std::vector<int> key;
  for (auto [type, is_default] : streams) {
    if (!is_default) {
      key.push_back(-1);
      continue;
    }
    Stream s = default_stream(Device(type));
    key.push_back(s.index);
    resolved.push_back(s);
  }
  MutexLock lock(mu);
  if (auto it = programs.find(key); it != programs.end()) return it->second;
  if (other_streams.empty()) {
    for (auto [type, is_default] : streams) {
      // Placeholders for default slots; a stream of its own for every other exported stream.
      other_streams.push_back(is_default ? default_stream(Device::cpu) : new_stream(Device(type)));
    }
  }
  std::vector<std::shared_ptr<const Program>> built;
  for (const auto& t : traces) {
    auto p = std::make_shared<Program>();
    p->num_inputs = t.signature.dtypes.size();
    p->input_shapes = t.signature.shapes;
    p->shapeless = t.shapeless;
    p->constants = constants;
    p->outputs = t.outputs;
    std::map<uint32_t, std::shared_ptr<const StepGroup>> groups;  // by the call's first step
    for (const auto& s : t.steps) {
      size_t slot = s.stream;
      Stream stream = other_streams[slot];
      if (streams[slot].second) {
        size_t nth =
            static_cast<size_t>(std::count_if(streams.begin(), streams.begin() + static_cast<long>(slot),
                                              [](const auto& e) { return e.second; }));
        stream = resolved[nth];
      }
      ByteReader r(s.state.data(), s.state.size());
      p->steps.push_back(
          Step{read_primitive(r, stream), s.inputs, s.shape, s.dtype, s.follows_inputs, std::nullopt});
      if (!s.group_shapes.empty()) {
        auto& group = groups[s.group_first];
        if (!group) group = std::make_shared<const StepGroup>(StepGroup{s.group_shapes, s.group_dtypes});
        p->steps.back().group = group;
        p->steps.back().position = s.position;
      }
    }
    built.push_back(std::move(p));
  }
  // Bounded: a program set per thread's default streams, and threads come and go.
  if (programs.size() >= 64) programs.clear();
  programs.emplace(std::move(key), built);
  return built;
}

std::vector<array> ImportState::call(const Args& args, const Kwargs& kwargs) const {
  Signature sig = signature_of(args, kwargs);
  for (size_t i = 0; i < traces.size(); ++i) {
    if (!matches(traces[i].signature, sig, shapeless)) continue;
    std::shared_ptr<const Program> program = programs_for_caller()[i];
    std::vector<array> inputs = flatten_inputs(args, kwargs);
    bool same_shapes = sig.shapes == traces[i].signature.shapes;
    if (!same_shapes && !program->shapeless) {
      throw std::invalid_argument(
          "[import_function] The function was exported shapeless but cannot replay on inputs of other shapes "
          "(a primitive of its graph cannot infer its output shape).");
    }
    return replay(*program, inputs, /*infer=*/!same_shapes);
  }
  std::ostringstream msg;
  msg << "[import_function] No traced function matches the given " << args.size() << " positional and "
      << kwargs.size() << " keyword arguments (their names, dtypes and shapes).";
  throw std::invalid_argument(msg.str());
}

std::shared_ptr<const ImportState> read_exported(const std::string& path) {
  std::ifstream is(path, std::ios::binary);
  if (!is) throw std::runtime_error("[import_function] Failed to open " + path + ".");
  std::string bytes((std::istreambuf_iterator<char>(is)), std::istreambuf_iterator<char>());
  ByteReader r(bytes.data(), bytes.size());
  if (r.str() != kMagic) ByteReader::fail("not a function exported by braid");
  const uint32_t version = r.u32();
  if (version < 1 || version > kVersion) ByteReader::fail("unsupported version");
  auto state = std::make_shared<ImportState>();
  state->shapeless = r.boolean();
  if (version >= 3) {
    const size_t n = r.count(16);
    for (size_t i = 0; i < n; ++i) {
      std::string key = r.str();
      if (!state->metadata.emplace(std::move(key), r.str()).second)
        ByteReader::fail("a metadata key given twice");
    }
  }
  state->streams.resize(r.count(2));
  for (auto& [type, is_default] : state->streams) {
    type = r.enumerator<Device::DeviceType>(2);
    is_default = r.boolean();
  }
  size_t num_constants = r.count(17);
  for (size_t i = 0; i < num_constants; ++i) {
    Dtype dtype = r.dtype();
    Shape shape = read_shape(r);
    uint64_t nbytes = r.u64();
    uint64_t size = 1;
    for (int d : shape) {
      if (d != 0 && size > nbytes / static_cast<uint64_t>(d))
        ByteReader::fail("a constant larger than its bytes");
      size *= static_cast<uint64_t>(d);
    }
    if (size * dtype.size() != nbytes) ByteReader::fail("a constant's size does not match its bytes");
    const char* src = r.raw(nbytes);
    void* dst = nullptr;
    array c = io_detail::new_host_array(std::move(shape), dtype, &dst);
    if (nbytes > 0) std::memcpy(dst, src, nbytes);
    state->constants.push_back(std::move(c));
  }
  state->traces.resize(r.count(34));
  const Stream check_stream = default_stream(Device::cpu);
  for (auto& t : state->traces) {
    t.signature = read_signature(r);
    t.shapeless = r.boolean();
    const size_t num_inputs = t.signature.dtypes.size();
    t.steps.resize(r.count(27));
    for (size_t i = 0; i < t.steps.size(); ++i) {
      ImportedStep& s = t.steps[i];
      s.stream = r.u32();
      if (s.stream >= state->streams.size()) ByteReader::fail("a step on a missing stream");
      s.dtype = r.dtype();
      s.shape = read_shape(r);
      s.state = r.str();
      ByteReader check(s.state.data(), s.state.size());
      // Fails now, not at the first call.
      const size_t outputs = num_outputs(*read_primitive(check, check_stream));
      if (check.left() != 0) ByteReader::fail("a primitive's state has trailing bytes");
      s.inputs.resize(r.count(5));
      s.follows_inputs = false;  // derived, not trusted: whether an input reaches the step
      for (Ref& ref : s.inputs) {
        ref = read_ref(r, num_inputs, i, num_constants);
        s.follows_inputs = s.follows_inputs || ref.kind == Ref::Kind::input ||
                           (ref.kind == Ref::Kind::step && t.steps[ref.index].follows_inputs);
      }
      if (version >= 4) read_step_group(r, t.steps, i);
      if (std::max<size_t>(s.group_shapes.size(), 1) != outputs)
        ByteReader::fail("a step whose primitive has another number of outputs");
    }
    t.outputs.resize(r.count(5));
    for (Ref& ref : t.outputs) ref = read_ref(r, num_inputs, t.steps.size(), num_constants);
  }
  if (r.left() != 0) ByteReader::fail("trailing bytes");
  return state;
}

// Makes FunctionExporters (their constructor is private).
struct ExporterAccess {
  static FunctionExporter make(FullFn fun, bool shapeless, std::string path, ExportCallback callback,
                               Metadata metadata = {}) {
    auto state = std::make_shared<ExportState>();
    state->metadata = std::move(metadata);
    state->fun = std::move(fun);
    state->shapeless = shapeless;
    state->path = std::move(path);
    state->callback = std::move(callback);
    if (!state->callback) {
      MutexLock lock(state->mu);
      state->write();  // a file with no trace yet; fails now if the path cannot be written
    }
    return FunctionExporter(std::move(state));
  }
};

namespace {

FullFn positional_only(const std::function<std::vector<array>(const Args&)>& fun) {
  return [fun](const Args& args, const Kwargs& kwargs) {
    if (!kwargs.empty())
      throw std::invalid_argument("[export_function] The function takes no keyword arguments.");
    return fun(args);
  };
}

FullFn keywords_only(const std::function<std::vector<array>(const Kwargs&)>& fun) {
  return [fun](const Args& args, const Kwargs& kwargs) {
    if (!args.empty())
      throw std::invalid_argument("[export_function] The function takes no positional arguments.");
    return fun(kwargs);
  };
}

ExportCallback checked(const ExportCallback& callback) {
  if (!callback) throw std::invalid_argument("[export_function] The callback is empty.");
  return callback;
}

}  // namespace

}  // namespace detail

FunctionExporter::~FunctionExporter() {
  if (state_) close();
}

void FunctionExporter::operator()(const Args& args) { state_->add(args, {}); }
void FunctionExporter::operator()(const Kwargs& kwargs) { state_->add({}, kwargs); }
void FunctionExporter::operator()(const Args& args, const Kwargs& kwargs) { state_->add(args, kwargs); }

void FunctionExporter::close() { state_->closed.store(true); }

FunctionExporter exporter(const std::string& path, const std::function<std::vector<array>(const Args&)>& fun,
                          bool shapeless, const Metadata& metadata) {
  return detail::ExporterAccess::make(detail::positional_only(fun), shapeless, path, {}, metadata);
}

FunctionExporter exporter(const std::string& path,
                          const std::function<std::vector<array>(const Kwargs&)>& fun, bool shapeless,
                          const Metadata& metadata) {
  return detail::ExporterAccess::make(detail::keywords_only(fun), shapeless, path, {}, metadata);
}

FunctionExporter exporter(const std::string& path,
                          const std::function<std::vector<array>(const Args&, const Kwargs&)>& fun,
                          bool shapeless, const Metadata& metadata) {
  return detail::ExporterAccess::make(fun, shapeless, path, {}, metadata);
}

FunctionExporter exporter(const ExportCallback& callback,
                          const std::function<std::vector<array>(const Args&)>& fun, bool shapeless) {
  return detail::ExporterAccess::make(detail::positional_only(fun), shapeless, {}, detail::checked(callback));
}

FunctionExporter exporter(const ExportCallback& callback,
                          const std::function<std::vector<array>(const Kwargs&)>& fun, bool shapeless) {
  return detail::ExporterAccess::make(detail::keywords_only(fun), shapeless, {}, detail::checked(callback));
}

FunctionExporter exporter(const ExportCallback& callback,
                          const std::function<std::vector<array>(const Args&, const Kwargs&)>& fun,
                          bool shapeless) {
  return detail::ExporterAccess::make(fun, shapeless, {}, detail::checked(callback));
}

void export_function(const std::string& path, const std::function<std::vector<array>(const Args&)>& fun,
                     const Args& args, bool shapeless, const Metadata& metadata) {
  exporter(path, fun, shapeless, metadata)(args);
}

void export_function(const std::string& path, const std::function<std::vector<array>(const Kwargs&)>& fun,
                     const Kwargs& kwargs, bool shapeless, const Metadata& metadata) {
  exporter(path, fun, shapeless, metadata)(kwargs);
}

void export_function(const std::string& path,
                     const std::function<std::vector<array>(const Args&, const Kwargs&)>& fun,
                     const Args& args, const Kwargs& kwargs, bool shapeless, const Metadata& metadata) {
  exporter(path, fun, shapeless, metadata)(args, kwargs);
}

void export_function(const ExportCallback& callback,
                     const std::function<std::vector<array>(const Args&)>& fun, const Args& args,
                     bool shapeless) {
  exporter(callback, fun, shapeless)(args);
}

void export_function(const ExportCallback& callback,
                     const std::function<std::vector<array>(const Kwargs&)>& fun, const Kwargs& kwargs,
                     bool shapeless) {
  exporter(callback, fun, shapeless)(kwargs);
}

void export_function(const ExportCallback& callback,
                     const std::function<std::vector<array>(const Args&, const Kwargs&)>& fun,
                     const Args& args, const Kwargs& kwargs, bool shapeless) {
  exporter(callback, fun, shapeless)(args, kwargs);
}

std::vector<array> ImportedFunction::operator()(const Args& args) const { return state_->call(args, {}); }
std::vector<array> ImportedFunction::operator()(const Kwargs& kwargs) const {
  return state_->call({}, kwargs);
}
std::vector<array> ImportedFunction::operator()(const Args& args, const Kwargs& kwargs) const {
  return state_->call(args, kwargs);
}

const Metadata& ImportedFunction::metadata() const { return state_->metadata; }

ImportedFunction import_function(const std::string& path) {
  return ImportedFunction(detail::read_exported(path));
}

}  // namespace braid
