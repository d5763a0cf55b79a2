// saxpy with cuBLAS, then a reduction kernel: the example a newcomer converts first.
#include <vector>
#include <cublas_v2.h>
#include "common.cuh"

float device_sum(const float* d_in, int n, cudaStream_t stream);

__global__ void fill(float* x, float value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = value;
}

int main() {
  const int n = 1 << 20;
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  float *d_x, *d_y;
  CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(float)));
  fill<<<(n + 255) / 256, 256, 0, stream>>>(d_x, 1.0f, n);
  fill<<<(n + 255) / 256, 256, 0, stream>>>(d_y, 2.0f, n);

  cublasHandle_t handle;
  cublasCreate(&handle);
  cublasSetStream(handle, stream);
  const float alpha = 3.0f;
  cublasSaxpy(handle, n, &alpha, d_x, 1, d_y, 1);  // y = 3x + y = 5

  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start, stream);
  float total = device_sum(d_y, n, stream);
  cudaEventRecord(stop, stream);
  cudaEventSynchronize(stop);
  float ms = 0.f;
  cudaEventElapsedTime(&ms, start, stop);

  std::printf("sum = %.1f (expected %.1f) in %.3f ms\n", total, 5.0 * n, ms);
  cublasDestroy(handle);
  cudaFree(d_x);
  cudaFree(d_y);
  cudaStreamDestroy(stream);
  return total == 5.0f * n ? 0 : 1;
}
