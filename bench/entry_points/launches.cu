// Launches through the CUDA runtime both ways a CUDA C++ program makes
// them: the triple-chevron syntax and cudaLaunchKernel.
#include <cstdio>

__global__ void add_one(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1;
}

int main() {
  int n = 4096;
  float* x = nullptr;
  cudaMalloc(&x, n * sizeof(float));
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  for (int i = 0; i < 100; ++i) add_one<<<n / 256, 256, 0, stream>>>(x, n);
  void* args[] = {&x, &n};
  for (int i = 0; i < 10; ++i)
    cudaLaunchKernel(reinterpret_cast<const void*>(add_one), n / 256, 256, args, 0, stream);
  cudaStreamSynchronize(stream);
  std::printf("launches: %s\n", cudaGetErrorString(cudaGetLastError()));
  cudaFree(x);
  return 0;
}
