/* cublasLtMatmul as the runtime feeds it: a fake libcublasLt
 * (fake_cublaslt.c) plays the library, a fake CUPTI (fake_cupti_launches.c)
 * the streams, copies and a reading kernel, reduce(const float*, float*,
 * int), which a fake libcuda (fake_libcuda.c) names. Run with
 * XSC_OPTIONS=launch_callbacks=driver.
 *
 *   cublaslt_matmul race      D = A * B, 16 x 16 floats, column-major, on
 *                             stream a; stream b reads D's column 8, no wait
 *   cublaslt_matmul waits     the same, b waits for a first
 *   cublaslt_matmul row       D row-major 8 x 32 (ld 32): b reads its last
 *                             element
 *   cublaslt_matmul ld        D column-major with ld 32 > 16 rows: b reads
 *                             its column 8, c its first column
 *   cublaslt_matmul war       the product reads A on stream a; a copy on
 *                             stream c overwrites A's middle, no wait
 *   cublaslt_matmul war-alpha0 the same with alpha 0: A is not read
 *   cublaslt_matmul unchanged C and D one matrix, alpha 0, beta 1: D = D,
 *                             nothing touched; b reads D's column 8
 *   cublaslt_matmul device-mode the race with scalars in device memory
 *   cublaslt_matmul batched   3 dense 8 x 8 Ds one after the other (stride
 *                             64); b reads the third
 *   cublaslt_matmul half      half D (16 x 16), float scalars; b reads its
 *                             last element
 *
 * Every call's status is printed, and whether the fake library got the
 * arguments the program passed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cupti.h>

#include "fake_cuda_calls.h"
#include "library_call_programs.h"

struct fake_cublaslt_call {
  const void *alpha, *a, *b, *beta, *c;
  void* d;
  cudaStream_t stream;
};
extern struct fake_cublaslt_call fake_cublaslt_last;
cublasLtMatrixLayout_t fake_cublaslt_layout(uint32_t type, int32_t order, uint64_t rows,
                                            uint64_t cols, int64_t ld);
void fake_cublaslt_batch(cublasLtMatrixLayout_t layout, int32_t batch, int64_t stride);
cublasLtMatmulDesc_t fake_cublaslt_desc(int32_t scale, int32_t pointer_mode, int32_t transa);

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: cublaslt_matmul MODE\n");
    return 2;
  }
  const char* mode = argv[1];
  define_reduce();

  cudaStream_t a = make_stream(0x5100);
  cudaStream_t b = make_stream(0x5200);
  cudaStream_t c = make_stream(0x5300);
  char* d_buf = device_alloc(0x7f0000100000ull, 1 << 20);
  char* a_buf = device_alloc(0x7f0000200000ull, 1 << 16);
  char* b_buf = device_alloc(0x7f0000300000ull, 1 << 16);

  cublasLtHandle_t handle = (cublasLtHandle_t)(uintptr_t)0x1170;
  float one = 1.0f, zero = 0.0f;
  const float* alpha = &one;
  const float* beta = &zero;
  const char* c_buf = d_buf;  /* C and D one matrix, as PyTorch passes them */
  int32_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  uint32_t type = CUDA_R_32F;
  int32_t d_order = CUBLASLT_ORDER_COL;
  uint64_t m = 16, n = 16, k = 16;
  int64_t ldd = 16;
  int64_t element = 4;
  if (strcmp(mode, "war-alpha0") == 0) alpha = &zero;
  if (strcmp(mode, "unchanged") == 0) {
    alpha = &zero;
    beta = &one;
  }
  if (strcmp(mode, "device-mode") == 0) pointer_mode = CUBLASLT_POINTER_MODE_DEVICE;
  if (strcmp(mode, "row") == 0) {
    d_order = CUBLASLT_ORDER_ROW;
    m = 8;
    n = 32;
    ldd = 32;
  }
  if (strcmp(mode, "ld") == 0) ldd = 32;
  if (strcmp(mode, "half") == 0) {
    type = CUDA_R_16F;
    element = 2;
  }
  if (strcmp(mode, "batched") == 0) m = n = k = ldd = 8;

  cublasLtMatmulDesc_t desc = fake_cublaslt_desc(CUDA_R_32F, pointer_mode, CUBLAS_OP_N);
  cublasLtMatrixLayout_t la = fake_cublaslt_layout(type, CUBLASLT_ORDER_COL, m, k, (int64_t)m);
  cublasLtMatrixLayout_t lb = fake_cublaslt_layout(type, CUBLASLT_ORDER_COL, k, n, (int64_t)k);
  cublasLtMatrixLayout_t lc = fake_cublaslt_layout(type, d_order, m, n, ldd);
  cublasLtMatrixLayout_t ld = fake_cublaslt_layout(type, d_order, m, n, ldd);
  if (strcmp(mode, "batched") == 0) {
    fake_cublaslt_batch(la, 3, 64);
    fake_cublaslt_batch(lb, 3, 64);
    fake_cublaslt_batch(lc, 3, 64);
    fake_cublaslt_batch(ld, 3, 64);
  }

  cublasStatus_t s = cublasLtMatmul(  /* matmul-site */
      handle, desc, alpha, a_buf, la, b_buf, lb, beta, c_buf, lc, d_buf, ld, NULL, NULL, 0, a);
  const struct fake_cublaslt_call* l = &fake_cublaslt_last;
  const int same = l->alpha == alpha && l->a == a_buf && l->b == b_buf && l->beta == beta &&
                   l->c == c_buf && l->d == d_buf && l->stream == a;
  printf("cublasLtMatmul: status %d, arguments %s\n", (int)s, same ? "unchanged" : "CHANGED");

  if (strcmp(mode, "war") == 0 || strcmp(mode, "war-alpha0") == 0) {
    upload(a_buf + 512, c);  /* copy-site */
  } else if (strcmp(mode, "row") == 0 || strcmp(mode, "half") == 0) {
    reduce(d_buf + (m * n - 1) * element, b);  /* read-site */
  } else if (strcmp(mode, "batched") == 0) {
    reduce(d_buf + (2 * 64 + 5) * element, b);  /* read-site */
  } else {
    if (strcmp(mode, "waits") == 0) order(b, a);
    reduce(d_buf + 8 * ldd * element, b);  /* read-site */
    if (strcmp(mode, "ld") == 0) reduce(d_buf + 4, c);  /* first-column-read */
  }
  free(desc);
  free(la);
  free(lb);
  free(lc);
  free(ld);
  printf("done\n");
  return 0;
}
