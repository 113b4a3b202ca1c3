/* A stand-in for libcuda.so.1 with the entry points the runtime itself
 * calls to describe a kernel: its name (cuFuncGetName) and its parameter
 * layout (cuFuncGetParamInfo), for kernels the test program defines with
 * fake_cuda_define. Built with the soname libcuda.so.1, so that the
 * runtime's dlopen("libcuda.so.1", RTLD_NOLOAD) finds it in the process. */
#include <stddef.h>
#include <string.h>

#include <cuda.h>

enum { kMaxKernels = 16, kMaxParams = 16 };

struct fake_kernel {
  const void* handle;
  const char* name;
  size_t n;
  size_t offset[kMaxParams];
  size_t size[kMaxParams];
};

static struct fake_kernel kernels[kMaxKernels];
static int defined;

void fake_cuda_define(const void* handle, const char* name, size_t n, const size_t* sizes) {
  struct fake_kernel* k = &kernels[defined++];
  k->handle = handle;
  k->name = name;
  k->n = n;
  size_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    at = (at + sizes[i] - 1) / sizes[i] * sizes[i];  /* natural alignment */
    k->offset[i] = at;
    k->size[i] = sizes[i];
    at += sizes[i];
  }
}

static const struct fake_kernel* find(const void* handle) {
  for (int i = 0; i < defined; ++i)
    if (kernels[i].handle == handle) return &kernels[i];
  return NULL;
}

CUresult cuFuncGetName(const char** name, CUfunction f) {
  const struct fake_kernel* k = find(f);
  if (k == NULL) return CUDA_ERROR_INVALID_HANDLE;
  *name = k->name;
  return CUDA_SUCCESS;
}

CUresult cuFuncGetParamInfo(CUfunction f, size_t index, size_t* offset, size_t* size) {
  const struct fake_kernel* k = find(f);
  if (k == NULL || index >= k->n) return CUDA_ERROR_INVALID_VALUE;
  *offset = k->offset[index];
  *size = k->size[index];
  return CUDA_SUCCESS;
}
