// Block-wide sum with one partial per warp, then a second pass.
#include "common.cuh"

__global__ void block_sum(const float* __restrict__ in, float* out, int n) {
  __shared__ float partial[WARP_SIZE];  // one slot per warp of a 1024-thread block
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;

  float v = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    v += in[i];

  v = warp_sum(v);
  if (lane == 0) partial[warp] = v;
  __syncthreads();

  if (warp == 0) {
    v = (lane < blockDim.x / WARP_SIZE) ? partial[lane] : 0.f;
    v = warp_sum(v);
    if (lane == 0) atomicAdd(out, v);
  }
}

float device_sum(const float* d_in, int n, cudaStream_t stream) {
  float* d_out = nullptr;
  CUDA_CHECK(cudaMalloc(&d_out, sizeof(float)));
  CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), stream));
  block_sum<<<256, 1024, 0, stream>>>(d_in, d_out, n);
  CUDA_CHECK(cudaGetLastError());
  float h_out = 0.f;
  CUDA_CHECK(cudaMemcpyAsync(&h_out, d_out, sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaFree(d_out));
  return h_out;
}
