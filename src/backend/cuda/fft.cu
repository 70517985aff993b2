// The Fourier transforms on the GPU, with cuFFT. A node runs as one-dimensional passes
// (backend/common/fft.h): each pass copies its lines into a contiguous buffer with the
// transformed axis last (unless they already are), runs one batched 1-D cuFFT plan on the
// stream, and divides by n for an inverse. Nothing synchronizes.
//
// Plans are cached per (kind, length, batch) for the process and shared by every stream. A
// cuFFT plan is not for two threads at once, so its host calls (set stream, set work area,
// execute) run under the cache's lock; the work area comes from the executing stream's own
// scratch buffer, so two streams may run one plan at the same time (PyTorch does the same).
#include <cufft.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "backend/common/fft.h"
#include "backend/cuda/copy.h"
#include "backend/cuda/cuda_utils.h"
#include "backend/cuda/kernel_utils.cuh"
#include "graph/node.h"
#include "primitives/fft.h"

namespace braid {
namespace cuda {
namespace {

using common::FftKind;

void check_cufft(cufftResult r, const char* what) {
  if (r != CUFFT_SUCCESS) {
    throw std::runtime_error(std::string("[fft] cuFFT ") + what + " failed (cufftResult " +
                             std::to_string(static_cast<int>(r)) + ").");
  }
}

cufftType type_of(FftKind kind) {
  switch (kind) {
    case FftKind::c2c: return CUFFT_C2C;
    case FftKind::r2c: return CUFFT_R2C;
    case FftKind::c2r: return CUFFT_C2R;
  }
  throw std::logic_error("[fft] unknown transform kind");
}

struct Plan {
  cufftHandle handle = 0;
  size_t work_bytes = 0;
};

// The process's plans, made on first use and deliberately never destroyed: no static
// destructor may race a stream that still runs one at exit, and a plan may still be in use
// on a stream when it would be evicted.
class PlanCache {
 public:
  static PlanCache& instance() {
    static PlanCache* cache = new PlanCache;
    return *cache;
  }

  /// Enqueues on `s` the 1-D transform of `batch` contiguous lines of n points from `in` to
  /// `out` (the basic layouts: n complex or real points in and out, n / 2 + 1 complex ones on
  /// the complex side of a real transform). Thread-safe.
  void execute(FftKind kind, int64_t n, int64_t batch, bool inverse, void* in, void* out, const Stream& s) {
    Plan plan;
    {
      std::lock_guard<std::mutex> lock(mu_);
      plan = find_or_make_locked(kind, n, batch);
    }
    // Outside the lock: growing the scratch buffer waits for the stream.
    void* work = plan.work_bytes ? scratch(s, plan.work_bytes) : nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    check_cufft(cufftSetStream(plan.handle, stream_of(s)), "cufftSetStream");
    if (work) check_cufft(cufftSetWorkArea(plan.handle, work), "cufftSetWorkArea");
    switch (kind) {
      case FftKind::c2c:
        check_cufft(cufftExecC2C(plan.handle, static_cast<cufftComplex*>(in), static_cast<cufftComplex*>(out),
                                 inverse ? CUFFT_INVERSE : CUFFT_FORWARD),
                    "cufftExecC2C");
        break;
      case FftKind::r2c:
        check_cufft(cufftExecR2C(plan.handle, static_cast<cufftReal*>(in), static_cast<cufftComplex*>(out)),
                    "cufftExecR2C");
        break;
      case FftKind::c2r:
        check_cufft(cufftExecC2R(plan.handle, static_cast<cufftComplex*>(in), static_cast<cufftReal*>(out)),
                    "cufftExecC2R");
        break;
    }
  }

 private:
  Plan find_or_make_locked(FftKind kind, int64_t n, int64_t batch) {
    const auto key = std::make_tuple(static_cast<int>(kind), n, batch);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    cufftHandle handle = 0;
    check_cufft(cufftCreate(&handle), "cufftCreate");
    long long length = n;
    size_t work = 0;
    // The work area is supplied at each execution (from the stream's scratch buffer).
    cufftResult r = cufftSetAutoAllocation(handle, 0);
    if (r == CUFFT_SUCCESS) {
      r = cufftMakePlanMany64(handle, 1, &length, nullptr, 1, 0, nullptr, 1, 0, type_of(kind),
                              static_cast<long long>(batch), &work);
    }
    if (r != CUFFT_SUCCESS) {
      cufftDestroy(handle);
      check_cufft(r, "plan");
    }
    return plans_.emplace(key, Plan{handle, work}).first->second;
  }

  std::mutex mu_;
  std::map<std::tuple<int, int64_t, int64_t>, Plan> plans_;  // guarded by mu_
};

// Device temporaries of one eval_gpu, allocated and freed in the stream's order.
class StreamTemps {
 public:
  explicit StreamTemps(cudaStream_t s) : stream_(s) {}
  StreamTemps(const StreamTemps&) = delete;
  StreamTemps& operator=(const StreamTemps&) = delete;
  ~StreamTemps() {
    for (void* p : buffers_) cudaFreeAsync(p, stream_);
  }
  void* alloc(size_t bytes) {
    void* p = nullptr;
    check(cudaMallocAsync(&p, bytes > 0 ? bytes : 16, stream_), "fft: temporary");
    buffers_.push_back(p);
    return p;
  }

 private:
  cudaStream_t stream_;
  std::vector<void*> buffers_;
};

__global__ void scale_floats(float* data, int64_t count, float scale) {
  for (int64_t i = thread_index(); i < count; i += thread_count()) data[i] *= scale;
}

// A complex-to-real transform ignores the imaginary parts of each line's zero frequency and,
// for an even n, its Nyquist one (as NumPy does); cleared here rather than left to cuFFT.
__global__ void clear_edge_imaginary(complex64* data, int64_t lines, int64_t bins, bool even) {
  for (int64_t l = thread_index(); l < lines; l += thread_count()) {
    data[l * bins].im = 0.0f;
    if (even) data[l * bins + bins - 1].im = 0.0f;
  }
}

constexpr int kBlock = 256;

}  // namespace
}  // namespace cuda

void FFT::eval_gpu(const std::vector<array>& inputs, array& out) {
  const array& in = inputs[0];
  cuda::alloc_output(out);
  if (out.size() == 0) return;
  const cudaStream_t cs = cuda::stream_of(stream());
  cuda::StreamTemps temps(cs);
  const int nd = static_cast<int>(out.ndim());

  // The data between passes: a buffer and its element strides in the logical axis order.
  void* cur = in.desc()->data_ptr;
  Shape shape = in.shape();
  Strides strides = in.strides();
  bool cur_is_input = true;
  const std::vector<common::FftPass> passes = common::fft_passes(axes_, inverse_, real_);
  for (size_t p = 0; p < passes.size(); ++p) {
    const common::FftPass pass = passes[p];
    const bool r2c = pass.kind == common::FftKind::r2c, c2r = pass.kind == common::FftKind::c2r;
    const Dtype in_dtype = r2c ? float32 : complex64;
    const Dtype out_dtype = c2r ? float32 : complex64;
    const int64_t len_in = shape[pass.axis];
    const int64_t len_out = r2c ? len_in / 2 + 1 : c2r ? out.shape(pass.axis) : len_in;
    const int64_t n = c2r ? len_out : len_in;

    // The lines, contiguous with the transformed axis last: the other axes in order, then it.
    std::vector<int> order;
    for (int d = 0; d < nd; ++d) {
      if (d != pass.axis) order.push_back(d);
    }
    order.push_back(pass.axis);
    Shape lines_shape;
    Strides lines_strides;
    for (int d : order) {
      lines_shape.push_back(shape[d]);
      lines_strides.push_back(strides[d]);
    }
    const Strides packed = detail::row_major_strides(lines_shape);
    int64_t batch = 1;
    for (size_t j = 0; j + 1 < lines_shape.size(); ++j) batch *= lines_shape[j];

    // cuFFT's complex-to-real transform overwrites its input: never the node's input.
    void* src = cur;
    if (lines_strides != packed || (c2r && cur_is_input)) {
      src = temps.alloc(static_cast<size_t>(batch * len_in) * in_dtype.size());
      cuda::copy_region(cur, in_dtype, lines_strides, src, in_dtype, packed, lines_shape, cs);
    }
    const bool src_is_ours = src != cur || !cur_is_input;
    if (c2r) {
      cuda::clear_edge_imaginary<<<cuda::grid_for(batch, cuda::kBlock), cuda::kBlock, 0, cs>>>(
          static_cast<cuda::complex64*>(src), batch, len_in, n % 2 == 0);
      cuda::check_launch("fft");
    }

    Shape result_shape = lines_shape;
    result_shape.back() = static_cast<int32_t>(len_out);
    void* dst = nullptr;
    if (p + 1 == passes.size() && pass.axis == nd - 1) {
      dst = out.desc()->data_ptr;  // the last pass writes the output in its own order
    } else if (pass.kind == common::FftKind::c2c && src_is_ours) {
      dst = src;  // in place
    } else {
      dst = temps.alloc(static_cast<size_t>(batch * len_out) * out_dtype.size());
    }

    if (n == 1) {
      // A transform of one point is the point itself (as a complex or real value).
      if (dst != src) {
        cuda::copy_region(src, in_dtype, packed, dst, out_dtype, detail::row_major_strides(result_shape),
                          result_shape, cs);
      }
    } else {
      cuda::PlanCache::instance().execute(pass.kind, n, batch, inverse_, src, dst, stream());
      if (inverse_) {
        const int64_t floats = batch * len_out * (out_dtype == complex64 ? 2 : 1);
        cuda::scale_floats<<<cuda::grid_for(floats, cuda::kBlock), cuda::kBlock, 0, cs>>>(
            static_cast<float*>(dst), floats, 1.0f / static_cast<float>(n));
        cuda::check_launch("fft");
      }
    }

    // The result in the logical axis order.
    const Strides result_strides = detail::row_major_strides(result_shape);
    shape[pass.axis] = static_cast<int32_t>(len_out);
    for (int j = 0; j < nd; ++j) strides[order[j]] = result_strides[j];
    cur = dst;
    cur_is_input = false;
  }
  if (cur != out.desc()->data_ptr) {
    cuda::copy_region(cur, out.dtype(), strides, out.desc()->data_ptr, out.dtype(),
                      detail::row_major_strides(out.shape()), out.shape(), cs);
  }
}

}  // namespace braid
