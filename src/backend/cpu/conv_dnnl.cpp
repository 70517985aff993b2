// Convolution through oneDNN's direct (JIT) kernels: forward convolutions without input
// dilation, in float32 and, where this CPU has a native kernel for it, bfloat16 and float16.
// MLX's channels-last layouts are oneDNN's nwc/nhwc/ndhwc, read and written in place; the
// weight [O, K..., C / groups] is described by its strides and reordered once per call into
// the kernel's blocked layout. Flipped kernels are copied flipped first; asymmetric and
// negative padding become a window of the input with oneDNN's own (non-negative) padding.
//
// Threads. Debian's libdnnl runs its kernels on OpenMP (DNNL_CPU_RUNTIME is OMP), a second
// pool braid must not start (DESIGN.md section 3). As with BLAS, oneDNN runs single-threaded
// and braid splits the work across its own pool: the output is cut into pieces (blocks of
// samples, or of rows along the first spatial axis when there are few samples), each a
// convolution of its own, run by whichever worker claims it. The calling thread's OpenMP
// thread count is set to 1 while it creates or runs a primitive and restored afterwards,
// since the caller may be the user's own thread (OpenMP keeps that setting per thread).
//
// Creating the primitives (kernel choice, JIT code) costs about a millisecond; the plans are
// cached per geometry and dtype, a bounded process-wide cache. Scratchpads are the caller's
// (scratchpad_mode::user), so one primitive runs on several threads at once.
#include <oneapi/dnnl/dnnl.hpp>
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
#include <omp.h>
#elif DNNL_CPU_THREADING_RUNTIME != DNNL_RUNTIME_SEQ
#error "braid runs oneDNN single-threaded on its own pool: it needs oneDNN's OMP or SEQ runtime"
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "backend/cpu/conv_dnnl.h"
#include "backend/cpu/convert.h"
#include "graph/node.h"
#include "primitives/conv.h"
#include "runtime/mutex.h"
#include "runtime/pool.h"

namespace braid::cpu {
namespace {

using common::ConvGeometry;
using dnnl::memory;

// OpenMP's thread count for the calling thread is 1 while this lives (see the top).
class OneDnnlThread {
 public:
  OneDnnlThread() {
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
    saved_ = omp_get_max_threads();
    if (saved_ != 1) omp_set_num_threads(1);
#endif
  }
  ~OneDnnlThread() {
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
    if (saved_ != 1) omp_set_num_threads(saved_);
#endif
  }
  OneDnnlThread(const OneDnnlThread&) = delete;
  OneDnnlThread& operator=(const OneDnnlThread&) = delete;

 private:
  int saved_ = 1;
};

const dnnl::engine& cpu_engine() {
  static const auto* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);  // leaked: used until exit
  return *engine;
}

// The input window one piece reads along one spatial axis.
struct Window {
  int64_t begin = 0, size = 0, pad_lo = 0, pad_hi = 0;
};

// The window that output positions [a, b) along axis d read, or size 0 when they read only
// padding.
Window window_of(const ConvGeometry& g, int d, int64_t a, int64_t b) {
  const int64_t first = a * g.stride[d] - g.pad_lo[d];
  const int64_t last = (b - 1) * g.stride[d] + (g.kernel[d] - 1) * g.kernel_dilation[d] - g.pad_lo[d];
  const int64_t lo = std::max<int64_t>(0, first), hi = std::min(g.in_size[d] - 1, last);
  if (hi < lo) return {};
  return {lo, hi - lo + 1, lo - first, last - hi};
}

// One piece of the output: samples [n0, n1), positions [a, b) along the first spatial axis;
// `prim` indexes the plan's primitives.
struct Piece {
  int64_t n0 = 0, n1 = 0, a = 0, b = 0;
  int64_t in_offset = 0, out_offset = 0;  // elements
  size_t prim = 0;
};

struct Primitive {
  dnnl::convolution_forward conv;
  memory::desc src, dst;
  size_t scratch = 0;
};

struct Plan {
  memory::desc user_weights, weights;
  dnnl::reorder reorder;
  size_t reorder_scratch = 0;
  std::vector<Primitive> prims;
  std::vector<Piece> pieces;
  size_t max_scratch = 0;
};

memory::dims dims_of(int64_t n, int64_t c, const int64_t* spatial, int dims) {
  memory::dims d = {n, c};
  d.insert(d.end(), spatial, spatial + dims);
  return d;
}

// Strides of a channels-last tensor [N, S..., C] in oneDNN's dims order (N, C, S...).
memory::dims channels_last_strides(int64_t channels, const int64_t* spatial, int dims) {
  memory::dims s(static_cast<size_t>(dims) + 2);
  int64_t step = channels;
  s[1] = 1;
  for (int d = dims - 1; d >= 0; --d) {
    s[d + 2] = step;
    step *= spatial[d];
  }
  s[0] = step;
  return s;
}

bool usable(const dnnl::convolution_forward::primitive_desc& pd) {
  const char* impl = pd.impl_info_str();
  return impl && std::strncmp(impl, "ref", 3) != 0;  // the reference kernel loses to im2col
}

// Pieces: blocks of samples when there are enough samples for every worker, else each
// sample's rows cut into blocks; about four pieces per worker so they even out.
std::vector<Piece> cut(const ConvGeometry& g, int64_t workers) {
  const int64_t want = 4 * workers;
  std::vector<Piece> pieces;
  if (g.batch >= 2 * workers || g.out_size[0] == 1) {
    const int64_t block = std::max<int64_t>(1, g.batch / want);
    for (int64_t n = 0; n < g.batch; n += block)
      pieces.push_back({n, std::min(g.batch, n + block), 0, g.out_size[0]});
    return pieces;
  }
  const int64_t blocks = std::min(g.out_size[0], (want + g.batch - 1) / g.batch);
  const int64_t rows = (g.out_size[0] + blocks - 1) / blocks;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t a = 0; a < g.out_size[0]; a += rows)
      pieces.push_back({n, n + 1, a, std::min(g.out_size[0], a + rows)});
  }
  return pieces;
}

// The plan of a convolution, or null when oneDNN has only its reference kernel for it.
std::shared_ptr<const Plan> make_plan(const ConvGeometry& g, memory::data_type type, int64_t workers) {
  auto plan = std::make_shared<Plan>();
  const int dims = g.dims;
  const int64_t cg = g.group_channels(), og = g.group_out_channels();
  const memory::dims in_strides = channels_last_strides(g.channels, g.in_size, dims);
  const memory::dims out_strides = channels_last_strides(g.out_channels, g.out_size, dims);

  // The weight [O, K..., Cg] as oneDNN's (O, Cg, K...), or (G, O / G, Cg, K...) with groups.
  memory::dims wdims = {g.out_channels, cg}, wstrides = {g.kernel_positions() * cg, 1};
  int64_t step = cg;
  for (int d = dims - 1; d >= 0; --d) {
    wdims.insert(wdims.begin() + 2, g.kernel[d]);
    wstrides.insert(wstrides.begin() + 2, step);
    step *= g.kernel[d];
  }
  if (g.groups > 1) {
    wdims[0] = og;
    wdims.insert(wdims.begin(), g.groups);
    wstrides.insert(wstrides.begin(), og * wstrides[0]);
  }
  plan->user_weights = memory::desc(wdims, type, wstrides);

  memory::dims stride(dims), dilation(dims);
  for (int d = 0; d < dims; ++d) {
    stride[d] = g.stride[d];
    dilation[d] = g.kernel_dilation[d] - 1;
  }
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  std::map<std::vector<int64_t>, size_t> shapes;  // piece shape -> primitive
  plan->pieces = cut(g, workers);
  for (Piece& p : plan->pieces) {
    int64_t in_size[common::kMaxConvDims], out_size[common::kMaxConvDims];
    memory::dims pad_lo(dims), pad_hi(dims);
    p.in_offset = p.n0 * in_strides[0];
    p.out_offset = p.n0 * out_strides[0] + p.a * out_strides[2];
    for (int d = 0; d < dims; ++d) {
      const Window w = d == 0 ? window_of(g, 0, p.a, p.b) : window_of(g, d, 0, g.out_size[d]);
      if (w.size == 0) return nullptr;  // only padding: im2col writes the zeros
      in_size[d] = w.size;
      out_size[d] = d == 0 ? p.b - p.a : g.out_size[d];
      pad_lo[d] = w.pad_lo;
      pad_hi[d] = w.pad_hi;
      p.in_offset += w.begin * in_strides[d + 2];
    }
    std::vector<int64_t> key = {p.n1 - p.n0};
    key.insert(key.end(), in_size, in_size + dims);
    key.insert(key.end(), out_size, out_size + dims);
    key.insert(key.end(), pad_lo.begin(), pad_lo.end());
    const auto [it, fresh] = shapes.emplace(key, plan->prims.size());
    p.prim = it->second;
    if (!fresh) continue;
    // The window keeps the whole input's strides (only a sample's own stride is the dense one:
    // a piece of one sample never steps over samples).
    memory::dims src_strides = in_strides, dst_strides = out_strides;
    if (p.n1 - p.n0 == 1) {
      src_strides[0] = in_size[0] * in_strides[2];
      dst_strides[0] = out_size[0] * out_strides[2];
    }
    const memory::desc src(dims_of(p.n1 - p.n0, g.channels, in_size, dims), type, src_strides);
    const memory::desc dst(dims_of(p.n1 - p.n0, g.out_channels, out_size, dims), type, dst_strides);
    const memory::desc weights =
        plan->prims.empty() ? memory::desc(wdims, type, memory::format_tag::any) : plan->weights;
    const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                               dnnl::algorithm::convolution_direct, src, weights, dst, stride,
                                               dilation, pad_lo, pad_hi);
    const dnnl::convolution_forward::primitive_desc pd(desc, attr, cpu_engine(), /*allow_empty=*/true);
    if (!pd || !usable(pd)) return nullptr;
    if (plan->prims.empty()) plan->weights = pd.weights_desc();
    if (pd.weights_desc() != plan->weights) return nullptr;  // every piece reads one reordered weight
    plan->prims.push_back({dnnl::convolution_forward(pd), src, dst, pd.scratchpad_desc().get_size()});
    plan->max_scratch = std::max(plan->max_scratch, plan->prims.back().scratch);
  }
  const dnnl::reorder::primitive_desc rpd(cpu_engine(), plan->user_weights, cpu_engine(), plan->weights,
                                          attr);
  plan->reorder = dnnl::reorder(rpd);
  plan->reorder_scratch = rpd.scratchpad_desc().get_size();
  return plan;
}

// Plans by geometry, dtype and worker count, null for the cases oneDNN declines. Bounded:
// past kMaxPlans the oldest goes (a running convolution holds its own reference).
constexpr size_t kMaxPlans = 64;
using PlanKey = std::vector<int64_t>;
struct PlanCache {
  detail::Mutex mu;
  std::map<PlanKey, std::shared_ptr<const Plan>> plans GUARDED_BY(mu);
  std::deque<PlanKey> order GUARDED_BY(mu);  // insertion order, for eviction
};
PlanCache& plan_cache() {
  static auto* cache = new PlanCache();  // leaked: read until exit
  return *cache;
}

std::shared_ptr<const Plan> plan_for(const ConvGeometry& g, memory::data_type type, int64_t workers) {
  PlanKey key = {g.dims, g.batch, g.channels, g.out_channels, g.groups, static_cast<int64_t>(type), workers};
  for (int d = 0; d < g.dims; ++d) {
    key.insert(key.end(),
               {g.in_size[d], g.kernel[d], g.out_size[d], g.stride[d], g.pad_lo[d], g.kernel_dilation[d]});
  }
  PlanCache& cache = plan_cache();
  {
    detail::MutexLock lock(cache.mu);
    if (auto it = cache.plans.find(key); it != cache.plans.end()) return it->second;
  }
  std::shared_ptr<const Plan> plan;
  try {
    OneDnnlThread one;  // kernels are chosen and generated for one thread
    plan = make_plan(g, type, workers);
  } catch (const dnnl::error&) {
    plan = nullptr;  // a geometry oneDNN rejects
  }
  detail::MutexLock lock(cache.mu);
  if (cache.plans.emplace(key, plan).second) {
    cache.order.push_back(std::move(key));
    if (cache.order.size() > kMaxPlans) {
      cache.plans.erase(cache.order.front());
      cache.order.pop_front();
    }
  }
  return plan;
}

// A buffer of at least `bytes` from the caching allocator.
array byte_buffer(size_t bytes) {
  constexpr int32_t kRow = 1 << 16;
  array buffer({static_cast<int32_t>(bytes / kRow + 1), kRow}, uint8, nullptr, {});
  detail::alloc_contiguous(buffer);
  return buffer;
}

// The weight row-contiguous, and flipped along every spatial axis when `flip` is set.
array prepared_weights(const array& wt, bool flip) {
  if (!flip) return row_contiguous(wt);
  array out(wt.shape(), wt.dtype(), nullptr, {});
  detail::alloc_contiguous(out);
  Strides src_strides = wt.strides(), dst_strides(wt.ndim());
  int64_t step = 1, offset = 0;
  for (int i = static_cast<int>(wt.ndim()) - 1; i >= 0; --i) {
    dst_strides[i] = step;
    step *= wt.shape(i);
    if (i > 0 && i + 1 < static_cast<int>(wt.ndim())) {  // the spatial axes read backwards
      offset += (wt.shape(i) - 1) * src_strides[i];
      src_strides[i] = -src_strides[i];
    }
  }
  const char* src =
      static_cast<const char*>(wt.desc()->data_ptr) + offset * static_cast<int64_t>(wt.itemsize());
  copy_region(src, wt.dtype(), src_strides, out.desc()->data_ptr, out.dtype(), dst_strides, wt.shape());
  return out;
}

}  // namespace

bool dnnl_convolve(const array& in, const array& wt, array& out, const ConvGeometry& g) {
  if (conv_chunk_bytes(0) != 0) return false;  // a test drives the chunked im2col path
  memory::data_type type = memory::data_type::f32;
  if (out.dtype() == bfloat16) {
    type = memory::data_type::bf16;
  } else if (out.dtype() == float16) {
    type = memory::data_type::f16;
  } else if (out.dtype() != float32) {
    return false;
  }
  for (int d = 0; d < g.dims; ++d) {
    if (g.input_dilation[d] != 1) return false;
  }
  const int64_t workers = std::max(1, detail::WorkerPool::instance().num_workers());
  const std::shared_ptr<const Plan> plan = plan_for(g, type, workers);
  if (!plan) return false;

  const array input = row_contiguous(in);
  const array weights = prepared_weights(wt, g.flip);
  const array reordered = byte_buffer(plan->weights.get_size());
  const dnnl::engine& engine = cpu_engine();
  {
    OneDnnlThread one;
    dnnl::stream stream(engine);
    const array scratch = byte_buffer(plan->reorder_scratch);
    memory src(plan->user_weights, engine, weights.desc()->data_ptr);
    memory dst(plan->weights, engine, reordered.desc()->data_ptr);
    memory pad(memory::desc({static_cast<int64_t>(plan->reorder_scratch)}, memory::data_type::u8, {1}),
               engine, scratch.desc()->data_ptr);
    plan->reorder.execute(stream, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}, {DNNL_ARG_SCRATCHPAD, pad}});
    stream.wait();
  }
  const int64_t item = static_cast<int64_t>(out.itemsize());
  char* const in_bytes = static_cast<char*>(input.desc()->data_ptr);
  char* const out_bytes = static_cast<char*>(out.desc()->data_ptr);
  detail::parallel_for(static_cast<int64_t>(plan->pieces.size()), 1, [&](int64_t p0, int64_t p1) {
    OneDnnlThread one;
    dnnl::stream stream(engine);
    const array scratch = byte_buffer(plan->max_scratch);
    memory pad(memory::desc({static_cast<int64_t>(plan->max_scratch)}, memory::data_type::u8, {1}), engine,
               scratch.desc()->data_ptr);
    memory wts(plan->weights, engine, reordered.desc()->data_ptr);
    for (int64_t i = p0; i < p1; ++i) {
      const Piece& p = plan->pieces[static_cast<size_t>(i)];
      const Primitive& prim = plan->prims[p.prim];
      memory src(prim.src, engine, in_bytes + p.in_offset * item);
      memory dst(prim.dst, engine, out_bytes + p.out_offset * item);
      prim.conv.execute(
          stream,
          {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wts}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, pad}});
    }
    stream.wait();
  });
  return true;
}

}  // namespace braid::cpu
