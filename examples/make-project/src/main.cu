#include <cstdio>
#include <vector>

#include "histogram.cuh"

int main() {
  std::vector<unsigned char> data(1 << 20);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 7);
  unsigned int bins[256] = {};
  cudaError_t err = histogram256(data.data(), data.size(), bins);
  if (err != cudaSuccess) {
    std::printf("CUDA error: %s\n", cudaGetErrorString(err));
    return 1;
  }
  std::printf("bin[0] = %u\n", bins[0]);
  return 0;
}
