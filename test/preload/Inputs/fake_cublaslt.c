/* A stand-in for libcublasLt with the descriptors the runtime reads and the
 * matrix product it interposes. Layouts and operation descriptors hold the
 * attributes the runtime asks for, with cuBLASLt's defaults; the getters
 * answer as cuBLASLt's do (the value's size must match). cublasLtMatmul
 * touches no memory: it checks that every descriptor is there, remembers
 * its arguments (fake_cublaslt_last) so that the program can see they
 * arrived unchanged, and returns success or $FAKE_CUBLASLT_STATUS. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>

/* The release: $FAKE_CUBLAS_VERSION ("major.minor.patch") when set, else the
 * header's. */
cublasStatus_t cublasLtGetProperty(libraryPropertyType type, int* value) {
  int v[3] = {CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH};
  const char* text = getenv("FAKE_CUBLAS_VERSION");
  if (text != NULL) sscanf(text, "%d.%d.%d", &v[0], &v[1], &v[2]);
  if (value == NULL || type < MAJOR_VERSION || type > PATCH_LEVEL) return CUBLAS_STATUS_INVALID_VALUE;
  *value = v[type - MAJOR_VERSION];
  return CUBLAS_STATUS_SUCCESS;
}

/* Kept in the semi-opaque descriptors' storage, as cuBLASLt keeps its own. */
struct fake_layout {
  uint32_t type;
  int32_t order;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch;
  int64_t stride, plane;
  uint32_t batch_mode;
};

struct fake_desc {
  int32_t compute, scale, pointer_mode, transa, transb;
};

_Static_assert(sizeof(struct fake_layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "layout");
_Static_assert(sizeof(struct fake_desc) <= sizeof(cublasLtMatmulDescOpaque_t), "desc");
#define LAYOUT(l) ((struct fake_layout*)(l)->data)
#define DESC(d) ((struct fake_desc*)(d)->data)

struct fake_cublaslt_call {
  const void *alpha, *a, *b, *beta, *c;
  void* d;
  cudaStream_t stream;
};
struct fake_cublaslt_call fake_cublaslt_last;

/* The program owns its descriptors: plain structs it fills itself. */
cublasLtMatrixLayout_t fake_cublaslt_layout(uint32_t type, int32_t order, uint64_t rows,
                                            uint64_t cols, int64_t ld) {
  cublasLtMatrixLayout_t layout = calloc(1, sizeof *layout);
  struct fake_layout* l = LAYOUT(layout);
  l->type = type;
  l->order = order;
  l->rows = rows;
  l->cols = cols;
  l->ld = ld;
  l->batch = 1;
  return layout;
}

void fake_cublaslt_batch(cublasLtMatrixLayout_t layout, int32_t batch, int64_t stride) {
  LAYOUT(layout)->batch = batch;
  LAYOUT(layout)->stride = stride;
}

cublasLtMatmulDesc_t fake_cublaslt_desc(int32_t scale, int32_t pointer_mode, int32_t transa) {
  cublasLtMatmulDesc_t desc = calloc(1, sizeof *desc);
  struct fake_desc* d = DESC(desc);
  d->compute = CUBLAS_COMPUTE_32F;
  d->scale = scale;
  d->pointer_mode = pointer_mode;
  d->transa = transa;
  return desc;
}

static cublasStatus_t give(void* buf, size_t size, size_t* written, const void* value,
                           size_t value_size) {
  if (written != NULL) *written = value_size;
  if (size == 0 && written != NULL) return CUBLAS_STATUS_SUCCESS;
  if (buf == NULL || size != value_size) return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(buf, value, value_size);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attr, void* buf,
                                                size_t size, size_t* written) {
  if (layout == NULL) return CUBLAS_STATUS_INVALID_VALUE;
  const struct fake_layout* l = LAYOUT(layout);
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: return give(buf, size, written, &l->type, 4);
    case CUBLASLT_MATRIX_LAYOUT_ORDER: return give(buf, size, written, &l->order, 4);
    case CUBLASLT_MATRIX_LAYOUT_ROWS: return give(buf, size, written, &l->rows, 8);
    case CUBLASLT_MATRIX_LAYOUT_COLS: return give(buf, size, written, &l->cols, 8);
    case CUBLASLT_MATRIX_LAYOUT_LD: return give(buf, size, written, &l->ld, 8);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return give(buf, size, written, &l->batch, 4);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      return give(buf, size, written, &l->stride, 8);
    case CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET: return give(buf, size, written, &l->plane, 8);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_MODE:
      return give(buf, size, written, &l->batch_mode, 4);
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr, void* buf,
                                              size_t size, size_t* written) {
  if (desc == NULL) return CUBLAS_STATUS_INVALID_VALUE;
  const struct fake_desc* d = DESC(desc);
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return give(buf, size, written, &d->compute, 4);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return give(buf, size, written, &d->scale, 4);
    case CUBLASLT_MATMUL_DESC_POINTER_MODE:
      return give(buf, size, written, &d->pointer_mode, 4);
    case CUBLASLT_MATMUL_DESC_TRANSA: return give(buf, size, written, &d->transa, 4);
    case CUBLASLT_MATMUL_DESC_TRANSB: return give(buf, size, written, &d->transb, 4);
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                              const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc,
                              const void* B, cublasLtMatrixLayout_t Bdesc, const void* beta,
                              const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo,
                              void* workspace, size_t workspace_size, cudaStream_t stream) {
  (void)algo;
  (void)workspace;
  (void)workspace_size;
  if (handle == NULL) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (desc == NULL || Adesc == NULL || Bdesc == NULL || Cdesc == NULL || Ddesc == NULL)
    return CUBLAS_STATUS_INVALID_VALUE;
  struct fake_cublaslt_call call = {alpha, A, B, beta, C, D, stream};
  fake_cublaslt_last = call;
  const char* forced = getenv("FAKE_CUBLASLT_STATUS");
  return forced != NULL ? (cublasStatus_t)atoi(forced) : CUBLAS_STATUS_SUCCESS;
}
