/* cuBLAS GEMMs as the runtime feeds them: a fake libcublas (fake_cublas.c)
 * plays the library, a fake CUPTI (fake_cupti_launches.c) the streams,
 * copies and a reading kernel, reduce(const float*, float*, int), which a
 * fake libcuda (fake_libcuda.c) names. Run with
 * XSC_OPTIONS=launch_callbacks=driver.
 *
 *   cublas_gemm race        cublasSgemm_v2 writes C (16 x 16, ldc 16) on
 *                           stream a; stream b reads C's column 8, no wait
 *   cublas_gemm waits       the same, b waits for a first
 *   cublas_gemm ldc         the GEMM's C is a block with ldc 32: stream b
 *                           reads its column 8, stream c its first column
 *   cublas_gemm war         the GEMM reads A on stream a; a copy on stream c
 *                           overwrites A's middle, no wait
 *   cublas_gemm war-alpha0  the same with alpha 0: A is not read
 *   cublas_gemm device-mode the race with CUBLAS_POINTER_MODE_DEVICE
 *   cublas_gemm error       the race with ldc < m: the call fails
 *   cublas_gemm batched     cublasSgemmStridedBatched, 3 dense 8 x 8 Cs one
 *                           after the other on stream a; b reads the third
 *   cublas_gemm gemmex      cublasGemmEx, half C (16 x 16) on stream a; b
 *                           reads its last element
 *   cublas_gemm sgemm64     cublasSgemm_v2_64 (64-bit sizes), C 16 x 16 on
 *                           stream a; b reads its last element
 *
 * Every call's status is printed, and whether the fake library got the
 * arguments the program passed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cupti.h>

#include "fake_cuda_calls.h"
#include "library_call_programs.h"

struct fake_cublas_call {
  const char* name;
  int m, n, k, lda, ldb, ldc, batch;
  const void *alpha, *a, *b, *beta;
  void* c;
  long long stride_c;
};
extern struct fake_cublas_call fake_cublas_last;
size_t fake_cublas_handle_size(void);


static void report(cublasStatus_t status, const char* name, int m, int n, int k, const void* alpha,
                   const void* a, int lda, const void* b, int ldb, const void* beta, void* c,
                   int ldc) {
  const struct fake_cublas_call* l = &fake_cublas_last;
  const int same = l->name != NULL && strcmp(l->name, name) == 0 && l->m == m && l->n == n &&
                   l->k == k && l->alpha == alpha && l->a == a && l->lda == lda && l->b == b &&
                   l->ldb == ldb && l->beta == beta && l->c == c && l->ldc == ldc;
  printf("%s: status %d, arguments %s\n", name, (int)status, same ? "unchanged" : "CHANGED");
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: cublas_gemm MODE\n");
    return 2;
  }
  const char* mode = argv[1];
  define_reduce();

  cudaStream_t a = make_stream(0x5100);
  cudaStream_t b = make_stream(0x5200);
  cudaStream_t c = make_stream(0x5300);
  char* c_buf = device_alloc(0x7f0000100000ull, 1 << 20);
  char* a_buf = device_alloc(0x7f0000200000ull, 1 << 16);
  char* b_buf = device_alloc(0x7f0000300000ull, 1 << 16);

  cublasHandle_t handle = calloc(1, fake_cublas_handle_size());
  cublasSetStream(handle, a);
  float one = 1.0f, zero = 0.0f;
  const float* alpha = &one;
  if (strcmp(mode, "war-alpha0") == 0) alpha = &zero;
  if (strcmp(mode, "device-mode") == 0) cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE);

  if (strcmp(mode, "batched") == 0) {
    const int m = 8;
    cublasStatus_t s = cublasSgemmStridedBatched(  /* gemm-site */
        handle, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, alpha, (const float*)a_buf, m, m * m,
        (const float*)b_buf, m, m * m, &zero, (float*)c_buf, m, m * m, 3);
    report(s, "cublasSgemmStridedBatched", m, m, m, alpha, a_buf, m, b_buf, m, &zero, c_buf, m);
    reduce(c_buf + (2 * m * m + 5) * sizeof(float), b);  /* read-site */
  } else if (strcmp(mode, "gemmex") == 0) {
    const int m = 16;
    cublasStatus_t s = cublasGemmEx(  /* gemm-site */
        handle, CUBLAS_OP_N, CUBLAS_OP_T, m, m, m, alpha, a_buf, CUDA_R_16F, m, b_buf, CUDA_R_16F,
        m, &zero, c_buf, CUDA_R_16F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    report(s, "cublasGemmEx", m, m, m, alpha, a_buf, m, b_buf, m, &zero, c_buf, m);
    reduce(c_buf + (m * m - 1) * 2, b);  /* read-site */
  } else if (strcmp(mode, "sgemm64") == 0) {
    const int64_t m = 16;
    cublasStatus_t s = cublasSgemm_v2_64(  /* gemm-site */
        handle, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, alpha, (const float*)a_buf, m,
        (const float*)b_buf, m, &zero, (float*)c_buf, m);
    report(s, "cublasSgemm_v2_64", m, m, m, alpha, a_buf, m, b_buf, m, &zero, c_buf, m);
    reduce(c_buf + (m * m - 1) * sizeof(float), b);  /* read-site */
  } else {
    const int m = 16;
    int ldc = m;
    if (strcmp(mode, "ldc") == 0) ldc = 32;
    if (strcmp(mode, "error") == 0) ldc = 8;
    cublasStatus_t s = cublasSgemm_v2(  /* gemm-site */
        handle, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, alpha, (const float*)a_buf, m,
        (const float*)b_buf, m, &zero, (float*)c_buf, ldc);
    report(s, "cublasSgemm_v2", m, m, m, alpha, a_buf, m, b_buf, m, &zero, c_buf, ldc);
    if (strcmp(mode, "war") == 0 || strcmp(mode, "war-alpha0") == 0) {
      upload(a_buf + 512, c);  /* copy-site */
    } else {
      if (strcmp(mode, "waits") == 0) order(b, a);
      reduce(c_buf + 8 * ldc * sizeof(float), b);  /* read-site */
      if (strcmp(mode, "ldc") == 0) reduce(c_buf + 4, c);  /* first-column-read */
    }
  }
  free(handle);
  printf("done\n");
  return 0;
}
