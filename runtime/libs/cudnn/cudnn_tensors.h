// What runtime/libs/cudnn/cudnn.cpp (cuDNN's classic entry points) and
// runtime/libs/cudnn/cudnn_backend.cpp (its graph API) share: a tensor's dense extent
// a handle's stream, and the check of the release loaded.
#pragma once

#if __has_include(<cudnn.h>) && __has_include(<cublas_v2.h>)
#include <cudnn.h>

#include <cstdint>

#include "runtime/libs/real_symbol.h"
#include "runtime/rtl.h"

// cuDNN fails a call it cannot make with CUDNN_STATUS_NOT_INITIALIZED; so
// does an interposer whose real function is missing (libs::call_real).
namespace xsc::libs {
template <>
struct MissingStatus<cudnnStatus_t> {
  static constexpr cudnnStatus_t kValue = CUDNN_STATUS_NOT_INITIALIZED;
  static constexpr const char* kName = "CUDNN_STATUS_NOT_INITIALIZED";
};
}  // namespace xsc::libs

namespace xsc::rt::cudnn {

// The bytes of a tensor of `rank` dims whose strides (in elements) pack it
// densely, as one run from its address: some order of its dims whose
// strides are the running products (dims of size 1 take any stride). 0
// when it is not dense, is empty, has more than CUDNN_DIM_MAX dims, or its
// type is one left out (vectorized, sub-byte, boolean, complex).
std::uint64_t dense_tensor_bytes(cudnnDataType_t type, int rank, const std::int64_t* dims,
                                 const std::int64_t* strides);

// The handle's stream, asked of the real library (cudnnGetStream); false
// when it cannot say.
bool handle_stream(cudnnHandle_t handle, StreamId* out);

// On the first call, compares the cuDNN loaded (cudnnGetVersion) with the
// headers the runtime was built with and says once when they are older
// (runtime/libs/real_symbol.h, note_loaded_release).
void check_release();

}  // namespace xsc::rt::cudnn

#endif
