#include <hip/hip_runtime.h>

__global__ void vector_add(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

void launch_vector_add(const float *a, const float *b, float *c, int n, hipStream_t s) {
    int threads = 256;
    vector_add<<<(n + threads - 1) / threads, threads, 0, s>>>(a, b, c, n);
    hipGetLastError();
}
