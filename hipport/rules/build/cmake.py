"""HP604–HP607: CUDA variables, libraries, legacy FindCUDA and install paths in build
files (``hipport.rewrite.buildfiles``)."""

from __future__ import annotations

from hipport.findings import Effort, Severity
from hipport.rules import REGISTRY


@REGISTRY.rule
class BuildCudaVariable:
    """A CUDA variable or property with no HIP counterpart

    `CMAKE_CUDA_HOST_COMPILER`, `CUDA_RUNTIME_LIBRARY`, `CUDAToolkit_VERSION`,
    `CUDA_TOOLKIT_ROOT_DIR`, `$<CUDA_COMPILER_VERSION>` and the like describe nvcc and the
    CUDA toolkit. A HIP build has clang as its compiler and ROCm as its root: the test or
    setting means something else there, or nothing.

    ## Why

    CMake leaves these variables empty or unrelated in a HIP build, so a test such as
    `if(CUDAToolkit_VERSION VERSION_LESS 11)` quietly takes the wrong branch, and a setting such
    as `CMAKE_CUDA_HOST_COMPILER` has no effect: the build configures but not as intended.

    ## Example

    ```cmake
    if(CUDAToolkit_VERSION VERSION_LESS 11.0)
    ```

    ```cmake
    if(hip_VERSION VERSION_LESS 6.0)
    ```

    ## Fix

    Remove the setting, or test the HIP counterpart the message names.
    """

    code = "HP604"
    slug = "build-cuda-variable"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.rule
class BuildCudaLibrary:
    """A CUDA library with no ROCm library to link instead

    Imported targets (`CUDA::nvml`, `CUDA::cupti`, `CUDA::nppc` …) and `-l` libraries
    (`-lnvidia-ml`, `-lcudnn`) whose ROCm counterpart has another API, or none. Linking
    the ROCm library alone would not build: the calls must be ported first (HP4xx).

    ## Why

    The imported target or `-l` library does not exist on a ROCm machine, so the link fails;
    and where a ROCm library with a similar job exists (rocprofiler for CUPTI, amdsmi for NVML)
    its API differs, so renaming the library alone would not build either.

    ## Example

    ```cmake
    target_link_libraries(app PRIVATE CUDA::nvml)
    ```

    ```cmake
    find_package(rocm_smi REQUIRED)
    target_link_libraries(app PRIVATE rocm_smi64)   # after porting nvml* calls to rsmi_*
    ```

    ## Fix

    Port the calls to the library the message names, then link it.
    """

    code = "HP605"
    slug = "build-cuda-library"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


@REGISTRY.rule
class BuildLegacyFindCuda:
    """A legacy FindCUDA construct, moved into the HIP language or left for a person

    `cuda_add_executable(… OPTIONS …)`, `cuda_compile`, `cuda_wrap_srcs` and
    `CUDA_NVCC_FLAGS` belong to the FindCUDA module (deprecated since CMake 3.10), which
    drives nvcc itself. CMake's HIP language does not read them. `convert` moves the
    `OPTIONS` of `cuda_add_executable`/`cuda_add_library` into `target_compile_options(t
    PRIVATE $<$<COMPILE_LANGUAGE:HIP>:…>)` (per configuration for `RELEASE`/`DEBUG`…) and
    a `set`/`list(APPEND)`/`string(APPEND)` of `CUDA_NVCC_FLAGS[_<CONFIG>]` into
    `string(APPEND CMAKE_HIP_FLAGS[_<CONFIG>] " …")`, each flag through the nvcc table
    (fixed findings). Left and reported: the other FindCUDA commands, a cached or
    parent-scope `CUDA_NVCC_FLAGS`, one holding generator expressions, any other use of
    it (`list(REMOVE_ITEM …)`, reading it), and a variable moved as written whose
    contents hipport cannot see.

    ## Why

    CMake's HIP language ignores FindCUDA's commands and variables, so their flags and sources
    would be dropped without a word: a build that configures but compiles the wrong thing, or
    nothing, for the GPU.

    ## Example

    ```cmake
    list(APPEND CUDA_NVCC_FLAGS --use_fast_math)
    cuda_add_executable(app main.cu OPTIONS -lineinfo)
    ```

    ```cmake
    string(APPEND CMAKE_HIP_FLAGS " -ffast-math")
    add_executable(app main.cu)
    target_compile_options(app PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-gline-tables-only>)
    set_source_files_properties(main.cu PROPERTIES LANGUAGE HIP)
    ```

    ## Fix

    Use the HIP language's commands: `add_executable`/`add_library`,
    `target_compile_options`, `CMAKE_HIP_FLAGS`.
    """

    code = "HP606"
    slug = "build-legacy-findcuda"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.rule
class BuildCudaPath:
    """A CUDA install path with no ROCm counterpart

    `/usr/local/cuda` and `$(CUDA_PATH)` become `/opt/rocm` and `$(ROCM_PATH)`, with
    `lib64` → `lib`; a path into a part of the CUDA toolkit ROCm lays out differently
    (`extras/CUPTI`, `nvvm`, `samples/common/inc`) is reported.

    ## Why

    A path that does not exist on a ROCm machine makes the include or the link fail, or worse,
    finds a stale CUDA install on a mixed machine. ROCm ships no CUPTI, NVVM or CUDA samples
    tree, so there is no path to substitute.

    ## Example

    ```make
    INCLUDES += -I$(CUDA_PATH)/samples/common/inc
    ```

    ## Fix

    Point it at the ROCm component or the project's own copy of the headers.
    """

    code = "HP607"
    slug = "build-cuda-path"
    severity = Severity.LOW
    effort = Effort.SMALL
