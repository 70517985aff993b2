// Convolution through cuDNN: forward convolutions (no input dilation) with symmetric padding.
// MLX's layouts are channels-last, which cuDNN reads as they are: the input [N, S..., C] and
// output [N, P..., O] as NHWC tensors, the weight [O, K..., C / groups] as an NHWC filter. A
// 1-d convolution runs as a 2-d one of height 1. float32 stays exact (FMA kernels) unless
// BRAID_ALLOW_TF32=1; float16 and bfloat16 use tensor cores and accumulate in float. The
// algorithm comes from cuDNN's heuristics, once per geometry; its workspace is the stream's
// scratch buffer.
#include <cudnn.h>

#include <climits>
#include <cstdint>
#include <map>
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

cudnnHandle_t handle_of(const Stream& s) {
  return static_cast<cudnnHandle_t>(stream_handle(
      s,
      [](cudaStream_t stream) -> void* {
        cudnnHandle_t h;
        check_dnn(cudnnCreate(&h), "cudnnCreate");
        if (cudnnStatus_t st = cudnnSetStream(h, stream); st != CUDNN_STATUS_SUCCESS) {
          cudnnDestroy(h);
          check_dnn(st, "cudnnSetStream");
        }
        return h;
      },
      [](void* h) { cudnnDestroy(static_cast<cudnnHandle_t>(h)); }));
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

  const cudnnHandle_t h = handle_of(s);
  std::vector<int> key_dims;
  for (const int* v : {sh.x, sh.w, sh.y, sh.pad, sh.stride, sh.dilation}) key_dims.insert(key_dims.end(), v, v + 5);
  key_dims.push_back(static_cast<int>(g.groups));
  key_dims.push_back(g.flip);
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
  check_dnn(cudnnConvolutionForward(h, &one, x.get(), in.desc()->data_ptr, w.get(), wt.desc()->data_ptr, c.get(),
                                    algo.algo, workspace, algo.workspace, &zero, y.get(), out.desc()->data_ptr),
            "cudnnConvolutionForward");
  return true;
}

}  // namespace braid::cuda
