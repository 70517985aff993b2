// The primitives of an exported function: each is written as its class's name and its
// constructor arguments (never its stream), enough to rebuild it in another process. Every
// class of the family lists (src/primitives/*.h) needs a Fields line below, so a primitive
// added to a family does not compile until it says how it is exported.
#include <bit>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "export/format.h"
#include "memory/object_pool.h"
#include "primitives/fft.h"
#include "primitives/primitives.h"

namespace braid::detail {

namespace {

// How many enumerators each enum has. Unary's and Binary's ops are counted from their tables;
// the other enums carry no count, so each is its last enumerator + 1 (mind it when appending).
#define BRAID_COUNT_OP(op, Name, accepts) +1
constexpr int enumerators(Unary::Op) { return 0 BRAID_UNARY_OPS(BRAID_COUNT_OP); }
constexpr int enumerators(Binary::Op) { return 0 BRAID_BINARY_OPS(BRAID_COUNT_OP); }
#undef BRAID_COUNT_OP
template <typename Enum>
constexpr int after(Enum last) {
  return static_cast<int>(last) + 1;
}
constexpr int enumerators(Reduce::Op) { return after(Reduce::Op::any); }
constexpr int enumerators(ArgReduce::Op) { return after(ArgReduce::Op::argmax); }
constexpr int enumerators(Scan::Op) { return after(Scan::Op::logaddexp); }
constexpr int enumerators(Scatter::ReduceType) { return after(Scatter::ReduceType::None); }
constexpr int enumerators(OptimizerUpdate::Kind) { return after(OptimizerUpdate::Kind::adam); }
constexpr int enumerators(Quantize::Part) { return after(Quantize::Part::biases); }
constexpr int enumerators(QuantizationMode) { return after(QuantizationMode::nvfp4); }

/// How a constructor argument of type T is written and read back.
template <typename T>
struct Field;

template <typename Enum>
requires std::is_enum_v<Enum>
struct Field<Enum> {
  static_assert(enumerators(Enum{}) <= 256, "written as one byte");
  static void put(ByteWriter& w, Enum v) { w.u8(static_cast<uint8_t>(v)); }
  static Enum get(ByteReader& r) { return r.enumerator<Enum>(enumerators(Enum{})); }
  static StateT value(Enum v) { return static_cast<int>(v); }
};
template <>
struct Field<bool> {
  static void put(ByteWriter& w, bool v) { w.boolean(v); }
  static bool get(ByteReader& r) { return r.boolean(); }
  static StateT value(bool v) { return v; }
};
template <>
struct Field<char> {
  static void put(ByteWriter& w, char v) { w.u8(static_cast<uint8_t>(v)); }
  static char get(ByteReader& r) { return static_cast<char>(r.u8()); }
  static StateT value(char v) { return std::string(1, v); }
};
template <>
struct Field<int> {
  static void put(ByteWriter& w, int v) { w.i32(v); }
  static int get(ByteReader& r) { return r.i32(); }
  static StateT value(int v) { return v; }
};
template <>
struct Field<int64_t> {
  static void put(ByteWriter& w, int64_t v) { w.i64(v); }
  static int64_t get(ByteReader& r) { return r.i64(); }
  static StateT value(int64_t v) { return static_cast<size_t>(v); }  // offsets: never negative
};
template <>
struct Field<float> {  // its bits: a double out of float's range would not convert back
  static void put(ByteWriter& w, float v) { w.u32(std::bit_cast<uint32_t>(v)); }
  static float get(ByteReader& r) { return std::bit_cast<float>(r.u32()); }
  static StateT value(float v) { return v; }
};
template <>
struct Field<double> {
  static void put(ByteWriter& w, double v) { w.f64(v); }
  static double get(ByteReader& r) { return r.f64(); }
  static StateT value(double v) { return v; }
};
template <>
struct Field<std::vector<int>> {
  static void put(ByteWriter& w, const std::vector<int>& v) { w.ints(v); }
  static std::vector<int> get(ByteReader& r) { return r.ints(); }
  static StateT value(const std::vector<int>& v) { return v; }
};
template <>
struct Field<Shape> {
  static void put(ByteWriter& w, const Shape& v) { w.ints(v); }
  static Shape get(ByteReader& r) { return r.shape(); }
  static StateT value(const Shape& v) { return v; }
};
template <>
struct Field<Strides> {
  static void put(ByteWriter& w, const Strides& v) { w.int64s(std::vector<int64_t>(v.begin(), v.end())); }
  static Strides get(ByteReader& r) { return r.int64s(); }
  static StateT value(const Strides& v) { return v; }
};

/// Writes and reads a P whose constructor takes (stream, Getters()...): each getter is the
/// public accessor returning one argument, in the constructor's order.
template <typename P, auto... Getters>
struct Codec {
  template <auto Getter>
  using Type = std::remove_cvref_t<std::invoke_result_t<decltype(Getter), const P&>>;

  static void write(ByteWriter& w, const Primitive& primitive) {
    [[maybe_unused]] const auto& p = static_cast<const P&>(primitive);
    (Field<Type<Getters>>::put(w, (p.*Getters)()), ...);
  }
  /// The state an export callback reports: the same arguments (the output's shape and dtype
  /// are for the primitives whose MLX counterpart keeps them, below).
  static void state(std::vector<StateT>& out, const Primitive& primitive, const Shape&, Dtype) {
    [[maybe_unused]] const auto& p = static_cast<const P&>(primitive);
    (out.push_back(Field<Type<Getters>>::value((p.*Getters)())), ...);
  }
  static std::shared_ptr<Primitive> read(ByteReader& r, Stream s) {
    // Braces read the fields in order; a call's arguments have no order of evaluation.
    std::tuple<Type<Getters>...> fields{Field<Type<Getters>>::get(r)...};
    return std::apply([&](auto&... f) { return make_pooled<P>(std::move(s), std::move(f)...); }, fields);
  }
};

/// A primitive holding what a file cannot: its write throws, and no file names it.
struct NotExportable {
  static void write(ByteWriter&, const Primitive& p) {
    throw std::invalid_argument(std::string("[export_function] Unable to export primitive ") + p.name() +
                                ".");
  }
  static std::shared_ptr<Primitive> read(ByteReader&, Stream) {
    ByteReader::fail("a primitive that cannot be exported");
  }
  static void state(std::vector<StateT>&, const Primitive& p, const Shape&, Dtype) {
    ByteWriter unused;
    write(unused, p);
  }
};

/// Fields<P>: how P is exported (a Codec of its accessors, or NotExportable).
template <typename P>
struct Fields;

#define BRAID_FIELDS(P, ...) \
  template <>                \
  struct Fields<P> : Codec<P __VA_OPT__(, ) __VA_ARGS__> {};

// Where MLX has a class per element-wise op (its name says the op), the callback's state is
// MLX's: none, but a Log's base (two, ten, e).
template <>
struct Fields<Unary> : Codec<Unary, &Unary::op> {
  static void state(std::vector<StateT>& out, const Primitive& primitive, const Shape&, Dtype) {
    switch (static_cast<const Unary&>(primitive).op()) {
      case Unary::Op::log2: return out.push_back(0);
      case Unary::Op::log10: return out.push_back(1);
      case Unary::Op::log: return out.push_back(2);
      default: return;
    }
  }
};
template <>
struct Fields<Binary> : Codec<Binary, &Binary::op> {
  static void state(std::vector<StateT>&, const Primitive&, const Shape&, Dtype) {}
};
BRAID_FIELDS(Select)
BRAID_FIELDS(DivMod)
BRAID_FIELDS(StopGradient)
BRAID_FIELDS(ScaledUnary, &ScaledUnary::op)

BRAID_FIELDS(Matmul)
BRAID_FIELDS(AddMM, &AddMM::alpha, &AddMM::beta)
BRAID_FIELDS(GatherMM, &GatherMM::left_sorted, &GatherMM::right_sorted)
BRAID_FIELDS(SegmentedMM)
BRAID_FIELDS(Softmax, &Softmax::precise)
BRAID_FIELDS(Hadamard, &Hadamard::scale)

BRAID_FIELDS(Convolution, &Convolution::stride, &Convolution::padding_lo, &Convolution::padding_hi,
             &Convolution::kernel_dilation, &Convolution::input_dilation, &Convolution::groups,
             &Convolution::flip)

// AsType's dtype and Broadcast's shape are their outputs' in braid, their state in MLX.
template <>
struct Fields<AsType> : Codec<AsType> {
  static void state(std::vector<StateT>& out, const Primitive&, const Shape&, Dtype dtype) {
    out.push_back(dtype);
  }
};
BRAID_FIELDS(Full)
BRAID_FIELDS(Arange, &Arange::start, &Arange::step)
template <>
struct Fields<Broadcast> : Codec<Broadcast> {
  static void state(std::vector<StateT>& out, const Primitive&, const Shape& shape, Dtype) {
    out.push_back(shape);
  }
};
// Reshape: the shape asked for in a shapeless trace, when it has one; a file without it (one
// written before braid kept it) reads as a Reshape without one.
template <>
struct Fields<Reshape> {
  static void write(ByteWriter& w, const Primitive& primitive) {
    const auto& requested = static_cast<const Reshape&>(primitive).requested();
    if (requested) Field<Shape>::put(w, *requested);
  }
  static void state(std::vector<StateT>& out, const Primitive&, const Shape& shape, Dtype) {
    out.push_back(shape);  // MLX's Reshape keeps the shape it makes
  }
  static std::shared_ptr<Primitive> read(ByteReader& r, Stream s) {
    if (r.left() == 0) return make_pooled<Reshape>(std::move(s));
    return make_pooled<Reshape>(std::move(s), Field<Shape>::get(r));
  }
};
BRAID_FIELDS(Transpose, &Transpose::axes)
BRAID_FIELDS(Squeeze, &Squeeze::axes)
BRAID_FIELDS(ExpandDims, &ExpandDims::axes)
BRAID_FIELDS(Slice, &Slice::start, &Slice::strides)
BRAID_FIELDS(DynamicSlice, &DynamicSlice::axes)
BRAID_FIELDS(SliceUpdate, &SliceUpdate::start, &SliceUpdate::strides)
BRAID_FIELDS(DynamicSliceUpdate, &DynamicSliceUpdate::axes)
BRAID_FIELDS(Concatenate, &Concatenate::axis)
BRAID_FIELDS(Pad, &Pad::low)
BRAID_FIELDS(AsStrided, &AsStrided::strides, &AsStrided::offset)
BRAID_FIELDS(Diagonal, &Diagonal::offset, &Diagonal::axis1, &Diagonal::axis2)
BRAID_FIELDS(Copy)
BRAID_FIELDS(Contiguous, &Contiguous::allow_col_major)
BRAID_FIELDS(View)
BRAID_FIELDS(Depends)
BRAID_FIELDS(NumberOfElements, &NumberOfElements::axes, &NumberOfElements::inverted)

BRAID_FIELDS(Inverse, &Inverse::tri, &Inverse::upper)
BRAID_FIELDS(Cholesky, &Cholesky::upper)
BRAID_FIELDS(QRF)
BRAID_FIELDS(SVD, &SVD::compute_uv)
BRAID_FIELDS(Eigh, &Eigh::uplo, &Eigh::compute_vectors)
BRAID_FIELDS(Eig, &Eig::compute_vectors)
BRAID_FIELDS(LUF)
BRAID_FIELDS(Solve)
BRAID_FIELDS(SolveTriangular, &SolveTriangular::upper)

BRAID_FIELDS(RandomBits, &RandomBits::shape, &RandomBits::width)
BRAID_FIELDS(SvdSquareRoot)

BRAID_FIELDS(Reduce, &Reduce::op, &Reduce::axes)
BRAID_FIELDS(ArgReduce, &ArgReduce::op, &ArgReduce::axis)
BRAID_FIELDS(Scan, &Scan::op, &Scan::axis, &Scan::reverse, &Scan::inclusive)

BRAID_FIELDS(OptimizerUpdate, &OptimizerUpdate::kind, &OptimizerUpdate::a, &OptimizerUpdate::b,
             &OptimizerUpdate::eps, &OptimizerUpdate::has_c, &OptimizerUpdate::has_d)

BRAID_FIELDS(Quantize, &Quantize::group_size, &Quantize::bits, &Quantize::mode, &Quantize::part)
BRAID_FIELDS(Dequantize, &Dequantize::group_size, &Dequantize::bits, &Dequantize::mode)
BRAID_FIELDS(QuantizedMatmul, &QuantizedMatmul::group_size, &QuantizedMatmul::bits, &QuantizedMatmul::mode)
BRAID_FIELDS(GatherQMM, &GatherQMM::group_size, &GatherQMM::bits, &GatherQMM::mode, &GatherQMM::transpose)

BRAID_FIELDS(Gather, &Gather::axes, &Gather::slice_sizes)
BRAID_FIELDS(GatherAxis, &GatherAxis::axis)
BRAID_FIELDS(Scatter, &Scatter::reduce_type, &Scatter::axes)
BRAID_FIELDS(MaskedScatter)
BRAID_FIELDS(Sort, &Sort::axis)
BRAID_FIELDS(ArgSort, &ArgSort::axis)
BRAID_FIELDS(Partition, &Partition::kth, &Partition::axis)
BRAID_FIELDS(ArgPartition, &ArgPartition::kth, &ArgPartition::axis)

BRAID_FIELDS(FFT, &FFT::axes, &FFT::inverse, &FFT::real)
#undef BRAID_FIELDS

// Load reads through a file reader open in this process.
template <>
struct Fields<Load> : NotExportable {};

struct Entry {
  const char* tag;  // the class name: what a file stores
  const std::type_info* type;
  void (*write)(ByteWriter&, const Primitive&);
  std::shared_ptr<Primitive> (*read)(ByteReader&, Stream);
  void (*state)(std::vector<StateT>&, const Primitive&, const Shape&, Dtype);
};

// Every primitive class but CustomTransforms (it holds the user's callbacks, and is not in
// these lists), so it falls to "Unable to export".
#define BRAID_ENTRY(P) Entry{#P, &typeid(P), &Fields<P>::write, &Fields<P>::read, &Fields<P>::state},
// clang-format off
constexpr Entry kEntries[] = {
    BRAID_ELEMENTWISE_PRIMITIVES(BRAID_ENTRY)
    BRAID_ENTRY(DivMod)
    BRAID_LINALG_PRIMITIVES(BRAID_ENTRY)
    BRAID_CONV_PRIMITIVES(BRAID_ENTRY)
    BRAID_SHAPE_PRIMITIVES(BRAID_ENTRY)
    BRAID_FACTORIZATION_PRIMITIVES(BRAID_ENTRY)
    BRAID_RANDOM_PRIMITIVES(BRAID_ENTRY)
    BRAID_REDUCE_PRIMITIVES(BRAID_ENTRY)
    BRAID_OPTIMIZER_PRIMITIVES(BRAID_ENTRY)
    BRAID_QUANTIZED_PRIMITIVES(BRAID_ENTRY)
    BRAID_INDEXING_PRIMITIVES(BRAID_ENTRY)
    BRAID_IO_PRIMITIVES(BRAID_ENTRY)
    BRAID_FFT_PRIMITIVES(BRAID_ENTRY)
};
// clang-format on
#undef BRAID_ENTRY

}  // namespace

void write_primitive(ByteWriter& w, const Primitive& p) {
  for (const Entry& e : kEntries) {
    if (*e.type != typeid(p)) continue;
    // Write the fields first: a primitive that cannot be exported throws before any byte.
    ByteWriter fields;
    e.write(fields, p);
    w.str(e.tag);
    w.raw(fields.data().data(), fields.data().size());
    return;
  }
  NotExportable::write(w, p);
}

std::vector<StateT> primitive_state(const Primitive& p, const Shape& shape, Dtype dtype) {
  std::vector<StateT> out;
  for (const Entry& e : kEntries) {
    if (*e.type != typeid(p)) continue;
    e.state(out, p, shape, dtype);
    return out;
  }
  NotExportable::state(out, p, shape, dtype);
  return out;
}

size_t num_outputs(const Primitive& p) { return typeid(p) == typeid(DivMod) ? 2 : 1; }

std::shared_ptr<Primitive> read_primitive(ByteReader& r, Stream s) {
  const std::string tag = r.str();
  for (const Entry& e : kEntries) {
    if (tag == e.tag) return e.read(r, std::move(s));
  }
  ByteReader::fail("unknown primitive " + tag);
}

}  // namespace braid::detail
