/* hipport deep mode: CUDA language declarations for PARSING ONLY.
 *
 * `hipport --engine clang` parses CUDA with libclang and `-nocudainc -nocudalib`, so no CUDA
 * toolkit is needed. That switch also drops what clang's CUDA wrapper normally provides:
 * the execution-space macros, the built-in index variables, the warp intrinsics and the
 * launch-configuration hook behind `<<<...>>>`. This file, force-included (`-include`),
 * declares just enough of those for the code to type-check. It is never compiled into
 * anything and is not a CUDA implementation.
 *
 * The warp-sync intrinsics are templates on purpose: the mask argument then keeps the type
 * the caller wrote (no implicit conversion), which is what the HP2xx mask rules inspect.
 * Builtins HIP provides return what HIP's declare (amd_warp_sync_functions.h,
 * amd_warp_functions.h): lane masks are 64-bit (`unsigned long long`), so a mask passed
 * straight from `__activemask()` or `__ballot_sync(...)` is judged as it compiles for HIP.
 *
 * Like nvcc, it includes <cuda_runtime.h>: a real one on the include path (from
 * compile_commands.json or --clang-arg -I...) wins; otherwise the small stub in include/
 * beside this file is found through `-idirafter`.
 */
#pragma once

#ifndef __global__
#define __global__ __attribute__((global))
#endif
#ifndef __device__
#define __device__ __attribute__((device))
#endif
#ifndef __host__
#define __host__ __attribute__((host))
#endif
#ifndef __shared__
#define __shared__ __attribute__((shared))
#endif
#ifndef __constant__
#define __constant__ __attribute__((constant))
#endif
#ifndef __managed__
#define __managed__ __attribute__((managed))
#endif
#ifndef __forceinline__
#define __forceinline__ inline __attribute__((always_inline))
#endif
#ifndef __noinline__
#define __noinline__ __attribute__((noinline))
#endif
#ifndef __launch_bounds__
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#endif
#ifndef __align__
#define __align__(n) __attribute__((aligned(n)))
#endif

#include <cuda_runtime.h>

struct __hipport_index3 { unsigned int x, y, z; };
extern const __device__ __hipport_index3 threadIdx, blockIdx, blockDim, gridDim;
extern const __device__ int warpSize;

/* What clang lowers `k<<<g, b, s, st>>>(...)` to, in host and in device compilation. */
extern "C" unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem = 0,
                                                void *stream = 0);
extern "C" int cudaConfigureCall(dim3 grid, dim3 block, size_t shmem = 0, void *stream = 0);

__device__ void __syncthreads();
__device__ int __syncthreads_count(int);
__device__ int __syncthreads_and(int);
__device__ int __syncthreads_or(int);
__device__ void __threadfence();
__device__ void __threadfence_block();
__device__ void __threadfence_system();

template <class M = unsigned> __device__ void __syncwarp(M mask = 0xffffffffu);
template <class M, class T> __device__ T __shfl_sync(M mask, T var, int src, int width = 32);
template <class M, class T> __device__ T __shfl_up_sync(M mask, T var, unsigned d, int width = 32);
template <class M, class T> __device__ T __shfl_down_sync(M mask, T var, unsigned d, int width = 32);
template <class M, class T> __device__ T __shfl_xor_sync(M mask, T var, int m, int width = 32);
template <class M> __device__ unsigned long long __ballot_sync(M mask, int pred);
template <class M> __device__ int __any_sync(M mask, int pred);
template <class M> __device__ int __all_sync(M mask, int pred);
template <class M> __device__ int __uni_sync(M mask, int pred);
template <class M, class T> __device__ unsigned long long __match_any_sync(M mask, T value);
template <class M, class T> __device__ unsigned long long __match_all_sync(M mask, T value, int *pred);
template <class M, class T> __device__ T __reduce_add_sync(M mask, T value);
template <class M, class T> __device__ T __reduce_min_sync(M mask, T value);
template <class M, class T> __device__ T __reduce_max_sync(M mask, T value);
template <class M, class T> __device__ T __reduce_and_sync(M mask, T value);
template <class M, class T> __device__ T __reduce_or_sync(M mask, T value);
template <class M, class T> __device__ T __reduce_xor_sync(M mask, T value);
__device__ unsigned long long __activemask();
template <class T> __device__ T __shfl(T var, int src, int width = 32);
template <class T> __device__ T __shfl_up(T var, unsigned d, int width = 32);
template <class T> __device__ T __shfl_down(T var, unsigned d, int width = 32);
template <class T> __device__ T __shfl_xor(T var, int m, int width = 32);
__device__ unsigned long long __ballot(int pred);

__device__ int __popc(unsigned);
__device__ int __popcll(unsigned long long);
__device__ int __ffs(int);
__device__ int __ffsll(long long);
__device__ int __clz(int);
__device__ int __clzll(long long);
__device__ unsigned __brev(unsigned);
__device__ unsigned long long __brevll(unsigned long long);
template <class T> __device__ T __ldg(const T *p);
template <class T> __device__ T atomicAdd(T *p, T v);
template <class T> __device__ T atomicMax(T *p, T v);
template <class T> __device__ T atomicMin(T *p, T v);
template <class T> __device__ T atomicExch(T *p, T v);
template <class T> __device__ T atomicCAS(T *p, T cmp, T v);
