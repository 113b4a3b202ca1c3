// What cuBLAS and cuBLASLt calls read and write (runtime/libs/cublas/blas_uses.h).
#include "runtime/libs/cublas/blas_uses.h"

#if __has_include(<cublas_v2.h>)
#include <atomic>
#include <cstring>

#include "runtime/libs/real_symbol.h"

namespace xsc::rt::blas {
namespace {

libs::RealSymbol real_GetProperty{"cublasGetProperty"};
libs::RealSymbol real_LtGetProperty{"cublasLtGetProperty"};

constinit thread_local int blas_depth __attribute__((tls_model("initial-exec"))) = 0;

}  // namespace

bool wanted() { return enabled() && options().cublas_access; }

OuterCall::OuterCall() : outer_(blas_depth++ == 0) {}
OuterCall::~OuterCall() { --blas_depth; }

bool classify(const void* p, ScalarType type, Scalar* out) {
  if (p == nullptr) return false;
  switch (type) {
    case ScalarType::kHalf: {
      std::uint16_t bits = 0;
      std::memcpy(&bits, p, sizeof bits);
      *out = (bits & 0x7fffu) == 0 ? Scalar::kZero : bits == 0x3c00u ? Scalar::kOne : Scalar::kOther;
      return true;
    }
    case ScalarType::kFloat: {
      float v = 0;
      std::memcpy(&v, p, sizeof v);
      *out = v == 0.0f ? Scalar::kZero : v == 1.0f ? Scalar::kOne : Scalar::kOther;
      return true;
    }
    case ScalarType::kDouble: {
      double v = 0;
      std::memcpy(&v, p, sizeof v);
      *out = v == 0.0 ? Scalar::kZero : v == 1.0 ? Scalar::kOne : Scalar::kOther;
      return true;
    }
    case ScalarType::kUnknown:
      break;
  }
  return false;
}

ScalarType scalar_type(cudaDataType type) {
  switch (type) {
    case CUDA_R_16F: return ScalarType::kHalf;
    case CUDA_R_32F: return ScalarType::kFloat;
    case CUDA_R_64F: return ScalarType::kDouble;
    default: return ScalarType::kUnknown;
  }
}

std::uint64_t element_size(cudaDataType type) {
  switch (type) {
    case CUDA_R_8I:
    case CUDA_R_8U:
    case CUDA_R_8F_E4M3:
    case CUDA_R_8F_E5M2:
      return 1;
    case CUDA_R_16F:
    case CUDA_R_16BF:
      return 2;
    case CUDA_R_32F:
    case CUDA_R_32I:
      return 4;
    case CUDA_R_64F:
      return 8;
    default:
      return 0;
  }
}

std::uint64_t known_run(const Operand& x) {
  if (x.addr == nullptr || x.element == 0 || x.inner <= 0 || x.outer <= 0 || x.batch <= 0 ||
      x.ld < x.inner)
    return 0;
  // No valid call spans more than 2^56 bytes; a product beyond means
  // arguments the call rejected, or that this arithmetic cannot hold.
  constexpr unsigned __int128 kMax = static_cast<unsigned __int128>(1) << 56;
  if (x.ld != x.inner) return static_cast<std::uint64_t>(x.inner) * x.element;
  unsigned __int128 elements = static_cast<unsigned __int128>(x.inner) * x.outer;
  if (x.batch > 1 && x.stride > 0 && static_cast<unsigned __int128>(x.stride) == elements)
    elements *= static_cast<unsigned __int128>(x.batch);
  const unsigned __int128 bytes = elements * x.element;
  return bytes > kMax ? 0 : static_cast<std::uint64_t>(bytes);
}

void add_touch(const Operand& x, Access access, Touch* out, int* n) {
  const std::uint64_t bytes = known_run(x);
  if (bytes != 0) out[(*n)++] = {reinterpret_cast<Addr>(x.addr), bytes, access};
}

void check_release() {
  static std::atomic<bool> checked{false};
  if (checked.exchange(true, std::memory_order_relaxed)) return;
  using Fn = cublasStatus_t (*)(libraryPropertyType, int*);
  Fn fn = real_GetProperty.get<Fn>();
  if (fn == nullptr) fn = real_LtGetProperty.get<Fn>();
  libs::Release loaded;
  if (fn == nullptr || fn(MAJOR_VERSION, &loaded.major) != CUBLAS_STATUS_SUCCESS ||
      fn(MINOR_VERSION, &loaded.minor) != CUBLAS_STATUS_SUCCESS ||
      fn(PATCH_LEVEL, &loaded.patch) != CUBLAS_STATUS_SUCCESS)
    return;
  libs::note_loaded_release("cuBLAS", "XSC_CUBLAS_ROOT",
                            {CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH}, loaded);
}

}  // namespace xsc::rt::blas

#endif  // __has_include(<cublas_v2.h>)
