#include <cuda_runtime.h>

__global__ void ball_query(int n, const float* xyz, int* idx) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned found = __ballot_sync(0xffffffff, xyz[i] < 1.f);
    if ((threadIdx.x % 32) == 0) idx[i / 32] = __popc(found);
}

void ball_query_launch(int n, const float* xyz, int* idx, cudaStream_t s) {
    ball_query<<<(n + 255) / 256, 256, 0, s>>>(n, xyz, idx);
}
