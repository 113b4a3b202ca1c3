// CHECK_CUDA for the small stand-alone examples (the pipelines use
// common.cuh's XSC_EXAMPLE_CHECK): a failing CUDA call prints where and why,
// and the program exits 1.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_CUDA(call)                                                                  \
  do {                                                                                    \
    cudaError_t err_ = (call);                                                            \
    if (err_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                  \
                   cudaGetErrorString(err_));                                             \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)
