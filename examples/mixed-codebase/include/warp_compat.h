// Warp primitives for both vendors. The CUDA branch assumes 32-lane warps; the HIP
// branch uses the wave size of the device. hipport knows MIXED_USE_HIP (declared in
// pyproject.toml) means "compiled for HIP", so it does not report the CUDA branch.
#pragma once

#if defined(MIXED_USE_HIP) || defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_runtime.h>
typedef unsigned long long lane_mask_t;
#define FULL_MASK (~0ull)
__device__ inline int lane_id() { return threadIdx.x % warpSize; }
#else
#include <cuda_runtime.h>
typedef unsigned int lane_mask_t;
#define FULL_MASK 0xffffffffu
__device__ inline int lane_id() { return threadIdx.x % 32; }
#endif

__device__ inline float warp_sum(float v) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}
