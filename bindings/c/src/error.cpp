// The error boundary: the process-wide error handler and the reporting of exceptions caught at
// the C entry points; also the argument conversions shared by every family.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "handles.h"

namespace braid::capi {
namespace {

void default_handler(const char* msg, void*) {
  std::printf("MLX error: %s\n", msg);
  std::exit(-1);
}

/// One installed handler and its data; the data's deleter runs the user's dtor, once no call
/// holds this snapshot any more.
struct Handler {
  mlx_error_handler_func fn = default_handler;
  std::shared_ptr<void> data;
};

/// The installed handler, swapped whole under the lock; a report copies the snapshot and calls
/// it outside the lock, so a handler may itself report or install another handler.
class HandlerSlot {
 public:
  std::shared_ptr<const Handler> load() {
    std::lock_guard<std::mutex> lock(mutex_);
    return current_;
  }
  void store(std::shared_ptr<const Handler> h) {
    std::shared_ptr<const Handler> old;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      old = std::exchange(current_, std::move(h));
    }
    // `old` (and maybe the user's dtor) is released here, outside the lock.
  }

 private:
  std::mutex mutex_;
  std::shared_ptr<const Handler> current_ = std::make_shared<const Handler>();
};

// Deliberately never destroyed: threads may report errors while the process exits.
HandlerSlot& handler_slot() {
  static auto* slot = new HandlerSlot();
  return *slot;
}

}  // namespace

void report_error(const char* message) noexcept {
  std::shared_ptr<const Handler> h;
  try {
    h = handler_slot().load();
  } catch (...) {
  }
  if (h) {
    h->fn(message, h->data.get());
  } else {
    default_handler(message, nullptr);
  }
}

void report_current_exception() noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    report_error("[braid_c] Out of memory.");
  } catch (const std::exception& e) {
    report_error(e.what());
  } catch (...) {
    report_error("[braid_c] Unknown exception.");
  }
}

Dtype to_dtype(mlx_dtype d) {
  if (static_cast<int>(d) < static_cast<int>(MLX_BOOL) ||
      static_cast<int>(d) > static_cast<int>(MLX_COMPLEX64)) {
    throw std::invalid_argument("[braid_c] Unknown mlx_dtype " + std::to_string(static_cast<int>(d)) + ".");
  }
  return dtype_of(static_cast<Dtype::Val>(d));
}

Device::DeviceType to_device_type(mlx_device_type t) {
  switch (t) {
    case MLX_CPU: return Device::cpu;
    case MLX_GPU: return Device::gpu;
  }
  throw std::invalid_argument("[braid_c] Unknown mlx_device_type " + std::to_string(static_cast<int>(t)) +
                              ".");
}

}  // namespace braid::capi

using namespace braid::capi;

extern "C" void mlx_set_error_handler(mlx_error_handler_func handler, void* data, void (*dtor)(void*)) {
  try {
    auto h = std::make_shared<Handler>();
    if (handler != nullptr) h->fn = handler;
    if (dtor != nullptr) {
      h->data = std::shared_ptr<void>(data, dtor);
    } else {
      h->data = std::shared_ptr<void>(data, [](void*) {});
    }
    handler_slot().store(std::move(h));
  } catch (...) {
    report_current_exception();
  }
}

extern "C" void _mlx_error(const char* file, const int line, const char* fmt, ...) {
  // Formatted into a fixed buffer first, so nothing can throw between va_start and va_end.
  char text[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof(text), fmt != nullptr ? fmt : "", args);
  va_end(args);
  char located[2300];
  std::snprintf(located, sizeof(located), "%s at %s:%d", text, file != nullptr ? file : "?", line);
  report_error(located);
}
