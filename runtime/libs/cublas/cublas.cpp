// cuBLAS GEMMs as known reads and writes.
//
// The runtime defines cublasSgemm_v2, cublasDgemm_v2, cublasHgemm,
// cublasGemmEx, cublasSgemmStridedBatched and cublasGemmStridedBatchedEx,
// and their _64 forms (64-bit sizes); preloaded, it shadows libcublas's. Each forwards to the real function with
// its arguments untouched and returns its status untouched. After a call
// that succeeded (its kernels are enqueued by then) it feeds what the GEMM
// certainly touched, on the handle's stream, named after the call:
//   C = alpha * op(A) * op(B) + beta * C
// A and B are read when k > 0 and alpha != 0; C is read when beta != 0 and
// written unless BLAS's quick return applies (m or n is 0, or beta == 1 and
// alpha or k is 0: nothing is touched then). The write is a known write
// (docs/rules.md): it feeds use-before-ready and write-after-read, so
// every byte claimed must be one the GEMM writes.
//
// Extents (column-major, leading dimension ld, per operand):
//   - ld == rows: the matrix is dense, rows * cols elements; a strided
//     batch whose stride is exactly that adds up to one dense run of
//     batchCount matrices, any other stride (0 for a broadcast operand, a
//     gap between matrices) claims the first matrix only;
//   - ld > rows: the first column only (rows elements). The rest of the
//     matrix is interleaved with bytes the call does not touch (C is then
//     a block of a bigger matrix whose other columns' tails belong to
//     someone else); the first column is exactly written, and it is where
//     a kernel reading C through its base pointer is placed (a kernel use
//     counts as the bytes at its pointer).
// Reads follow the same rule: a read claimed over bytes it never touched
// could meet a later known write there as a false write-after-read.
//
// Fed nothing: scalars in device memory (CUBLAS_POINTER_MODE_DEVICE: alpha
// and beta cannot be read here, so neither the quick return nor the read
// of C can be decided), compute or data types not listed below (complex,
// integer compute, 4- and 6-bit types), a call that failed, and cuBLAS
// or cuBLASLt calls made from inside another interposed one (one call, one
// feed: runtime/libs/cublas/blas_uses.h). Nothing either when the bytes lie outside
// every tracked allocation. What this file and runtime/libs/cublas/cublaslt.cpp share
// (scalars, extents, feeding) is in runtime/libs/cublas/blas_uses.cpp.
//
// The real functions are found the way the NCCL interposers find theirs
// (runtime/libs/real_symbol.h): libcublas may have come in as a dependency
// of a library dlopen()ed with RTLD_LOCAL (torch's), out of RTLD_NEXT's
// reach. Without cublas_v2.h at build time this file compiles to nothing.
#if __has_include(<cublas_v2.h>)
#include <cublas_v2.h>

#include <cstdint>

#include "runtime/libs/cublas/blas_uses.h"
#include "runtime/libs/real_symbol.h"
#include "runtime/rtl.h"
#include "runtime/timing.h"

#define XSC_CUBLAS_EXPORT extern "C" __attribute__((visibility("default")))

namespace xsc::rt {
namespace {

using libs::call_real;
using libs::RealSymbol;
using blas::add_touch;
using blas::classify;
using blas::element_size;
using blas::OuterCall;
using blas::Scalar;
using blas::ScalarType;
using blas::Touch;

RealSymbol real_Sgemm{"cublasSgemm_v2"};
RealSymbol real_Dgemm{"cublasDgemm_v2"};
RealSymbol real_Hgemm{"cublasHgemm"};
RealSymbol real_GemmEx{"cublasGemmEx"};
RealSymbol real_SgemmStridedBatched{"cublasSgemmStridedBatched"};
RealSymbol real_GemmStridedBatchedEx{"cublasGemmStridedBatchedEx"};
RealSymbol real_Sgemm_64{"cublasSgemm_v2_64"};
RealSymbol real_Dgemm_64{"cublasDgemm_v2_64"};
RealSymbol real_Hgemm_64{"cublasHgemm_64"};
RealSymbol real_GemmEx_64{"cublasGemmEx_64"};
RealSymbol real_SgemmStridedBatched_64{"cublasSgemmStridedBatched_64"};
RealSymbol real_GemmStridedBatchedEx_64{"cublasGemmStridedBatchedEx_64"};
RealSymbol real_GetStream{"cublasGetStream_v2"};
RealSymbol real_GetPointerMode{"cublasGetPointerMode_v2"};

// ---- scalars ----------------------------------------------------------------

// cublasGemmEx's table: the scale type of each compute type. Others
// (integer compute, emulations) are left out.
ScalarType scale_type(cublasComputeType_t compute) {
  switch (compute) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
      return ScalarType::kHalf;
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      return ScalarType::kFloat;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
      return ScalarType::kDouble;
    default:
      return ScalarType::kUnknown;
  }
}

// ---- the call -----------------------------------------------------------------

struct Matrix {
  const void* addr = nullptr;
  std::int64_t ld = 0;
  std::int64_t stride = 0;  // elements between batch members
  std::uint64_t element = 0;
};

struct Gemm {
  const char* name = nullptr;
  cublasHandle_t handle = nullptr;
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  const void* alpha = nullptr;
  const void* beta = nullptr;
  ScalarType scalar = ScalarType::kUnknown;
  Matrix a, b, c;
};

// What the call touched, in the order fed: reads first, then the write.
int touches(const Gemm& g, Touch out[4]) {
  if (g.m <= 0 || g.n <= 0 || g.k < 0 || g.batch <= 0) return 0;
  Scalar alpha = Scalar::kOther, beta = Scalar::kOther;
  if (!classify(g.alpha, g.scalar, &alpha) || !classify(g.beta, g.scalar, &beta)) return 0;
  // BLAS's quick return: C = 1 * C, nothing read or written.
  if (beta == Scalar::kOne && (alpha == Scalar::kZero || g.k == 0)) return 0;
  int n = 0;
  // Column-major: a column of `rows` elements is the contiguous run.
  auto add = [&](const Matrix& x, std::int64_t rows, std::int64_t cols, Access access) {
    add_touch({x.addr, rows, cols, x.ld, g.batch, x.stride, x.element}, access, out, &n);
  };
  if (g.k > 0 && alpha != Scalar::kZero) {
    const bool ta = g.transa != CUBLAS_OP_N, tb = g.transb != CUBLAS_OP_N;
    add(g.a, ta ? g.k : g.m, ta ? g.m : g.k, Access::kRead);
    add(g.b, tb ? g.n : g.k, tb ? g.k : g.n, Access::kRead);
  }
  if (beta != Scalar::kZero) add(g.c, g.m, g.n, Access::kRead);
  add(g.c, g.m, g.n, Access::kWrite);
  return n;
}

// The handle's stream, asked of the real library; false when it cannot say.
bool handle_stream(cublasHandle_t handle, StreamId* out) {
  blas::check_release();
  using Fn = cublasStatus_t (*)(cublasHandle_t, cudaStream_t*);
  Fn fn = real_GetStream.get<Fn>();
  cudaStream_t stream = nullptr;
  if (fn == nullptr || fn(handle, &stream) != CUBLAS_STATUS_SUCCESS) return false;
  *out = resolve(reinterpret_cast<std::uint64_t>(stream), /*per_thread_default=*/false);
  return true;
}

bool host_scalars(cublasHandle_t handle) {
  using Fn = cublasStatus_t (*)(cublasHandle_t, cublasPointerMode_t*);
  Fn fn = real_GetPointerMode.get<Fn>();
  cublasPointerMode_t mode = CUBLAS_POINTER_MODE_DEVICE;
  return fn != nullptr && fn(handle, &mode) == CUBLAS_STATUS_SUCCESS &&
         mode == CUBLAS_POINTER_MODE_HOST;
}

void feed(const Gemm& g) {
  // Asked now, outside any CUPTI callback, through the real library. In
  // device pointer mode `alpha` and `beta` are device addresses: nothing
  // is fed, before they are read.
  if (!host_scalars(g.handle)) return;
  Touch t[4];
  const int n = touches(g, t);
  if (n == 0) return;
  StreamId stream = kLegacyStream;
  if (!handle_stream(g.handle, &stream)) return;
  feed_operator_uses(g.name, stream, t, n);
}

// Calls the real entry point with the arguments unchanged. When checking,
// feeds what `describe()` says the call touched, once the outermost
// interposed call has succeeded (its kernels are enqueued by then).
template <typename Fn, typename Describe, typename... Args>
cublasStatus_t interpose(RealSymbol& real, Describe describe, Args... args) {
  if (!blas::wanted()) return call_real<Fn>(real, args...);
  const OuterCall call;
  const cublasStatus_t status = call_real<Fn>(real, args...);
  if (status == CUBLAS_STATUS_SUCCESS && call.outer()) {
    const PartScope part(Part::kInterposers);
    feed(describe());
  }
  return status;
}

// cublas[SDH]gemm: one element type for the scalars and all three matrices.
// Int: int, or int64_t for the _64 entry points.
template <typename Fn, typename T, typename Int>
cublasStatus_t typed_gemm(RealSymbol& real, const char* name, ScalarType scalar,
                          cublasHandle_t handle, cublasOperation_t transa,
                          cublasOperation_t transb, Int m, Int n, Int k, const T* alpha,
                          const T* A, Int lda, const T* B, Int ldb, const T* beta, T* C, Int ldc) {
  const auto describe = [&] {
    return Gemm{name, handle, transa, transb, m, n, k, 1, alpha, beta, scalar,
                {A, lda, 0, sizeof(T)}, {B, ldb, 0, sizeof(T)}, {C, ldc, 0, sizeof(T)}};
  };
  return interpose<Fn>(real, describe, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                       beta, C, ldc);
}

// The scale type of an Ex call: a complex C has complex scalars, left out
// along with every type that has no size here (element_size 0 stops
// known_run).
ScalarType ex_scalar(cudaDataType c_type, cublasComputeType_t compute) {
  return element_size(c_type) != 0 ? scale_type(compute) : ScalarType::kUnknown;
}

// The other entry points, each with its _64 form; Int as for typed_gemm.

// cublasGemmEx: each matrix's type named by the call.
template <typename Fn, typename Int>
cublasStatus_t gemm_ex(RealSymbol& real, const char* name, cublasHandle_t handle,
                       cublasOperation_t transa, cublasOperation_t transb, Int m, Int n, Int k,
                       const void* alpha, const void* A, cudaDataType Atype, Int lda,
                       const void* B, cudaDataType Btype, Int ldb, const void* beta, void* C,
                       cudaDataType Ctype, Int ldc, cublasComputeType_t computeType,
                       cublasGemmAlgo_t algo) {
  const auto describe = [&] {
    return Gemm{name, handle, transa, transb, m, n, k, 1, alpha, beta,
                ex_scalar(Ctype, computeType), {A, lda, 0, element_size(Atype)},
                {B, ldb, 0, element_size(Btype)}, {C, ldc, 0, element_size(Ctype)}};
  };
  return interpose<Fn>(real, describe, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B,
                       Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

// cublasSgemmStridedBatched.
template <typename Fn, typename Int>
cublasStatus_t sgemm_strided_batched(RealSymbol& real, const char* name, cublasHandle_t handle,
                                     cublasOperation_t transa, cublasOperation_t transb, Int m,
                                     Int n, Int k, const float* alpha, const float* A, Int lda,
                                     long long int strideA, const float* B, Int ldb,
                                     long long int strideB, const float* beta, float* C, Int ldc,
                                     long long int strideC, Int batchCount) {
  const auto describe = [&] {
    return Gemm{name, handle, transa, transb, m, n, k, batchCount, alpha, beta,
                ScalarType::kFloat, {A, lda, strideA, 4}, {B, ldb, strideB, 4},
                {C, ldc, strideC, 4}};
  };
  return interpose<Fn>(real, describe, handle, transa, transb, m, n, k, alpha, A, lda, strideA, B,
                       ldb, strideB, beta, C, ldc, strideC, batchCount);
}

// cublasGemmStridedBatchedEx.
template <typename Fn, typename Int>
cublasStatus_t gemm_strided_batched_ex(
    RealSymbol& real, const char* name, cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, Int m, Int n, Int k, const void* alpha, const void* A,
    cudaDataType Atype, Int lda, long long int strideA, const void* B, cudaDataType Btype,
    Int ldb, long long int strideB, const void* beta, void* C, cudaDataType Ctype, Int ldc,
    long long int strideC, Int batchCount, cublasComputeType_t computeType,
    cublasGemmAlgo_t algo) {
  const auto describe = [&] {
    return Gemm{name, handle, transa, transb, m, n, k, batchCount, alpha, beta,
                ex_scalar(Ctype, computeType), {A, lda, strideA, element_size(Atype)},
                {B, ldb, strideB, element_size(Btype)}, {C, ldc, strideC, element_size(Ctype)}};
  };
  return interpose<Fn>(real, describe, handle, transa, transb, m, n, k, alpha, A, Atype, lda,
                       strideA, B, Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount,
                       computeType, algo);
}

}  // namespace
}  // namespace xsc::rt

using xsc::rt::blas::ScalarType;

XSC_CUBLAS_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                                cublasOperation_t transb, int m, int n, int k,
                                                const float* alpha, const float* A, int lda,
                                                const float* B, int ldb, const float* beta,
                                                float* C, int ldc) {
  return xsc::rt::typed_gemm<decltype(&cublasSgemm_v2)>(
      xsc::rt::real_Sgemm, "cublasSgemm_v2", ScalarType::kFloat, handle, transa, transb, m, n, k,
      alpha, A, lda, B, ldb, beta, C, ldc);
}

XSC_CUBLAS_EXPORT cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                                cublasOperation_t transb, int m, int n, int k,
                                                const double* alpha, const double* A, int lda,
                                                const double* B, int ldb, const double* beta,
                                                double* C, int ldc) {
  return xsc::rt::typed_gemm<decltype(&cublasDgemm_v2)>(
      xsc::rt::real_Dgemm, "cublasDgemm_v2", ScalarType::kDouble, handle, transa, transb, m, n, k,
      alpha, A, lda, B, ldb, beta, C, ldc);
}

XSC_CUBLAS_EXPORT cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa,
                                             cublasOperation_t transb, int m, int n, int k,
                                             const __half* alpha, const __half* A, int lda,
                                             const __half* B, int ldb, const __half* beta,
                                             __half* C, int ldc) {
  return xsc::rt::typed_gemm<decltype(&cublasHgemm)>(
      xsc::rt::real_Hgemm, "cublasHgemm", ScalarType::kHalf, handle, transa, transb, m, n, k,
      alpha, A, lda, B, ldb, beta, C, ldc);
}

XSC_CUBLAS_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                              cublasOperation_t transb, int m, int n, int k,
                                              const void* alpha, const void* A, cudaDataType Atype,
                                              int lda, const void* B, cudaDataType Btype, int ldb,
                                              const void* beta, void* C, cudaDataType Ctype,
                                              int ldc, cublasComputeType_t computeType,
                                              cublasGemmAlgo_t algo) {
  using Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                int, const void*, const void*, cudaDataType, int, const void*,
                                cudaDataType, int, const void*, void*, cudaDataType, int,
                                cublasComputeType_t, cublasGemmAlgo_t);
  return xsc::rt::gemm_ex<Fn>(xsc::rt::real_GemmEx, "cublasGemmEx", handle, transa, transb, m, n,
                              k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                              computeType, algo);
}

XSC_CUBLAS_EXPORT cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const float* alpha, const float* A, int lda, long long int strideA, const float* B, int ldb,
    long long int strideB, const float* beta, float* C, int ldc, long long int strideC,
    int batchCount) {
  return xsc::rt::sgemm_strided_batched<decltype(&cublasSgemmStridedBatched)>(
      xsc::rt::real_SgemmStridedBatched, "cublasSgemmStridedBatched", handle, transa, transb, m, n,
      k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

XSC_CUBLAS_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, cudaDataType Atype, int lda, long long int strideA,
    const void* B, cudaDataType Btype, int ldb, long long int strideB, const void* beta, void* C,
    cudaDataType Ctype, int ldc, long long int strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  using Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                int, const void*, const void*, cudaDataType, int, long long int,
                                const void*, cudaDataType, int, long long int, const void*, void*,
                                cudaDataType, int, long long int, int, cublasComputeType_t,
                                cublasGemmAlgo_t);
  return xsc::rt::gemm_strided_batched_ex<Fn>(
      xsc::rt::real_GemmStridedBatchedEx, "cublasGemmStridedBatchedEx", handle, transa, transb, m,
      n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype, ldc, strideC,
      batchCount, computeType, algo);
}

// ---- the _64 entry points: the same calls with 64-bit sizes ------------------

XSC_CUBLAS_EXPORT cublasStatus_t cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                                   cublasOperation_t transb, int64_t m, int64_t n,
                                                   int64_t k, const float* alpha, const float* A,
                                                   int64_t lda, const float* B, int64_t ldb,
                                                   const float* beta, float* C, int64_t ldc) {
  return xsc::rt::typed_gemm<decltype(&cublasSgemm_v2_64)>(
      xsc::rt::real_Sgemm_64, "cublasSgemm_v2_64", ScalarType::kFloat, handle, transa, transb, m,
      n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

XSC_CUBLAS_EXPORT cublasStatus_t cublasDgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                                   cublasOperation_t transb, int64_t m, int64_t n,
                                                   int64_t k, const double* alpha, const double* A,
                                                   int64_t lda, const double* B, int64_t ldb,
                                                   const double* beta, double* C, int64_t ldc) {
  return xsc::rt::typed_gemm<decltype(&cublasDgemm_v2_64)>(
      xsc::rt::real_Dgemm_64, "cublasDgemm_v2_64", ScalarType::kDouble, handle, transa, transb,
      m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

XSC_CUBLAS_EXPORT cublasStatus_t cublasHgemm_64(cublasHandle_t handle, cublasOperation_t transa,
                                                cublasOperation_t transb, int64_t m, int64_t n,
                                                int64_t k, const __half* alpha, const __half* A,
                                                int64_t lda, const __half* B, int64_t ldb,
                                                const __half* beta, __half* C, int64_t ldc) {
  return xsc::rt::typed_gemm<decltype(&cublasHgemm_64)>(
      xsc::rt::real_Hgemm_64, "cublasHgemm_64", ScalarType::kHalf, handle, transa, transb, m, n,
      k, alpha, A, lda, B, ldb, beta, C, ldc);
}

XSC_CUBLAS_EXPORT cublasStatus_t cublasGemmEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const void* alpha, const void* A, cudaDataType Atype, int64_t lda,
    const void* B, cudaDataType Btype, int64_t ldb, const void* beta, void* C, cudaDataType Ctype,
    int64_t ldc, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return xsc::rt::gemm_ex<decltype(&cublasGemmEx_64)>(
      xsc::rt::real_GemmEx_64, "cublasGemmEx_64", handle, transa, transb, m, n, k, alpha, A, Atype,
      lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

XSC_CUBLAS_EXPORT cublasStatus_t cublasSgemmStridedBatched_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const float* alpha, const float* A, int64_t lda, long long int strideA,
    const float* B, int64_t ldb, long long int strideB, const float* beta, float* C, int64_t ldc,
    long long int strideC, int64_t batchCount) {
  return xsc::rt::sgemm_strided_batched<decltype(&cublasSgemmStridedBatched_64)>(
      xsc::rt::real_SgemmStridedBatched_64, "cublasSgemmStridedBatched_64", handle, transa, transb,
      m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

XSC_CUBLAS_EXPORT cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const void* alpha, const void* A, cudaDataType Atype, int64_t lda,
    long long int strideA, const void* B, cudaDataType Btype, int64_t ldb, long long int strideB,
    const void* beta, void* C, cudaDataType Ctype, int64_t ldc, long long int strideC,
    int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return xsc::rt::gemm_strided_batched_ex<decltype(&cublasGemmStridedBatchedEx_64)>(
      xsc::rt::real_GemmStridedBatchedEx_64, "cublasGemmStridedBatchedEx_64", handle, transa,
      transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype, ldc,
      strideC, batchCount, computeType, algo);
}

#endif  // __has_include(<cublas_v2.h>)
