// A minimal stand-in for the CUDA runtime header, so the lint tests parse
// CUDA C++ on machines without a CUDA toolkit (-nocudainc -I Inputs/cuda).
// Only declarations: the tests never link.
#pragma once

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))

typedef decltype(sizeof(0)) size_t;
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
typedef struct CUmemPoolHandle_st* cudaMemPool_t;
typedef unsigned long long CUdeviceptr;
typedef struct CUstream_st* CUstream;

enum cudaError_t { cudaSuccess = 0, cudaErrorNotReady = 600 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3 };

#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaEventDisableTiming 0x02
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct uint3 { unsigned x, y, z; };
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;

// Device built-ins a kernel writes memory through.
__device__ float atomicAdd(float* address, float value);
__device__ int atomicCAS(int* address, int compare, int value);
__device__ int atomicAdd_system(int* address, int value);

// Launch configuration hooks: older toolkits use the first, newer the second.
extern "C" cudaError_t cudaConfigureCall(dim3 grid, dim3 block, size_t shmem = 0, cudaStream_t stream = 0);
extern "C" unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem = 0,
                                                cudaStream_t stream = 0);

extern "C" {
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned flags, int priority);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaMalloc(void** ptr, size_t bytes);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMallocAsync(void** ptr, size_t bytes, cudaStream_t stream);
cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t bytes, cudaMemPool_t pool, cudaStream_t stream);
cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = 0);
cudaError_t cudaMemsetAsync(void* ptr, int value, size_t bytes, cudaStream_t stream = 0);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags = 0);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMallocHost(void** ptr, size_t bytes);
cudaError_t cudaHostAlloc(void** ptr, size_t bytes, unsigned flags);
cudaError_t cudaMallocManaged(void** ptr, size_t bytes, unsigned flags = 1);
cudaError_t cudaHostGetDevicePointer(void** device, void* host, unsigned flags);
cudaError_t cudaHostRegister(void* ptr, size_t bytes, unsigned flags);
cudaError_t cudaFreeHost(void* ptr);
int memcmp(const void* a, const void* b, size_t bytes);
void* memcpy(void* dst, const void* src, size_t bytes);
typedef struct CUgraph_st* cudaGraph_t;
typedef struct CUgraphExec_st* cudaGraphExec_t;
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeRelaxed = 2 };
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags = 0);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);
int cuMemAllocAsync(CUdeviceptr* dptr, size_t bytes, CUstream stream);
int cuMemFreeAsync(CUdeviceptr dptr, CUstream stream);
int cuMemsetD32Async(CUdeviceptr dptr, unsigned value, size_t count, CUstream stream);
cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shmem,
                             cudaStream_t stream);
cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block, void** args,
                                        size_t shmem, cudaStream_t stream);
struct cudaLaunchAttribute;
struct cudaLaunchConfig_t {
  dim3 gridDim;
  dim3 blockDim;
  size_t dynamicSmemBytes;
  cudaStream_t stream;
  cudaLaunchAttribute* attrs;
  unsigned numAttrs;
};
int cuStreamWriteValue32_v2(CUstream stream, CUdeviceptr addr, unsigned value, unsigned flags);
int cuStreamWaitValue32_v2(CUstream stream, CUdeviceptr addr, unsigned value, unsigned flags);
#define cuStreamWriteValue32 cuStreamWriteValue32_v2
#define cuStreamWaitValue32 cuStreamWaitValue32_v2
#define CU_STREAM_WAIT_VALUE_GEQ 0x0
}

template <typename T>
cudaError_t cudaMallocHost(T** ptr, size_t bytes) {
  return ::cudaMallocHost(reinterpret_cast<void**>(ptr), bytes);
}

template <typename T>
cudaError_t cudaMallocManaged(T** ptr, size_t bytes, unsigned flags = 1) {
  return ::cudaMallocManaged(reinterpret_cast<void**>(ptr), bytes, flags);
}

template <typename T>
cudaError_t cudaMallocAsync(T** ptr, size_t bytes, cudaStream_t stream) {
  return ::cudaMallocAsync(reinterpret_cast<void**>(ptr), bytes, stream);
}

// The C++ form (cuda_runtime.h): the kernel's arguments themselves.
template <typename... ExpTypes, typename... ActTypes>
cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t* config, void (*kernel)(ExpTypes...),
                               ActTypes&&... args);
