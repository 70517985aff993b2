#include <stdexcept>

#include "braid/dtype.h"

namespace braid {

Dtype::Kind kindof(Dtype d) {
  switch (d.val) {
    case Dtype::Val::bool_: return Dtype::Kind::b;
    case Dtype::Val::uint8: return Dtype::Kind::u;
    case Dtype::Val::int32:
    case Dtype::Val::int64: return Dtype::Kind::i;
    case Dtype::Val::float16:
    case Dtype::Val::float32: return Dtype::Kind::f;
    case Dtype::Val::bfloat16: return Dtype::Kind::V;
  }
  return Dtype::Kind::f;
}

bool is_floating_point(Dtype d) {
  return d == float16 || d == bfloat16 || d == float32;
}

bool is_integral(Dtype d) { return !is_floating_point(d); }

Dtype promote_types(Dtype a, Dtype b) {
  if (a == b) return a;
  // Order of "width" within a kind; across kinds the float side wins, as in NumPy/MLX.
  auto rank = [](Dtype d) {
    switch (d.val) {
      case Dtype::Val::bool_: return 0;
      case Dtype::Val::uint8: return 1;
      case Dtype::Val::int32: return 2;
      case Dtype::Val::int64: return 3;
      case Dtype::Val::float16: return 4;
      case Dtype::Val::bfloat16: return 4;
      case Dtype::Val::float32: return 5;
    }
    return 0;
  };
  if (is_floating_point(a) && is_floating_point(b)) {
    if ((a == float16 && b == bfloat16) || (a == bfloat16 && b == float16)) return float32;
    return rank(a) > rank(b) ? a : b;
  }
  if (is_floating_point(a)) return a;
  if (is_floating_point(b)) return b;
  return rank(a) > rank(b) ? a : b;
}

std::string dtype_name(Dtype d) {
  switch (d.val) {
    case Dtype::Val::bool_: return "bool";
    case Dtype::Val::uint8: return "uint8";
    case Dtype::Val::int32: return "int32";
    case Dtype::Val::int64: return "int64";
    case Dtype::Val::float16: return "float16";
    case Dtype::Val::bfloat16: return "bfloat16";
    case Dtype::Val::float32: return "float32";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, Dtype d) { return os << dtype_name(d); }

}  // namespace braid
