// What cuBLAS and cuBLASLt calls read and write, as uses for the checker:
// the pieces runtime/libs/cublas/cublas.cpp and runtime/libs/cublas/cublaslt.cpp
// share (and the call depth that runtime/libs/cudnn/ uses as well). What they
// touched is fed by feed_operator_uses (runtime/libs/operator_uses.cpp).
//
// Both interpose a library's matrix products, decide from the call's
// arguments which bytes it certainly touched, and feed them after the call
// succeeded, on the call's stream, as operator uses named after the call
// (docs/rules.md). A write fed here is a known write: every byte claimed
// must be one the call writes.
#pragma once

#if __has_include(<cublas_v2.h>)
#include <cublas_v2.h>

#include <cstdint>

#include "runtime/libs/real_symbol.h"
#include "runtime/rtl.h"

// cuBLAS and cuBLASLt fail a call they cannot make with
// CUBLAS_STATUS_NOT_INITIALIZED; so does an interposer whose real function
// is missing (libs::call_real).
namespace xsc::libs {
template <>
struct MissingStatus<cublasStatus_t> {
  static constexpr cublasStatus_t kValue = CUBLAS_STATUS_NOT_INITIALIZED;
  static constexpr const char* kName = "CUBLAS_STATUS_NOT_INITIALIZED";
};
}  // namespace xsc::libs

namespace xsc::rt::blas {

bool wanted();  // checking, and cublas_access on

// Interposed cuBLAS, cuBLASLt and cuDNN calls in progress on this thread:
// a call that the library implements by calling another exported entry
// point (a cuBLAS GEMM through cublasLtMatmul, a GEMM inside a cuDNN call)
// is fed once, by the outer one.
class OuterCall {
 public:
  OuterCall();
  ~OuterCall();
  OuterCall(const OuterCall&) = delete;
  OuterCall& operator=(const OuterCall&) = delete;
  bool outer() const { return outer_; }

 private:
  bool outer_;
};

// ---- scalars ----------------------------------------------------------------

enum class ScalarType { kUnknown, kHalf, kFloat, kDouble };
// What a matrix product does depends only on whether alpha is 0 and beta 0
// or 1.
enum class Scalar { kZero, kOne, kOther };

// A host scalar's value class; false when it cannot be told.
bool classify(const void* p, ScalarType type, Scalar* out);

// The scalar type of a real cudaDataType (half, float, double); kUnknown
// for the others.
ScalarType scalar_type(cudaDataType type);

// Bytes per element of a real data type; 0 for the ones left out (complex
// types, whose scalars are pairs, and sub-byte types).
std::uint64_t element_size(cudaDataType type);

// ---- extents ------------------------------------------------------------------

// One operand as stored: `inner` elements run contiguously (a column of a
// column-major matrix), `outer` such runs `ld` elements apart, and `batch`
// matrices `stride` elements apart.
struct Operand {
  const void* addr = nullptr;
  std::int64_t inner = 0, outer = 0, ld = 0;
  std::int64_t batch = 1, stride = 0;
  std::uint64_t element = 0;
};

// The bytes from the operand's start that the call certainly touches, as
// one run: all of a dense matrix (ld == inner), a strided batch of them
// when the stride is exactly one matrix (the first matrix only for any
// other stride), or the first run when ld > inner (the rest is interleaved
// with bytes the call never touches). 0 when there are none or they
// cannot be told.
std::uint64_t known_run(const Operand& x);

using Touch = OperatorUse;

// Adds x's known run to out[*n] with `access`, when it has one.
void add_touch(const Operand& x, Access access, Touch* out, int* n);

// On the first cuBLAS or cuBLASLt call fed, compares the cuBLAS loaded
// (cublasGetProperty, else cublasLtGetProperty) with the headers the
// runtime was built with and says once when they are older
// (runtime/libs/real_symbol.h, note_loaded_release).
void check_release();

}  // namespace xsc::rt::blas

#endif  // __has_include(<cublas_v2.h>)
