/* hipport deep mode: stub of <cuda_runtime.h> for PARSING ONLY (see ../hipport_cuda.h).
 * Found through -idirafter, so a real CUDA header on the include path always wins. */
#pragma once
#include <cuda_runtime_api.h>
