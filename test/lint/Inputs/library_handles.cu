// Library handles bound to a stream: cuBLAS, cuFFT and cuRAND calls through
// a handle enqueue their work on the stream the handle was last bound to
// (cublasSetStream and its kin), and a handle PyTorch hands out is bound to
// the current stream. Declared here as the libraries' headers declare them.
#include <cuda_runtime.h>

typedef enum { CUBLAS_STATUS_SUCCESS = 0 } cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0 } cublasOperation_t;
typedef struct cublasContext* cublasHandle_t;
cublasStatus_t cublasCreate_v2(cublasHandle_t* handle);
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream);
cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                              int m, int n, int k, const float* alpha, const float* A, int lda,
                              const float* B, int ldb, const float* beta, float* C, int ldc);
#define cublasCreate cublasCreate_v2
#define cublasSetStream cublasSetStream_v2
#define cublasSgemm cublasSgemm_v2

typedef int cufftHandle;
typedef int cufftResult;
typedef struct { float x, y; } cufftComplex;
cufftResult cufftSetStream(cufftHandle plan, cudaStream_t stream);
cufftResult cufftExecC2C(cufftHandle plan, cufftComplex* idata, cufftComplex* odata, int direction);

typedef struct curandGenerator_st* curandGenerator_t;
typedef int curandStatus_t;
curandStatus_t curandSetStream(curandGenerator_t generator, cudaStream_t stream);
curandStatus_t curandGenerateUniform(curandGenerator_t generator, float* outputPtr, size_t num);

namespace at::cuda {
cudaStream_t getCurrentCUDAStream();
cublasHandle_t getCurrentCUDABlasHandle();
}  // namespace at::cuda

const float kOne = 1.0f, kZero = 0.0f;

// --- correct: silent ---------------------------------------------------------

// The GEMM runs on the stream the buffers belong to.
void gemm_on_own_stream(cublasHandle_t handle, cudaStream_t stream, int n) {
  float *a, *c;
  cudaMallocAsync(&a, n * n * sizeof(float), stream);
  cudaMallocAsync(&c, n * n * sizeof(float), stream);
  cublasSetStream(handle, stream);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, a, n, a, n, &kZero, c, n);
  cudaFreeAsync(a, stream);
  cudaFreeAsync(c, stream);
}

// On a side stream, waited for before the frees.
void gemm_on_side_stream_waited(cublasHandle_t handle, cudaStream_t stream, cudaStream_t side,
                                cudaEvent_t done, int n) {
  float* a;
  cudaMallocAsync(&a, n * n * sizeof(float), stream);
  cublasSetStream(handle, side);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, a, n, a, n, &kZero, a, n);
  cudaEventRecord(done, side);
  cudaStreamWaitEvent(stream, done, 0);
  cudaFreeAsync(a, stream);
}

// A handle that was never bound here: its stream is not known, nothing is
// judged.
void handle_from_caller(cublasHandle_t handle, cudaStream_t stream, int n) {
  float* a;
  cudaMallocAsync(&a, n * n * sizeof(float), stream);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, a, n, a, n, &kZero, a, n);
  cudaFreeAsync(a, stream);
}

// Bound to a different stream on each path: neither is judged.
void handle_bound_two_ways(cublasHandle_t handle, cudaStream_t stream, cudaStream_t side,
                           bool overlap, int n) {
  float* a;
  cudaMallocAsync(&a, n * n * sizeof(float), stream);
  if (overlap)
    cublasSetStream(handle, side);
  else
    cublasSetStream(handle, stream);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, a, n, a, n, &kZero, a, n);
  cudaFreeAsync(a, stream);
}

// PyTorch's handle runs on the current stream, where the buffer lives.
void torch_handle_current(int n) {
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  float* a;
  cudaMallocAsync(&a, n * n * sizeof(float), stream);
  cublasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, a, n, a, n, &kZero, a, n);
  cudaFreeAsync(a, stream);
}

// --- broken: reported ----------------------------------------------------------

// The GEMM moved to a side stream, freed on the allocation stream at once.
void gemm_on_side_stream(cublasHandle_t handle, cudaStream_t stream, cudaStream_t side, int n) {
  float *a, *c;
  cudaMallocAsync(&a, n * n * sizeof(float), stream);
  cudaMallocAsync(&c, n * n * sizeof(float), stream);
  cublasSetStream(handle, side);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, a, n, a, n, &kZero, c, n);
  cudaFreeAsync(a, stream);
  cudaFreeAsync(c, stream);
}

// The handle bound to the side stream on one path only.
void handle_bound_on_one_path(cublasHandle_t handle, cudaStream_t stream, cudaStream_t side,
                              bool overlap, int n) {
  float* a;
  cudaMallocAsync(&a, n * n * sizeof(float), stream);
  if (overlap) cublasSetStream(handle, side);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, a, n, a, n, &kZero, a, n);
  cudaFreeAsync(a, stream);
}

// The input is read on the side stream before the copy into it on the
// allocation stream is ordered before the read.
void gemm_reads_before_copy(cublasHandle_t handle, cudaStream_t stream, cudaStream_t side,
                            const float* host, float* c, int n) {
  float* a;
  cudaMallocAsync(&a, n * n * sizeof(float), stream);
  cudaMemcpyAsync(a, host, n * n * sizeof(float), cudaMemcpyHostToDevice, stream);
  cublasSetStream(handle, side);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, a, n, a, n, &kZero, c, n);
}

// cuFFT and cuRAND on a side stream.
void fft_on_side_stream(cufftHandle plan, cudaStream_t stream, cudaStream_t side, int n) {
  cufftComplex* data;
  cudaMallocAsync(&data, n * sizeof(cufftComplex), stream);
  cufftSetStream(plan, side);
  cufftExecC2C(plan, data, data, -1);
  cudaFreeAsync(data, stream);
}

void random_on_side_stream(curandGenerator_t gen, cudaStream_t stream, cudaStream_t side, int n) {
  float* noise;
  cudaMallocAsync(&noise, n * sizeof(float), stream);
  curandSetStream(gen, side);
  curandGenerateUniform(gen, noise, n);
  cudaFreeAsync(noise, stream);
}

// --- stream memory operations ------------------------------------------------

// The consumer signals through a word after its use; the owner waits for the
// word before the free: silent.
void signalled_after_use(cudaStream_t owner, cudaStream_t consumer, CUdeviceptr word, int n) {
  float* a;
  cudaMallocAsync(&a, n * sizeof(float), owner);
  cudaMemcpyAsync(a, a, n * sizeof(float), cudaMemcpyDeviceToDevice, consumer);
  cuStreamWriteValue32(consumer, word, 1, 0);
  cuStreamWaitValue32(owner, word, 1, CU_STREAM_WAIT_VALUE_GEQ);
  cudaFreeAsync(a, owner);
}

// Signalled before the use: the wait does not order it.
void signalled_before_use(cudaStream_t owner, cudaStream_t consumer, CUdeviceptr word, int n) {
  float* a;
  cudaMallocAsync(&a, n * sizeof(float), owner);
  cuStreamWriteValue32(consumer, word, 1, 0);
  cudaMemcpyAsync(a, a, n * sizeof(float), cudaMemcpyDeviceToDevice, consumer);
  cuStreamWaitValue32(owner, word, 1, CU_STREAM_WAIT_VALUE_GEQ);
  cudaFreeAsync(a, owner);
}

// --- a member handle the class binds to its member stream --------------------

class Gemm {
 public:
  Gemm(cudaStream_t stream, cudaStream_t side) : stream_(stream), side_(side) {
    cublasCreate(&handle_);
    cublasSetStream(handle_, stream_);
  }
  // The handle runs on stream_: a buffer of side_ freed on side_ at once.
  void run_on_side_buffer(int n) {
    float* a;
    cudaMallocAsync(&a, n * n * sizeof(float), side_);
    cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, a, n, a, n, &kZero, a, n);
    cudaFreeAsync(a, side_);
  }
  // A buffer of stream_: silent.
  void run_on_own_buffer(int n) {
    float* a;
    cudaMallocAsync(&a, n * n * sizeof(float), stream_);
    cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, a, n, a, n, &kZero, a, n);
    cudaFreeAsync(a, stream_);
  }
  // Bound here first: the function's own binding wins.
  void run_bound_here(cudaStream_t other, int n) {
    float* a;
    cudaMallocAsync(&a, n * n * sizeof(float), stream_);
    cublasSetStream(handle_, stream_);
    cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, a, n, a, n, &kZero, a, n);
    cudaFreeAsync(a, stream_);
  }

 private:
  cudaStream_t stream_;
  cudaStream_t side_;
  cublasHandle_t handle_;
};

// A class that binds its handle to two streams: which one a member
// function's calls run on is not known there, and nothing is judged.
class Rebinding {
 public:
  Rebinding(cudaStream_t stream, cudaStream_t side) : stream_(stream), side_(side) {
    cublasSetStream(handle_, stream_);
  }
  void switch_to_side() { cublasSetStream(handle_, side_); }
  void run(int n) {
    float* a;
    cudaMallocAsync(&a, n * n * sizeof(float), stream_);
    cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, a, n, a, n, &kZero, a, n);
    cudaFreeAsync(a, stream_);
  }

 private:
  cudaStream_t stream_;
  cudaStream_t side_;
  cublasHandle_t handle_;
};

// --- what a library call writes ------------------------------------------------
// Its outputs and workspaces are pointers to non-const data (the GEMM's C,
// cuRAND's output, cuSOLVER's matrix and info word); what it only reads is
// const (the GEMM's A and B). cuFFT's input is not const, and only a
// complex-to-real transform may overwrite it.

typedef struct cusolverDnContext* cusolverDnHandle_t;
typedef int cusolverStatus_t;
cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t stream);
cusolverStatus_t cusolverDnSgetrf_bufferSize(cusolverDnHandle_t handle, int m, int n, float* A,
                                             int lda, int* lwork);
cusolverStatus_t cusolverDnSgetrf(cusolverDnHandle_t handle, int m, int n, float* A, int lda,
                                  float* workspace, int* ipiv, int* info);
cufftResult cufftExecC2R(cufftHandle plan, cufftComplex* idata, float* odata);

// Silent: the product is waited for before the allocation stream reads it.
void gemm_output_waited(cublasHandle_t handle, cudaStream_t stream, cudaStream_t side,
                        cudaEvent_t done, float* host, int n) {
  float* c;
  cudaMallocAsync(&c, n * n * sizeof(float), stream);
  cublasSetStream(handle, side);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, c, n, c, n, &kZero, c, n);
  cudaEventRecord(done, side);
  cudaStreamWaitEvent(stream, done, 0);
  cudaMemcpyAsync(host, c, n * n * sizeof(float), cudaMemcpyDeviceToHost, stream);
}

// Silent: two streams read one input (the GEMM reads A, the copy reads it
// out), and a complex-to-complex transform only reads its input.
void inputs_read_twice(cublasHandle_t handle, cufftHandle plan, cudaStream_t stream,
                       cudaStream_t side, const float* a, float* c, cufftComplex* in,
                       cufftComplex* out, float* host, int n) {
  cudaMemcpyAsync(host, a, n * n * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cublasSetStream(handle, side);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, a, n, a, n, &kZero, c, n);
  cudaMemcpyAsync(host, in, n * sizeof(cufftComplex), cudaMemcpyDeviceToHost, stream);
  cufftSetStream(plan, side);
  cufftExecC2C(plan, in, out, -1);
}

// Silent: a workspace query enqueues nothing, though it takes the matrix.
void workspace_query(cusolverDnHandle_t solver, cudaStream_t stream, cudaStream_t side,
                     const float* host, float* a, int n) {
  int lwork = 0;
  cudaMemcpyAsync(a, host, n * n * sizeof(float), cudaMemcpyHostToDevice, stream);
  cusolverDnSetStream(solver, side);
  cusolverDnSgetrf_bufferSize(solver, n, n, a, n, &lwork);
}

// Silent: a GEMM captured into a graph runs when the graph is launched;
// the work outside the capture is not ordered against it here.
void gemm_captured(cublasHandle_t handle, cudaStream_t stream, cudaStream_t side, float* c,
                   float* host, cudaGraph_t* graph, int n) {
  cublasSetStream(handle, side);
  cudaStreamBeginCapture(side, cudaStreamCaptureModeGlobal);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, c, n, c, n, &kZero, c, n);
  cudaStreamEndCapture(side, graph);
  cudaMemcpyAsync(host, c, n * n * sizeof(float), cudaMemcpyDeviceToHost, stream);
}

// Reported: the product is read out on the allocation stream before it is
// ordered after the GEMM that writes it.
void gemm_output_read_early(cublasHandle_t handle, cudaStream_t stream, cudaStream_t side,
                            float* host, int n) {
  float* c;
  cudaMallocAsync(&c, n * n * sizeof(float), stream);
  cublasSetStream(handle, side);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, c, n, c, n, &kZero, c, n);
  cudaMemcpyAsync(host, c, n * n * sizeof(float), cudaMemcpyDeviceToHost, stream);
}

// Reported: the GEMM overwrites a buffer a copy on another stream may still
// be reading out.
void gemm_overwrites_pending_read(cublasHandle_t handle, cudaStream_t stream, cudaStream_t side,
                                  const float* a, float* c, float* host, int n) {
  cudaMemcpyAsync(host, c, n * n * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cublasSetStream(handle, side);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, a, n, a, n, &kZero, c, n);
}

// Reported: cuRAND fills the buffer on the side stream while the copy out
// of it on the allocation stream is not ordered after the fill.
void random_read_early(curandGenerator_t gen, cudaStream_t stream, cudaStream_t side,
                       float* host, int n) {
  float* noise;
  cudaMallocAsync(&noise, n * sizeof(float), stream);
  curandSetStream(gen, side);
  curandGenerateUniform(gen, noise, n);
  cudaMemcpyAsync(host, noise, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
}

// Reported: a complex-to-real transform may overwrite its input while a
// copy on another stream reads it out.
void c2r_overwrites_input(cufftHandle plan, cudaStream_t stream, cudaStream_t side,
                          cufftComplex* freq, float* signal, cufftComplex* host, int n) {
  cudaMemcpyAsync(host, freq, n * sizeof(cufftComplex), cudaMemcpyDeviceToHost, stream);
  cufftSetStream(plan, side);
  cufftExecC2R(plan, freq, signal);
}

// Reported: the factorization overwrites the matrix in place, and its info
// word, while they may still be read out on the allocation stream.
void factorization_read_early(cusolverDnHandle_t solver, cudaStream_t stream, cudaStream_t side,
                              float* a, float* work, int* ipiv, int* info, float* host, int n) {
  cudaMemcpyAsync(host, a, n * n * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cusolverDnSetStream(solver, side);
  cusolverDnSgetrf(solver, n, n, a, n, work, ipiv, info);
}

// --- a handle made here runs on the NULL stream until bound ---------------------

cublasStatus_t cublasSscal_v2(cublasHandle_t handle, int n, const float* alpha, float* x, int incx);
cublasStatus_t cublasSnrm2_v2(cublasHandle_t handle, int n, const float* x, int incx, float* result);
#define cublasSscal cublasSscal_v2
#define cublasSnrm2 cublasSnrm2_v2
curandStatus_t curandCreateGenerator(curandGenerator_t* generator, int type);
curandStatus_t curandCreateGeneratorHost(curandGenerator_t* generator, int type);
void configure_elsewhere(cublasHandle_t handle);
const float kTwo = 2.0f;

// Reported: the new handle's GEMM runs on the legacy default stream, which a
// non-blocking stream does not wait for before its free.
void created_handle_on_legacy_stream(int n) {
  cudaStream_t side;
  cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  cublasHandle_t handle;
  cublasCreate(&handle);
  float* a;
  cudaMallocAsync(&a, n * n * sizeof(float), side);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, a, n, a, n, &kZero, a, n);
  cudaFreeAsync(a, side);
}

// Reported: the host reads the managed product before the GEMM is done.
float managed_product_read_early(int n) {
  cublasHandle_t handle;
  cublasCreate(&handle);
  float* c;
  cudaMallocManaged(&c, n * n * sizeof(float));
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, c, n, c, n, &kZero, c, n);
  return c[0];
}

// Silent: a result written to a host variable is there when the call
// returns, so the host waited for the handle's stream.
float managed_after_host_result(int n) {
  cublasHandle_t handle;
  cublasCreate(&handle);
  float* x;
  cudaMallocManaged(&x, n * sizeof(float));
  cublasSscal(handle, n, &kTwo, x, 1);
  float norm = 0.0f;
  cublasSnrm2(handle, n, x, 1, &norm);
  return x[0] + norm;
}

// Silent: a function this analysis does not see may bind the handle.
void handle_configured_elsewhere(int n) {
  cudaStream_t side;
  cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  cublasHandle_t handle;
  cublasCreate(&handle);
  configure_elsewhere(handle);
  float* a;
  cudaMallocAsync(&a, n * n * sizeof(float), side);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &kOne, a, n, a, n, &kZero, a, n);
  cudaFreeAsync(a, side);
}

// Silent: a host generator fills host memory on the host.
float host_generator(int n) {
  curandGenerator_t gen;
  curandCreateGeneratorHost(&gen, 0);
  float* noise;
  cudaMallocManaged(&noise, n * sizeof(float));
  curandGenerateUniform(gen, noise, n);
  return noise[0];
}

// Reported: a device generator fills it on the legacy default stream.
float device_generator_read_early(int n) {
  curandGenerator_t gen;
  curandCreateGenerator(&gen, 0);
  float* noise;
  cudaMallocManaged(&noise, n * sizeof(float));
  curandGenerateUniform(gen, noise, n);
  return noise[0];
}

// --- what a collective writes ----------------------------------------------------
// NCCL declares a collective's send buffer const and its receive buffer not.

typedef struct ncclComm* ncclComm_t;
typedef enum { ncclSuccess = 0 } ncclResult_t;
typedef enum { ncclFloat32 = 7 } ncclDataType_t;
typedef enum { ncclSum = 0 } ncclRedOp_t;
ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream);

// Reported: the reduced gradient is read out on the compute stream before
// the all-reduce that writes it is ordered before the copy.
void reduced_read_early(ncclComm_t comm, cudaStream_t compute, cudaStream_t comms, float* grad,
                        float* host, size_t n) {
  ncclAllReduce(grad, grad, n, ncclFloat32, ncclSum, comm, comms);
  cudaMemcpyAsync(host, grad, n * sizeof(float), cudaMemcpyDeviceToHost, compute);
}

// Reported: the all-gather writes the full parameters while the last
// round's copy out of them on the compute stream may still read them.
void gathered_over_pending_read(ncclComm_t comm, cudaStream_t compute, cudaStream_t comms,
                                const float* shard, float* full, float* host, size_t n) {
  cudaMemcpyAsync(host, full, n * sizeof(float), cudaMemcpyDeviceToHost, compute);
  ncclAllGather(shard, full, n / 8, ncclFloat32, comm, comms);
}

// Silent: the shard is only read by the all-gather, as by the copy.
void shard_read_twice(ncclComm_t comm, cudaStream_t compute, cudaStream_t comms,
                      const float* shard, float* full, float* host, size_t n) {
  cudaMemcpyAsync(host, shard, n / 8 * sizeof(float), cudaMemcpyDeviceToHost, compute);
  ncclAllGather(shard, full, n / 8, ncclFloat32, comm, comms);
}

// Silent: the compute stream waits for the all-reduce first.
void reduced_then_waited(ncclComm_t comm, cudaStream_t compute, cudaStream_t comms, cudaEvent_t done,
                         float* grad, float* host, size_t n) {
  ncclAllReduce(grad, grad, n, ncclFloat32, ncclSum, comm, comms);
  cudaEventRecord(done, comms);
  cudaStreamWaitEvent(compute, done, 0);
  cudaMemcpyAsync(host, grad, n * sizeof(float), cudaMemcpyDeviceToHost, compute);
}

// --- cuBLAS's own async copies -------------------------------------------------

cublasStatus_t cublasSetVectorAsync(int n, int elemSize, const void* hostPtr, int incx, void* devicePtr,
                                    int incy, cudaStream_t stream);
cublasStatus_t cublasGetVectorAsync(int n, int elemSize, const void* devicePtr, int incx, void* hostPtr,
                                    int incy, cudaStream_t stream);

// Reported: the host reads the pinned result before the copy back lands.
float vector_read_before_copy_back(const float* device, cudaStream_t stream, int n) {
  float* host;
  cudaMallocHost(&host, n * sizeof(float));
  cublasGetVectorAsync(n, sizeof(float), device, 1, host, 1, stream);
  return host[0];
}

// Reported: the upload into `device` on one stream, read on another that
// did not wait for it.
void vector_uploaded_then_read_elsewhere(const float* pinned, float* device, float* host, cudaStream_t stream,
                                         cudaStream_t side, int n) {
  cublasSetVectorAsync(n, sizeof(float), pinned, 1, device, 1, stream);
  cudaMemcpyAsync(host, device, n * sizeof(float), cudaMemcpyDeviceToHost, side);
}

// Silent: synchronized before the host reads.
float vector_synchronized(const float* device, cudaStream_t stream, int n) {
  float* host;
  cudaMallocHost(&host, n * sizeof(float));
  cublasGetVectorAsync(n, sizeof(float), device, 1, host, 1, stream);
  cudaStreamSynchronize(stream);
  return host[0];
}
