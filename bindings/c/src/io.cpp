// File io: .npy and safetensors, from paths or from user readers and writers (a vtable over a
// user descriptor, adapted to braid's io::Reader and io::Writer).
#include "braid/c/io.h"

#include <cstdio>

#include "handles.h"

using namespace braid;
using namespace braid::capi;

namespace {

int whence_of(std::ios_base::seekdir way) {
  if (way == std::ios_base::cur) return SEEK_CUR;
  if (way == std::ios_base::end) return SEEK_END;
  return SEEK_SET;
}

/// The vtable calls shared by readers and writers.
class VtableStream {
 public:
  VtableStream(void* desc, const mlx_io_vtable& vt, const char* kind) : desc_(desc), vt_(vt) {
    if (!vt.is_open || !vt.good || !vt.tell || !vt.seek || !vt.label) {
      throw std::invalid_argument(std::string("[") + kind +
                                  "] The vtable needs is_open, good, tell, seek and label.");
    }
  }
  VtableStream(const VtableStream&) = delete;
  VtableStream& operator=(const VtableStream&) = delete;
  ~VtableStream() {
    if (vt_.free != nullptr) vt_.free(desc_);  // the descriptor's owner, as mlx-c's vtable has it
  }
  void* descriptor() const { return desc_; }

 protected:
  void* desc_;
  mlx_io_vtable vt_;
};

class VtableReader final : public io::Reader, public VtableStream {
 public:
  VtableReader(void* desc, const mlx_io_vtable& vt) : VtableStream(desc, vt, "mlx_io_reader") {
    if (!vt.read) throw std::invalid_argument("[mlx_io_reader] The vtable needs read.");
  }
  bool is_open() const override { return vt_.is_open(desc_); }
  bool good() const override { return vt_.good(desc_); }
  size_t tell() override { return vt_.tell(desc_); }
  void seek(int64_t offset, std::ios_base::seekdir way) override { vt_.seek(desc_, offset, whence_of(way)); }
  void read(char* data, size_t n) override {
    vt_.read(desc_, data, n);
    check(n);
  }
  void read(char* data, size_t n, size_t offset) override {
    if (vt_.read_at_offset == nullptr) {
      io::Reader::read(data, n, offset);  // seek + read under the reader's own lock
      return;
    }
    vt_.read_at_offset(desc_, data, n, offset);
    check(n);
  }
  std::string label() const override { return vt_.label(desc_); }

 private:
  void check(size_t n) const {
    if (!vt_.good(desc_))
      throw std::runtime_error("[mlx_io_reader] Could not read " + std::to_string(n) + " bytes from " +
                               label() + ".");
  }
};

class VtableWriter final : public io::Writer, public VtableStream {
 public:
  VtableWriter(void* desc, const mlx_io_vtable& vt) : VtableStream(desc, vt, "mlx_io_writer") {
    if (!vt.write) throw std::invalid_argument("[mlx_io_writer] The vtable needs write.");
  }
  bool is_open() const override { return vt_.is_open(desc_); }
  bool good() const override { return vt_.good(desc_); }
  size_t tell() override { return vt_.tell(desc_); }
  void seek(int64_t offset, std::ios_base::seekdir way) override { vt_.seek(desc_, offset, whence_of(way)); }
  void write(const char* data, size_t n) override {
    vt_.write(desc_, data, n);
    if (!vt_.good(desc_)) throw std::runtime_error("[mlx_io_writer] Could not write to " + label() + ".");
  }
  std::string label() const override { return vt_.label(desc_); }
};

template <typename Stream, typename Handle>
const VtableStream& vtable_stream(Handle h) {
  auto* s = dynamic_cast<const Stream*>(get(h).get());
  if (s == nullptr)
    throw std::invalid_argument(std::string("[") + HandleTraits<Handle>::name + "] Not a vtable stream.");
  return *s;
}

std::unordered_map<std::string, std::string> metadata_arg(mlx_map_string_to_string m) {
  if (m.ctx == nullptr) return {};
  return get(m);
}

}  // namespace

extern "C" mlx_io_reader mlx_io_reader_new(void* desc, mlx_io_vtable vtable) {
  return guard_value(mlx_io_reader{nullptr}, [&] {
    return make<mlx_io_reader>(std::shared_ptr<io::Reader>(std::make_shared<VtableReader>(desc, vtable)));
  });
}
extern "C" int mlx_io_reader_descriptor(void** desc_, mlx_io_reader io) {
  return guard([&] { out(desc_) = vtable_stream<VtableReader>(io).descriptor(); });
}
extern "C" int mlx_io_reader_tostring(mlx_string* str_, mlx_io_reader io) {
  return guard([&] { set(out(str_), get(io)->label()); });
}
extern "C" int mlx_io_reader_free(mlx_io_reader io) {
  release(io);
  return 0;
}
extern "C" mlx_io_writer mlx_io_writer_new(void* desc, mlx_io_vtable vtable) {
  return guard_value(mlx_io_writer{nullptr}, [&] {
    return make<mlx_io_writer>(std::shared_ptr<io::Writer>(std::make_shared<VtableWriter>(desc, vtable)));
  });
}
extern "C" int mlx_io_writer_descriptor(void** desc_, mlx_io_writer io) {
  return guard([&] { out(desc_) = vtable_stream<VtableWriter>(io).descriptor(); });
}
extern "C" int mlx_io_writer_tostring(mlx_string* str_, mlx_io_writer io) {
  return guard([&] { set(out(str_), get(io)->label()); });
}
extern "C" int mlx_io_writer_free(mlx_io_writer io) {
  release(io);
  return 0;
}

extern "C" int mlx_load_reader(mlx_array* res, mlx_io_reader in_stream, const mlx_stream s) {
  return guard([&] { set(out(res), load(get(in_stream), stream_arg(s))); });
}
extern "C" int mlx_load(mlx_array* res, const char* file, const mlx_stream s) {
  return guard([&] { set(out(res), load(string_arg(file), stream_arg(s))); });
}
extern "C" int mlx_load_safetensors_reader(mlx_map_string_to_array* res_0, mlx_map_string_to_string* res_1,
                                           mlx_io_reader in_stream, const mlx_stream s) {
  return guard([&] {
    auto [arrays, metadata] = load_safetensors(get(in_stream), stream_arg(s));
    set(out(res_0), std::move(arrays));
    set(out(res_1), std::move(metadata));
  });
}
extern "C" int mlx_load_safetensors(mlx_map_string_to_array* res_0, mlx_map_string_to_string* res_1,
                                    const char* file, const mlx_stream s) {
  return guard([&] {
    auto [arrays, metadata] = load_safetensors(string_arg(file), stream_arg(s));
    set(out(res_0), std::move(arrays));
    set(out(res_1), std::move(metadata));
  });
}
extern "C" int mlx_save_writer(mlx_io_writer out_stream, const mlx_array a) {
  return guard([&] { save(get(out_stream), get(a)); });
}
extern "C" int mlx_save(const char* file, const mlx_array a) {
  return guard([&] { save(string_arg(file), get(a)); });
}
extern "C" int mlx_save_safetensors_writer(mlx_io_writer in_stream, const mlx_map_string_to_array param,
                                           const mlx_map_string_to_string metadata) {
  return guard([&] { save_safetensors(get(in_stream), get(param), metadata_arg(metadata)); });
}
extern "C" int mlx_save_safetensors(const char* file, const mlx_map_string_to_array param,
                                    const mlx_map_string_to_string metadata) {
  return guard([&] { save_safetensors(string_arg(file), get(param), metadata_arg(metadata)); });
}
