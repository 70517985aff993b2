// NumPy's .npz archives: a zip file of .npy members, stored or deflated (zlib), as numpy.savez
// and numpy.savez_compressed write them, with the ZIP64 records that large archives need.
// The reader trusts no field: every offset and length is checked against the file's size, a
// member is read whole only after that, and inflating stops at the size the directory
// claims, which itself may not exceed what deflate's best ratio allows for the stored bytes.
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "braid/io.h"
#include "io/common.h"

namespace braid {

namespace {

constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint16_t kZip64Extra = 0x0001;
constexpr uint16_t kStored = 0, kDeflated = 8;
constexpr uint64_t kMax32 = 0xffffffffu;
constexpr uint64_t kDeflateMaxRatio = 1032;  // deflate never expands data more than this

[[noreturn]] void bad_archive(const std::string& label, const std::string& why) {
  throw std::invalid_argument("[load_npz] Invalid .npz archive " + label + ": " + why);
}

// Little-endian fields of a byte string, bounds-checked.
class Fields {
 public:
  Fields(const std::string& bytes, std::string label) : bytes_(bytes), label_(std::move(label)) {}
  template <typename T>
  T at(size_t pos) const {
    if (pos > bytes_.size() || sizeof(T) > bytes_.size() - pos) bad_archive(label_, "a record is cut short");
    T v;
    std::memcpy(&v, bytes_.data() + pos, sizeof(T));
    return v;
  }
  std::string text(size_t pos, size_t n) const {
    if (pos > bytes_.size() || n > bytes_.size() - pos) bad_archive(label_, "a name is cut short");
    return bytes_.substr(pos, n);
  }

 private:
  const std::string& bytes_;
  std::string label_;
};

std::string read_at(io::Reader& in, uint64_t offset, uint64_t n, uint64_t file_size, const std::string& what) {
  if (offset > file_size || n > file_size - offset) bad_archive(in.label(), what + " lies past the end of the file");
  std::string bytes(static_cast<size_t>(n), '\0');
  try {
    in.read(bytes.data(), bytes.size(), static_cast<size_t>(offset));
  } catch (const std::runtime_error&) {
    bad_archive(in.label(), "cannot read " + what);
  }
  return bytes;
}

// A member's bytes as a reader for the .npy parser.
class BufferReader final : public io::Reader {
 public:
  BufferReader(std::string bytes, std::string label) : bytes_(std::move(bytes)), label_(std::move(label)) {}
  bool is_open() const override { return true; }
  bool good() const override { return true; }
  size_t tell() override { return pos_; }
  void seek(int64_t offset, std::ios_base::seekdir way) override {
    const int64_t base = way == std::ios_base::beg   ? 0
                         : way == std::ios_base::cur ? static_cast<int64_t>(pos_)
                                                     : static_cast<int64_t>(bytes_.size());
    const int64_t to = base + offset;
    if (to < 0 || to > static_cast<int64_t>(bytes_.size())) throw std::runtime_error("[load_npz] seek out of range");
    pos_ = static_cast<size_t>(to);
  }
  using io::Reader::read;
  void read(char* data, size_t n) override {
    if (n > bytes_.size() - pos_) throw std::runtime_error("[load_npz] read past the end of a member");
    std::memcpy(data, bytes_.data() + pos_, n);
    pos_ += n;
  }
  std::string label() const override { return label_; }

 private:
  std::string bytes_;
  std::string label_;
  size_t pos_ = 0;
};

struct Member {
  std::string name;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0, size = 0, local_offset = 0;
};

// The ZIP64 extended-information extra field replaces the 32-bit fields that read 0xffffffff,
// in the order size, compressed size, local header offset.
void apply_zip64(Member& m, const std::string& extra, bool size32, bool comp32, bool offset32,
                 const std::string& label) {
  Fields f(extra, label);
  for (size_t pos = 0; pos + 4 <= extra.size();) {
    const uint16_t id = f.at<uint16_t>(pos);
    const uint16_t len = f.at<uint16_t>(pos + 2);
    if (id == kZip64Extra) {
      size_t p = pos + 4;
      const size_t end = p + len;
      auto next = [&]() {
        if (p + 8 > end) bad_archive(label, "a ZIP64 field is cut short");
        uint64_t v = f.at<uint64_t>(p);
        p += 8;
        return v;
      };
      if (size32) m.size = next();
      if (comp32) m.compressed = next();
      if (offset32) m.local_offset = next();
      return;
    }
    pos += 4 + size_t{len};
  }
  if (size32 || comp32 || offset32) bad_archive(label, "a member's sizes need a ZIP64 field it lacks");
}

std::vector<Member> read_directory(io::Reader& in, uint64_t file_size) {
  const std::string label = in.label();
  // The end-of-directory record is in the last 22 + 65535 bytes (its comment is at most that).
  const uint64_t tail_size = std::min<uint64_t>(file_size, 22 + 65535);
  const std::string tail = read_at(in, file_size - tail_size, tail_size, file_size, "the end of the archive");
  Fields tf(tail, label);
  size_t eocd = std::string::npos;
  for (size_t pos = tail.size() >= 22 ? tail.size() - 22 + 1 : 0; pos-- > 0;) {
    if (tf.at<uint32_t>(pos) == kEndOfDirectory) {
      eocd = pos;
      break;
    }
  }
  if (eocd == std::string::npos) bad_archive(label, "no end-of-directory record (not a zip file)");
  uint64_t entries = tf.at<uint16_t>(eocd + 10);
  uint64_t dir_size = tf.at<uint32_t>(eocd + 12);
  uint64_t dir_offset = tf.at<uint32_t>(eocd + 16);
  if (eocd >= 20 && tf.at<uint32_t>(eocd - 20) == kZip64Locator) {
    const uint64_t record_offset = tf.at<uint64_t>(eocd - 20 + 8);
    const std::string record = read_at(in, record_offset, 56, file_size, "the ZIP64 end-of-directory record");
    Fields rf(record, label);
    if (rf.at<uint32_t>(0) != kZip64EndOfDirectory) bad_archive(label, "a bad ZIP64 end-of-directory record");
    entries = rf.at<uint64_t>(32);
    dir_size = rf.at<uint64_t>(40);
    dir_offset = rf.at<uint64_t>(48);
  }
  const std::string dir = read_at(in, dir_offset, dir_size, file_size, "the central directory");
  if (entries > dir.size() / 46) bad_archive(label, "more members claimed than the directory holds");
  Fields df(dir, label);
  std::vector<Member> members;
  size_t pos = 0;
  for (uint64_t e = 0; e < entries; ++e) {
    if (df.at<uint32_t>(pos) != kCentralHeader) bad_archive(label, "a bad central directory entry");
    Member m;
    m.method = df.at<uint16_t>(pos + 10);
    m.crc = df.at<uint32_t>(pos + 16);
    m.compressed = df.at<uint32_t>(pos + 20);
    m.size = df.at<uint32_t>(pos + 24);
    const uint16_t name_len = df.at<uint16_t>(pos + 28);
    const uint16_t extra_len = df.at<uint16_t>(pos + 30);
    const uint16_t comment_len = df.at<uint16_t>(pos + 32);
    m.local_offset = df.at<uint32_t>(pos + 42);
    m.name = df.text(pos + 46, name_len);
    apply_zip64(m, df.text(pos + 46 + name_len, extra_len), m.size == kMax32, m.compressed == kMax32,
                m.local_offset == kMax32, label);
    pos += 46 + size_t{name_len} + extra_len + comment_len;
    members.push_back(std::move(m));
  }
  return members;
}

std::string inflate_member(const std::string& packed, uint64_t size, const std::string& label,
                           const std::string& name) {
  if (size > packed.size() * kDeflateMaxRatio + 1024) {
    bad_archive(label, "member " + name + " claims more bytes than deflate can produce from its data");
  }
  std::string out(static_cast<size_t>(size), '\0');
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) throw std::runtime_error("[load_npz] zlib failed to start");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  uint64_t in_left = packed.size(), out_left = out.size();
  int rc = Z_OK;
  // zlib counts in 32-bit units: feed and drain at most 1 GiB at a time.
  while (rc == Z_OK) {
    const uInt in_chunk = static_cast<uInt>(std::min<uint64_t>(in_left, 1u << 30));
    const uInt out_chunk = static_cast<uInt>(std::min<uint64_t>(out_left, 1u << 30));
    zs.avail_in = in_chunk;
    zs.avail_out = out_chunk;
    rc = inflate(&zs, Z_NO_FLUSH);
    in_left -= in_chunk - zs.avail_in;
    out_left -= out_chunk - zs.avail_out;
    if (rc == Z_OK && zs.avail_in == in_chunk && zs.avail_out == out_chunk) rc = Z_BUF_ERROR;  // no progress
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || out_left != 0) bad_archive(label, "member " + name + " does not inflate to its size");
  return out;
}

uint32_t crc_of(const std::string& bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t pos = 0; pos < bytes.size();) {
    const uInt n = static_cast<uInt>(std::min<size_t>(bytes.size() - pos, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + pos), n);
    pos += n;
  }
  return static_cast<uint32_t>(crc);
}

std::string deflate_member(const std::string& raw) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("[savez_compressed] zlib failed to start");
  }
  std::string out;
  std::string chunk(1 << 20, '\0');
  size_t pos = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    const uInt in_chunk = static_cast<uInt>(std::min<size_t>(raw.size() - pos, 1u << 30));
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data() + pos));
    zs.avail_in = in_chunk;
    const bool last = pos + in_chunk == raw.size();
    do {
      zs.next_out = reinterpret_cast<Bytef*>(chunk.data());
      zs.avail_out = static_cast<uInt>(chunk.size());
      rc = deflate(&zs, last ? Z_FINISH : Z_NO_FLUSH);
      if (rc == Z_STREAM_ERROR) {
        deflateEnd(&zs);
        throw std::runtime_error("[savez_compressed] zlib failed");
      }
      out.append(chunk.data(), chunk.size() - zs.avail_out);
    } while (zs.avail_out == 0);
    pos += in_chunk;
  }
  deflateEnd(&zs);
  return out;
}

// .npy bytes of one array, in memory.
class StringWriter final : public io::Writer {
 public:
  bool is_open() const override { return true; }
  bool good() const override { return true; }
  size_t tell() override { return bytes.size(); }
  void seek(int64_t, std::ios_base::seekdir) override { throw std::runtime_error("[savez] cannot seek"); }
  void write(const char* data, size_t n) override { bytes.append(data, n); }
  std::string label() const override { return "memory"; }
  std::string bytes;
};

using io_detail::append_le;

}  // namespace

std::unordered_map<std::string, array> load_npz(std::shared_ptr<io::Reader> in, StreamOrDevice s) {
  if (!in || !in->is_open() || !in->good()) {
    throw std::invalid_argument("[load_npz] Cannot read from " + (in ? in->label() : std::string("a null reader")) + ".");
  }
  const std::string label = in->label();
  in->seek(0, std::ios_base::end);
  const uint64_t file_size = in->tell();
  std::unordered_map<std::string, array> arrays;
  for (const Member& m : read_directory(*in, file_size)) {
    const std::string local = read_at(*in, m.local_offset, 30, file_size, "a member's header");
    Fields lf(local, label);
    if (lf.at<uint32_t>(0) != kLocalHeader) bad_archive(label, "a bad local header for " + m.name);
    const uint64_t data_offset = m.local_offset + 30 + lf.at<uint16_t>(26) + lf.at<uint16_t>(28);
    std::string data = read_at(*in, data_offset, m.compressed, file_size, "member " + m.name);
    if (m.method == kDeflated) {
      data = inflate_member(data, m.size, label, m.name);
    } else if (m.method != kStored || m.compressed != m.size) {
      bad_archive(label, "member " + m.name + " uses compression method " + std::to_string(m.method) +
                             " (only stored and deflated are read)");
    }
    if (crc_of(data) != m.crc) bad_archive(label, "member " + m.name + " fails its CRC check");
    std::string key = m.name;
    if (key.size() > 4 && io_detail::has_suffix(key, ".npy")) key.resize(key.size() - 4);
    if (arrays.count(key)) bad_archive(label, "two members are named " + key);
    try {
      arrays.emplace(key, load(std::make_shared<BufferReader>(std::move(data), label + ":" + m.name), s));
    } catch (const std::invalid_argument& e) {
      bad_archive(label, std::string("member ") + m.name + ": " + e.what());
    }
  }
  return arrays;
}

std::unordered_map<std::string, array> load_npz(const std::string& file, StreamOrDevice s) {
  return load_npz(io::file_reader(file), std::move(s));
}

void savez(std::shared_ptr<io::Writer> out, const std::unordered_map<std::string, array>& arrays, bool compressed) {
  if (!out || !out->is_open() || !out->good()) {
    throw std::invalid_argument("[savez] Cannot write to " + (out ? out->label() : std::string("a null writer")) + ".");
  }
  // Members in name order, so that equal inputs give equal files.
  std::map<std::string, const array*> ordered;
  for (const auto& [name, a] : arrays) {
    if (name.empty() || name.size() > 0xfff0) throw std::invalid_argument("[savez] Array names must be 1 to 65520 bytes.");
    ordered.emplace(name, &a);
  }
  const uint64_t start = out->tell();
  uint64_t offset = start;
  std::string directory;
  uint64_t count = 0;
  for (const auto& [name, a] : ordered) {
    StringWriter npy;
    save(std::shared_ptr<io::Writer>(&npy, [](io::Writer*) {}), *a);
    const std::string member = name + ".npy";
    const uint32_t crc = crc_of(npy.bytes);
    const uint64_t size = npy.bytes.size();
    const std::string data = compressed ? deflate_member(npy.bytes) : std::move(npy.bytes);
    const uint64_t packed = data.size();
    const bool sizes64 = size >= kMax32 || packed >= kMax32;
    const bool offset64 = offset >= kMax32;
    const uint16_t version = sizes64 || offset64 ? 45 : 20;
    const uint16_t method = compressed ? kDeflated : kStored;
    constexpr uint16_t kDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01, zip's epoch
    auto common = [&](std::string& h) {
      append_le<uint16_t>(h, version);
      append_le<uint16_t>(h, 0);  // flags
      append_le<uint16_t>(h, method);
      append_le<uint16_t>(h, 0);  // time
      append_le<uint16_t>(h, kDate);
      append_le<uint32_t>(h, crc);
      append_le<uint32_t>(h, sizes64 ? uint32_t(kMax32) : uint32_t(packed));
      append_le<uint32_t>(h, sizes64 ? uint32_t(kMax32) : uint32_t(size));
      append_le<uint16_t>(h, static_cast<uint16_t>(member.size()));
    };
    std::string local_extra, central_extra;
    if (sizes64) {
      append_le<uint16_t>(local_extra, kZip64Extra);
      append_le<uint16_t>(local_extra, 16);
      append_le<uint64_t>(local_extra, size);
      append_le<uint64_t>(local_extra, packed);
    }
    if (sizes64 || offset64) {
      append_le<uint16_t>(central_extra, kZip64Extra);
      append_le<uint16_t>(central_extra, static_cast<uint16_t>((sizes64 ? 16 : 0) + (offset64 ? 8 : 0)));
      if (sizes64) {
        append_le<uint64_t>(central_extra, size);
        append_le<uint64_t>(central_extra, packed);
      }
      if (offset64) append_le<uint64_t>(central_extra, offset);
    }
    std::string local;
    append_le<uint32_t>(local, kLocalHeader);
    common(local);
    append_le<uint16_t>(local, static_cast<uint16_t>(local_extra.size()));
    local += member + local_extra;
    out->write(local.data(), local.size());
    out->write(data.data(), data.size());

    append_le<uint32_t>(directory, kCentralHeader);
    append_le<uint16_t>(directory, version);  // made by
    common(directory);
    append_le<uint16_t>(directory, static_cast<uint16_t>(central_extra.size()));
    append_le<uint16_t>(directory, 0);  // comment
    append_le<uint16_t>(directory, 0);  // disk
    append_le<uint16_t>(directory, 0);  // internal attributes
    append_le<uint32_t>(directory, 0);  // external attributes
    append_le<uint32_t>(directory, offset64 ? uint32_t(kMax32) : uint32_t(offset));
    directory += member + central_extra;
    offset += local.size() + data.size();
    ++count;
  }
  const uint64_t dir_offset = offset;
  out->write(directory.data(), directory.size());
  std::string end;
  if (count >= 0xffff || dir_offset >= kMax32 || directory.size() >= kMax32) {
    const uint64_t record_offset = dir_offset + directory.size();
    append_le<uint32_t>(end, kZip64EndOfDirectory);
    append_le<uint64_t>(end, 44);
    append_le<uint16_t>(end, 45);
    append_le<uint16_t>(end, 45);
    append_le<uint32_t>(end, 0);
    append_le<uint32_t>(end, 0);
    append_le<uint64_t>(end, count);
    append_le<uint64_t>(end, count);
    append_le<uint64_t>(end, directory.size());
    append_le<uint64_t>(end, dir_offset);
    append_le<uint32_t>(end, kZip64Locator);
    append_le<uint32_t>(end, 0);
    append_le<uint64_t>(end, record_offset);
    append_le<uint32_t>(end, 1);
  }
  auto clamp16 = [](uint64_t v) { return static_cast<uint16_t>(std::min<uint64_t>(v, 0xffff)); };
  auto clamp32 = [](uint64_t v) { return static_cast<uint32_t>(std::min<uint64_t>(v, kMax32)); };
  append_le<uint32_t>(end, kEndOfDirectory);
  append_le<uint16_t>(end, 0);
  append_le<uint16_t>(end, 0);
  append_le<uint16_t>(end, clamp16(count));
  append_le<uint16_t>(end, clamp16(count));
  append_le<uint32_t>(end, clamp32(directory.size()));
  append_le<uint32_t>(end, clamp32(dir_offset));
  append_le<uint16_t>(end, 0);
  out->write(end.data(), end.size());
  if (!out->good()) throw std::runtime_error("[savez] Writing to " + out->label() + " failed.");
}

void savez(std::string file, const std::unordered_map<std::string, array>& arrays, bool compressed) {
  savez(io::file_writer(io_detail::with_suffix(std::move(file), ".npz")), arrays, compressed);
}

void savez_compressed(std::string file, const std::unordered_map<std::string, array>& arrays) {
  savez(std::move(file), arrays, true);
}

}  // namespace braid
