"""HP6xx — build files (CMake, Makefiles): what ``convert`` could not port, or ported with a choice.

Reported by the build-file readers in ``hipport.rewrite.buildfiles`` (not by the tree walk of
sources); each rule lives here so that it has a code, a slug and a page like every other.
"""

from __future__ import annotations

from hipport.findings import Effort, Severity
from hipport.rules import REGISTRY


@REGISTRY.rule
class BuildGpuArchitectures:
    """CUDA GPU architectures replaced by AMD ones

    `CMAKE_CUDA_ARCHITECTURES`, the `CUDA_ARCHITECTURES` property, `-arch=sm_XX` and
    `-gencode …` name NVIDIA GPUs. `convert` writes the AMD GPUs of `--offload-arch`
    (default gfx942) in their place; a list set from a variable is reported, not changed.

    ## Why

    An NVIDIA architecture number means nothing to clang's AMDGPU back end: a HIP build
    given `sm_80` fails at configure time, and one given no architecture builds for a default
    GPU that may not be the one you run on. Code objects are per GPU (gfx90a, gfx942, gfx950):
    a binary without yours does not load.

    ## Example

    ```cmake
    set(CMAKE_CUDA_ARCHITECTURES 70 80)
    ```

    ```cmake
    set(CMAKE_HIP_ARCHITECTURES gfx942)
    ```

    ## Fix

    Build for every AMD GPU you ship for (`--offload-arch gfx90a,gfx942`, or
    `-DCMAKE_HIP_ARCHITECTURES=…` at configure time).
    """

    code = "HP601"
    slug = "build-gpu-architectures"
    severity = Severity.INFO
    effort = Effort.NONE


@REGISTRY.rule
class BuildRelocatableDeviceCode:
    """Separable compilation (relocatable device code) needs -fgpu-rdc

    `CUDA_SEPARABLE_COMPILATION` has no HIP property. clang's relocatable device code is
    `-fgpu-rdc`, needed when compiling **and** when linking (with `--hip-link`); without
    it a kernel calling a `__device__` function from another file fails to link.

    ## Why

    A project that compiles device code per file and links it across files builds on CUDA and
    fails at link time on HIP ("undefined hidden symbol" for the `__device__` function), or it
    silently loses the separate compilation its build relied on.

    ## Example

    ```cmake
    set_target_properties(lib PROPERTIES CUDA_SEPARABLE_COMPILATION ON)
    ```

    ```cmake
    target_compile_options(lib PRIVATE -fgpu-rdc)
    target_link_options(lib PRIVATE -fgpu-rdc --hip-link)
    ```

    ## Fix

    Add both options to the targets that need device linking; drop them where no device
    code crosses files (whole-program compilation is faster on AMD).
    """

    code = "HP602"
    slug = "build-relocatable-device-code"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.rule
class BuildNvccFlag:
    """An nvcc flag with no clang counterpart

    Flags such as `-maxrregcount`, `-Xptxas`, `-ccbin`, `--diag-suppress` or `-G` drive
    nvcc, ptxas or the host compiler nvcc wraps; clang has no such switch. Flags whose
    only effect is tuning or diagnostics are removed (the finding says what was lost);
    `-G` becomes `-g -O0` (which also stops optimizing host code); flags that change what
    is built (`--ptx`, `-cubin`) are left for a person.

    ## Why

    clang rejects an option it does not know, so a build line that kept the flag would fail;
    one that dropped it silently could lose something the project relied on (register limits
    for occupancy, debug device code). The finding says which happened.

    ## Example

    ```cmake
    target_compile_options(k PRIVATE -maxrregcount=64 -G)
    ```

    ```cmake
    target_compile_options(k PRIVATE -g -O0)   # and __launch_bounds__ on the kernels
    ```

    ## Fix

    Use the counterpart the message names (`__launch_bounds__` for register caps,
    `-Rpass-analysis=kernel-resource-usage` for resource reports, `-g -O0` for device
    debugging).
    """

    code = "HP603"
    slug = "build-nvcc-flag"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


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


@REGISTRY.rule
class BuildFastMath:
    """nvcc's fast-math flag became clang's -ffast-math

    hipcc translates nvcc's `-use_fast_math` to clang's `-ffast-math`, and `convert` does
    the same. clang's switch is broader than nvcc's (which only flushes denormals and uses
    approximate division, square root and transcendentals): it also lets the compiler
    assume there is no NaN or infinity, which changes code that tests for them.

    ## Why

    Code that tests `isnan`/`isinf`, relies on NaN propagation or on signed zeros can behave
    differently under `-ffast-math` than it did under nvcc's narrower switch, and the difference
    shows only in results, never at build time.

    ## Example

    ```cmake
    target_compile_options(k PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--use_fast_math>)
    ```

    ```cmake
    target_compile_options(k PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-ffast-math>)
    ```

    ## Fix

    Where results depend on NaN or infinity, add `-fno-finite-math-only` after it.
    """

    code = "HP608"
    slug = "build-fast-math"
    severity = Severity.LOW
    effort = Effort.SMALL


@REGISTRY.rule
class BuildUnseenCudaSources:
    """CUDA sources that convert cannot see need LANGUAGE HIP

    CMake compiles a `.cu` file with the CUDA language whatever the project enables; in
    a HIP build each must have the source property `LANGUAGE HIP`. `convert` adds it for
    files named in the build file; a glob that mixes `.cu` with other sources is
    reported instead.

    ## Why

    A `.cu` source without `LANGUAGE HIP` is handed to the CUDA language (which a HIP build has
    not enabled, so configuration fails) or compiled as plain C++ (so `__global__` and `<<<>>>`
    fail): the build breaks on the first kernel file.

    ## Example

    ```cmake
    file(GLOB SRC src/*.cpp src/*.cu)
    ```

    ```cmake
    file(GLOB SRC src/*.cpp src/*.cu)
    file(GLOB CU_SRC src/*.cu)
    set_source_files_properties(${CU_SRC} PROPERTIES LANGUAGE HIP)
    ```

    ## Fix

    Give the `.cu` files `LANGUAGE HIP`, or convert with `.hip` names.
    """

    code = "HP609"
    slug = "build-unseen-cuda-sources"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.rule
class BuildRenameUnsure:
    """A `.cu` name --rename cannot update surely

    With `--rename`, every `.cu` file is written as `.hip` and every name that ends in
    `.cu` (sources, globs, patterns, `#include "x.cu"`, setup.py source lists) is updated.
    A name whose `.cu` is computed — an extension held apart (`set(EXT cu)`,
    `"${name}.${EXT}"`), or a `.cu` string in a Python script that is no extension build —
    is reported instead: hipport cannot tell whether it names a file of the tree.

    ## Why

    After the rename the tree has no `.cu` files: a build file that still makes `x.cu` from
    pieces names a file that is not there, and configuration (or the glob, silently) finds
    nothing to compile.

    ## Example

    ```cmake
    set(KERNEL_EXT cu)
    add_library(k ${NAME}.${KERNEL_EXT})
    ```

    ```cmake
    set(KERNEL_EXT hip)
    add_library(k ${NAME}.${KERNEL_EXT})
    ```

    ## Fix

    Change the extension to `hip` where it names the renamed sources, or convert without
    `--rename` (the `.cu` names then get `LANGUAGE HIP`).
    """

    code = "HP610"
    slug = "build-rename-unsure"
    severity = Severity.MEDIUM
    effort = Effort.SMALL
