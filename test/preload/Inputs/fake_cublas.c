/* A stand-in for libcublas with the entry points the runtime interposes and
 * the two it asks (the handle's stream and pointer mode). Its GEMMs touch no
 * memory: they check their arguments the way cuBLAS does, remember the last
 * call's arguments (fake_cublas_last) so that the test program can see that
 * they arrived unchanged, and return the status cuBLAS would, or that of
 * $FAKE_CUBLAS_STATUS for a call whose arguments are valid (a GEMM that
 * failed to run). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

/* The release: $FAKE_CUBLAS_VERSION ("major.minor.patch") when set, else the
 * header's. */
cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value) {
  int v[3] = {CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH};
  const char* text = getenv("FAKE_CUBLAS_VERSION");
  if (text != NULL) sscanf(text, "%d.%d.%d", &v[0], &v[1], &v[2]);
  if (value == NULL || type < MAJOR_VERSION || type > PATCH_LEVEL) return CUBLAS_STATUS_INVALID_VALUE;
  *value = v[type - MAJOR_VERSION];
  return CUBLAS_STATUS_SUCCESS;
}

struct cublasContext {
  cudaStream_t stream;
  cublasPointerMode_t mode;
};

struct fake_cublas_call {
  const char* name;
  int m, n, k, lda, ldb, ldc, batch;
  const void *alpha, *a, *b, *beta;
  void* c;
  long long stride_c;
};
struct fake_cublas_call fake_cublas_last;

/* The test owns its handles: no cublasCreate needed. */
size_t fake_cublas_handle_size(void) { return sizeof(struct cublasContext); }

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  if (handle == NULL) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* stream) {
  if (handle == NULL) return CUBLAS_STATUS_NOT_INITIALIZED;
  *stream = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode) {
  if (handle == NULL) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t* mode) {
  if (handle == NULL) return CUBLAS_STATUS_NOT_INITIALIZED;
  *mode = handle->mode;
  return CUBLAS_STATUS_SUCCESS;
}

static int rows(cublasOperation_t op, int plain, int transposed) {
  return op == CUBLAS_OP_N ? plain : transposed;
}

static cublasStatus_t check(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb,
                            int m, int n, int k, int lda, int ldb, int ldc) {
  if (handle == NULL) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || k < 0) return CUBLAS_STATUS_INVALID_VALUE;
  const int ra = rows(ta, m, k), rb = rows(tb, k, n);
  if (lda < (ra > 1 ? ra : 1) || ldb < (rb > 1 ? rb : 1) || ldc < (m > 1 ? m : 1))
    return CUBLAS_STATUS_INVALID_VALUE;
  const char* forced = getenv("FAKE_CUBLAS_STATUS");
  return forced != NULL ? (cublasStatus_t)atoi(forced) : CUBLAS_STATUS_SUCCESS;
}

static void remember(const char* name, int m, int n, int k, const void* alpha, const void* a,
                     int lda, const void* b, int ldb, const void* beta, void* c, int ldc,
                     long long stride_c, int batch) {
  struct fake_cublas_call call = {name, m, n, k, lda, ldb, ldc, batch, alpha, a, b, beta, c,
                                  stride_c};
  fake_cublas_last = call;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const float* alpha,
                              const float* A, int lda, const float* B, int ldb, const float* beta,
                              float* C, int ldc) {
  remember("cublasSgemm_v2", m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, 0, 1);
  return check(handle, transa, transb, m, n, k, lda, ldb, ldc);
}

/* The 64-bit-size form; the sizes here fit in an int. */
cublasStatus_t cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                 cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                 const float* alpha, const float* A, int64_t lda, const float* B,
                                 int64_t ldb, const float* beta, float* C, int64_t ldc) {
  remember("cublasSgemm_v2_64", (int)m, (int)n, (int)k, alpha, A, (int)lda, B, (int)ldb, beta, C,
           (int)ldc, 0, 1);
  return check(handle, transa, transb, (int)m, (int)n, (int)k, (int)lda, (int)ldb, (int)ldc);
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C,
                            cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo) {
  (void)Atype, (void)Btype, (void)Ctype, (void)computeType, (void)algo;
  remember("cublasGemmEx", m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, 0, 1);
  return check(handle, transa, transb, m, n, k, lda, ldb, ldc);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const float* alpha, const float* A, int lda,
                                         long long int strideA, const float* B, int ldb,
                                         long long int strideB, const float* beta, float* C,
                                         int ldc, long long int strideC, int batchCount) {
  (void)strideA, (void)strideB;
  remember("cublasSgemmStridedBatched", m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, strideC,
           batchCount);
  if (batchCount < 0) return CUBLAS_STATUS_INVALID_VALUE;
  return check(handle, transa, transb, m, n, k, lda, ldb, ldc);
}
