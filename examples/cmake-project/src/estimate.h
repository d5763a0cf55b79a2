// Monte Carlo estimate of pi: points drawn by cuRAND on the device, counted by a kernel.
#pragma once
#include <cstddef>

// Returns the estimate, or a negative value (and a message on stderr) on a CUDA error.
double estimate_pi(std::size_t points, unsigned long long seed);
