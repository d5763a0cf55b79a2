#include <cuda_runtime.h>

// Written for NVIDIA only, before the project supported AMD. Its findings are recorded
// in .hipport-baseline.json until someone ports it; new code like it is stopped.
__global__ void count_positive(const int *in, int *count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned votes = __ballot_sync(0xffffffff, i < n && in[i] > 0);
    if (threadIdx.x % 32 == 0) atomicAdd(count, __popc(votes));
}
