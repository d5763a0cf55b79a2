// Shared helpers for the example: error checking and a warp-level sum.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                      \
  do {                                                                        \
    cudaError_t err_ = (call);                                                \
    if (err_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "CUDA error %s at %s:%d\n",                        \
                   cudaGetErrorString(err_), __FILE__, __LINE__);             \
      std::exit(EXIT_FAILURE);                                                \
    }                                                                         \
  } while (0)

#define WARP_SIZE 32
#define FULL_MASK 0xffffffff

// Sums v across the 32 lanes of a warp (NVIDIA's warp size).
__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_down_sync(0xffffffff, v, offset);
  return v;
}
