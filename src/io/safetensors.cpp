// Safetensors files: an 8-byte little-endian header length, a JSON header naming each
// tensor's dtype, shape and byte range, then the data. Loading checks the whole header when
// called and builds a Load node per tensor, so the data is read when an array is evaluated.
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "braid/io.h"
#include "braid/ops.h"
#include "graph/node.h"
#include "io/common.h"
#include "ops/utils.h"
#include "primitives/io.h"

namespace braid {

namespace {

using json = nlohmann::json;

// The Rust implementation's limit, which MLX shares.
constexpr uint64_t kMaxSafetensorsHeader = 100000000;
// A valid header nests three deep (header, tensor entry, shape); anything deeper is rejected
// before it costs memory.
constexpr int kMaxJsonDepth = 8;
constexpr size_t kMaxDims = 64;
constexpr char kMetadataKey[] = "__metadata__";

struct SafetensorsType {
  const char* name;
  Dtype dtype;
};

// F8_E4M3 is read as its uint8 codes and decoded to bfloat16, as MLX does.
constexpr SafetensorsType kTypes[] = {
    {"BOOL", bool_},    {"U8", uint8},    {"U16", uint16},  {"U32", uint32},    {"U64", uint64},
    {"I8", int8},       {"I16", int16},   {"I32", int32},   {"I64", int64},     {"F16", float16},
    {"BF16", bfloat16}, {"F32", float32}, {"F64", float64}, {"C64", complex64}, {"F8_E4M3", uint8},
};

const char* safetensors_type(Dtype dtype) {
  switch (dtype.val()) {
    case Dtype::Val::bool_: return "BOOL";
    case Dtype::Val::uint8: return "U8";
    case Dtype::Val::uint16: return "U16";
    case Dtype::Val::uint32: return "U32";
    case Dtype::Val::uint64: return "U64";
    case Dtype::Val::int8: return "I8";
    case Dtype::Val::int16: return "I16";
    case Dtype::Val::int32: return "I32";
    case Dtype::Val::int64: return "I64";
    case Dtype::Val::float16: return "F16";
    case Dtype::Val::bfloat16: return "BF16";
    case Dtype::Val::float32: return "F32";
    case Dtype::Val::float64: return "F64";
    case Dtype::Val::complex64: return "C64";
  }
  throw std::invalid_argument("[save_safetensors] received invalid dtype.");
}

class HeaderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void bad_header(const std::string& label, const std::string& why) {
  throw std::runtime_error("[load_safetensors] Invalid header in " + label + ": " + why);
}

json parse_header(const std::string& text, const std::string& label) {
  auto limit_depth = [](int depth, json::parse_event_t, json&) {
    if (depth > kMaxJsonDepth) throw HeaderError("the JSON nests too deeply");
    return true;
  };
  try {
    return json::parse(text, limit_depth);
  } catch (const HeaderError& e) {
    bad_header(label, e.what());
  } catch (const json::exception& e) {
    bad_header(label, std::string("not valid JSON (") + e.what() + ")");
  }
}

uint64_t unsigned_value(const json& v, const std::string& label, const std::string& what) {
  if (!v.is_number_unsigned()) bad_header(label, what + " is not a non-negative integer");
  return v.get<uint64_t>();
}

struct TensorEntry {
  std::string name;
  Dtype dtype = float32;
  bool fp8 = false;
  Shape shape;
  uint64_t begin = 0, end = 0;
};

TensorEntry parse_entry(const std::string& name, const json& v, uint64_t data_bytes,
                        const std::string& label) {
  TensorEntry t;
  t.name = name;
  const std::string where = "tensor '" + name + "'";
  if (!v.is_object()) bad_header(label, where + " is not an object");
  auto dtype = v.find("dtype");
  auto shape = v.find("shape");
  auto offsets = v.find("data_offsets");
  if (dtype == v.end() || shape == v.end() || offsets == v.end()) {
    bad_header(label, where + " lacks dtype, shape or data_offsets");
  }
  if (!dtype->is_string()) bad_header(label, where + ": dtype is not a string");
  const std::string& type_name = dtype->get_ref<const std::string&>();
  auto type =
      std::find_if(std::begin(kTypes), std::end(kTypes), [&](const auto& e) { return type_name == e.name; });
  if (type == std::end(kTypes))
    throw std::runtime_error("[load_safetensors] unsupported dtype " + type_name + " in " + label);
  t.dtype = type->dtype;
  t.fp8 = type_name == "F8_E4M3";
  if (!shape->is_array() || shape->size() > kMaxDims)
    bad_header(label, where + ": shape is not a list of at most 64 sizes");
  for (const json& d : *shape) {
    const uint64_t n = unsigned_value(d, label, where + ": a dimension");
    if (n > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
      bad_header(label, where + ": a dimension is larger than 2147483647");
    t.shape.push_back(static_cast<int32_t>(n));
  }
  if (!offsets->is_array() || offsets->size() != 2) bad_header(label, where + ": data_offsets is not a pair");
  t.begin = unsigned_value((*offsets)[0], label, where + ": a data offset");
  t.end = unsigned_value((*offsets)[1], label, where + ": a data offset");
  if (t.begin > t.end || t.end > data_bytes) {
    bad_header(label, where + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                          "] outside the " + std::to_string(data_bytes) + " data bytes");
  }
  const size_t size = detail::checked_size(t.shape, t.dtype, "load_safetensors");
  if (t.end - t.begin != size * t.dtype.size()) {
    bad_header(label, where + ": its data_offsets span " + std::to_string(t.end - t.begin) +
                          " bytes, its shape and dtype " + std::to_string(size * t.dtype.size()));
  }
  return t;
}

// Two tensors may not share bytes (the format's own rule; MLX does not check).
void check_disjoint(std::vector<const TensorEntry*> tensors, const std::string& label) {
  std::sort(tensors.begin(), tensors.end(),
            [](auto* a, auto* b) { return std::tie(a->begin, a->end) < std::tie(b->begin, b->end); });
  for (size_t i = 1; i < tensors.size(); ++i) {
    if (tensors[i]->begin < tensors[i - 1]->end) {
      bad_header(label, "tensors '" + tensors[i - 1]->name + "' and '" + tensors[i]->name + "' overlap");
    }
  }
}

}  // namespace

SafetensorsLoad load_safetensors(std::shared_ptr<io::Reader> in, StreamOrDevice s) {
  if (!in || !in->good() || !in->is_open()) {
    throw std::runtime_error("[load_safetensors] Failed to open " +
                             (in ? in->label() : std::string("a null reader")));
  }
  Stream stream = detail::op_stream(std::move(s), "load_safetensors");
  const std::string label = in->label();
  const size_t start = in->tell();
  in->seek(0, std::ios_base::end);
  const size_t file_end = in->tell();
  in->seek(static_cast<int64_t>(start), std::ios_base::beg);
  const uint64_t total = file_end >= start ? file_end - start : 0;

  unsigned char len_bytes[8] = {};
  if (total < 8) throw std::runtime_error("[load_safetensors] Invalid json header length " + label);
  in->read(reinterpret_cast<char*>(len_bytes), 8);
  uint64_t header_len = 0;
  for (int i = 0; i < 8; ++i) header_len |= static_cast<uint64_t>(len_bytes[i]) << (8 * i);
  if (header_len == 0 || header_len >= kMaxSafetensorsHeader || header_len > total - 8) {
    throw std::runtime_error("[load_safetensors] Invalid json header length " + label);
  }
  std::string text(header_len, '\0');
  in->read(text.data(), header_len);
  const json header = parse_header(text, label);
  if (!header.is_object()) throw std::runtime_error("[load_safetensors] Invalid json metadata " + label);

  const uint64_t data_bytes = total - 8 - header_len;
  std::vector<TensorEntry> tensors;
  std::unordered_map<std::string, std::string> metadata;
  for (const auto& item : header.items()) {
    if (item.key() == kMetadataKey) {
      if (item.value().is_null()) continue;  // MLX writes null when there is no metadata
      if (!item.value().is_object()) bad_header(label, "__metadata__ is not an object");
      for (const auto& m : item.value().items()) {
        if (!m.value().is_string()) bad_header(label, "metadata '" + m.key() + "' is not a string");
        metadata.emplace(m.key(), m.value().get<std::string>());
      }
      continue;
    }
    tensors.push_back(parse_entry(item.key(), item.value(), data_bytes, label));
  }
  std::vector<const TensorEntry*> nonempty;
  for (const auto& t : tensors) {
    if (t.end > t.begin) nonempty.push_back(&t);
  }
  check_disjoint(std::move(nonempty), label);

  std::unordered_map<std::string, array> arrays;
  const size_t data_start = start + 8 + header_len;
  for (const auto& t : tensors) {
    array a(t.shape, t.dtype,
            std::make_shared<Load>(stream, in, data_start + t.begin, false, "load_safetensors"), {});
    if (t.fp8) a = from_fp8(a, bfloat16, stream);
    arrays.emplace(t.name, std::move(a));
  }
  return {std::move(arrays), std::move(metadata)};
}

SafetensorsLoad load_safetensors(const std::string& file, StreamOrDevice s) {
  return load_safetensors(io::file_reader(file), std::move(s));
}

void save_safetensors(std::shared_ptr<io::Writer> out, std::unordered_map<std::string, array> arrays,
                      std::unordered_map<std::string, std::string> metadata) {
  if (!out || !out->good() || !out->is_open()) {
    throw std::runtime_error("[save_safetensors] Failed to open " +
                             (out ? out->label() : std::string("a null writer")));
  }
  if (arrays.count(kMetadataKey)) {
    throw std::invalid_argument("[save_safetensors] The name __metadata__ is reserved for the metadata.");
  }
  std::vector<std::string> names;
  std::vector<array*> pointers;
  for (auto& [name, a] : arrays) names.push_back(name);
  std::sort(names.begin(), names.end());
  for (const auto& name : names) pointers.push_back(&arrays.at(name));
  io_detail::eval_row_contiguous(pointers);

  json header = json::object();
  if (!metadata.empty()) {
    json m = json::object();
    for (const auto& [key, value] : metadata) m[key] = value;
    header[kMetadataKey] = std::move(m);
  }
  uint64_t offset = 0;
  for (const auto& name : names) {
    const array& a = arrays.at(name);
    header[name] = {{"dtype", safetensors_type(a.dtype())},
                    {"shape", std::vector<int32_t>(a.shape().begin(), a.shape().end())},
                    {"data_offsets", {offset, offset + a.nbytes()}}};
    offset += a.nbytes();
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const json::exception& e) {
    throw std::invalid_argument(
        std::string("[save_safetensors] A name or metadata string is not valid UTF-8 (") + e.what() + ").");
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned, as the Rust writer does
  std::string head;
  io_detail::append_le<uint64_t>(head, text.size());
  out->write(head.data(), head.size());
  out->write(text.data(), text.size());
  for (const auto& name : names) {
    const array& a = arrays.at(name);
    if (a.nbytes() > 0) out->write(static_cast<const char*>(a.host_data()), a.nbytes());
  }
  if (!out->good()) throw std::runtime_error("[save_safetensors] Writing to " + out->label() + " failed.");
}

void save_safetensors(std::string file, std::unordered_map<std::string, array> arrays,
                      std::unordered_map<std::string, std::string> metadata) {
  file = io_detail::with_suffix(std::move(file), ".safetensors");
  save_safetensors(io::file_writer(file), std::move(arrays), std::move(metadata));
}

}  // namespace braid
