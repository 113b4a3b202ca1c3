/* Stream memory operations ordering two streams, on the stand-in CUPTI: a
 * block allocated on stream A is copied into on stream B, B signals by
 * writing a value to a word in memory, A waits until the word satisfies a
 * condition, and A frees the block.
 *
 *   stream_memops signalled    B writes 1, A waits for >= 1: ordered
 *   stream_memops unsignalled  no wait: A's free is unordered
 *   stream_memops wait-first   A waits before B writes: nothing seen
 *                              satisfies the wait, which orders nothing
 *   stream_memops no-match     B writes 1, A waits for == 2: unordered
 *   stream_memops earliest     B writes 1, copies, writes 2; A waits for
 *                              >= 1, which the first write satisfies: the
 *                              copy is unordered
 *   stream_memops latest       the same, A waits for >= 2: ordered
 *   stream_memops two-writers  after B's write, C writes 1 too: either
 *                              may have satisfied A's wait first, which
 *                              orders nothing
 *   stream_memops batch        the write and the wait as cuStreamBatchMemOp
 *                              operations: ordered
 *   stream_memops wide         64-bit write and wait: ordered
 *   stream_memops late-wait    A frees, then waits: the wait after the
 *                              free is pointed at
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cupti.h>

#include "fake_cuda_calls.h"

static const CUdeviceptr kFlag = 0x7f0000900000;

static void driver_call(CUpti_CallbackId cbid, const void* params) {
  fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, cbid, 0, params, &drv_ok);
  fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, cbid, 1, params, &drv_ok);
}

static void write_value(cudaStream_t stream, cuuint32_t value) {
  cuStreamWriteValue32_v2_params p = {(CUstream)stream, kFlag, value, 0};
  driver_call(CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32_v2, &p);
}

static void wait_value(cudaStream_t stream, cuuint32_t value, unsigned flags) {
  cuStreamWaitValue32_v2_params p = {(CUstream)stream, kFlag, value, flags};
  driver_call(CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2, &p);
}

int main(int argc, char** argv) {
  const char* mode = argc == 2 ? argv[1] : "";
  cudaStream_t a = make_stream(0xa0000), b = make_stream(0xb0000), c = make_stream(0xc0000);
  void* block = (void*)(uintptr_t)0x7f0000100000;
  cudaMallocAsync_v11020_params alloc = {&block, 4096, a};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, &alloc);
  order(b, a);  /* the block is B's to fill once allocated */
  cudaFreeAsync_v11020_params free_params = {block, a};

  if (strcmp(mode, "signalled") == 0) {
    upload(block, b);
    write_value(b, 1);
    wait_value(a, 1, CU_STREAM_WAIT_VALUE_GEQ);
  } else if (strcmp(mode, "unsignalled") == 0) {
    upload(block, b);
    write_value(b, 1);
  } else if (strcmp(mode, "wait-first") == 0) {
    wait_value(a, 1, CU_STREAM_WAIT_VALUE_GEQ);
    upload(block, b);
    write_value(b, 1);
  } else if (strcmp(mode, "no-match") == 0) {
    upload(block, b);
    write_value(b, 1);
    wait_value(a, 2, CU_STREAM_WAIT_VALUE_EQ);
  } else if (strcmp(mode, "earliest") == 0 || strcmp(mode, "latest") == 0) {
    write_value(b, 1);
    upload(block, b);
    write_value(b, 2);
    wait_value(a, strcmp(mode, "earliest") == 0 ? 1 : 2, CU_STREAM_WAIT_VALUE_GEQ);
  } else if (strcmp(mode, "two-writers") == 0) {
    upload(block, b);
    write_value(b, 1);
    write_value(c, 1);
    wait_value(a, 1, CU_STREAM_WAIT_VALUE_GEQ);
  } else if (strcmp(mode, "batch") == 0) {
    upload(block, b);
    CUstreamBatchMemOpParams write;
    memset(&write, 0, sizeof write);
    write.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    write.writeValue.address = kFlag;
    write.writeValue.value = 7;
    cuStreamBatchMemOp_v2_params wp = {(CUstream)b, 1, &write, 0};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2, &wp);
    CUstreamBatchMemOpParams wait;
    memset(&wait, 0, sizeof wait);
    wait.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
    wait.waitValue.address = kFlag;
    wait.waitValue.value = 7;
    wait.waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
    cuStreamBatchMemOp_v2_params ap = {(CUstream)a, 1, &wait, 0};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2, &ap);
  } else if (strcmp(mode, "wide") == 0) {
    upload(block, b);
    cuStreamWriteValue64_v2_params wp = {(CUstream)b, kFlag, 0x100000001ull, 0};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64_v2, &wp);
    cuStreamWaitValue64_v2_params ap = {(CUstream)a, kFlag, 0x100000000ull,
                                        CU_STREAM_WAIT_VALUE_GEQ};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_v2, &ap);
  } else if (strcmp(mode, "late-wait") == 0) {
    upload(block, b);
    write_value(b, 1);
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, &free_params);
    wait_value(a, 1, CU_STREAM_WAIT_VALUE_GEQ);
    printf("done\n");
    return 0;
  } else {
    fprintf(stderr, "usage: stream_memops signalled|unsignalled|wait-first|no-match|earliest|"
                    "latest|two-writers|batch|wide|late-wait\n");
    return 2;
  }
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, &free_params);
  printf("done\n");
  return 0;
}
