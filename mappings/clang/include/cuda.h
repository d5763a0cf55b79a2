/* hipport deep mode: empty stub of <cuda.h> for PARSING ONLY (see ../hipport_cuda.h);
 * a real header on the include path wins. */
#pragma once
#include <cuda_runtime_api.h>
