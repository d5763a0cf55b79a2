"""HP404, HP406, HP407, HP409, HP411 — libraries with a ROCm counterpart: cuDNN → MIOpen,
NVTX → roctx, CUB/Thrust → hipCUB/rocThrust, NCCL → RCCL.

Pages only: the catalogue (``mappings/libraries.toml``) says what names each library,
and ``matching`` reports it."""

from __future__ import annotations

from hipport.findings import Effort, Severity
from hipport.rules import REGISTRY, SaysWhatItIs


@REGISTRY.rule
class Cudnn(SaysWhatItIs):
    """cuDNN → MIOpen is a manual port

    ## Why
    MIOpen covers most of cuDNN's operations, but the API differs (descriptors, algorithm
    search, workspace handling) and there is no marshalling layer; HIPIFY 20 stopped
    translating to hipDNN by default.

    ## Example
    ```cuda
    // before
    cudnnConvolutionForward(h, &a, xD, x, wD, w, cD, algo, ws, wsSize, &b, yD, y);
    // after
    miopenConvolutionForward(h, &a, xD, x, wD, w, cD, algo, &b, yD, y, ws, wsSize);
    ```

    ## Fix
    Port to MIOpen call by call (use find/immediate mode for algorithm selection), or
    call the framework's own operators.
    """

    code = "HP404"
    slug = "cudnn-miopen"
    severity = Severity.HIGH
    effort = Effort.LARGE


@REGISTRY.rule
class Nvtx(SaysWhatItIs):
    """NVTX ranges map to roctx

    ## Why
    NVTX has no AMD build: `nvToolsExt.h` and `nvtx3/` are absent on ROCm, so profiling
    markers stop the file from compiling. roctx (from roctracer) has the same ranges and
    marks under other names.

    ## Example
    ```cuda
    // before
    #include <nvToolsExt.h>
    nvtxRangePushA("step"); nvtxRangePop();
    // after
    #include <roctracer/roctx.h>
    roctxRangePushA("step"); roctxRangePop();
    ```

    ## Fix
    Include `<roctracer/roctx.h>`, call the `roctx*` functions and link `roctx64`;
    `nvtxRangeStart`/`nvtxRangeEnd` become `roctxRangeStartA`/`roctxRangeStop`.
    """

    code = "HP406"
    slug = "nvtx-roctx"
    severity = Severity.INFO
    effort = Effort.SMALL


@REGISTRY.rule
class Nvtx3Cpp(SaysWhatItIs):
    """NVTX3 C++ API has no roctx counterpart

    ## Why
    `nvtx3::scoped_range`, domains and registered strings do not exist in roctx.

    ## Example
    ```cuda
    // before
    nvtx3::scoped_range r{"step"};
    // after
    struct RoctxRange { explicit RoctxRange(const char* n) { roctxRangePushA(n); } ~RoctxRange() { roctxRangePop(); } };
    RoctxRange r{"step"};
    ```

    ## Fix
    Wrap `roctxRangePushA`/`roctxRangePop` in a small RAII type as shown, and drop domains
    and registered strings (roctx has a single global domain).
    """

    code = "HP407"
    slug = "nvtx3-cpp"
    severity = Severity.LOW
    effort = Effort.SMALL


@REGISTRY.rule
class CubThrust(SaysWhatItIs):
    """CUB / Thrust map to hipCUB / rocThrust

    ## Why
    The APIs match closely: `cub::` becomes `hipcub::`, Thrust keeps its names. From ROCm
    7.0 hipCUB 4, rocPRIM 4 and rocThrust 4 require C++17.

    ## Example
    ```cuda
    // before
    #include <cub/cub.cuh>
    cub::DeviceReduce::Sum(tmp, bytes, in, out, n);
    // after
    #include <hipcub/hipcub.hpp>
    hipcub::DeviceReduce::Sum(tmp, bytes, in, out, n);
    ```

    ## Fix
    `hipport convert` rewrites the includes and the `cub::` namespace; build with C++17 from
    ROCm 7.0, and check CUB features newer than the hipCUB release (`hipport map NAME`).
    A tree's own copy of CUB (relion's `src/acc/cuda/cub`) is left as it is and its includes
    become hipCUB's too: delete the copy.
    """

    code = "HP409"
    slug = "cub-thrust"
    severity = Severity.INFO
    effort = Effort.SMALL


@REGISTRY.rule
class Nccl(SaysWhatItIs):
    """NCCL maps to RCCL

    ## Why
    RCCL implements the NCCL API (2.21 in ROCm 6.3, 2.27 in 7.1–7.2.1): only the header
    and library change.

    ## Example
    ```cuda
    // before
    #include <nccl.h>
    // after
    #include <rccl/rccl.h>
    ```

    ## Fix
    Include `<rccl/rccl.h>` and link `rccl`; the `nccl*` calls and types stay as written.
    Check features newer than the target's RCCL version (the NCCL version above).
    """

    code = "HP411"
    slug = "nccl-rccl"
    severity = Severity.INFO
    effort = Effort.NONE
