// cuBLASLt matrix products as known reads and writes.
//
// The runtime defines cublasLtMatmul; preloaded, it shadows libcublasLt's
// (PyTorch runs most of its CUDA matmuls, linear layers and their backward
// through it). It forwards to the real function with its arguments
// untouched and returns its status untouched. After a call that succeeded
// (its kernels are enqueued by then) it feeds, on the call's stream, named
// "cublasLtMatmul", what the product certainly touched:
//   D = alpha * op(A) * op(B) + beta * C
// A and B are read when k > 0 and alpha != 0; C is read when beta != 0;
// D is a known write (docs/rules.md). When C and D are one matrix (same
// address) and beta == 1 with alpha or k 0, nothing changes and nothing is
// fed, as for BLAS's quick return in runtime/libs/cublas/cublas.cpp.
//
// Everything comes from the descriptors, through the real library's
// getters: each matrix layout's data type, order, rows, cols, leading
// dimension, batch count and stride; the operation's scale type, pointer
// mode and transposes. Extents follow runtime/libs/cublas/blas_uses.h: a dense
// column-major (or row-major) matrix counts whole, a strided batch of them
// as one run when the stride is exactly one matrix, and a matrix whose
// leading dimension is larger counts for its first column (row) only.
//
// Fed nothing: scalars in device memory or per-row vectors (any pointer
// mode but CUBLASLT_POINTER_MODE_HOST), scale types other than half, float
// and double, other memory orders (COL32 and the tiled ones), planar
// complex layouts, pointer-array batches, a descriptor the library cannot
// describe, a call that failed, and calls made from inside another
// interposed cuBLAS or cuBLASLt call. Not claimed: the epilogue's bias and
// auxiliary buffers (their extents depend on the epilogue) and the
// workspace (the library's own scratch).
#if __has_include(<cublasLt.h>) && __has_include(<cublas_v2.h>)
#include <cublasLt.h>

#include <cstdint>

#include "runtime/libs/cublas/blas_uses.h"
#include "runtime/libs/real_symbol.h"
#include "runtime/rtl.h"
#include "runtime/timing.h"

#define XSC_CUBLASLT_EXPORT extern "C" __attribute__((visibility("default")))

namespace xsc::rt {
namespace {

using blas::Scalar;
using blas::ScalarType;
using libs::call_real;
using libs::RealSymbol;

RealSymbol real_Matmul{"cublasLtMatmul"};
RealSymbol real_LayoutGetAttribute{"cublasLtMatrixLayoutGetAttribute"};
RealSymbol real_DescGetAttribute{"cublasLtMatmulDescGetAttribute"};

using MatmulFn = cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*,
                                    const void*, cublasLtMatrixLayout_t, const void*,
                                    cublasLtMatrixLayout_t, const void*, const void*,
                                    cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t,
                                    const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t);

// One attribute of exactly T's size; false when the library cannot say.
template <typename T>
bool layout_attribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                      T* out) {
  using Fn = cublasStatus_t (*)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, void*,
                                size_t, size_t*);
  Fn fn = real_LayoutGetAttribute.get<Fn>();
  size_t written = 0;
  return fn != nullptr && layout != nullptr &&
         fn(layout, attr, out, sizeof(T), &written) == CUBLAS_STATUS_SUCCESS &&
         written == sizeof(T);
}

template <typename T>
bool desc_attribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, T* out) {
  using Fn = cublasStatus_t (*)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void*,
                                size_t, size_t*);
  Fn fn = real_DescGetAttribute.get<Fn>();
  size_t written = 0;
  return fn != nullptr && desc != nullptr &&
         fn(desc, attr, out, sizeof(T), &written) == CUBLAS_STATUS_SUCCESS &&
         written == sizeof(T);
}

// A matrix as its layout describes it (before op()).
struct Layout {
  std::int64_t rows = 0, cols = 0;
  blas::Operand stored;  // addr left to the caller
};

// CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, in cuBLAS 12.9's header and later (not
// 12.8's): by its value (8) where the header lacks it. A library of 12.9
// or later answers it whatever header this was built with; an older one
// fails the query, which leaves the batch mode strided.
#if CUBLAS_VERSION >= 120900
constexpr cublasLtMatrixLayoutAttribute_t kLayoutBatchMode = CUBLASLT_MATRIX_LAYOUT_BATCH_MODE;
static_assert(kLayoutBatchMode == 8);
#else
constexpr auto kLayoutBatchMode = static_cast<cublasLtMatrixLayoutAttribute_t>(8);
#endif

// False for a layout whose bytes cannot be told (see the file comment).
bool describe(cublasLtMatrixLayout_t layout, Layout* out) {
  std::uint32_t type = 0;
  std::int32_t order = CUBLASLT_ORDER_COL, batch = 1;
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0, stride = 0, plane = 0;
  if (!layout_attribute(layout, CUBLASLT_MATRIX_LAYOUT_TYPE, &type) ||
      !layout_attribute(layout, CUBLASLT_MATRIX_LAYOUT_ORDER, &order) ||
      !layout_attribute(layout, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows) ||
      !layout_attribute(layout, CUBLASLT_MATRIX_LAYOUT_COLS, &cols) ||
      !layout_attribute(layout, CUBLASLT_MATRIX_LAYOUT_LD, &ld) ||
      !layout_attribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch) ||
      !layout_attribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride))
    return false;
  if (layout_attribute(layout, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, &plane) && plane != 0)
    return false;
  // Libraries older than the attribute have strided batches only.
  std::uint32_t batch_mode = 0;
  if (layout_attribute(layout, kLayoutBatchMode, &batch_mode) && batch_mode != 0)
    return false;
  constexpr std::uint64_t kMaxDim = std::uint64_t{1} << 40;
  if (rows == 0 || cols == 0 || rows > kMaxDim || cols > kMaxDim) return false;
  out->rows = static_cast<std::int64_t>(rows);
  out->cols = static_cast<std::int64_t>(cols);
  blas::Operand& x = out->stored;
  x.element = blas::element_size(static_cast<cudaDataType>(type));
  x.ld = ld;
  x.batch = batch;
  x.stride = stride;
  if (order == CUBLASLT_ORDER_COL) {
    x.inner = out->rows;
    x.outer = out->cols;
  } else if (order == CUBLASLT_ORDER_ROW) {
    x.inner = out->cols;
    x.outer = out->rows;
  } else {
    return false;
  }
  return x.element != 0;
}

struct Matmul {
  cublasLtMatmulDesc_t desc;
  const void* alpha;
  const void* a;
  cublasLtMatrixLayout_t a_layout;
  const void* b;
  cublasLtMatrixLayout_t b_layout;
  const void* beta;
  const void* c;
  cublasLtMatrixLayout_t c_layout;
  const void* d;
  cublasLtMatrixLayout_t d_layout;
};

// What the call touched, in the order fed: reads first, then the write.
int touches(const Matmul& call, blas::Touch out[4]) {
  std::int32_t pointer_mode = -1, scale = -1, transa = CUBLAS_OP_N;
  if (!desc_attribute(call.desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pointer_mode) ||
      pointer_mode != CUBLASLT_POINTER_MODE_HOST ||
      !desc_attribute(call.desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale) ||
      !desc_attribute(call.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa))
    return 0;
  const ScalarType scalar = blas::scalar_type(static_cast<cudaDataType>(scale));
  Scalar alpha = Scalar::kOther, beta = Scalar::kOther;
  if (!blas::classify(call.alpha, scalar, &alpha) || !blas::classify(call.beta, scalar, &beta))
    return 0;
  Layout a, b, c, d;
  if (!describe(call.d_layout, &d)) return 0;
  // op(A) is m x k: k is A's stored cols, or its rows when transposed.
  const bool a_described = describe(call.a_layout, &a);
  std::int64_t k = -1;
  if (a_described) k = transa == CUBLAS_OP_N ? a.cols : a.rows;
  const bool in_place = call.c == call.d;
  if (beta == Scalar::kOne && in_place && (alpha == Scalar::kZero || k == 0)) return 0;
  int n = 0;
  if (alpha != Scalar::kZero && k != 0) {
    if (a_described) {
      a.stored.addr = call.a;
      blas::add_touch(a.stored, Access::kRead, out, &n);
    }
    if (describe(call.b_layout, &b)) {
      b.stored.addr = call.b;
      blas::add_touch(b.stored, Access::kRead, out, &n);
    }
  }
  if (beta != Scalar::kZero && describe(call.c_layout, &c)) {
    c.stored.addr = call.c;
    blas::add_touch(c.stored, Access::kRead, out, &n);
  }
  d.stored.addr = call.d;
  blas::add_touch(d.stored, Access::kWrite, out, &n);
  return n;
}

}  // namespace
}  // namespace xsc::rt

XSC_CUBLASLT_EXPORT cublasStatus_t cublasLtMatmul(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void* alpha,
    const void* A, cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
    const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo, void* workspace,
    size_t workspaceSizeInBytes, cudaStream_t stream) {
  using namespace xsc::rt;
  if (!blas::wanted())
    return call_real<MatmulFn>(real_Matmul, lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc,
                               beta, C, Cdesc, D, Ddesc, algo, workspace, workspaceSizeInBytes,
                               stream);
  const blas::OuterCall call;
  const cublasStatus_t status =
      call_real<MatmulFn>(real_Matmul, lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta,
                          C, Cdesc, D, Ddesc, algo, workspace, workspaceSizeInBytes, stream);
  if (status != CUBLAS_STATUS_SUCCESS || !call.outer()) return status;
  const PartScope part(Part::kInterposers);
  blas::check_release();
  // Asked now, outside any CUPTI callback, through the real library.
  blas::Touch t[4];
  const int n = touches({computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc}, t);
  feed_operator_uses("cublasLtMatmul",
             resolve(reinterpret_cast<std::uint64_t>(stream), /*per_thread_default=*/false), t, n);
  return status;
}

#endif  // __has_include(<cublasLt.h>)
