"""HP601–HP603, HP608: GPU architectures and nvcc flags in build files
(``hipport.rewrite.buildfiles``: cmake, make, flags)."""

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
