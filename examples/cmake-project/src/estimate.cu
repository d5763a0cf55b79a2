#include "estimate.h"

#include <cstdio>
#include <cuda_runtime.h>
#include <curand.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(err_));       \
      return -1.0;                                                             \
    }                                                                          \
  } while (0)

// One thread per pair of coordinates; a block-wide sum in shared memory, then one
// atomic per block.
__global__ void count_inside(const float *xy, std::size_t n, unsigned long long *inside) {
  __shared__ unsigned int hits[256];
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  unsigned int hit = 0;
  if (i < n) {
    float x = xy[2 * i], y = xy[2 * i + 1];
    hit = x * x + y * y <= 1.0f;
  }
  hits[threadIdx.x] = hit;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) hits[threadIdx.x] += hits[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(inside, static_cast<unsigned long long>(hits[0]));
}

double estimate_pi(std::size_t points, unsigned long long seed) {
  float *xy = nullptr;
  unsigned long long *inside = nullptr;
  CHECK(cudaMalloc(&xy, 2 * points * sizeof(float)));
  CHECK(cudaMalloc(&inside, sizeof(*inside)));
  CHECK(cudaMemset(inside, 0, sizeof(*inside)));

  curandGenerator_t gen;
  if (curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_DEFAULT) != CURAND_STATUS_SUCCESS ||
      curandSetPseudoRandomGeneratorSeed(gen, seed) != CURAND_STATUS_SUCCESS ||
      curandGenerateUniform(gen, xy, 2 * points) != CURAND_STATUS_SUCCESS) {
    std::fprintf(stderr, "cuRAND failed\n");
    return -1.0;
  }
  curandDestroyGenerator(gen);

  const unsigned int block = 256;
  const unsigned int grid = static_cast<unsigned int>((points + block - 1) / block);
  count_inside<<<grid, block>>>(xy, points, inside);
  CHECK(cudaGetLastError());

  unsigned long long host = 0;
  CHECK(cudaMemcpy(&host, inside, sizeof(host), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(xy));
  CHECK(cudaFree(inside));
  return 4.0 * static_cast<double>(host) / static_cast<double>(points);
}
