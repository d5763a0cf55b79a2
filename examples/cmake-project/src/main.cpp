#include <cstdio>
#include <cstdlib>

#include "estimate.h"

int main(int argc, char **argv) {
  std::size_t points = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (1u << 20);
  double pi = estimate_pi(points, 1234ULL);
  if (pi < 0) return 1;
  std::printf("pi ~ %.6f from %zu points\n", pi, points);
  return 0;
}
