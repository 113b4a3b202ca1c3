/* cuDNN's batch norm and convolutions as the runtime feeds them: a fake
 * libcudnn (fake_cudnn.c) plays the library, a fake CUPTI
 * (fake_cupti_launches.c) the streams, copies and a reading kernel,
 * reduce(const float*, float*, int), which a fake libcuda (fake_libcuda.c)
 * names. Run with XSC_OPTIONS=launch_callbacks=driver.
 *
 * x is 2 x 4 x 8 x 8 floats (NCHW, dense: 2048 bytes), y the same shape,
 * the batch-norm parameters 4 floats each (16 bytes).
 *
 *   cudnn_calls race       cudnnBatchNormalizationForwardTrainingEx, as
 *                          PyTorch calls it, writes y on stream a; stream b
 *                          reads y's second image, no wait
 *   cudnn_calls waits      the same, b waits for a first
 *   cudnn_calls war        the same call reads x on stream a; a copy on
 *                          stream c overwrites x's middle, no wait
 *   cudnn_calls padded     the race with y's rows padded to 16 floats
 *                          (strides 512, 128, 16, 1): y is not dense
 *   cudnn_calls bad-param  the race with x null: the call fails
 *   cudnn_calls each       every interposed entry point once, on stream a
 *                          (the uses fed are read from the trace)
 *   cudnn_calls conv       cudnnConvolutionForward (w 8 x 4 x 3 x 3, pad 1,
 *                          stride 1) writes y on stream a; stream b reads y
 *   cudnn_calls conv-war   the same; a copy on stream c overwrites w
 *   cudnn_calls conv-skip  a 1 x 1 convolution with stride 2 (odd rows of
 *                          x never read) on stream a; a copy on stream c
 *                          overwrites x
 *
 * Every call's status is printed, and whether the fake library got the
 * pointers the program passed. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudnn.h>
#include <cupti.h>

#include "fake_cuda_calls.h"
#include "library_call_programs.h"

struct fake_cudnn_call {
  const char* name;
  int count;
  const void* args[16];
};
extern struct fake_cudnn_call fake_cudnn_last;
extern int fake_cudnn_nested;
size_t fake_cudnn_handle_size(void);

/* Prints the status, and whether the library saw the `count` pointers. */
static void report(cudnnStatus_t status, const char* name, int count, ...) {
  const struct fake_cudnn_call* l = &fake_cudnn_last;
  int same = l->name != NULL && strcmp(l->name, name) == 0 && l->count == count;
  va_list args;
  va_start(args, count);
  for (int i = 0; i < count; ++i) same &= l->args[i] == va_arg(args, const void*);
  va_end(args);
  printf("%s: status %d, arguments %s\n", name, (int)status, same ? "unchanged" : "CHANGED");
}

static cudnnTensorDescriptor_t tensor(int n, int c, int h, int w, int row_stride) {
  cudnnTensorDescriptor_t desc;
  cudnnCreateTensorDescriptor(&desc);
  const int dims[] = {n, c, h, w};
  const int strides[] = {c * h * row_stride, h * row_stride, row_stride, 1};
  cudnnSetTensorNdDescriptor(desc, CUDNN_DATA_FLOAT, 4, dims, strides);
  return desc;
}

static cudnnFilterDescriptor_t filter(int k, int c, int r, int s) {
  cudnnFilterDescriptor_t desc;
  cudnnCreateFilterDescriptor(&desc);
  const int dims[] = {k, c, r, s};
  cudnnSetFilterNdDescriptor(desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, dims);
  return desc;
}

static cudnnConvolutionDescriptor_t convolution(int pad, int stride) {
  cudnnConvolutionDescriptor_t desc;
  cudnnCreateConvolutionDescriptor(&desc);
  const int pads[] = {pad, pad}, strides[] = {stride, stride}, dilations[] = {1, 1};
  cudnnSetConvolutionNdDescriptor(desc, 2, pads, strides, dilations, CUDNN_CROSS_CORRELATION,
                                  CUDNN_DATA_FLOAT);
  return desc;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: cudnn_calls MODE\n");
    return 2;
  }
  const char* mode = argv[1];
  define_reduce();

  cudaStream_t a = make_stream(0x5100);
  cudaStream_t b = make_stream(0x5200);
  cudaStream_t c = make_stream(0x5300);
  char* x = device_alloc(0x7f0000100000ull, 1 << 16);
  char* y = device_alloc(0x7f0000200000ull, 1 << 16);
  char* params = device_alloc(0x7f0000300000ull, 1 << 12);
  char* w = device_alloc(0x7f0000500000ull, 1 << 16);
  char* work = device_alloc(0x7f0000600000ull, 1 << 12);
  /* scale, bias, running mean and variance, saved mean and inverse
   * variance, their gradients: 64 bytes apart */
  char* scale = params;
  char* bias = params + 64;
  char* running_mean = params + 128;
  char* running_var = params + 192;
  char* save_mean = params + 256;
  char* save_inv_var = params + 320;
  char* dscale = params + 384;
  char* dbias = params + 448;
  char* reserve = work + 2048;

  cudnnHandle_t handle = calloc(1, fake_cudnn_handle_size());
  cudnnSetStream(handle, a);
  float one = 1.0f, zero = 0.0f, half = 0.5f;

  cudnnTensorDescriptor_t x_desc = tensor(2, 4, 8, 8, 8);
  cudnnTensorDescriptor_t y_desc = tensor(2, 4, 8, 8, strcmp(mode, "padded") == 0 ? 16 : 8);
  cudnnTensorDescriptor_t bn_desc = tensor(1, 4, 1, 1, 1);

  if (strcmp(mode, "each") == 0) {
    cudnnStatus_t s = cudnnBatchNormalizationForwardTraining(  /* bn-training */
        handle, CUDNN_BATCHNORM_SPATIAL, &one, &half, x_desc, x, y_desc, y, bn_desc, scale, bias,
        1.0, running_mean, running_var, 1e-5, save_mean, save_inv_var);
    report(s, "cudnnBatchNormalizationForwardTraining", 10, &one, &half, x, y, scale, bias,
           running_mean, running_var, save_mean, save_inv_var);
    s = cudnnBatchNormalizationForwardInference(  /* bn-inference */
        handle, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x_desc, x, y_desc, y, bn_desc, scale, bias,
        running_mean, running_var, 1e-5);
    report(s, "cudnnBatchNormalizationForwardInference", 8, &one, &zero, x, y, scale, bias,
           running_mean, running_var);
    s = cudnnBatchNormalizationBackward(  /* bn-backward */
        handle, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &one, x_desc, x, y_desc, y, x_desc,
        w, bn_desc, scale, dscale, dbias, 1e-5, save_mean, save_inv_var);
    report(s, "cudnnBatchNormalizationBackward", 12, &one, &zero, &one, &one, x, y, w, scale,
           dscale, dbias, save_mean, save_inv_var);
    /* as PyTorch calls it: no saved statistics given, no activation */
    s = cudnnBatchNormalizationBackwardEx(  /* bn-backward-ex */
        handle, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN, &one, &zero, &one,
        &zero, x_desc, x, NULL, NULL, y_desc, y, NULL, NULL, x_desc, w, bn_desc, scale, NULL,
        dscale, dbias, 1e-5, NULL, NULL, NULL, work, 1024, reserve, 1024);
    report(s, "cudnnBatchNormalizationBackwardEx", 16, &one, &zero, &one, &zero, x, NULL, y, NULL,
           w, scale, NULL, dscale, dbias, NULL, NULL, reserve);
    /* a running-average factor of 0 leaves the running statistics alone */
    s = cudnnBatchNormalizationForwardTrainingEx(  /* bn-training-ex */
        handle, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION, &one, &zero,
        x_desc, x, x_desc, w, y_desc, y, bn_desc, scale, bias, 0.0, running_mean, running_var,
        1e-5, save_mean, save_inv_var, NULL, work, 1024, reserve, 1024);
    report(s, "cudnnBatchNormalizationForwardTrainingEx", 13, &one, &zero, x, w, y, scale, bias,
           running_mean, running_var, save_mean, save_inv_var, work, reserve);
    /* alpha 0: nothing is fed */
    s = cudnnAddTensor(handle, &zero, bn_desc, bias, &one, y_desc, y);  /* add-alpha0 */
    report(s, "cudnnAddTensor", 4, &zero, bias, &one, y);
    s = cudnnAddTensor(handle, &one, bn_desc, bias, &one, y_desc, y);  /* add */
    report(s, "cudnnAddTensor", 4, &one, bias, &one, y);
    /* backward data and filter, 3 x 3, pad 1: x is dx, y is dy, w is dw */
    cudnnFilterDescriptor_t w_desc = filter(4, 4, 3, 3);
    cudnnConvolutionDescriptor_t conv = convolution(1, 1);
    s = cudnnConvolutionBackwardData(  /* dgrad */
        handle, &one, w_desc, w, y_desc, y, conv, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, work, 1024,
        &zero, x_desc, x);
    report(s, "cudnnConvolutionBackwardData", 6, &one, w, y, work, &zero, x);
    s = cudnnConvolutionBackwardFilter(  /* wgrad */
        handle, &one, x_desc, x, y_desc, y, conv, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, work,
        1024, &one, w_desc, w);
    report(s, "cudnnConvolutionBackwardFilter", 6, &one, x, y, work, &one, w);
  } else if (strncmp(mode, "conv", 4) == 0) {
    const int skip = strcmp(mode, "conv-skip") == 0;
    /* 3 x 3 with pad 1 keeps 8 x 8; 1 x 1 with stride 2 makes 4 x 4 */
    cudnnFilterDescriptor_t w_desc = skip ? filter(8, 4, 1, 1) : filter(8, 4, 3, 3);
    cudnnConvolutionDescriptor_t conv = skip ? convolution(0, 2) : convolution(1, 1);
    cudnnTensorDescriptor_t out_desc = skip ? tensor(2, 8, 4, 4, 4) : tensor(2, 8, 8, 8, 8);
    cudnnStatus_t s = cudnnConvolutionForward(  /* conv-site */
        handle, &one, x_desc, x, w_desc, w, conv, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, work,
        1024, &zero, out_desc, y);
    report(s, "cudnnConvolutionForward", 6, &one, x, w, work, &zero, y);
    if (strcmp(mode, "conv-war") == 0) {
      upload(w, c);  /* conv-copy-site */
    } else if (skip) {
      upload(x, c);
    } else {
      reduce(y + 4096 - 4, b);  /* conv-read-site */
    }
  } else {
    const float* alpha = &one;
    const void* x_arg = strcmp(mode, "bad-param") == 0 ? NULL : x;
    /* as PyTorch's cudnn_batch_norm calls it in training */
    cudnnStatus_t s = cudnnBatchNormalizationForwardTrainingEx(  /* bn-site */
        handle, CUDNN_BATCHNORM_SPATIAL_PERSISTENT, CUDNN_BATCHNORM_OPS_BN, alpha, &zero, x_desc,
        x_arg, NULL, NULL, y_desc, y, bn_desc, scale, bias, 0.1, running_mean, running_var, 1e-5,
        save_mean, save_inv_var, NULL, work, 1024, reserve, 1024);
    report(s, "cudnnBatchNormalizationForwardTrainingEx", 13, alpha, &zero, x_arg, NULL, y, scale,
           bias, running_mean, running_var, save_mean, save_inv_var, work, reserve);
    if (strcmp(mode, "war") == 0) {
      upload(x + 512, c);  /* copy-site */
    } else {
      if (strcmp(mode, "waits") == 0) order(b, a);
      reduce(y + 1024, b);  /* read-site */
    }
  }
  free(handle);
  if (fake_cudnn_nested != 0) printf("nested calls: %d\n", fake_cudnn_nested);
  printf("done\n");
  return 0;
}
