#include "histogram.cuh"

__global__ void histogram_kernel(const unsigned char *data, std::size_t n, unsigned int *bins) {
  __shared__ unsigned int local[256];
  for (unsigned int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (unsigned int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

cudaError_t histogram256(const unsigned char *data, std::size_t n, unsigned int *bins) {
  unsigned char *d_data = nullptr;
  unsigned int *d_bins = nullptr;
  cudaError_t err = cudaMalloc(&d_data, n);
  if (err != cudaSuccess) return err;
  if ((err = cudaMalloc(&d_bins, 256 * sizeof(unsigned int))) != cudaSuccess) return err;
  cudaMemcpy(d_data, data, n, cudaMemcpyHostToDevice);
  cudaMemset(d_bins, 0, 256 * sizeof(unsigned int));
  histogram_kernel<<<64, 256>>>(d_data, n, d_bins);
  if ((err = cudaGetLastError()) != cudaSuccess) return err;
  err = cudaMemcpy(bins, d_bins, 256 * sizeof(unsigned int), cudaMemcpyDeviceToHost);
  cudaFree(d_data);
  cudaFree(d_bins);
  return err;
}
