// Clean corpus: a single-rank NCCL all-reduce on a communication stream.
// The buffers are allocated and freed on the compute stream; the
// communication stream waits for the producer, and the compute stream waits
// for the collective before it frees. The checker must report nothing.
#include <nccl.h>

#include "fault_common.h"

#define NCCL_CHECK(call)                                                         \
  do {                                                                           \
    ncclResult_t result_ = (call);                                               \
    if (result_ != ncclSuccess) {                                                \
      std::printf("unexpected %s from %s\n", ncclGetErrorString(result_), #call); \
      std::fflush(stdout);                                                       \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

int main() {
  constexpr int kN = 1 << 16;
  constexpr int kSteps = 4;
  ncclComm_t comm;
  int devices[1] = {0};
  NCCL_CHECK(ncclCommInitAll(&comm, 1, devices));
  cudaStream_t compute, comm_stream;
  FAULT_CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  FAULT_CHECK(cudaStreamCreateWithFlags(&comm_stream, cudaStreamNonBlocking));
  cudaEvent_t produced, reduced;
  FAULT_CHECK(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));
  FAULT_CHECK(cudaEventCreateWithFlags(&reduced, cudaEventDisableTiming));

  int* accumulator = nullptr;
  FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&accumulator), sizeof(int) * kN, compute));
  FAULT_CHECK(cudaMemsetAsync(accumulator, 0, sizeof(int) * kN, compute));
  for (int step = 1; step <= kSteps; ++step) {
    int* send = nullptr;
    int* recv = nullptr;
    FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&send), sizeof(int) * kN, compute));
    FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&recv), sizeof(int) * kN, compute));
    fill_kernel<<<16, 256, 0, compute>>>(send, kN, step);
    FAULT_CHECK(cudaGetLastError());
    FAULT_CHECK(cudaEventRecord(produced, compute));
    FAULT_CHECK(cudaStreamWaitEvent(comm_stream, produced, 0));
    NCCL_CHECK(ncclAllReduce(send, recv, kN, ncclInt, ncclSum, comm, comm_stream));
    FAULT_CHECK(cudaEventRecord(reduced, comm_stream));
    FAULT_CHECK(cudaStreamWaitEvent(compute, reduced, 0));
    accumulate_kernel<<<16, 256, 0, compute>>>(recv, accumulator, kN);
    FAULT_CHECK(cudaGetLastError());
    FAULT_CHECK(cudaFreeAsync(send, compute));
    FAULT_CHECK(cudaFreeAsync(recv, compute));
  }
  std::printf("nccl all-reduce: %d steps, checksum %lld\n", kSteps,
              device_sum(accumulator, kN, compute));
  FAULT_CHECK(cudaFreeAsync(accumulator, compute));
  FAULT_CHECK(cudaStreamSynchronize(compute));
  NCCL_CHECK(ncclCommDestroy(comm));
  FAULT_CHECK(cudaEventDestroy(produced));
  FAULT_CHECK(cudaEventDestroy(reduced));
  FAULT_CHECK(cudaStreamDestroy(compute));
  FAULT_CHECK(cudaStreamDestroy(comm_stream));
  return 0;
}
