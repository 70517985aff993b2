// The Load primitive's reading, shared by both backends: the bytes come from the reader into a
// host buffer; the GPU backend then copies them to the device.
#include <algorithm>
#include <stdexcept>

#include "primitives/io.h"

namespace braid {

void Load::read_into(const array& out, void* dst) const {
  const size_t bytes = out.nbytes();
  if (bytes == 0) return;
  char* p = static_cast<char*>(dst);
  try {
    reader_->read(p, bytes, offset_);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("[") + op_ + "] Cannot read " + std::to_string(bytes) +
                             " bytes at offset " + std::to_string(offset_) + " of " + reader_->label() +
                             " (" + e.what() + ").");
  }
  if (swap_ && out.dtype().size() > 1) {
    // A complex number swaps its two floats separately.
    const size_t unit = out.dtype() == complex64 ? 4 : out.dtype().size();
    for (size_t i = 0; i < bytes; i += unit) std::reverse(p + i, p + i + unit);
  }
  if (out.dtype() == bool_) {
    auto* b = reinterpret_cast<unsigned char*>(p);
    for (size_t i = 0; i < bytes; ++i) b[i] = b[i] != 0;  // only 0 and 1 are valid bools
  }
}

}  // namespace braid
