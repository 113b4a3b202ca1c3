// An all-gather feeding compute across two streams, with a real NCCL
// communicator of one rank on one GPU.
//
//   allgather_keepalive MODE [--layers N]
//
// MODE:
//   bug              the all-gather output is allocated on the comm stream,
//                    read by a kernel on the compute stream and freed on the
//                    comm stream before the comm stream is ordered after that
//                    read: the block can go to the next all-gather while the
//                    kernel still reads it.
//   keepalive        same pipeline, but each output is kept until the next
//                    layer; the compute stream records an event after its
//                    read and the comm stream waits on it before the free.
//   reverse          the collective is the consumer: a buffer allocated and
//                    filled on the compute stream is all-reduced on the comm
//                    stream, then freed on the compute stream without waiting
//                    for the all-reduce.
//   reverse-ordered  the same, with the compute stream waiting on an event
//                    recorded after the all-reduce before the free.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../cuda/check_cuda.cuh"

#define CHECK_NCCL(call)                                                                  \
  do {                                                                                    \
    ncclResult_t res_ = (call);                                                           \
    if (res_ != ncclSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                  \
                   ncclGetErrorString(res_));                                             \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

namespace {

constexpr size_t kShardElems = size_t(1) << 20;  // 4 MiB of floats per layer shard

__global__ void fill(float* data, size_t n, float value) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    data[i] = value;
}

// The compute stream's consumer: a long strided read of the gathered
// parameters, reduced into one value per block.
__global__ void consume_gathered(const float* params, size_t n, float* out) {
  float acc = 0.0f;
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    acc += params[i];
  atomicAdd(&out[blockIdx.x], acc);
}

struct Streams {
  cudaStream_t comm = nullptr;
  cudaStream_t compute = nullptr;
};

// Forward over `layers`: all-gather layer L on the comm stream, compute on
// it on the compute stream. With `keepalive`, layer L's output is released
// only at layer L+1, after the comm stream waited for compute's read.
void all_gather_pipeline(ncclComm_t comm, const Streams& s, int layers, bool keepalive) {
  int nranks = 0;
  CHECK_NCCL(ncclCommCount(comm, &nranks));
  float* shard = nullptr;
  float* out = nullptr;
  CHECK_CUDA(cudaMalloc(&shard, kShardElems * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&out, 256 * sizeof(float)));
  fill<<<128, 256, 0, s.comm>>>(shard, kShardElems, 1.0f);
  CHECK_CUDA(cudaGetLastError());

  float* kept = nullptr;           // previous layer's output, still referenced
  cudaEvent_t kept_used = nullptr; // compute's read of `kept` finished
  for (int layer = 1; layer <= layers; ++layer) {
    float* gathered = nullptr;
    size_t gathered_elems = kShardElems * size_t(nranks);
    CHECK_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&gathered),
                               gathered_elems * sizeof(float), s.comm));
    CHECK_NCCL(ncclAllGather(shard, gathered, kShardElems, ncclFloat, comm, s.comm));

    cudaEvent_t ready;
    CHECK_CUDA(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    CHECK_CUDA(cudaEventRecord(ready, s.comm));
    CHECK_CUDA(cudaStreamWaitEvent(s.compute, ready, 0));  // compute waits for the gather
    CHECK_CUDA(cudaEventDestroy(ready));
    consume_gathered<<<256, 256, 0, s.compute>>>(gathered, gathered_elems, out);
    CHECK_CUDA(cudaGetLastError());

    if (!keepalive) {
      // Bug: nothing orders the comm stream after consume_gathered.
      CHECK_CUDA(cudaFreeAsync(gathered, s.comm));  // free-site: allgather-bug
      continue;
    }
    if (kept != nullptr) {
      CHECK_CUDA(cudaStreamWaitEvent(s.comm, kept_used, 0));  // 1. order comm after compute
      CHECK_CUDA(cudaFreeAsync(kept, s.comm));                // 2. only then free
      CHECK_CUDA(cudaEventDestroy(kept_used));
    }
    CHECK_CUDA(cudaEventCreateWithFlags(&kept_used, cudaEventDisableTiming));
    CHECK_CUDA(cudaEventRecord(kept_used, s.compute));
    kept = gathered;
  }
  if (kept != nullptr) {
    CHECK_CUDA(cudaStreamWaitEvent(s.comm, kept_used, 0));
    CHECK_CUDA(cudaFreeAsync(kept, s.comm));
    CHECK_CUDA(cudaEventDestroy(kept_used));
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaFree(out));
  CHECK_CUDA(cudaFree(shard));
}

// The reduce-scatter direction of FSDP backward, with an all-reduce: the
// compute stream produces a gradient bucket, the comm stream reduces it.
void all_reduce_consumer(ncclComm_t comm, const Streams& s, int layers, bool ordered) {
  for (int layer = 1; layer <= layers; ++layer) {
    float* bucket = nullptr;
    CHECK_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&bucket), kShardElems * sizeof(float),
                               s.compute));
    fill<<<128, 256, 0, s.compute>>>(bucket, kShardElems, float(layer));
    CHECK_CUDA(cudaGetLastError());

    cudaEvent_t filled, reduced;
    CHECK_CUDA(cudaEventCreateWithFlags(&filled, cudaEventDisableTiming));
    CHECK_CUDA(cudaEventCreateWithFlags(&reduced, cudaEventDisableTiming));
    CHECK_CUDA(cudaEventRecord(filled, s.compute));
    CHECK_CUDA(cudaStreamWaitEvent(s.comm, filled, 0));  // comm waits for the bucket
    float* b = bucket;
    CHECK_NCCL(ncclAllReduce(b, b, kShardElems, ncclFloat, ncclSum, comm, s.comm));  // use-site: allreduce
    if (ordered) {
      CHECK_CUDA(cudaEventRecord(reduced, s.comm));
      CHECK_CUDA(cudaStreamWaitEvent(s.compute, reduced, 0));
    }
    // Without the wait this free is not ordered after the all-reduce.
    CHECK_CUDA(cudaFreeAsync(bucket, s.compute));  // free-site: allreduce
    CHECK_CUDA(cudaEventDestroy(filled));
    CHECK_CUDA(cudaEventDestroy(reduced));
  }
  CHECK_CUDA(cudaDeviceSynchronize());
}

void usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s bug|keepalive|reverse|reverse-ordered [--layers N]\n", argv0);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage(argv[0]);
  std::string mode = argv[1];
  int layers = 4;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--layers") == 0 && i + 1 < argc) {
      layers = std::atoi(argv[++i]);
    } else {
      usage(argv[0]);
    }
  }
  if (layers < 1) usage(argv[0]);
  if (mode != "bug" && mode != "keepalive" && mode != "reverse" && mode != "reverse-ordered")
    usage(argv[0]);

  // One rank on device 0: a real communicator, so the collectives are real
  // NCCL kernels enqueued by libnccl.
  ncclComm_t comm;
  int device = 0;
  CHECK_NCCL(ncclCommInitAll(&comm, 1, &device));
  CHECK_CUDA(cudaSetDevice(device));
  Streams s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s.comm, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&s.compute, cudaStreamNonBlocking));
  std::printf("comm stream %p, compute stream %p\n", static_cast<void*>(s.comm),
              static_cast<void*>(s.compute));

  if (mode == "bug" || mode == "keepalive") {
    all_gather_pipeline(comm, s, layers, mode == "keepalive");
  } else {
    all_reduce_consumer(comm, s, layers, mode == "reverse-ordered");
  }

  CHECK_CUDA(cudaStreamDestroy(s.compute));
  CHECK_CUDA(cudaStreamDestroy(s.comm));
  CHECK_NCCL(ncclCommDestroy(comm));
  std::printf("%s: done\n", mode.c_str());
  return 0;
}
