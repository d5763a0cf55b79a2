"""HP7xx — PyTorch extensions: what a ``setup.py`` or ``cpp_extension.load()`` says to nvcc
and about CUDA that breaks the build on ROCm PyTorch.

Reported by ``hipport.rewrite.buildfiles.torch_ext`` for ``convert`` and ``scan``. ROCm
PyTorch builds a ``CUDAExtension`` itself (it hipifies the sources and compiles them with
hipcc), so these findings are about the script, not the kernels.
"""

from __future__ import annotations

from hipport.findings import Effort, Severity
from hipport.rules import REGISTRY


@REGISTRY.rule
class TorchNvccArchitecture:
    """A GPU architecture flag among an extension's nvcc flags

    `-gencode arch=compute_80,code=sm_80`, `-arch=sm_80` or `--gpu-architecture` in
    `extra_compile_args["nvcc"]` reach hipcc on ROCm PyTorch, which rejects them. On ROCm
    the GPUs come from `PYTORCH_ROCM_ARCH` (or torch's own list).

    ## Why

    hipcc rejects NVIDIA architecture flags, so the extension's build stops at the first `.cu`
    file on ROCm PyTorch, although the sources themselves would compile.

    ## Example

    ```python
    extra_compile_args={"nvcc": ["-O3", "-gencode", "arch=compute_80,code=sm_80"]}
    ```

    ```python
    nvcc = ["-O3"]
    if torch.version.cuda:
        nvcc += ["-gencode", "arch=compute_80,code=sm_80"]
    extra_compile_args={"nvcc": nvcc}
    ```

    ## Fix

    Add the architecture flags on CUDA only; build on ROCm with
    `PYTORCH_ROCM_ARCH=gfx942 pip install .`.
    """

    code = "HP701"
    slug = "torch-nvcc-architecture"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.rule
class TorchNvccFlag:
    """An nvcc-only flag among an extension's nvcc flags

    `--use_fast_math`, `-lineinfo`, `--expt-relaxed-constexpr`, `-Xptxas=-v` and the like
    are nvcc's; on ROCm PyTorch the same list goes to hipcc. The message names clang's
    spelling, or says the flag has none.

    ## Why

    On ROCm PyTorch the `nvcc` list is passed to hipcc, which rejects nvcc's spellings, so the
    build stops; the right clang flag usually exists under another name (`-ffast-math`, `-g`).

    ## Example

    ```python
    extra_compile_args={"nvcc": ["--use_fast_math", "-lineinfo"]}
    ```

    ```python
    nvcc = ["-ffast-math", "-gline-tables-only"] if torch.version.hip else ["--use_fast_math", "-lineinfo"]
    extra_compile_args={"nvcc": nvcc}
    ```

    ## Fix

    Choose the list by `torch.version.hip`, with the counterparts the message names.
    """

    code = "HP702"
    slug = "torch-nvcc-flag"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.rule
class TorchCudaToolkitCheck:
    """A check for the CUDA toolkit that fails on ROCm PyTorch

    `torch.utils.cpp_extension.CUDA_HOME` and `torch.version.cuda` are `None` on ROCm
    PyTorch (there is no CUDA toolkit), so `if CUDA_HOME is None: raise …` stops a build that
    would have worked. ROCm's counterparts are `ROCM_HOME` and `torch.version.hip`.

    ## Why

    The check raises or takes a CUDA-only path on ROCm PyTorch, so the extension is never built
    there even when its sources would compile: the commonest reason a ROCm-ready extension
    "does not support AMD".

    ## Example

    ```python
    if CUDA_HOME is None:
        raise RuntimeError("CUDA_HOME not set")
    ```

    ```python
    if CUDA_HOME is None and ROCM_HOME is None:
        raise RuntimeError("neither CUDA nor ROCm found")
    ```

    ## Fix

    Accept either toolkit (`from torch.utils.cpp_extension import ROCM_HOME`).
    """

    code = "HP703"
    slug = "torch-cuda-toolkit-check"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.rule
class TorchCudaArchitectureList:
    """A hard-coded CUDA architecture list for an extension

    `TORCH_CUDA_ARCH_LIST`, `"sm_80"` or `"compute_86"` in the build script name NVIDIA
    GPUs; ROCm PyTorch reads `PYTORCH_ROCM_ARCH` (`gfx90a;gfx942`) instead.

    ## Why

    Setting `TORCH_CUDA_ARCH_LIST` has no effect on a ROCm build, and `sm_` names passed as flags
    make hipcc fail: the extension builds for torch's default GPUs or not at all.

    ## Example

    ```python
    os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;8.6"
    ```

    ```python
    os.environ.setdefault("PYTORCH_ROCM_ARCH", "gfx90a;gfx942")
    ```

    ## Fix

    Set both lists, or leave the choice to the environment.
    """

    code = "HP704"
    slug = "torch-cuda-architecture-list"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.rule
class TorchHipifiesExtension:
    """ROCm PyTorch hipifies this extension at build time

    A `CUDAExtension` (or `load()` of `.cu` sources) is run through torch's hipify when the
    installed torch is a ROCm build: the sources are copied with CUDA names renamed and
    compiled by hipcc. Which names it renames depends on the torch release: from its 2026
    releases hipify keeps CUDA class names (`c10::cuda::CUDAStream`, `at::cuda::CUDAGuard`
    …) instead of renaming them to HIP names. Code converted by hipport keeps those class
    names, which suits such a torch; code written against the HIP class names needs an
    older one. Warp-size, PTX and library findings on the sources still apply: hipify is
    textual.

    ## Why

    torch's hipify and hipport's conversion are two translations of the same sources; if the
    repository's sources were already converted with HIP class names, hipify of a newer torch
    leaves them, and of an older torch renames them: which one applies decides whether the
    extension compiles.

    ## Example

    ```python
    CUDAExtension("ops._C", ["ops/ext.cpp", "ops/kernel.cu"])
    ```

    ## Fix

    Nothing to change in the script; check `torch.__version__` against the class names
    the sources use, and review the sources' own findings (`hipport scan`).
    """

    code = "HP705"
    slug = "torch-hipifies-extension"
    severity = Severity.INFO
    effort = Effort.NONE
