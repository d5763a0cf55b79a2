// A 256-bin byte histogram: per-block bins in shared memory, merged with atomics.
#pragma once
#include <cstddef>
#include <cuda_runtime.h>

cudaError_t histogram256(const unsigned char *data, std::size_t n, unsigned int *bins);
