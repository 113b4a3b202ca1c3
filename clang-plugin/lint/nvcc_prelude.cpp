#include "lint/nvcc_prelude.h"

namespace xsc::lint {

// Each entry is something nvcc's own headers give host code and Clang's CUDA
// headers do not; each was found by code that nvcc compiles and Clang's CUDA
// mode rejected (docs/static-check.md lists them). Only declarations nvcc
// itself makes, with its signatures and results: a program that compiles with
// Clang already sees nothing new it could resolve to differently, except where
// nvcc would resolve to the same function.
const char kNvccPrelude[] = R"prelude(// xstream-lint: nvcc compatibility prelude (host side only)
#pragma once
#pragma clang system_header

// nvcc defines __CUDACC__ as 1; Clang's CUDA wrapper defines it empty, so
// `#if __CUDACC__` (NCCL 2.28's nccl_device headers, which nccl.h
// includes) is an error under Clang.
#undef __CUDACC__
#define __CUDACC__ 1

#ifdef __cplusplus

// min/max for the arithmetic types, callable from host code. nvcc's
// crt/math_functions.h and .hpp declare these __host__ __device__; Clang's
// CUDA wrapper makes its copies device-only, so host code such as
// `max(elapsed, 1.0f)` or `min(blocks, 768 * sms)` does not compile there.
// Same overload set and results as nvcc's (mixed signed/unsigned compares as
// unsigned, floating point takes fmin/fmax's NaN rule).
#define XSC_NVCC_HOST static inline __attribute__((host))
#define XSC_NVCC_INT_MINMAX(R, A, B)                                        \
  XSC_NVCC_HOST R min(const A a, const B b) {                               \
    return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a)        \
                                                 : static_cast<R>(b);       \
  }                                                                         \
  XSC_NVCC_HOST R max(const A a, const B b) {                               \
    return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a)        \
                                                 : static_cast<R>(b);       \
  }
#define XSC_NVCC_FP_MINMAX(R, A, B)                                         \
  XSC_NVCC_HOST R min(const A a, const B b) {                               \
    return __builtin_fmin(static_cast<R>(a), static_cast<R>(b));            \
  }                                                                         \
  XSC_NVCC_HOST R max(const A a, const B b) {                               \
    return __builtin_fmax(static_cast<R>(a), static_cast<R>(b));            \
  }
XSC_NVCC_INT_MINMAX(int, int, int)
XSC_NVCC_INT_MINMAX(unsigned int, unsigned int, unsigned int)
XSC_NVCC_INT_MINMAX(unsigned int, int, unsigned int)
XSC_NVCC_INT_MINMAX(unsigned int, unsigned int, int)
XSC_NVCC_INT_MINMAX(long int, long int, long int)
XSC_NVCC_INT_MINMAX(unsigned long int, unsigned long int, unsigned long int)
XSC_NVCC_INT_MINMAX(unsigned long int, long int, unsigned long int)
XSC_NVCC_INT_MINMAX(unsigned long int, unsigned long int, long int)
XSC_NVCC_INT_MINMAX(long long int, long long int, long long int)
XSC_NVCC_INT_MINMAX(unsigned long long int, unsigned long long int, unsigned long long int)
XSC_NVCC_INT_MINMAX(unsigned long long int, long long int, unsigned long long int)
XSC_NVCC_INT_MINMAX(unsigned long long int, unsigned long long int, long long int)
XSC_NVCC_HOST float min(const float a, const float b) { return __builtin_fminf(a, b); }
XSC_NVCC_HOST float max(const float a, const float b) { return __builtin_fmaxf(a, b); }
XSC_NVCC_FP_MINMAX(double, double, double)
XSC_NVCC_FP_MINMAX(double, float, double)
XSC_NVCC_FP_MINMAX(double, double, float)

// The typed variants nvcc's crt/math_functions.h also defines for host code.
XSC_NVCC_HOST unsigned int umin(const unsigned int a, const unsigned int b) { return a < b ? a : b; }
XSC_NVCC_HOST unsigned int umax(const unsigned int a, const unsigned int b) { return a > b ? a : b; }
XSC_NVCC_HOST long long int llmin(const long long int a, const long long int b) { return a < b ? a : b; }
XSC_NVCC_HOST long long int llmax(const long long int a, const long long int b) { return a > b ? a : b; }
XSC_NVCC_HOST unsigned long long int ullmin(const unsigned long long int a,
                                            const unsigned long long int b) { return a < b ? a : b; }
XSC_NVCC_HOST unsigned long long int ullmax(const unsigned long long int a,
                                            const unsigned long long int b) { return a > b ? a : b; }

#undef XSC_NVCC_FP_MINMAX
#undef XSC_NVCC_INT_MINMAX
#undef XSC_NVCC_HOST
#endif  // __cplusplus
)prelude";

}  // namespace xsc::lint
