// Convolution through cuDNN: forward convolutions (no input dilation) with symmetric padding.
// MLX's layouts are channels-last, which cuDNN reads as they are: the input [N, S..., C] and
// output [N, P..., O] as NHWC tensors, the weight [O, K..., C / groups] as an NHWC filter. A
// 1-d convolution runs as a 2-d one of height 1. float32 stays exact (FMA kernels) unless
// BRAID_ALLOW_TF32=1; float16 and bfloat16 use tensor cores and accumulate in float.
//
// On tensor cores (float16, bfloat16, and float32 where TF32 is allowed) the convolution runs
// as an execution plan of cuDNN's graph (backend) API, built once per geometry and stream from
// the first engine of cuDNN's heuristics that keeps those numerics; each call only binds the
// pointers. The legacy cudnnConvolutionForward rebuilds its plan inside every call: 72 us of
// host time per call on the H200's host for the benchmark's bfloat16 conv2d, whose kernel
// takes 40 us, against 11 us for a cached plan (benchmark figure v2: 0.123 -> 0.056 ms). Exact
// float32 keeps the legacy call with the first FMA algorithm of its heuristics: its kernels
// run long enough to hide the host's time, and the graph API's FMA engines are not yet
// measured against it. Either way the workspace is the stream's scratch buffer.
#include <cudnn.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "backend/cuda/conv_dnn.h"
#include "backend/cuda/cuda_utils.h"
#include "backend/cuda/gemm.h"
#include "primitives/conv.h"

namespace braid::cuda {
namespace {

void check_dnn(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("[conv] cuDNN ") + what + ": " + cudnnGetErrorString(status));
  }
}

// An owned cuDNN descriptor.
template <typename D, cudnnStatus_t (*Create)(D*), cudnnStatus_t (*Destroy)(D)>
class Descriptor {
 public:
  Descriptor() { check_dnn(Create(&d_), "descriptor"); }
  ~Descriptor() { Destroy(d_); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  D get() const { return d_; }

 private:
  D d_{};
};
using TensorDesc = Descriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDesc = Descriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvDesc =
    Descriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor>;

// An owned descriptor of cuDNN's backend API.
class BackendDesc {
 public:
  explicit BackendDesc(cudnnBackendDescriptorType_t type) {
    check_dnn(cudnnBackendCreateDescriptor(type, &d_), "backend descriptor");
  }
  ~BackendDesc() {
    if (d_ != nullptr) cudnnBackendDestroyDescriptor(d_);
  }
  BackendDesc(const BackendDesc&) = delete;
  BackendDesc& operator=(const BackendDesc&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }
  // Sets attribute `name`; the caller checks the result only where a refusal is expected.
  template <typename V>
  cudnnStatus_t set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
                    const V* values) {
    return cudnnBackendSetAttribute(d_, name, type, count, values);
  }
  cudnnStatus_t finalize() { return cudnnBackendFinalize(d_); }

 private:
  cudnnBackendDescriptor_t d_{};
};

// One convolution's execution plan on one stream's handle; `plan` is empty where cuDNN's graph
// API offered none, and the legacy call runs instead.
struct Plan {
  std::unique_ptr<BackendDesc> config;  // the engine config the plan was finalized from
  std::unique_ptr<BackendDesc> plan;
  size_t workspace = 0;
};

// A geometry: dims, paddings, strides, dilations (cuDNN's order), groups, flip, dtype.
using PlanKey = std::vector<int>;

// A stream's cuDNN state: its handle and the plans built on it. Used only by work the stream
// itself runs (its eval_gpu calls run one at a time, in order), so by one thread at a time.
struct DnnStream {
  cudnnHandle_t handle{};
  std::map<PlanKey, Plan> plans;
};

DnnStream& dnn_stream(const Stream& s) {
  return *static_cast<DnnStream*>(stream_handle(
      s,
      [](cudaStream_t stream) -> void* {
        cudnnHandle_t h;
        check_dnn(cudnnCreate(&h), "cudnnCreate");
        if (cudnnStatus_t st = cudnnSetStream(h, stream); st != CUDNN_STATUS_SUCCESS) {
          cudnnDestroy(h);
          check_dnn(st, "cudnnSetStream");
        }
        try {
          auto* d = new DnnStream();
          d->handle = h;
          return d;
        } catch (...) {
          cudnnDestroy(h);
          throw;
        }
      },
      [](void* p) {
        auto* d = static_cast<DnnStream*>(p);
        d->plans.clear();  // plans before the handle they were built on
        cudnnDestroy(d->handle);
        delete d;
      }));
}

// The cuDNN view of one convolution: dims in cuDNN's order (N, C, spatial...), at least two
// spatial dimensions.
struct DnnShape {
  int spatial = 0;
  int x[5] = {}, x_strides[5] = {}, w[5] = {}, y[5] = {}, y_strides[5] = {};
  int pad[3] = {}, stride[3] = {}, dilation[3] = {};
};

// Strides of a channels-last tensor with cuDNN-ordered dims `d` (N, C, S...).
void channels_last_strides(const int* d, int spatial, int* strides) {
  int64_t step = d[1];
  strides[1] = 1;
  for (int i = spatial + 1; i >= 2; --i) {
    strides[i] = static_cast<int>(step);
    step *= d[i];
  }
  strides[0] = static_cast<int>(step);
}

// Fills `sh` and returns true when cuDNN takes this convolution.
bool describe(const common::ConvGeometry& g, const std::vector<int>& pad_hi, const array& in, const array& wt,
              const array& out, DnnShape& sh) {
  if (!in.flags().row_contiguous || !wt.flags().row_contiguous) return false;
  for (const array* a : {&in, &wt, &out}) {
    if (a->size() > static_cast<size_t>(INT32_MAX)) return false;
  }
  const int pad_dims = g.dims == 1 ? 1 : 0;  // a 1-d convolution gets a leading height of 1
  sh.spatial = g.dims + pad_dims;
  sh.x[0] = static_cast<int>(g.batch);
  sh.x[1] = static_cast<int>(g.channels);
  sh.w[0] = static_cast<int>(g.out_channels);
  sh.w[1] = static_cast<int>(g.group_channels());
  sh.y[0] = static_cast<int>(g.batch);
  sh.y[1] = static_cast<int>(g.out_channels);
  for (int i = 0; i < pad_dims; ++i) {
    sh.x[2 + i] = sh.w[2 + i] = sh.y[2 + i] = 1;
    sh.pad[i] = 0;
    sh.stride[i] = sh.dilation[i] = 1;
  }
  for (int d = 0; d < g.dims; ++d) {
    if (g.input_dilation[d] != 1 || g.pad_lo[d] < 0 || g.pad_lo[d] != pad_hi[d]) return false;
    // cuDNN's output size must be ours (both paths rely on it): declined otherwise.
    const int64_t span = int64_t{g.kernel_dilation[d]} * (g.kernel[d] - 1) + 1;
    if (g.stride[d] < 1 || (g.in_size[d] + 2 * int64_t{g.pad_lo[d]} - span) / g.stride[d] + 1 != g.out_size[d]) {
      return false;
    }
    const int i = 2 + pad_dims + d;
    sh.x[i] = static_cast<int>(g.in_size[d]);
    sh.w[i] = static_cast<int>(g.kernel[d]);
    sh.y[i] = static_cast<int>(g.out_size[d]);
    sh.pad[pad_dims + d] = static_cast<int>(g.pad_lo[d]);
    sh.stride[pad_dims + d] = static_cast<int>(g.stride[d]);
    sh.dilation[pad_dims + d] = static_cast<int>(g.kernel_dilation[d]);
  }
  channels_last_strides(sh.x, sh.spatial, sh.x_strides);
  channels_last_strides(sh.y, sh.spatial, sh.y_strides);
  return true;
}

// The algorithm chosen for one convolution, by its dims, dtype and math.
using AlgoKey = std::tuple<std::vector<int>, int, int>;
struct Algo {
  bool usable = false;
  cudnnConvolutionFwdAlgo_t algo{};
  cudnnMathType_t math{};
  size_t workspace = 0;
};

// Bytes of workspace an algorithm may ask for.
constexpr size_t kMaxWorkspace = size_t{512} << 20;

// The first algorithm of cuDNN's heuristics that fits the workspace bound (and, for exact
// float32, uses FMA kernels only). A timed search (cudnnFind...) measured slower in the
// benchmark's conv2d rows on the H200 (0.57 against 0.42 ms in float32), so it is not used.
Algo choose(cudnnHandle_t h, const TensorDesc& x, const FilterDesc& w, const ConvDesc& c, const TensorDesc& y,
            bool exact_f32) {
  constexpr int kRequested = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
  cudnnConvolutionFwdAlgoPerf_t perf[kRequested];
  int returned = 0;
  check_dnn(cudnnGetConvolutionForwardAlgorithm_v7(h, x.get(), w.get(), c.get(), y.get(), kRequested, &returned, perf),
            "cudnnGetConvolutionForwardAlgorithm_v7");
  for (int i = 0; i < returned; ++i) {
    const cudnnConvolutionFwdAlgoPerf_t& p = perf[i];
    if (p.status != CUDNN_STATUS_SUCCESS || p.memory > kMaxWorkspace) continue;
    if (exact_f32 && p.mathType != CUDNN_FMA_MATH) continue;
    return {true, p.algo, p.mathType, p.memory};
  }
  return {};
}

std::mutex g_algo_mu;
std::map<AlgoKey, Algo>& algo_cache() {
  static auto* cache = new std::map<AlgoKey, Algo>();  // deliberately leaked: read until exit
  return *cache;
}

cudnnDataType_t dnn_type(Dtype t) {
  if (t == float16) return CUDNN_DATA_HALF;
  if (t == bfloat16) return CUDNN_DATA_BFLOAT16;
  return CUDNN_DATA_FLOAT;
}

// A tensor of the graph: dims and strides in cuDNN's order, 16-byte aligned data.
std::unique_ptr<BackendDesc> graph_tensor(int64_t uid, cudnnDataType_t type, int nd, const int* dims,
                                          const int* strides) {
  auto t = std::make_unique<BackendDesc>(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const std::vector<int64_t> d(dims, dims + nd), st(strides, strides + nd);
  const int64_t alignment = 16;
  bool ok = t->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type) == CUDNN_STATUS_SUCCESS &&
            t->set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, nd, d.data()) == CUDNN_STATUS_SUCCESS &&
            t->set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, nd, st.data()) == CUDNN_STATUS_SUCCESS &&
            t->set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid) == CUDNN_STATUS_SUCCESS &&
            t->set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment) == CUDNN_STATUS_SUCCESS &&
            t->finalize() == CUDNN_STATUS_SUCCESS;
  return ok ? std::move(t) : nullptr;
}

constexpr int64_t kUidX = 1, kUidW = 2, kUidY = 3;

// Whether the engine of config `cfg` keeps the numerics braid promises: accumulation in
// float32 and inputs read at their own precision (no down-converted inputs, which would
// turn TF32 float32 into float16).
bool keeps_numerics(cudnnBackendDescriptor_t cfg) {
  BackendDesc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t e = engine.get();
  int64_t got = 0;
  if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &e) !=
          CUDNN_STATUS_SUCCESS ||
      got != 1) {
    return false;
  }
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  int64_t count = 0;
  if (cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes) != CUDNN_STATUS_SUCCESS) {
    return false;
  }
  for (int64_t i = 0; i < count; ++i) {
    if (notes[i] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION ||
        notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) {
      return false;
    }
  }
  return true;
}

// The plan of cuDNN's graph API for this convolution: the first engine config of the
// heuristics (mode A, then the fallback list) that keeps the numerics, finalizes and fits the
// workspace bound. An empty plan when there is none.
Plan build_plan(cudnnHandle_t h, const DnnShape& sh, cudnnDataType_t type, bool flip) {
  const int nd = sh.spatial + 2;
  int w_strides[5] = {};
  channels_last_strides(sh.w, sh.spatial, w_strides);
  auto x = graph_tensor(kUidX, type, nd, sh.x, sh.x_strides);
  auto w = graph_tensor(kUidW, type, nd, sh.w, w_strides);
  auto y = graph_tensor(kUidY, type, nd, sh.y, sh.y_strides);
  if (!x || !w || !y) return {};
  BackendDesc conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = flip ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
  const int64_t spatial = sh.spatial;
  const std::vector<int64_t> pad(sh.pad, sh.pad + sh.spatial), stride(sh.stride, sh.stride + sh.spatial),
      dilation(sh.dilation, sh.dilation + sh.spatial);
  if (conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute) != CUDNN_STATUS_SUCCESS ||
      conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode) != CUDNN_STATUS_SUCCESS ||
      conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial) != CUDNN_STATUS_SUCCESS ||
      conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, spatial, pad.data()) != CUDNN_STATUS_SUCCESS ||
      conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, spatial, pad.data()) != CUDNN_STATUS_SUCCESS ||
      conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, spatial, stride.data()) !=
          CUDNN_STATUS_SUCCESS ||
      conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, spatial, dilation.data()) !=
          CUDNN_STATUS_SUCCESS ||
      conv.finalize() != CUDNN_STATUS_SUCCESS) {
    return {};
  }
  BackendDesc op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  const float alpha = 1.0f, beta = 0.0f;
  const cudnnBackendDescriptor_t xd = x->get(), wd = w->get(), yd = y->get(), cd = conv.get();
  if (op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &xd) !=
          CUDNN_STATUS_SUCCESS ||
      op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &wd) !=
          CUDNN_STATUS_SUCCESS ||
      op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &yd) !=
          CUDNN_STATUS_SUCCESS ||
      op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cd) !=
          CUDNN_STATUS_SUCCESS ||
      op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha) != CUDNN_STATUS_SUCCESS ||
      op.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta) != CUDNN_STATUS_SUCCESS ||
      op.finalize() != CUDNN_STATUS_SUCCESS) {
    return {};
  }
  BackendDesc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  const cudnnBackendDescriptor_t od = op.get();
  if (graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &od) != CUDNN_STATUS_SUCCESS ||
      graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h) != CUDNN_STATUS_SUCCESS ||
      graph.finalize() != CUDNN_STATUS_SUCCESS) {
    return {};
  }
  const cudnnBackendDescriptor_t gd = graph.get();
  for (cudnnBackendHeurMode_t heur_mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    BackendDesc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    if (heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &gd) !=
            CUDNN_STATUS_SUCCESS ||
        heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode) != CUDNN_STATUS_SUCCESS ||
        heur.finalize() != CUDNN_STATUS_SUCCESS) {
      continue;
    }
    int64_t count = 0;
    if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                 nullptr) != CUDNN_STATUS_SUCCESS ||
        count <= 0) {
      continue;
    }
    std::vector<std::unique_ptr<BackendDesc>> configs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < count; ++i) {
      configs.push_back(std::make_unique<BackendDesc>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
      raw.push_back(configs.back()->get());
    }
    int64_t got = 0;
    if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                 &got, raw.data()) != CUDNN_STATUS_SUCCESS) {
      continue;
    }
    for (int64_t i = 0; i < std::min(got, count); ++i) {
      if (!keeps_numerics(raw[i])) continue;
      auto plan = std::make_unique<BackendDesc>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      if (plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h) != CUDNN_STATUS_SUCCESS ||
          plan->set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw[i]) !=
              CUDNN_STATUS_SUCCESS ||
          plan->finalize() != CUDNN_STATUS_SUCCESS) {
        continue;
      }
      int64_t workspace = 0, n = 0;
      if (cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                   &workspace) != CUDNN_STATUS_SUCCESS ||
          workspace < 0 || static_cast<size_t>(workspace) > kMaxWorkspace) {
        continue;
      }
      return {std::move(configs[i]), std::move(plan), static_cast<size_t>(workspace)};
    }
  }
  return {};
}

// Enqueues `plan` on x, w, y.
void execute(cudnnHandle_t h, const Plan& plan, const void* x, const void* w, void* y, void* workspace) {
  BackendDesc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  const int64_t uids[3] = {kUidX, kUidW, kUidY};
  void* pointers[3] = {const_cast<void*>(x), const_cast<void*>(w), y};
  check_dnn(pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids), "variant pack ids");
  check_dnn(pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers), "variant pack data");
  check_dnn(pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace), "variant pack workspace");
  check_dnn(pack.finalize(), "variant pack");
  check_dnn(cudnnBackendExecute(h, plan.plan->get(), pack.get()), "cudnnBackendExecute");
}

}  // namespace

bool dnn_convolve(const array& in, const array& wt, array& out, const common::ConvGeometry& g,
                  const std::vector<int>& pad_hi, const Stream& s) {
  if (out.dtype() != float32 && out.dtype() != float16 && out.dtype() != bfloat16) return false;
  if (conv_chunk_bytes(0) != 0) return false;  // a test drives the chunked im2col path
  DnnShape sh;
  if (!describe(g, pad_hi, in, wt, out, sh)) return false;
  const int nd = sh.spatial + 2;
  const cudnnDataType_t type = dnn_type(out.dtype());
  const bool exact_f32 = out.dtype() == float32 && !tf32_allowed();
  std::vector<int> key_dims;
  for (const int* v : {sh.x, sh.w, sh.y}) key_dims.insert(key_dims.end(), v, v + 5);
  for (const int* v : {sh.pad, sh.stride, sh.dilation}) key_dims.insert(key_dims.end(), v, v + 3);
  key_dims.push_back(static_cast<int>(g.groups));
  key_dims.push_back(g.flip);

  DnnStream& ds = dnn_stream(s);
  const cudnnHandle_t h = ds.handle;
  const void* x_data = in.desc()->data_ptr;
  const void* w_data = wt.desc()->data_ptr;
  void* y_data = out.desc()->data_ptr;
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  if (!exact_f32 && aligned(x_data) && aligned(w_data) && aligned(y_data)) {
    PlanKey plan_key = key_dims;
    plan_key.push_back(static_cast<int>(type));
    auto it = ds.plans.find(plan_key);
    if (it == ds.plans.end()) {
      it = ds.plans.emplace(std::move(plan_key), build_plan(h, sh, type, g.flip)).first;
    }
    if (const Plan& plan = it->second; plan.plan) {
      execute(h, plan, x_data, w_data, y_data, plan.workspace > 0 ? scratch(s, plan.workspace) : nullptr);
      return true;
    }
  }

  TensorDesc x, y;
  FilterDesc w;
  ConvDesc c;
  check_dnn(cudnnSetTensorNdDescriptor(x.get(), type, nd, sh.x, sh.x_strides), "input descriptor");
  check_dnn(cudnnSetTensorNdDescriptor(y.get(), type, nd, sh.y, sh.y_strides), "output descriptor");
  check_dnn(cudnnSetFilterNdDescriptor(w.get(), type, CUDNN_TENSOR_NHWC, nd, sh.w), "filter descriptor");
  check_dnn(cudnnSetConvolutionNdDescriptor(c.get(), sh.spatial, sh.pad, sh.stride, sh.dilation,
                                            g.flip ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION,
                                            CUDNN_DATA_FLOAT),
            "convolution descriptor");
  check_dnn(cudnnSetConvolutionGroupCount(c.get(), static_cast<int>(g.groups)), "group count");
  check_dnn(cudnnSetConvolutionMathType(c.get(), exact_f32                ? CUDNN_FMA_MATH
                                                 : out.dtype() == float32 ? CUDNN_DEFAULT_MATH
                                                                          : CUDNN_TENSOR_OP_MATH),
            "math type");
  // cuDNN's output size must be ours (it is, for symmetric padding; anything else declines).
  int dims[5] = {};
  check_dnn(cudnnGetConvolutionNdForwardOutputDim(c.get(), x.get(), w.get(), nd, dims), "output size");
  for (int i = 0; i < nd; ++i) {
    if (dims[i] != sh.y[i]) return false;
  }

  const AlgoKey key{std::move(key_dims), static_cast<int>(type), exact_f32};
  Algo algo;
  {
    std::lock_guard<std::mutex> lock(g_algo_mu);
    auto it = algo_cache().find(key);
    if (it != algo_cache().end()) algo = it->second;
  }
  if (!algo.usable) {
    algo = choose(h, x, w, c, y, exact_f32);
    if (!algo.usable) return false;
    std::lock_guard<std::mutex> lock(g_algo_mu);
    algo_cache().emplace(key, algo);
  }
  check_dnn(cudnnSetConvolutionMathType(c.get(), algo.math), "math type");
  void* workspace = algo.workspace > 0 ? scratch(s, algo.workspace) : nullptr;
  const float one = 1.0f, zero = 0.0f;
  check_dnn(cudnnConvolutionForward(h, &one, x.get(), x_data, w.get(), w_data, c.get(), algo.algo, workspace,
                                    algo.workspace, &zero, y.get(), y_data),
            "cudnnConvolutionForward");
  return true;
}

}  // namespace braid::cuda
