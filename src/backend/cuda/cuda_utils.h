// What the CUDA kernels need from the CUDA runtime layer (src/backend/cuda/runtime.cpp).
// When a primitive's eval_gpu runs, the runtime has already made every input's data
// device-resident and made the node's CUDA stream wait for the inputs; eval_gpu only
// allocates its output and enqueues work on stream_of(stream()). It never synchronizes.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "braid/array.h"

namespace braid::cuda {

/// Throws std::runtime_error("[cuda] <what>: <CUDA's message>") unless err is success.
void check(cudaError_t err, const char* what);
void check(cublasStatus_t status, const char* what);

/// `value` for a parameter that CUDA or cuBLAS takes as a 32-bit int. Throws
/// std::invalid_argument("[op] <what> ...") when it does not fit, rather than wrapping.
int32_t checked_int32(int64_t value, const char* op, const char* what);

/// Runs small cuBLASLt products in every type and form matmul uses, so that cuBLASLt makes
/// its lazily created state (and registers its exit-time teardown) at backend start, not in a
/// worker's first product that may race the process's exit. Best effort: errors are ignored
/// (matmul reports them when it runs).
void warm_up_matmul() noexcept;

/// The CUDA stream behind a GPU braid stream.
cudaStream_t stream_of(const Stream& s);

/// Gives `out` a fresh row-contiguous device buffer of out.nbytes() from the caching device
/// allocator. The buffer is usable in the order of out's stream.
void alloc_output(array& out);
/// Lets `out` take over the device buffer of `inputs[i]` when detail::donation_allowed says
/// it may, its writes ordered after every stream that used the buffer: true. Otherwise
/// false and nothing done (allocate as usual).
bool donate(const std::vector<array>& inputs, size_t i, array& out);
/// Element-wise outputs: takes over the first input buffer `donate` allows, else allocates
/// like alloc_output. Only for kernels in which each thread reads an element of an input
/// before it writes the same element of out, and no other thread reads that element.
void alloc_output_or_donate(const std::vector<array>& inputs, array& out);

/// Properties of the (single) device, read once.
const cudaDeviceProp& device_props();

/// A device scratch buffer of at least `bytes` private to stream `s`, for temporaries of one
/// eval_gpu (partial sums, operand copies). Valid in the order of `s` until the next call of
/// scratch() on the same stream; called with the stream's submission lock held.
void* scratch(const Stream& s, size_t bytes);

/// A library handle private to stream `s` (cuDNN's, which one thread at a time may use):
/// made by `make` for the stream's CUDA stream on first use, destroyed by `destroy` with the
/// stream. Called with the stream's submission lock held; one kind of handle per stream.
void* stream_handle(const Stream& s, void* (*make)(cudaStream_t), void (*destroy)(void*));

/// Bytes of device memory held by live arrays.
size_t active_device_memory();

/// A cuBLASLt handle shared by all threads, and a workspace private to stream `s`.
cublasLtHandle_t lt_handle();
void* lt_workspace(const Stream& s, size_t* bytes);

}  // namespace braid::cuda
