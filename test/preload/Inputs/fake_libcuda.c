/* A stand-in for libcuda.so.1 with the entry points the runtime itself
 * calls to describe a kernel: its name (cuFuncGetName) and its parameter
 * layout (cuFuncGetParamInfo), for kernels the test program defines with
 * fake_cuda_define. Built with the soname libcuda.so.1, so that the
 * runtime's dlopen("libcuda.so.1", RTLD_NOLOAD) finds it in the process; and
 * the flags and capture status of streams (below). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cupti.h>

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

/* Stream capture as the driver reports it (cuStreamGetCaptureInfo_v2): a
 * program marks a stream capturing with fake_cuda_capture(stream, id), id 0
 * to end it. With fake_cuda_nested_callback_on_query(1) each query first
 * delivers a cuCtxSynchronize through the CUPTI callback, as a driver call
 * made inside a callback re-enters CUPTI: a runtime that took it as the
 * application's would order every stream (or wait on its own lock). */
int fake_cupti_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, int exit_site,
                    const void* params, void* result);
#pragma weak fake_cupti_call

enum { kMaxCaptures = 16 };
static struct {
  CUstream stream;
  cuuint64_t id;
} captures[kMaxCaptures];
static int nested_on_query;

void fake_cuda_capture(CUstream stream, unsigned long long id) {
  for (int i = 0; i < kMaxCaptures; ++i)
    if (captures[i].stream == stream || captures[i].stream == NULL) {
      captures[i].stream = id != 0 ? stream : NULL;
      captures[i].id = id;
      return;
    }
}

void fake_cuda_nested_callback_on_query(int on) { nested_on_query = on; }

/* After fake_cuda_forbid_stream_queries(1) the streams a program names are
 * destroyed ones: a question about a stream then stops the process, as the
 * driver reading a freed stream object may. */
static int queries_forbidden;

void fake_cuda_forbid_stream_queries(int on) { queries_forbidden = on; }

static void stream_query(const char* what) {
  if (!queries_forbidden) return;
  fprintf(stderr, "fake libcuda: %s asked about a destroyed stream\n", what);
  abort();
}

/* Every stream is blocking. */
CUresult cuStreamGetFlags(CUstream stream, unsigned int* flags) {
  (void)stream;
  stream_query("cuStreamGetFlags");
  *flags = 0;
  return CUDA_SUCCESS;
}

CUresult cuStreamGetCaptureInfo_v2(CUstream stream, CUstreamCaptureStatus* status, cuuint64_t* id,
                                   CUgraph* graph, const CUgraphNode** dependencies,
                                   size_t* count) {
  stream_query("cuStreamGetCaptureInfo_v2");
  if (nested_on_query && fake_cupti_call) {
    static CUresult ok = CUDA_SUCCESS;
    fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, 0, NULL,
                    &ok);
    fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, 1, NULL,
                    &ok);
  }
  *status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (id != NULL) *id = 0;
  if (graph != NULL) *graph = NULL;
  if (dependencies != NULL) *dependencies = NULL;
  if (count != NULL) *count = 0;
  for (int i = 0; i < kMaxCaptures; ++i)
    if (captures[i].stream == stream && captures[i].id != 0) {
      *status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
      if (id != NULL) *id = captures[i].id;
    }
  return CUDA_SUCCESS;
}
