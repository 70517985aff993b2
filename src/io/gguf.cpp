// GGUF files (ggml's docs/gguf.md): "GGUF", version, tensor and metadata counts, the metadata
// key-value pairs, the tensor infos (name, GGML-order dims, type, offset), then the tensor data
// at `general.alignment` (default 32) boundaries. Every count and length is checked against
// the bytes the file holds before anything is allocated for it. Loading is eager, as MLX's.
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "braid/io.h"
#include "braid/ops.h"
#include "graph/node.h"
#include "io/common.h"
#include "io/gguf_quants.h"

namespace braid {

namespace {

constexpr char kMagic[] = "GGUF";
constexpr uint32_t kDefaultAlignment = 32;
constexpr uint32_t kMaxDims = 8;  // gguflib's GGUF_TENSOR_MAX_DIM, which MLX reads through
constexpr char kAlignmentKey[] = "general.alignment";

// Metadata value types.
enum ValueType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

// Dtypes of the numeric value types (bool and string have none here).
bool value_dtype(uint32_t type, Dtype* out) {
  switch (type) {
    case kU8: *out = uint8; return true;
    case kI8: *out = int8; return true;
    case kU16: *out = uint16; return true;
    case kI16: *out = int16; return true;
    case kU32: *out = uint32; return true;
    case kI32: *out = int32; return true;
    case kF32: *out = float32; return true;
    case kBool: *out = bool_; return true;
    case kU64: *out = uint64; return true;
    case kI64: *out = int64; return true;
    case kF64: *out = float64; return true;
    default: return false;
  }
}

// Plain (unquantized) tensor types.
enum TensorType : uint32_t {
  kTF32 = 0,
  kTF16 = 1,
  kTI8 = 24,
  kTI16 = 25,
  kTI32 = 26,
  kTI64 = 27,
  kTF64 = 28,
  kTBF16 = 30
};

bool tensor_dtype(uint32_t type, Dtype* out) {
  switch (type) {
    case kTF32: *out = float32; return true;
    case kTF16: *out = float16; return true;
    case kTI8: *out = int8; return true;
    case kTI16: *out = int16; return true;
    case kTI32: *out = int32; return true;
    case kTI64: *out = int64; return true;
    case kTF64: *out = float64; return true;
    case kTBF16: *out = bfloat16; return true;
    default: return false;
  }
}

[[noreturn]] void bad_file(const std::string& label, const std::string& why) {
  throw std::runtime_error("[load_gguf] Invalid GGUF data in " + label + ": " + why);
}

// Sequential reads bounded by the bytes the file holds.
class Cursor {
 public:
  Cursor(io::Reader& in, uint64_t size, std::string label) : in_(in), left_(size), label_(std::move(label)) {}

  uint64_t left() const { return left_; }
  uint64_t consumed() const { return consumed_; }
  const std::string& label() const { return label_; }

  void bytes(void* dst, uint64_t n, const char* what) {
    if (n > left_) bad_file(label_, std::string("truncated ") + what);
    if (n > 0) in_.read(static_cast<char*>(dst), n);
    left_ -= n;
    consumed_ += n;
  }
  template <typename T>
  T scalar(const char* what) {
    T v;
    bytes(&v, sizeof(T), what);
    return v;
  }
  std::string string(const char* what) {
    const uint64_t n = scalar<uint64_t>(what);
    if (n > left_) bad_file(label_, std::string("truncated ") + what);
    std::string s(n, '\0');
    bytes(s.data(), n, what);
    return s;
  }

 private:
  io::Reader& in_;
  uint64_t left_;
  uint64_t consumed_ = 0;
  std::string label_;
};

GGUFMetaData read_value(Cursor& c, uint32_t type) {
  Dtype dtype = uint8;
  if (type == kString) return c.string("metadata string");
  if (value_dtype(type, &dtype)) {
    void* data = nullptr;
    array a = io_detail::new_host_array({}, dtype, &data);
    c.bytes(data, dtype.size(), "metadata value");
    if (dtype == bool_) *static_cast<unsigned char*>(data) = *static_cast<unsigned char*>(data) != 0;
    return a;
  }
  if (type != kArray) throw std::runtime_error("[load_gguf] Received unexpected type.");
  const uint32_t elem = c.scalar<uint32_t>("metadata array type");
  const uint64_t n = c.scalar<uint64_t>("metadata array length");
  if (elem == kArray)
    throw std::invalid_argument("[load_gguf] Only supports loading 1-layer of nested arrays.");
  if (elem == kString) {
    if (n > c.left() / 8) bad_file(c.label(), "truncated metadata string list");  // each string is >= 8 bytes
    std::vector<std::string> strings;
    strings.reserve(n);
    for (uint64_t i = 0; i < n; ++i) strings.push_back(c.string("metadata string"));
    return strings;
  }
  if (!value_dtype(elem, &dtype)) throw std::runtime_error("[load_gguf] Received unexpected type.");
  if (n > c.left() / dtype.size()) bad_file(c.label(), "truncated metadata array");
  if (n > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
    bad_file(c.label(), "metadata array too long");
  void* data = nullptr;
  array a = io_detail::new_host_array({static_cast<int32_t>(n)}, dtype, &data);
  c.bytes(data, n * dtype.size(), "metadata array");
  if (dtype == bool_) {
    auto* b = static_cast<unsigned char*>(data);
    for (uint64_t i = 0; i < n; ++i) b[i] = b[i] != 0;
  }
  return a;
}

struct TensorInfo {
  std::string name;
  Shape shape;  // braid's order: GGML's dims reversed
  uint32_t type = 0;
  uint64_t offset = 0, bytes = 0;
};

// The tensor's size in the file; validates its shape against its type's blocks.
uint64_t tensor_bytes(const TensorInfo& t, const std::string& label) {
  Dtype dtype = float32;
  if (tensor_dtype(t.type, &dtype)) {
    return detail::checked_size(t.shape, dtype, "load_gguf") * dtype.size();
  }
  const gguf::QuantType* q = gguf::quant_type(t.type);
  if (!q) {
    throw std::runtime_error("[load_gguf] Tensor '" + t.name + "' has GGML type " + std::to_string(t.type) +
                             ", which is not supported (supported: F32, F16, BF16, F64, I8, I16, I32, I64, "
                             "Q4_0, Q4_1, Q4_K, Q8_0).");
  }
  if (t.shape.empty() || t.shape.back() % q->block_items != 0) {
    throw std::runtime_error("[load_gguf] tensor " + t.name + " has incompatible last dim shape: " +
                             (t.shape.empty() ? std::string("none") : std::to_string(t.shape.back())));
  }
  const size_t items = detail::checked_size(t.shape, uint8, "load_gguf");
  return items / q->block_items * q->block_bytes;
}

struct Header {
  std::unordered_map<std::string, GGUFMetaData> metadata;
  std::vector<TensorInfo> tensors;
  uint64_t alignment = kDefaultAlignment;
  uint64_t data_start = 0;  // from the start of the file
};

Header read_header(Cursor& c) {
  char magic[4];
  c.bytes(magic, 4, "magic");
  if (std::string(magic, 4) != kMagic) bad_file(c.label(), "not a GGUF file (bad magic)");
  const uint32_t version = c.scalar<uint32_t>("version");
  if (version != 2 && version != 3) bad_file(c.label(), "unsupported version " + std::to_string(version));
  const uint64_t n_tensors = c.scalar<uint64_t>("tensor count");
  const uint64_t n_kv = c.scalar<uint64_t>("metadata count");
  // A key-value pair takes at least 13 bytes, a tensor info at least 24.
  if (n_kv > c.left() / 13 || n_tensors > c.left() / 24) bad_file(c.label(), "counts larger than the file");

  Header h;
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = c.string("metadata key");
    const uint32_t type = c.scalar<uint32_t>("metadata type");
    GGUFMetaData value = read_value(c, type);
    if (key == kAlignmentKey) {
      const array* a = std::get_if<array>(&value);
      if (type != kU32) bad_file(c.label(), "general.alignment is not a uint32");
      const uint32_t align = array(*a).item<uint32_t>();
      if (align == 0 || (align & (align - 1)) != 0)
        bad_file(c.label(), "general.alignment is not a power of two");
      h.alignment = align;
    }
    if (!h.metadata.emplace(key, std::move(value)).second)
      bad_file(c.label(), "duplicate metadata key '" + key + "'");
  }
  for (uint64_t i = 0; i < n_tensors; ++i) {
    TensorInfo t;
    t.name = c.string("tensor name");
    const uint32_t ndim = c.scalar<uint32_t>("tensor dimension count");
    if (ndim > kMaxDims) {
      bad_file(c.label(),
               "tensor '" + t.name + "' has more than " + std::to_string(kMaxDims) + " dimensions");
    }
    t.shape.resize(ndim);
    for (uint32_t d = 0; d < ndim; ++d) {
      const uint64_t n = c.scalar<uint64_t>("tensor dimensions");
      if (n > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
        bad_file(c.label(), "tensor '" + t.name + "' has a dimension larger than 2147483647");
      }
      t.shape[ndim - 1 - d] = static_cast<int32_t>(n);
    }
    t.type = c.scalar<uint32_t>("tensor type");
    t.offset = c.scalar<uint64_t>("tensor offset");
    t.bytes = tensor_bytes(t, c.label());
    h.tensors.push_back(std::move(t));
  }
  const uint64_t end = c.consumed();
  h.data_start = (end + h.alignment - 1) / h.alignment * h.alignment;
  return h;
}

// Every tensor lies within the data section at an aligned offset, and no two share bytes.
void check_ranges(const Header& h, uint64_t data_bytes, const std::string& label) {
  std::vector<const TensorInfo*> sorted;
  for (const auto& t : h.tensors) {
    if (t.offset % h.alignment != 0) bad_file(label, "tensor '" + t.name + "' is not aligned");
    if (t.offset > data_bytes || t.bytes > data_bytes - t.offset)
      bad_file(label, "tensor '" + t.name + "' lies past the end of the file");
    if (t.bytes > 0) sorted.push_back(&t);
  }
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i]->offset < sorted[i - 1]->offset + sorted[i - 1]->bytes) {
      bad_file(label, "tensors '" + sorted[i - 1]->name + "' and '" + sorted[i]->name + "' overlap");
    }
  }
}

void insert_unique(std::unordered_map<std::string, array>& arrays, const std::string& name, array a) {
  if (!arrays.emplace(name, std::move(a)).second) {
    throw std::runtime_error("[load_gguf] Duplicate parameter name " + name +
                             " this can happen when loading quantized tensors.");
  }
}

}  // namespace

GGUFLoad io_detail::load_gguf(io::Reader& reader) {
  io::Reader* in = &reader;
  in->seek(0, std::ios_base::end);
  const uint64_t size = in->tell();
  in->seek(0, std::ios_base::beg);
  Cursor c(*in, size, in->label());
  Header h = read_header(c);
  const uint64_t data_bytes = size >= h.data_start ? size - h.data_start : 0;
  check_ranges(h, data_bytes, c.label());

  std::unordered_map<std::string, array> arrays;
  for (const auto& t : h.tensors) {
    in->seek(static_cast<int64_t>(h.data_start + t.offset), std::ios_base::beg);
    Dtype dtype = float32;
    if (tensor_dtype(t.type, &dtype)) {
      void* data = nullptr;
      array a = io_detail::new_host_array(t.shape, dtype, &data);
      if (t.bytes > 0) in->read(static_cast<char*>(data), t.bytes);
      insert_unique(arrays, t.name, std::move(a));
      continue;
    }
    std::vector<uint8_t> blocks(t.bytes);
    in->read(reinterpret_cast<char*>(blocks.data()), t.bytes);
    gguf::Quantized q = gguf::unpack(*gguf::quant_type(t.type), t.shape, blocks.data());
    constexpr std::string_view kSuffix = ".weight";
    std::string prefix = t.name;
    if (prefix.size() >= kSuffix.size() &&
        prefix.compare(prefix.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0) {
      prefix.resize(prefix.size() - kSuffix.size());
    }
    insert_unique(arrays, t.name, std::move(q.weights));
    insert_unique(arrays, prefix + ".scales", std::move(q.scales));
    insert_unique(arrays, prefix + ".biases", std::move(q.biases));
  }
  return {std::move(arrays), std::move(h.metadata)};
}

GGUFLoad load_gguf(const std::string& file, StreamOrDevice s) {
  auto in = io::file_reader(file);
  if (!in->is_open()) throw std::invalid_argument("[load_gguf] Failed to open " + file);
  return io_detail::load_gguf(*in);
}

namespace {

uint32_t tensor_type_of(const array& a, const std::string& name) {
  switch (a.dtype().val()) {
    case Dtype::Val::float32: return kTF32;
    case Dtype::Val::float16: return kTF16;
    case Dtype::Val::bfloat16: return kTBF16;
    case Dtype::Val::float64: return kTF64;
    case Dtype::Val::int8: return kTI8;
    case Dtype::Val::int16: return kTI16;
    case Dtype::Val::int32: return kTI32;
    case Dtype::Val::int64: return kTI64;
    case Dtype::Val::bool_:
    case Dtype::Val::uint8:
    case Dtype::Val::uint16:
    case Dtype::Val::uint32:
    case Dtype::Val::uint64:
    case Dtype::Val::complex64: break;
  }
  throw std::runtime_error("[save_gguf] dtype " + dtype_name(a.dtype()) + " of '" + name +
                           "' is not supported");
}

uint32_t value_type_of(Dtype dtype) {
  switch (dtype.val()) {
    case Dtype::Val::bool_: return kBool;
    case Dtype::Val::uint8: return kU8;
    case Dtype::Val::uint16: return kU16;
    case Dtype::Val::uint32: return kU32;
    case Dtype::Val::uint64: return kU64;
    case Dtype::Val::int8: return kI8;
    case Dtype::Val::int16: return kI16;
    case Dtype::Val::int32: return kI32;
    case Dtype::Val::int64: return kI64;
    case Dtype::Val::float32: return kF32;
    case Dtype::Val::float64: return kF64;
    case Dtype::Val::float16:
    case Dtype::Val::bfloat16:
    case Dtype::Val::complex64: break;
  }
  throw std::invalid_argument("[save_gguf] array type " + dtype_name(dtype) + " not supported for metadata.");
}

void append_string(std::string& out, const std::string& s) {
  io_detail::append_le<uint64_t>(out, s.size());
  out += s;
}

// One key-value pair in GGUF's encoding; arrays are evaluated and row-major by now.
void append_kv(std::string& out, const std::string& key, const GGUFMetaData& value) {
  append_string(out, key);
  if (auto* s = std::get_if<std::string>(&value)) {
    io_detail::append_le<uint32_t>(out, kString);
    append_string(out, *s);
  } else if (auto* list = std::get_if<std::vector<std::string>>(&value)) {
    io_detail::append_le<uint32_t>(out, kArray);
    io_detail::append_le<uint32_t>(out, kString);
    io_detail::append_le<uint64_t>(out, list->size());
    for (const auto& s : *list) append_string(out, s);
  } else {
    const array& a = std::get<array>(value);
    const uint32_t type = value_type_of(a.dtype());
    if (a.ndim() == 1) {
      io_detail::append_le<uint32_t>(out, kArray);
      io_detail::append_le<uint32_t>(out, type);
      io_detail::append_le<uint64_t>(out, a.size());
    } else {
      io_detail::append_le<uint32_t>(out, type);
    }
    out.append(static_cast<const char*>(a.host_data()), a.nbytes());
  }
}

}  // namespace

void save_gguf(std::string file, std::unordered_map<std::string, array> array_map,
               std::unordered_map<std::string, GGUFMetaData> meta_data) {
  file = io_detail::with_suffix(std::move(file), ".gguf");

  // Everything is checked before the file is created.
  uint64_t alignment = kDefaultAlignment;
  std::vector<std::string> keys;
  std::vector<array*> values;
  for (auto& [key, value] : meta_data) {
    keys.push_back(key);
    if (std::holds_alternative<std::monostate>(value))
      throw std::runtime_error("[save_gguf] Received unexpected type in metadata");
    auto* a = std::get_if<array>(&value);
    if (!a) continue;
    if (a->ndim() > 1)
      throw std::runtime_error("[save_gguf] Cannot save arrays with more than one dimension.");
    if (a->size() == 0) throw std::runtime_error("[save_gguf] Cannot save empty arrays.");
    value_type_of(a->dtype());
    values.push_back(a);
  }
  if (auto it = meta_data.find(kAlignmentKey); it != meta_data.end()) {
    const array* a = std::get_if<array>(&it->second);
    if (!a || a->ndim() != 0 || a->dtype() != uint32)
      throw std::invalid_argument("[save_gguf] general.alignment must be a uint32 scalar.");
    alignment = array(*a).item<uint32_t>();
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
      throw std::invalid_argument("[save_gguf] general.alignment must be a power of two.");
  }
  std::vector<std::string> names;
  for (auto& [name, a] : array_map) {
    names.push_back(name);
    tensor_type_of(a, name);
    if (a.ndim() > kMaxDims) {  // a file that load_gguf (and MLX's reader) would refuse
      throw std::invalid_argument("[save_gguf] '" + name + "' has more than " + std::to_string(kMaxDims) +
                                  " dimensions.");
    }
  }
  std::sort(keys.begin(), keys.end());
  std::sort(names.begin(), names.end());
  for (const auto& name : names) values.push_back(&array_map.at(name));
  io_detail::eval_row_contiguous(values);

  std::string head(kMagic, 4);
  io_detail::append_le<uint32_t>(head, 3);
  io_detail::append_le<uint64_t>(head, names.size());
  io_detail::append_le<uint64_t>(head, keys.size());
  for (const auto& key : keys) append_kv(head, key, meta_data.at(key));
  auto align_up = [&](uint64_t n) { return (n + alignment - 1) / alignment * alignment; };
  uint64_t offset = 0;
  for (const auto& name : names) {
    const array& a = array_map.at(name);
    append_string(head, name);
    io_detail::append_le<uint32_t>(head, static_cast<uint32_t>(a.ndim()));
    for (size_t d = a.ndim(); d-- > 0;)
      io_detail::append_le<uint64_t>(head, static_cast<uint64_t>(a.shape()[d]));
    io_detail::append_le<uint32_t>(head, tensor_type_of(a, name));
    io_detail::append_le<uint64_t>(head, offset);
    offset = align_up(offset + a.nbytes());
  }
  head.append(align_up(head.size()) - head.size(), '\0');

  auto out = io::file_writer(file);
  if (!out->is_open()) throw std::runtime_error("[save_gguf] Cannot open " + file + " for writing.");
  out->write(head.data(), head.size());
  const std::string zeros(alignment, '\0');
  for (const auto& name : names) {
    const array& a = array_map.at(name);
    if (a.nbytes() > 0) out->write(static_cast<const char*>(a.host_data()), a.nbytes());
    out->write(zeros.data(), align_up(a.nbytes()) - a.nbytes());
  }
  if (!out->good()) throw std::runtime_error("[save_gguf] Writing to " + file + " failed.");
}

}  // namespace braid
