// bench/lint/mutation.py's test tree (test/lint/lint-mutation.test).
#include <cuda_runtime.h>

#define CHECK(call) (void)(call)

// Deleting the wait leaves the free on b unordered after the memset on a.
void handed_over(float* p, cudaStream_t a, cudaStream_t b, cudaEvent_t done) {
  cudaMemsetAsync(p, 0, 4, a);
  cudaEventRecord(done, a);
  CHECK(cudaStreamWaitEvent(b, done, 0));
  cudaFreeAsync(p, b);
}

// Deleting the synchronization leaves nothing unordered: the free is on the
// stream that used the buffer. cudaStreamSynchronize(a) in a comment is no call.
void same_stream(float* p, cudaStream_t a) {
  cudaMemsetAsync(p, 0, 4, a);
  cudaError_t status = cudaStreamSynchronize(
      a);
  (void)status;
  cudaFreeAsync(p, a);
}

// Left out for its compile error, which is no warning of a rule.
void does_not_compile(cudaStream_t a) { cudaStreamSynchronise(a); }
