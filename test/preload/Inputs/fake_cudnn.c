/* A stand-in for libcudnn with the entry points the runtime interposes and
 * the ones it asks (the handle's stream; tensor, filter and convolution
 * descriptors). Its calls touch no device memory: they check a few
 * arguments the way cuDNN does (a null handle, descriptor or data pointer
 * is CUDNN_STATUS_BAD_PARAM), remember the last call's pointer arguments
 * (fake_cudnn_last) so that the test program can see that they arrived
 * unchanged, and return success, or the status in $FAKE_CUDNN_STATUS for a
 * call whose arguments are valid (a call that failed to run). With
 * $FAKE_CUDNN_NESTED set, cudnnBatchNormalizationForwardTraining does its
 * work by calling the exported cudnnBatchNormalizationForwardTrainingEx, as
 * a library may (counted in fake_cudnn_nested). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cudnn.h>

struct cudnnContext {
  cudaStream_t stream;
};

struct cudnnTensorStruct {
  cudnnDataType_t type;
  int rank;
  int dims[CUDNN_DIM_MAX], strides[CUDNN_DIM_MAX];
};

struct cudnnFilterStruct {
  cudnnDataType_t type;
  cudnnTensorFormat_t format;
  int rank;
  int dims[CUDNN_DIM_MAX];
};

struct cudnnConvolutionStruct {
  int length;
  int pads[CUDNN_DIM_MAX], strides[CUDNN_DIM_MAX], dilations[CUDNN_DIM_MAX];
};

#define FAKE_CUDNN_MAX_ARGS 16
struct fake_cudnn_call {
  const char* name;
  int count;
  const void* args[FAKE_CUDNN_MAX_ARGS];
};
struct fake_cudnn_call fake_cudnn_last;
int fake_cudnn_nested;

/* The test owns its handles: no cudnnCreate needed. */
size_t fake_cudnn_handle_size(void) { return sizeof(struct cudnnContext); }

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
  if (handle == NULL) return CUDNN_STATUS_BAD_PARAM;
  handle->stream = stream;
  return CUDNN_STATUS_SUCCESS;
}

/* The release: $FAKE_CUDNN_VERSION (as cuDNN 9 counts, e.g. 91900) when
 * set, else the header's. */
size_t cudnnGetVersion(void) {
  const char* v = getenv("FAKE_CUDNN_VERSION");
  return v != NULL ? (size_t)strtoul(v, NULL, 10) : (size_t)CUDNN_VERSION;
}

cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t* stream) {
  if (handle == NULL || stream == NULL) return CUDNN_STATUS_BAD_PARAM;
  *stream = handle->stream;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* desc) {
  *desc = calloc(1, sizeof **desc);
  return *desc != NULL ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t desc) {
  free(desc);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t desc, cudnnDataType_t type,
                                         int rank, const int dims[], const int strides[]) {
  if (desc == NULL || rank < 1 || rank > CUDNN_DIM_MAX) return CUDNN_STATUS_BAD_PARAM;
  desc->type = type;
  desc->rank = rank;
  memcpy(desc->dims, dims, rank * sizeof *dims);
  memcpy(desc->strides, strides, rank * sizeof *strides);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t desc, int requested,
                                         cudnnDataType_t* type, int* rank, int dims[],
                                         int strides[]) {
  if (desc == NULL) return CUDNN_STATUS_BAD_PARAM;
  *type = desc->type;
  *rank = desc->rank;
  for (int i = 0; i < desc->rank && i < requested; ++i) {
    dims[i] = desc->dims[i];
    strides[i] = desc->strides[i];
  }
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* desc) {
  *desc = calloc(1, sizeof **desc);
  return *desc != NULL ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t desc, cudnnDataType_t type,
                                         cudnnTensorFormat_t format, int rank, const int dims[]) {
  if (desc == NULL || rank < 3 || rank > CUDNN_DIM_MAX) return CUDNN_STATUS_BAD_PARAM;
  desc->type = type;
  desc->format = format;
  desc->rank = rank;
  memcpy(desc->dims, dims, rank * sizeof *dims);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t desc, int requested,
                                         cudnnDataType_t* type, cudnnTensorFormat_t* format,
                                         int* rank, int dims[]) {
  if (desc == NULL) return CUDNN_STATUS_BAD_PARAM;
  *type = desc->type;
  *format = desc->format;
  *rank = desc->rank;
  for (int i = 0; i < desc->rank && i < requested; ++i) dims[i] = desc->dims[i];
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* desc) {
  *desc = calloc(1, sizeof **desc);
  return *desc != NULL ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t desc, int length,
                                              const int pads[], const int strides[],
                                              const int dilations[], cudnnConvolutionMode_t mode,
                                              cudnnDataType_t compute) {
  (void)mode, (void)compute;
  if (desc == NULL || length < 1 || length > CUDNN_DIM_MAX) return CUDNN_STATUS_BAD_PARAM;
  desc->length = length;
  memcpy(desc->pads, pads, length * sizeof *pads);
  memcpy(desc->strides, strides, length * sizeof *strides);
  memcpy(desc->dilations, dilations, length * sizeof *dilations);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionNdDescriptor(const cudnnConvolutionDescriptor_t desc,
                                              int requested, int* length, int pads[],
                                              int strides[], int dilations[],
                                              cudnnConvolutionMode_t* mode,
                                              cudnnDataType_t* compute) {
  if (desc == NULL) return CUDNN_STATUS_BAD_PARAM;
  /* as cuDNN 9.19 answers a request for more spatial dims than it has */
  if (requested < 1 || requested > CUDNN_DIM_MAX - 2) return CUDNN_STATUS_NOT_SUPPORTED;
  *length = desc->length;
  for (int i = 0; i < desc->length && i < requested; ++i) {
    pads[i] = desc->pads[i];
    strides[i] = desc->strides[i];
    dilations[i] = desc->dilations[i];
  }
  *mode = CUDNN_CROSS_CORRELATION;
  *compute = CUDNN_DATA_FLOAT;
  return CUDNN_STATUS_SUCCESS;
}

/* Remembers `count` pointer arguments, in the order the call takes them. */
static void remember(const char* name, int count, ...) {
  va_list args;
  va_start(args, count);
  fake_cudnn_last.name = name;
  fake_cudnn_last.count = count;
  for (int i = 0; i < count && i < FAKE_CUDNN_MAX_ARGS; ++i)
    fake_cudnn_last.args[i] = va_arg(args, const void*);
  va_end(args);
}

/* Success when the handle and the `count` required pointers are set. */
static cudnnStatus_t check(cudnnHandle_t handle, int count, ...) {
  if (handle == NULL) return CUDNN_STATUS_BAD_PARAM;
  va_list args;
  va_start(args, count);
  int missing = 0;
  for (int i = 0; i < count; ++i) missing |= va_arg(args, const void*) == NULL;
  va_end(args);
  if (missing) return CUDNN_STATUS_BAD_PARAM;
  const char* forced = getenv("FAKE_CUDNN_STATUS");
  return forced != NULL ? (cudnnStatus_t)atoi(forced) : CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBatchNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnTensorDescriptor_t yDesc,
    void* y, const cudnnTensorDescriptor_t bnDesc, const void* bnScale, const void* bnBias,
    double factor, void* runningMean, void* runningVariance, double epsilon, void* saveMean,
    void* saveInvVariance) {
  (void)mode, (void)factor, (void)epsilon;
  if (getenv("FAKE_CUDNN_NESTED") != NULL) {
    ++fake_cudnn_nested;
    cudnnStatus_t status = cudnnBatchNormalizationForwardTrainingEx(
        handle, mode, CUDNN_BATCHNORM_OPS_BN, alpha, beta, xDesc, x, NULL, NULL, yDesc, y, bnDesc,
        bnScale, bnBias, factor, runningMean, runningVariance, epsilon, saveMean, saveInvVariance,
        NULL, NULL, 0, NULL, 0);
    remember("cudnnBatchNormalizationForwardTraining", 10, alpha, beta, x, y, bnScale, bnBias,
             runningMean, runningVariance, saveMean, saveInvVariance);
    return status;
  }
  remember("cudnnBatchNormalizationForwardTraining", 10, alpha, beta, x, y, bnScale, bnBias,
           runningMean, runningVariance, saveMean, saveInvVariance);
  return check(handle, 9, alpha, beta, xDesc, x, yDesc, y, bnDesc, bnScale, bnBias);
}

cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const void* alpha,
    const void* beta, const cudnnTensorDescriptor_t xDesc, const void* xData,
    const cudnnTensorDescriptor_t zDesc, const void* zData, const cudnnTensorDescriptor_t yDesc,
    void* yData, const cudnnTensorDescriptor_t bnDesc, const void* bnScale, const void* bnBias,
    double factor, void* runningMean, void* runningVariance, double epsilon, void* saveMean,
    void* saveInvVariance, cudnnActivationDescriptor_t activationDesc, void* workspace,
    size_t workspaceBytes, void* reserveSpace, size_t reserveBytes) {
  (void)mode, (void)bnOps, (void)zDesc, (void)factor, (void)epsilon, (void)activationDesc;
  (void)workspaceBytes, (void)reserveBytes;
  remember("cudnnBatchNormalizationForwardTrainingEx", 13, alpha, beta, xData, zData, yData,
           bnScale, bnBias, runningMean, runningVariance, saveMean, saveInvVariance, workspace,
           reserveSpace);
  return check(handle, 9, alpha, beta, xDesc, xData, yDesc, yData, bnDesc, bnScale, bnBias);
}

cudnnStatus_t cudnnBatchNormalizationForwardInference(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
    const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnTensorDescriptor_t yDesc,
    void* y, const cudnnTensorDescriptor_t bnDesc, const void* bnScale, const void* bnBias,
    const void* estimatedMean, const void* estimatedVariance, double epsilon) {
  (void)mode, (void)epsilon;
  remember("cudnnBatchNormalizationForwardInference", 8, alpha, beta, x, y, bnScale, bnBias,
           estimatedMean, estimatedVariance);
  return check(handle, 11, alpha, beta, xDesc, x, yDesc, y, bnDesc, bnScale, bnBias,
               estimatedMean, estimatedVariance);
}

cudnnStatus_t cudnnBatchNormalizationBackward(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alphaDataDiff,
    const void* betaDataDiff, const void* alphaParamDiff, const void* betaParamDiff,
    const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnTensorDescriptor_t dyDesc,
    const void* dy, const cudnnTensorDescriptor_t dxDesc, void* dx,
    const cudnnTensorDescriptor_t bnDesc, const void* bnScale, void* dBnScale, void* dBnBias,
    double epsilon, const void* savedMean, const void* savedInvVariance) {
  (void)mode, (void)epsilon;
  remember("cudnnBatchNormalizationBackward", 12, alphaDataDiff, betaDataDiff, alphaParamDiff,
           betaParamDiff, x, dy, dx, bnScale, dBnScale, dBnBias, savedMean, savedInvVariance);
  return check(handle, 14, alphaDataDiff, betaDataDiff, alphaParamDiff, betaParamDiff, xDesc, x,
               dyDesc, dy, dxDesc, dx, bnDesc, bnScale, dBnScale, dBnBias);
}

cudnnStatus_t cudnnBatchNormalizationBackwardEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const void* alphaDataDiff, const void* betaDataDiff, const void* alphaParamDiff,
    const void* betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void* xData,
    const cudnnTensorDescriptor_t yDesc, const void* yData, const cudnnTensorDescriptor_t dyDesc,
    const void* dyData, const cudnnTensorDescriptor_t dzDesc, void* dzData,
    const cudnnTensorDescriptor_t dxDesc, void* dxData, const cudnnTensorDescriptor_t bnDesc,
    const void* bnScaleData, const void* bnBiasData, void* dBnScaleData, void* dBnBiasData,
    double epsilon, const void* savedMean, const void* savedInvVariance,
    cudnnActivationDescriptor_t activationDesc, void* workSpace, size_t workSpaceBytes,
    void* reserveSpace, size_t reserveBytes) {
  (void)mode, (void)bnOps, (void)yDesc, (void)dzDesc, (void)epsilon, (void)activationDesc;
  (void)workSpaceBytes, (void)reserveBytes;
  remember("cudnnBatchNormalizationBackwardEx", 16, alphaDataDiff, betaDataDiff, alphaParamDiff,
           betaParamDiff, xData, yData, dyData, dzData, dxData, bnScaleData, bnBiasData,
           dBnScaleData, dBnBiasData, savedMean, savedInvVariance, reserveSpace);
  (void)workSpace;
  return check(handle, 14, alphaDataDiff, betaDataDiff, alphaParamDiff, betaParamDiff, xDesc,
               xData, dyDesc, dyData, dxDesc, dxData, bnDesc, bnScaleData, dBnScaleData,
               dBnBiasData);
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha,
                                      const cudnnTensorDescriptor_t xDesc, const void* x,
                                      const cudnnFilterDescriptor_t wDesc, const void* w,
                                      const cudnnConvolutionDescriptor_t convDesc,
                                      cudnnConvolutionFwdAlgo_t algo, void* workSpace,
                                      size_t workSpaceBytes, const void* beta,
                                      const cudnnTensorDescriptor_t yDesc, void* y) {
  (void)algo, (void)workSpaceBytes;
  remember("cudnnConvolutionForward", 6, alpha, x, w, workSpace, beta, y);
  return check(handle, 9, alpha, xDesc, x, wDesc, w, convDesc, beta, yDesc, y);
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void* alpha,
                                           const cudnnFilterDescriptor_t wDesc, const void* w,
                                           const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                           const cudnnConvolutionDescriptor_t convDesc,
                                           cudnnConvolutionBwdDataAlgo_t algo, void* workSpace,
                                           size_t workSpaceBytes, const void* beta,
                                           const cudnnTensorDescriptor_t dxDesc, void* dx) {
  (void)algo, (void)workSpaceBytes;
  remember("cudnnConvolutionBackwardData", 6, alpha, w, dy, workSpace, beta, dx);
  return check(handle, 9, alpha, wDesc, w, dyDesc, dy, convDesc, beta, dxDesc, dx);
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void* alpha,
                                             const cudnnTensorDescriptor_t xDesc, const void* x,
                                             const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                             const cudnnConvolutionDescriptor_t convDesc,
                                             cudnnConvolutionBwdFilterAlgo_t algo,
                                             void* workSpace, size_t workSpaceBytes,
                                             const void* beta,
                                             const cudnnFilterDescriptor_t dwDesc, void* dw) {
  (void)algo, (void)workSpaceBytes;
  remember("cudnnConvolutionBackwardFilter", 6, alpha, x, dy, workSpace, beta, dw);
  return check(handle, 9, alpha, xDesc, x, dyDesc, dy, convDesc, beta, dwDesc, dw);
}

cudnnStatus_t cudnnAddTensor(cudnnHandle_t handle, const void* alpha,
                             const cudnnTensorDescriptor_t aDesc, const void* A, const void* beta,
                             const cudnnTensorDescriptor_t cDesc, void* C) {
  remember("cudnnAddTensor", 4, alpha, A, beta, C);
  return check(handle, 6, alpha, aDesc, A, beta, cDesc, C);
}
