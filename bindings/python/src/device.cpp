// Devices and streams: braid.core.Device, Stream, cpu/gpu, default and new streams, the
// stream(s) context manager and synchronize. Any stream may be used from any thread.
#include <memory>
#include <sstream>

#include "python.h"

namespace braid::python {

namespace {
template <typename T>
std::string repr_of(const T& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

/// `with braid.core.stream(s):` makes s (a Stream or a Device) the default of the calling
/// thread until the block ends.
class PyStreamContext {
 public:
  explicit PyStreamContext(StreamOrDevice s) : target_(std::move(s)) {}
  void enter() {
    if (context_) throw std::runtime_error("[stream] The context is already entered.");
    context_ = std::make_unique<StreamContext>(target_);
  }
  void exit() { context_.reset(); }

 private:
  StreamOrDevice target_;
  std::unique_ptr<StreamContext> context_;
};
}  // namespace

BRAID_PYTHON_INIT(kInitDevice) {
  py::enum_<Device::DeviceType> device_type(m, "DeviceType");
  device_type.value("cpu", Device::DeviceType::cpu).value("gpu", Device::DeviceType::gpu);
  // As MLX: a device type equals a Device of that type and index 0. Set as attributes (not
  // def): the enum's own __eq__ would otherwise be the first overload tried.
  auto same = [](Device::DeviceType a, py::handle b) {
    if (py::isinstance<Device::DeviceType>(b)) return a == b.cast<Device::DeviceType>();
    return py::isinstance<Device>(b) && Device(a) == b.cast<Device>();
  };
  device_type.attr("__eq__") =
      py::cpp_function([same](Device::DeviceType a, py::object b) { return same(a, b); }, py::name("__eq__"),
                       py::is_method(device_type));
  device_type.attr("__ne__") =
      py::cpp_function([same](Device::DeviceType a, py::object b) { return !same(a, b); }, py::name("__ne__"),
                       py::is_method(device_type));
  device_type.attr("__hash__") = py::cpp_function([](Device::DeviceType a) { return static_cast<int>(a); },
                                                  py::name("__hash__"), py::is_method(device_type));
  m.attr("cpu") = py::cast(Device::DeviceType::cpu);
  m.attr("gpu") = py::cast(Device::DeviceType::gpu);

  py::class_<Device>(m, "Device", "A device: its type (cpu or gpu) and index.")
      .def(py::init<Device::DeviceType, int>(), "type"_a, "index"_a = 0)
      .def_readonly("type", &Device::type)
      .def_readonly("index", &Device::index)
      .def("__repr__", [](const Device& d) { return repr_of(d); })
      .def("__eq__",
           [](const Device& a, py::object b) {
             if (py::isinstance<Device::DeviceType>(b)) return a == Device(b.cast<Device::DeviceType>());
             return py::isinstance<Device>(b) && a == b.cast<Device>();
           })
      .def("__hash__", [](const Device& d) { return static_cast<int>(d.type) * 1000003 + d.index; });
  py::implicitly_convertible<Device::DeviceType, Device>();

  py::class_<Stream>(m, "Stream", "A stream: an ordered queue of work on one device, usable from any thread.")
      .def_readonly("device", &Stream::device)
      .def_readonly("index", &Stream::index)
      .def("__repr__", [](const Stream& s) { return repr_of(s); })
      .def("__eq__",
           [](const Stream& a, py::object b) { return py::isinstance<Stream>(b) && a == b.cast<Stream>(); })
      .def("__hash__", [](const Stream& s) { return s.index * 31 + static_cast<int>(s.device.type); });
  py::class_<ThreadLocalStream, Stream>(
      m, "ThreadLocalStream",
      "A handle from new_thread_local_stream: one real stream per thread that uses it, accepted "
      "wherever a stream is.");

  m.def("default_device", &default_device, "The device ops run on when no stream is given.");
  m.def("set_default_device", &set_default_device, "device"_a, "Makes `device` the default device.");
  m.def("is_available", &is_available, "device"_a, "Whether the device can run arrays in this process.");
  m.def("device_count", &device_count, "device_type"_a,
        "How many devices of the type this process can use: 1 CPU; 1 GPU when one is usable, else 0.");
  m.def(
      "device_info",
      [](const std::optional<Device>& d) {
        py::dict out;
        for (const auto& [key, value] : device_info(d.value_or(default_device()))) {
          if (const auto* text = std::get_if<std::string>(&value)) {
            out[py::str(key)] = py::str(*text);
          } else {
            out[py::str(key)] = py::int_(std::get<size_t>(value));
          }
        }
        return out;
      },
      "d"_a = py::none(),
      "Facts about the device (the default one when omitted): device_name, architecture, memory_size, "
      "total_memory and max_recommended_working_set_size (bytes).");
  // mlx.core.cuda: braid's GPU backend is CUDA, so it is available exactly when the GPU is.
  auto cuda = m.def_submodule("cuda", "mlx.core.cuda's names: is_available.");
  cuda.def(
      "is_available", [] { return is_available(Device(Device::gpu)); },
      "Whether the CUDA backend can run arrays in this process (mx.is_available(mx.gpu)).");
  m.def("default_stream", &default_stream, "device"_a, "The default stream of a device.");
  m.def("set_default_stream", &set_default_stream, "stream"_a, "Makes `stream` the default of its device.");
  m.def("new_stream", &new_stream, "device"_a, "A new stream on `device`, usable from any thread.");
  m.def("new_thread_local_stream", &new_thread_local_stream, "device"_a,
        "A handle that stands for one stream per thread that uses it (created on first use). Arrays "
        "built through it carry the real stream, so they evaluate on any thread.");
  m.def("new_thread_unsafe_stream", &new_thread_unsafe_stream, "device"_a,
        "For MLX compatibility: an ordinary stream, already safe to use from any number of threads.");
  m.def("clear_streams", &clear_streams,
        "Lets go of the calling thread's default streams (its next default is a new stream); work "
        "already submitted still runs.");
  m.def(
      "synchronize",
      [](py::object s) {
        // A stream, a device (its default stream on this thread) or None (the default device's).
        const StreamOrDevice target = to_stream_or_device(s);
        py::gil_scoped_release release;
        if (const auto* stream = std::get_if<Stream>(&target)) {
          synchronize(*stream);
        } else if (const auto* device = std::get_if<Device>(&target)) {
          synchronize(default_stream(*device));
        } else {
          synchronize();
        }
      },
      "stream"_a = py::none(),
      "Waits until the work queued on `stream` (a stream or a device, whose default stream is meant; "
      "default: this thread's default stream) has finished.");

  py::class_<PyStreamContext>(m, "StreamContext", "The context manager that braid.core.stream returns.")
      .def(py::init([](py::object s) { return PyStreamContext(to_stream_or_device(s)); }), "s"_a)
      .def("__enter__", [](PyStreamContext& c) { c.enter(); })
      .def("__exit__", [](PyStreamContext& c, py::args) { c.exit(); });
  m.def(
      "stream", [](py::object s) { return PyStreamContext(to_stream_or_device(s)); }, "s"_a,
      "A context manager making `s` (a Stream or a Device) the default in its block, for this thread.");
}

}  // namespace braid::python
