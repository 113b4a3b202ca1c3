// cuDNN's batch norm and classic convolution entry points as known reads
// and writes.
//
// The runtime defines cudnnBatchNormalizationForwardTraining(Ex),
// cudnnBatchNormalizationForwardInference, cudnnBatchNormalizationBackward
// (Ex), cudnnConvolutionForward, cudnnConvolutionBackwardData,
// cudnnConvolutionBackwardFilter and cudnnAddTensor; preloaded, they shadow
// libcudnn's. Each forwards to the real function with its arguments
// untouched and returns its status untouched. After a call that succeeded
// (its kernels are enqueued by then) it feeds what the call certainly
// touched, on the handle's stream (cudnnGetStream), as operator uses named
// after the call. Outputs are blends, out = alpha * result + beta * out:
// an output is a known write (docs/rules.md), and also a read when beta is
// not 0. A known write feeds use-before-ready and write-after-read, so
// every byte claimed as written must be one the call writes, and a read
// claimed over bytes never read could meet a later known write there as a
// false write-after-read.
//
//   batch norm, training  x, bnScale, bnBias read; z read with
//                         CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION; y written;
//                         running mean and variance (when given) written,
//                         and read unless the average factor is 1, neither
//                         when it is 0 (they are left as they were);
//                         saved mean and inverse variance (when given)
//                         written
//   batch norm, inference x, bnScale, bnBias, estimated mean and variance
//                         read; y written
//   batch norm, backward  x, dy, bnScale and the saved mean and inverse
//                         variance (when given) read; dx, dBnScale and
//                         dBnBias written (the Ex form with an activation
//                         also reads y and bnBias, and writes dz with
//                         ..._ADD_ACTIVATION)
//   convolution forward   x, w read; y written
//   backward data         w, dy read; dx written
//   backward filter       x, dy read; dw written
//   cudnnAddTensor        A read; C written
//
// Extents come from the descriptors (cudnnGetTensorNdDescriptor,
// cudnnGetFilterNdDescriptor). A tensor counts whole, product(dims) *
// element size from its address, only when its strides pack it densely
// (some order of its dims whose strides are the running products; dims of
// size 1 take any stride); otherwise nothing is claimed for it, since its
// elements are interleaved with bytes the call never touches. A filter is
// packed by its format (NCHW or NHWC). A convolution's image operands (x,
// dy) and its filter (w, dw, read) count only when every element takes
// part: for each spatial dim, no dilation, a stride no larger than the
// filter, padding smaller than the filter, and windows reaching the last
// input element; otherwise they are not claimed (a stride-2 1x1
// convolution never reads odd rows). Its output counts whatever the
// geometry, as every element of it is written.
//
// Scalars are host pointers in cuDNN; per its documentation they are
// double for a double output tensor and float otherwise. Fed nothing: a
// call whose alpha (any of them) is 0 (the library may then skip the
// computation and leave its outputs alone), whose scalars or output's
// descriptor cannot be read, a call that failed, cuDNN calls made from
// inside another interposed one (one call, one feed), workspaces and
// reserve spaces (what part of them a call touches is not said).
// Nothing either when the bytes lie outside every tracked allocation.
// cudnnBackendExecute, the graph API that PyTorch's convolutions take, is
// followed in runtime/libs/cudnn/cudnn_backend.cpp: a plan cannot be walked back to
// its tensors through cudnnBackendGetAttribute (cuDNN 9.19 answers
// CUDNN_STATUS_NOT_SUPPORTED for an operation graph's operations, and an
// operation's tensors read back come with unique id -1 and dims recast to
// 5-D), so the descriptors are watched while they are built.
//
// The real functions are found the way the NCCL and cuBLAS interposers
// find theirs (runtime/libs/real_symbol.h); the uses are fed, and nested
// calls counted, with the cuBLAS interposers' pieces (runtime/libs/cublas/blas_uses.h):
// a cuBLAS call that cuDNN makes inside an interposed call is not fed on
// its own. Without cudnn.h (or the toolkit's cublas_v2.h) at build time
// this file compiles to nothing.
#if __has_include(<cudnn.h>) && __has_include(<cublas_v2.h>)
#include <cudnn.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "runtime/libs/cublas/blas_uses.h"
#include "runtime/libs/cudnn/cudnn_tensors.h"
#include "runtime/libs/real_symbol.h"
#include "runtime/rtl.h"
#include "runtime/timing.h"

#define XSC_CUDNN_EXPORT extern "C" __attribute__((visibility("default")))

namespace xsc::rt {
namespace {

using libs::call_real;
using libs::RealSymbol;

RealSymbol real_BnForwardTraining{"cudnnBatchNormalizationForwardTraining"};
RealSymbol real_BnForwardTrainingEx{"cudnnBatchNormalizationForwardTrainingEx"};
RealSymbol real_BnForwardInference{"cudnnBatchNormalizationForwardInference"};
RealSymbol real_BnBackward{"cudnnBatchNormalizationBackward"};
RealSymbol real_BnBackwardEx{"cudnnBatchNormalizationBackwardEx"};
RealSymbol real_ConvolutionForward{"cudnnConvolutionForward"};
RealSymbol real_ConvolutionBackwardData{"cudnnConvolutionBackwardData"};
RealSymbol real_ConvolutionBackwardFilter{"cudnnConvolutionBackwardFilter"};
RealSymbol real_AddTensor{"cudnnAddTensor"};
RealSymbol real_GetStream{"cudnnGetStream"};
RealSymbol real_GetVersion{"cudnnGetVersion"};
RealSymbol real_GetTensorNdDescriptor{"cudnnGetTensorNdDescriptor"};
RealSymbol real_GetFilterNdDescriptor{"cudnnGetFilterNdDescriptor"};
RealSymbol real_GetConvolutionNdDescriptor{"cudnnGetConvolutionNdDescriptor"};

// Interposed cuDNN, cuBLAS and cuBLASLt calls in progress on this thread
// share one depth: an entry point that libcudnn implements by calling
// another exported one, or a cuBLAS GEMM, is fed once, by the outer call.
using blas::OuterCall;
using blas::Touch;

bool wanted() { return enabled() && options().cudnn_access; }

// ---- descriptors ------------------------------------------------------------

// Bytes per element; 0 for the types left out (vectorized, sub-byte,
// boolean and complex types).
std::uint64_t element_size(cudnnDataType_t type) {
  switch (type) {
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_UINT8:
    case CUDNN_DATA_FP8_E4M3:
    case CUDNN_DATA_FP8_E5M2:
      return 1;
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16:
      return 2;
    case CUDNN_DATA_FLOAT:
    case CUDNN_DATA_INT32:
      return 4;
    case CUDNN_DATA_DOUBLE:
    case CUDNN_DATA_INT64:
      return 8;
    default:
      return 0;
  }
}

// No valid call spans more than 2^56 bytes; a product beyond means
// arguments the call rejected, or that this arithmetic cannot hold.
constexpr unsigned __int128 kMaxBytes = static_cast<unsigned __int128>(1) << 56;

struct Shape {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  int rank = 0;
  std::int64_t dims[CUDNN_DIM_MAX] = {};
  std::int64_t strides[CUDNN_DIM_MAX] = {};
  // The whole tensor as one run from its address; 0 when it is not dense,
  // is empty, or its type is left out.
  std::uint64_t bytes = 0;
};

// The bytes of a tensor whose strides pack its dims: taken from the
// innermost out, each dim's stride is the product of the sizes inside it.
// Dims of size 1 are skipped (their index is always 0); a zero-size dim
// makes the tensor empty.
std::uint64_t dense_bytes(const Shape& s) {
  const std::uint64_t element = element_size(s.type);
  if (element == 0 || s.rank <= 0 || s.rank > CUDNN_DIM_MAX) return 0;
  bool placed[CUDNN_DIM_MAX] = {};
  int left = 0;
  for (int i = 0; i < s.rank; ++i) {
    if (s.dims[i] <= 0) return 0;
    placed[i] = s.dims[i] == 1;
    if (!placed[i]) ++left;
  }
  // The next dim out is the one whose stride is the run so far; two of
  // size > 1 with one stride overlap, and the second then finds none.
  unsigned __int128 run = 1;
  for (; left > 0; --left) {
    int next = -1;
    for (int i = 0; i < s.rank && next < 0; ++i)
      if (!placed[i] && s.strides[i] >= 0 && static_cast<unsigned __int128>(s.strides[i]) == run)
        next = i;
    if (next < 0) return 0;
    placed[next] = true;
    run *= static_cast<unsigned __int128>(s.dims[next]);
    if (run > kMaxBytes) return 0;
  }
  const unsigned __int128 bytes = run * element;
  return bytes > kMaxBytes ? 0 : static_cast<std::uint64_t>(bytes);
}

// A tensor descriptor's type, dims and strides, asked of the real library;
// false when it cannot say.
bool tensor_shape(cudnnTensorDescriptor_t desc, Shape* out) {
  using Fn = cudnnStatus_t (*)(cudnnTensorDescriptor_t, int, cudnnDataType_t*, int*, int[], int[]);
  Fn fn = real_GetTensorNdDescriptor.get<Fn>();
  if (fn == nullptr || desc == nullptr) return false;
  int dims[CUDNN_DIM_MAX] = {}, strides[CUDNN_DIM_MAX] = {};
  int rank = 0;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  if (fn(desc, CUDNN_DIM_MAX, &type, &rank, dims, strides) != CUDNN_STATUS_SUCCESS ||
      rank <= 0 || rank > CUDNN_DIM_MAX)
    return false;
  Shape s;
  s.type = type;
  s.rank = rank;
  for (int i = 0; i < rank; ++i) {
    s.dims[i] = dims[i];
    s.strides[i] = strides[i];
  }
  s.bytes = dense_bytes(s);
  *out = s;
  return true;
}

// A filter descriptor's: no strides, its format packs it (NCHW: the dims'
// own order; NHWC: the channels innermost). The dims stay in their logical
// order (K, C, spatial...), as the convolution geometry reads them.
bool filter_shape(cudnnFilterDescriptor_t desc, Shape* out) {
  using Fn = cudnnStatus_t (*)(cudnnFilterDescriptor_t, int, cudnnDataType_t*,
                               cudnnTensorFormat_t*, int*, int[]);
  Fn fn = real_GetFilterNdDescriptor.get<Fn>();
  if (fn == nullptr || desc == nullptr) return false;
  int dims[CUDNN_DIM_MAX] = {};
  int rank = 0;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
  if (fn(desc, CUDNN_DIM_MAX, &type, &format, &rank, dims) != CUDNN_STATUS_SUCCESS ||
      rank < 3 || rank > CUDNN_DIM_MAX)
    return false;
  Shape s;
  s.type = type;
  s.rank = rank;
  for (int i = 0; i < rank; ++i) s.dims[i] = dims[i];
  if (format == CUDNN_TENSOR_NCHW || format == CUDNN_TENSOR_NHWC) {
    // Innermost first: NCHW packs the last dim first; NHWC packs C, then
    // the spatial dims from the last, then K.
    int order[CUDNN_DIM_MAX];
    int n = 0;
    if (format == CUDNN_TENSOR_NHWC) order[n++] = 1;
    for (int i = rank - 1; i >= 0; --i)
      if (format == CUDNN_TENSOR_NCHW || i != 1) order[n++] = i;
    std::int64_t stride = 1;
    for (int k = 0; k < n; ++k) {
      s.strides[order[k]] = stride;
      if (dims[order[k]] > 0) stride *= dims[order[k]];
    }
    s.bytes = dense_bytes(s);
  }
  *out = s;
  return true;
}

// ---- scalars ----------------------------------------------------------------

enum class Scalar { kZero, kOne, kOther };

// A host scalar's value class, typed by the output tensor's data type;
// false when it cannot be told.
bool classify(const void* p, cudnnDataType_t output_type, Scalar* out) {
  if (p == nullptr || element_size(output_type) == 0) return false;
  if (output_type == CUDNN_DATA_DOUBLE) {
    double v = 0;
    std::memcpy(&v, p, sizeof v);
    *out = v == 0.0 ? Scalar::kZero : v == 1.0 ? Scalar::kOne : Scalar::kOther;
  } else {
    float v = 0;
    std::memcpy(&v, p, sizeof v);
    *out = v == 0.0f ? Scalar::kZero : v == 1.0f ? Scalar::kOne : Scalar::kOther;
  }
  return true;
}

// ---- the call's uses ----------------------------------------------------------

// What one call touched: reads first, then writes, in the order fed.
class Uses {
 public:
  static constexpr int kMax = 16;

  Uses(const char* name, cudnnHandle_t handle) : name_(name), handle_(handle) {}

  void read(const void* p, std::uint64_t bytes) { add(reads_, &n_reads_, p, bytes, Access::kRead); }
  void write(const void* p, std::uint64_t bytes) {
    add(writes_, &n_writes_, p, bytes, Access::kWrite);
  }
  // An output blended with beta: read too when beta is not 0.
  void output(const void* p, std::uint64_t bytes, Scalar beta) {
    if (beta != Scalar::kZero) read(p, bytes);
    write(p, bytes);
  }
  // Nothing is fed for this call.
  void drop() { n_reads_ = n_writes_ = 0; }

  const char* name() const { return name_; }
  cudnnHandle_t handle() const { return handle_; }
  int flatten(Touch out[2 * kMax]) const {
    int n = 0;
    for (int i = 0; i < n_reads_; ++i) out[n++] = reads_[i];
    for (int i = 0; i < n_writes_; ++i) out[n++] = writes_[i];
    return n;
  }

 private:
  static void add(Touch* list, int* n, const void* p, std::uint64_t bytes, Access access) {
    if (p == nullptr || bytes == 0 || *n == kMax) return;
    list[(*n)++] = {reinterpret_cast<Addr>(p), bytes, access};
  }

  const char* name_;
  cudnnHandle_t handle_;
  Touch reads_[kMax], writes_[kMax];
  int n_reads_ = 0, n_writes_ = 0;
};

// The dense bytes of a tensor or filter; 0 when there are none to claim.
std::uint64_t tensor_bytes(cudnnTensorDescriptor_t desc) {
  Shape s;
  return tensor_shape(desc, &s) ? s.bytes : 0;
}

// Reads alpha and beta, typed by the output tensor. False (nothing is fed)
// when either cannot be read or alpha is 0.
bool blend(const void* alpha, const void* beta, cudnnDataType_t output_type, Scalar* beta_out) {
  Scalar a = Scalar::kOther;
  return classify(alpha, output_type, &a) && a != Scalar::kZero &&
         classify(beta, output_type, beta_out);
}

// The handle's stream, asked of the real library; false when it cannot say.
bool handle_stream(cudnnHandle_t handle, StreamId* out) {
  cudnn::check_release();
  using Fn = cudnnStatus_t (*)(cudnnHandle_t, cudaStream_t*);
  Fn fn = real_GetStream.get<Fn>();
  cudaStream_t stream = nullptr;
  if (fn == nullptr || fn(handle, &stream) != CUDNN_STATUS_SUCCESS) return false;
  *out = resolve(reinterpret_cast<std::uint64_t>(stream), /*per_thread_default=*/false);
  return true;
}

void feed(const Uses& uses) {
  Touch t[2 * Uses::kMax];
  const int n = uses.flatten(t);
  StreamId stream = kLegacyStream;
  if (n == 0 || !handle_stream(uses.handle(), &stream)) return;
  feed_operator_uses(uses.name(), stream, t, n);
}

// Calls the real entry point with the arguments unchanged. When checking,
// feeds what `describe()` says the call touched, once the outermost
// interposed call has succeeded (its kernels are enqueued by then).
template <typename Fn, typename Describe, typename... Args>
cudnnStatus_t interpose(RealSymbol& real, Describe describe, Args... args) {
  if (!wanted()) return call_real<Fn>(real, args...);
  const OuterCall call;
  const cudnnStatus_t status = call_real<Fn>(real, args...);
  if (status == CUDNN_STATUS_SUCCESS && call.outer()) {
    const PartScope part(Part::kInterposers);
    feed(describe());
  }
  return status;
}

// ---- batch norm -------------------------------------------------------------

struct BnForward {
  const char* name;
  cudnnHandle_t handle;
  cudnnBatchNormOps_t ops;
  const void *alpha, *beta;
  cudnnTensorDescriptor_t x_desc;
  const void* x;
  cudnnTensorDescriptor_t z_desc;
  const void* z;
  cudnnTensorDescriptor_t y_desc;
  void* y;
  cudnnTensorDescriptor_t bn_desc;
  const void *scale, *bias;
  double factor;  // the running averages' factor; training only
  void *running_mean, *running_var;
  void *save_mean, *save_inv_var;
  // inference: the estimated statistics, read
  const void *estimated_mean, *estimated_var;
  bool training;
};

Uses bn_forward_uses(const BnForward& c) {
  Uses uses(c.name, c.handle);
  Shape y;
  Scalar beta = Scalar::kOther;
  if (!tensor_shape(c.y_desc, &y) || !blend(c.alpha, c.beta, y.type, &beta)) return uses;
  const std::uint64_t bn = tensor_bytes(c.bn_desc);
  uses.read(c.x, tensor_bytes(c.x_desc));
  if (c.ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION) uses.read(c.z, tensor_bytes(c.z_desc));
  uses.read(c.scale, bn);
  uses.read(c.bias, bn);
  if (c.training) {
    if (c.factor != 0.0) {
      if (c.factor != 1.0) {
        uses.read(c.running_mean, bn);
        uses.read(c.running_var, bn);
      }
      uses.write(c.running_mean, bn);
      uses.write(c.running_var, bn);
    }
    uses.write(c.save_mean, bn);
    uses.write(c.save_inv_var, bn);
  } else {
    uses.read(c.estimated_mean, bn);
    uses.read(c.estimated_var, bn);
  }
  uses.output(c.y, y.bytes, beta);
  return uses;
}

struct BnBackward {
  const char* name;
  cudnnHandle_t handle;
  cudnnBatchNormOps_t ops;
  const void *alpha_data, *beta_data, *alpha_param, *beta_param;
  cudnnTensorDescriptor_t x_desc;
  const void* x;
  cudnnTensorDescriptor_t y_desc;
  const void* y;
  cudnnTensorDescriptor_t dy_desc;
  const void* dy;
  cudnnTensorDescriptor_t dz_desc;
  void* dz;
  cudnnTensorDescriptor_t dx_desc;
  void* dx;
  cudnnTensorDescriptor_t bn_desc;
  const void *scale, *bias;
  void *dscale, *dbias;
  const void *saved_mean, *saved_inv_var;
};

Uses bn_backward_uses(const BnBackward& c) {
  Uses uses(c.name, c.handle);
  Shape dx;
  Scalar beta_data = Scalar::kOther, beta_param = Scalar::kOther;
  if (!tensor_shape(c.dx_desc, &dx) || !blend(c.alpha_data, c.beta_data, dx.type, &beta_data) ||
      !blend(c.alpha_param, c.beta_param, dx.type, &beta_param))
    return uses;
  const std::uint64_t bn = tensor_bytes(c.bn_desc);
  const bool activation = c.ops != CUDNN_BATCHNORM_OPS_BN;
  uses.read(c.x, tensor_bytes(c.x_desc));
  if (activation) uses.read(c.y, tensor_bytes(c.y_desc));
  uses.read(c.dy, tensor_bytes(c.dy_desc));
  uses.read(c.scale, bn);
  if (activation) uses.read(c.bias, bn);
  // Given together or not at all: alone, the library recomputes both.
  if (c.saved_mean != nullptr && c.saved_inv_var != nullptr) {
    uses.read(c.saved_mean, bn);
    uses.read(c.saved_inv_var, bn);
  }
  uses.output(c.dx, dx.bytes, beta_data);
  if (c.ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION) uses.write(c.dz, tensor_bytes(c.dz_desc));
  uses.output(c.dscale, bn, beta_param);
  uses.output(c.dbias, bn, beta_param);
  return uses;
}

// ---- convolution ------------------------------------------------------------

// Whether every element of the image (x or dx: `image`) and of the filter
// takes part in the convolution, per spatial dim: no dilation, a stride no
// larger than the filter (windows abut or overlap), padding smaller than
// the filter (every window meets the image) and windows reaching the
// image's last element. The image and filter dims are in logical order
// (N, C, spatial... and K, C, spatial...).
bool convolution_covers(cudnnConvolutionDescriptor_t conv, const Shape& image,
                        const Shape& filter) {
  using Fn = cudnnStatus_t (*)(cudnnConvolutionDescriptor_t, int, int*, int[], int[], int[],
                               cudnnConvolutionMode_t*, cudnnDataType_t*);
  Fn fn = real_GetConvolutionNdDescriptor.get<Fn>();
  if (fn == nullptr || conv == nullptr) return false;
  const int spatial = image.rank - 2;
  if (spatial <= 0 || filter.rank != image.rank) return false;
  // At most CUDNN_DIM_MAX - 2 spatial dims; cuDNN 9.19 answers
  // CUDNN_STATUS_NOT_SUPPORTED to a request for more.
  constexpr int kSpatialMax = CUDNN_DIM_MAX - 2;
  int pads[kSpatialMax] = {}, strides[kSpatialMax] = {}, dilations[kSpatialMax] = {};
  int length = 0;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  if (spatial > kSpatialMax ||
      fn(conv, kSpatialMax, &length, pads, strides, dilations, &mode, &compute) !=
          CUDNN_STATUS_SUCCESS ||
      length != spatial)
    return false;
  for (int i = 0; i < spatial; ++i) {
    const std::int64_t in = image.dims[i + 2], taps = filter.dims[i + 2];
    const std::int64_t pad = pads[i], stride = strides[i];
    if (dilations[i] != 1 || stride < 1 || stride > taps || pad < 0 || pad >= taps || in < 1 ||
        in + 2 * pad < taps)
      return false;
    const std::int64_t last_window = (in + 2 * pad - taps) / stride;  // output count - 1
    if (last_window * stride - pad + taps < in) return false;
  }
  return true;
}

enum class ConvolutionKind { kForward, kBackwardData, kBackwardFilter };

struct Convolution {
  const char* name;
  cudnnHandle_t handle;
  ConvolutionKind kind;
  const void *alpha, *beta;
  cudnnTensorDescriptor_t image_desc;  // x, or dx for backward data
  const void* image;
  cudnnFilterDescriptor_t filter_desc;  // w, or dw for backward filter
  const void* filter;
  cudnnConvolutionDescriptor_t conv;
  cudnnTensorDescriptor_t y_desc;  // y, or dy
  const void* y;
};

Uses convolution_uses(const Convolution& c) {
  Uses uses(c.name, c.handle);
  Shape image, filter, y;
  if (!tensor_shape(c.image_desc, &image) || !filter_shape(c.filter_desc, &filter) ||
      !tensor_shape(c.y_desc, &y))
    return uses;
  const Shape& output = c.kind == ConvolutionKind::kForward        ? y
                        : c.kind == ConvolutionKind::kBackwardData ? image
                                                                   : filter;
  Scalar beta = Scalar::kOther;
  if (!blend(c.alpha, c.beta, output.type, &beta)) return uses;
  const bool covers = convolution_covers(c.conv, image, filter);
  switch (c.kind) {
    case ConvolutionKind::kForward:
      if (covers) {
        uses.read(c.image, image.bytes);
        uses.read(c.filter, filter.bytes);
      }
      uses.output(c.y, y.bytes, beta);
      break;
    case ConvolutionKind::kBackwardData:
      if (covers) {
        uses.read(c.filter, filter.bytes);
        uses.read(c.y, y.bytes);
      }
      uses.output(c.image, image.bytes, beta);
      break;
    case ConvolutionKind::kBackwardFilter:
      if (covers) {
        uses.read(c.image, image.bytes);
        uses.read(c.y, y.bytes);
      }
      uses.output(c.filter, filter.bytes, beta);
      break;
  }
  return uses;
}

}  // namespace

namespace cudnn {

std::uint64_t dense_tensor_bytes(cudnnDataType_t type, int rank, const std::int64_t* dims,
                                 const std::int64_t* strides) {
  if (rank <= 0 || rank > CUDNN_DIM_MAX) return 0;
  Shape s;
  s.type = type;
  s.rank = rank;
  for (int i = 0; i < rank; ++i) {
    s.dims[i] = dims[i];
    s.strides[i] = strides[i];
  }
  return dense_bytes(s);
}

bool handle_stream(cudnnHandle_t handle, StreamId* out) { return rt::handle_stream(handle, out); }

void check_release() {
  static std::atomic<bool> checked{false};
  if (checked.exchange(true, std::memory_order_relaxed)) return;
  using Fn = std::size_t (*)();
  Fn fn = real_GetVersion.get<Fn>();
  if (fn == nullptr) return;
  // cuDNN 9 counts major * 10000 + minor * 100 + patch.
  const std::size_t v = fn();
  const libs::Release loaded{static_cast<int>(v / 10000), static_cast<int>(v / 100 % 100),
                             static_cast<int>(v % 100)};
  libs::note_loaded_release("cuDNN", "XSC_CUDNN_ROOT",
                            {CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL}, loaded);
}

}  // namespace cudnn
}  // namespace xsc::rt

using xsc::rt::BnBackward;
using xsc::rt::BnForward;
using xsc::rt::Convolution;
using xsc::rt::ConvolutionKind;

XSC_CUDNN_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnTensorDescriptor_t yDesc,
    void* y, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void* bnScale,
    const void* bnBias, double exponentialAverageFactor, void* resultRunningMean,
    void* resultRunningVariance, double epsilon, void* resultSaveMean,
    void* resultSaveInvVariance) {
  const auto describe = [&] {
    return bn_forward_uses(BnForward{
        "cudnnBatchNormalizationForwardTraining", handle, CUDNN_BATCHNORM_OPS_BN, alpha, beta,
        xDesc, x, nullptr, nullptr, yDesc, y, bnScaleBiasMeanVarDesc, bnScale, bnBias,
        exponentialAverageFactor, resultRunningMean, resultRunningVariance, resultSaveMean,
        resultSaveInvVariance, nullptr, nullptr, true});
  };
  return xsc::rt::interpose<decltype(&cudnnBatchNormalizationForwardTraining)>(
      xsc::rt::real_BnForwardTraining, describe, handle, mode, alpha, beta, xDesc, x, yDesc, y,
      bnScaleBiasMeanVarDesc, bnScale, bnBias, exponentialAverageFactor, resultRunningMean,
      resultRunningVariance, epsilon, resultSaveMean, resultSaveInvVariance);
}

XSC_CUDNN_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const void* alpha,
    const void* beta, const cudnnTensorDescriptor_t xDesc, const void* xData,
    const cudnnTensorDescriptor_t zDesc, const void* zData, const cudnnTensorDescriptor_t yDesc,
    void* yData, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void* bnScale,
    const void* bnBias, double exponentialAverageFactor, void* resultRunningMean,
    void* resultRunningVariance, double epsilon, void* resultSaveMean,
    void* resultSaveInvVariance, cudnnActivationDescriptor_t activationDesc, void* workspace,
    size_t workSpaceSizeInBytes, void* reserveSpace, size_t reserveSpaceSizeInBytes) {
  const auto describe = [&] {
    return bn_forward_uses(BnForward{
        "cudnnBatchNormalizationForwardTrainingEx", handle, bnOps, alpha, beta, xDesc, xData,
        zDesc, zData, yDesc, yData, bnScaleBiasMeanVarDesc, bnScale, bnBias,
        exponentialAverageFactor, resultRunningMean, resultRunningVariance, resultSaveMean,
        resultSaveInvVariance, nullptr, nullptr, true});
  };
  return xsc::rt::interpose<decltype(&cudnnBatchNormalizationForwardTrainingEx)>(
      xsc::rt::real_BnForwardTrainingEx, describe, handle, mode, bnOps, alpha, beta, xDesc, xData,
      zDesc, zData, yDesc, yData, bnScaleBiasMeanVarDesc, bnScale, bnBias,
      exponentialAverageFactor, resultRunningMean, resultRunningVariance, epsilon, resultSaveMean,
      resultSaveInvVariance, activationDesc, workspace, workSpaceSizeInBytes, reserveSpace,
      reserveSpaceSizeInBytes);
}

XSC_CUDNN_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardInference(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnTensorDescriptor_t yDesc,
    void* y, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void* bnScale,
    const void* bnBias, const void* estimatedMean, const void* estimatedVariance,
    double epsilon) {
  const auto describe = [&] {
    return bn_forward_uses(BnForward{
        "cudnnBatchNormalizationForwardInference", handle, CUDNN_BATCHNORM_OPS_BN, alpha, beta,
        xDesc, x, nullptr, nullptr, yDesc, y, bnScaleBiasMeanVarDesc, bnScale, bnBias, 0.0,
        nullptr, nullptr, nullptr, nullptr, estimatedMean, estimatedVariance, false});
  };
  return xsc::rt::interpose<decltype(&cudnnBatchNormalizationForwardInference)>(
      xsc::rt::real_BnForwardInference, describe, handle, mode, alpha, beta, xDesc, x, yDesc, y,
      bnScaleBiasMeanVarDesc, bnScale, bnBias, estimatedMean, estimatedVariance, epsilon);
}

XSC_CUDNN_EXPORT cudnnStatus_t cudnnBatchNormalizationBackward(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alphaDataDiff,
    const void* betaDataDiff, const void* alphaParamDiff, const void* betaParamDiff,
    const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnTensorDescriptor_t dyDesc,
    const void* dy, const cudnnTensorDescriptor_t dxDesc, void* dx,
    const cudnnTensorDescriptor_t dBnScaleBiasDesc, const void* bnScale, void* dBnScaleResult,
    void* dBnBiasResult, double epsilon, const void* savedMean, const void* savedInvVariance) {
  const auto describe = [&] {
    return bn_backward_uses(BnBackward{
        "cudnnBatchNormalizationBackward", handle, CUDNN_BATCHNORM_OPS_BN, alphaDataDiff,
        betaDataDiff, alphaParamDiff, betaParamDiff, xDesc, x, nullptr, nullptr, dyDesc, dy,
        nullptr, nullptr, dxDesc, dx, dBnScaleBiasDesc, bnScale, nullptr, dBnScaleResult,
        dBnBiasResult, savedMean, savedInvVariance});
  };
  return xsc::rt::interpose<decltype(&cudnnBatchNormalizationBackward)>(
      xsc::rt::real_BnBackward, describe, handle, mode, alphaDataDiff, betaDataDiff,
      alphaParamDiff, betaParamDiff, xDesc, x, dyDesc, dy, dxDesc, dx, dBnScaleBiasDesc, bnScale,
      dBnScaleResult, dBnBiasResult, epsilon, savedMean, savedInvVariance);
}

XSC_CUDNN_EXPORT cudnnStatus_t cudnnBatchNormalizationBackwardEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const void* alphaDataDiff, const void* betaDataDiff, const void* alphaParamDiff,
    const void* betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void* xData,
    const cudnnTensorDescriptor_t yDesc, const void* yData, const cudnnTensorDescriptor_t dyDesc,
    const void* dyData, const cudnnTensorDescriptor_t dzDesc, void* dzData,
    const cudnnTensorDescriptor_t dxDesc, void* dxData,
    const cudnnTensorDescriptor_t dBnScaleBiasDesc, const void* bnScaleData,
    const void* bnBiasData, void* dBnScaleData, void* dBnBiasData, double epsilon,
    const void* savedMean, const void* savedInvVariance,
    cudnnActivationDescriptor_t activationDesc, void* workSpace, size_t workSpaceSizeInBytes,
    void* reserveSpace, size_t reserveSpaceSizeInBytes) {
  const auto describe = [&] {
    return bn_backward_uses(BnBackward{
        "cudnnBatchNormalizationBackwardEx", handle, bnOps, alphaDataDiff, betaDataDiff,
        alphaParamDiff, betaParamDiff, xDesc, xData, yDesc, yData, dyDesc, dyData, dzDesc,
        dzData, dxDesc, dxData, dBnScaleBiasDesc, bnScaleData, bnBiasData, dBnScaleData,
        dBnBiasData, savedMean, savedInvVariance});
  };
  return xsc::rt::interpose<decltype(&cudnnBatchNormalizationBackwardEx)>(
      xsc::rt::real_BnBackwardEx, describe, handle, mode, bnOps, alphaDataDiff, betaDataDiff,
      alphaParamDiff, betaParamDiff, xDesc, xData, yDesc, yData, dyDesc, dyData, dzDesc, dzData,
      dxDesc, dxData, dBnScaleBiasDesc, bnScaleData, bnBiasData, dBnScaleData, dBnBiasData,
      epsilon, savedMean, savedInvVariance, activationDesc, workSpace, workSpaceSizeInBytes,
      reserveSpace, reserveSpaceSizeInBytes);
}

XSC_CUDNN_EXPORT cudnnStatus_t cudnnConvolutionForward(
    cudnnHandle_t handle, const void* alpha, const cudnnTensorDescriptor_t xDesc, const void* x,
    const cudnnFilterDescriptor_t wDesc, const void* w,
    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo, void* workSpace,
    size_t workSpaceSizeInBytes, const void* beta, const cudnnTensorDescriptor_t yDesc, void* y) {
  const auto describe = [&] {
    return convolution_uses(Convolution{"cudnnConvolutionForward", handle,
                                        ConvolutionKind::kForward, alpha, beta, xDesc, x, wDesc,
                                        w, convDesc, yDesc, y});
  };
  return xsc::rt::interpose<decltype(&cudnnConvolutionForward)>(
      xsc::rt::real_ConvolutionForward, describe, handle, alpha, xDesc, x, wDesc, w, convDesc,
      algo, workSpace, workSpaceSizeInBytes, beta, yDesc, y);
}

XSC_CUDNN_EXPORT cudnnStatus_t cudnnConvolutionBackwardData(
    cudnnHandle_t handle, const void* alpha, const cudnnFilterDescriptor_t wDesc, const void* w,
    const cudnnTensorDescriptor_t dyDesc, const void* dy,
    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionBwdDataAlgo_t algo,
    void* workSpace, size_t workSpaceSizeInBytes, const void* beta,
    const cudnnTensorDescriptor_t dxDesc, void* dx) {
  const auto describe = [&] {
    return convolution_uses(Convolution{"cudnnConvolutionBackwardData", handle,
                                        ConvolutionKind::kBackwardData, alpha, beta, dxDesc, dx,
                                        wDesc, w, convDesc, dyDesc, dy});
  };
  return xsc::rt::interpose<decltype(&cudnnConvolutionBackwardData)>(
      xsc::rt::real_ConvolutionBackwardData, describe, handle, alpha, wDesc, w, dyDesc, dy,
      convDesc, algo, workSpace, workSpaceSizeInBytes, beta, dxDesc, dx);
}

XSC_CUDNN_EXPORT cudnnStatus_t cudnnConvolutionBackwardFilter(
    cudnnHandle_t handle, const void* alpha, const cudnnTensorDescriptor_t xDesc, const void* x,
    const cudnnTensorDescriptor_t dyDesc, const void* dy,
    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionBwdFilterAlgo_t algo,
    void* workSpace, size_t workSpaceSizeInBytes, const void* beta,
    const cudnnFilterDescriptor_t dwDesc, void* dw) {
  const auto describe = [&] {
    return convolution_uses(Convolution{"cudnnConvolutionBackwardFilter", handle,
                                        ConvolutionKind::kBackwardFilter, alpha, beta, xDesc, x,
                                        dwDesc, dw, convDesc, dyDesc, dy});
  };
  return xsc::rt::interpose<decltype(&cudnnConvolutionBackwardFilter)>(
      xsc::rt::real_ConvolutionBackwardFilter, describe, handle, alpha, xDesc, x, dyDesc, dy,
      convDesc, algo, workSpace, workSpaceSizeInBytes, beta, dwDesc, dw);
}

// C = alpha * A + beta * C, A broadcast over C: every element of A is read.
XSC_CUDNN_EXPORT cudnnStatus_t cudnnAddTensor(cudnnHandle_t handle, const void* alpha,
                                              const cudnnTensorDescriptor_t aDesc, const void* A,
                                              const void* beta,
                                              const cudnnTensorDescriptor_t cDesc, void* C) {
  const auto describe = [&] {
    xsc::rt::Uses uses("cudnnAddTensor", handle);
    xsc::rt::Shape c;
    xsc::rt::Scalar b = xsc::rt::Scalar::kOther;
    if (!xsc::rt::tensor_shape(cDesc, &c) || !xsc::rt::blend(alpha, beta, c.type, &b)) return uses;
    uses.read(A, xsc::rt::tensor_bytes(aDesc));
    uses.output(C, c.bytes, b);
    return uses;
  };
  return xsc::rt::interpose<decltype(&cudnnAddTensor)>(xsc::rt::real_AddTensor, describe, handle,
                                                       alpha, aDesc, A, beta, cDesc, C);
}

#endif  // __has_include(<cudnn.h>) && __has_include(<cublas_v2.h>)
