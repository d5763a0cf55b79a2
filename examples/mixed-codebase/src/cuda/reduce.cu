#include <cuda_runtime.h>
#include "../../include/warp_compat.h"

// Block sum: one partial per warp in shared memory, then the first warp adds them up.
__global__ void block_sum(const float *in, float *out, int n) {
    __shared__ float partial[1024 / 16];  // enough for 16-lane warps and up
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = warp_sum(i < n ? in[i] : 0.0f);
    int warp = threadIdx.x / warpSize;
    if (lane_id() == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int warps = (blockDim.x + warpSize - 1) / warpSize;
        v = warp_sum(lane_id() < warps ? partial[lane_id()] : 0.0f);
        if (lane_id() == 0) atomicAdd(out, v);
    }
}
