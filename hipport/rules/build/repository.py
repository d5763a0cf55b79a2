"""HP504, HP511–HP513: a repository's image, own extensions, submodules and Python code
that need CUDA (``hipport.deps.docker``, ``extensions``, ``submodules``, ``imports``)."""

from __future__ import annotations

from hipport.findings import Effort, Severity
from hipport.rules import REGISTRY


@REGISTRY.rule
class CudaBaseImage:
    """Container built FROM an NVIDIA CUDA image

    ## Why
    `FROM nvidia/cuda:…` (or an NGC image) carries the CUDA toolkit and driver libraries;
    the image cannot run on an AMD GPU.

    ## Example

    ```dockerfile
    FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04
    ```

    ```dockerfile
    FROM rocm/pytorch:latest
    ```

    ## Fix

    Start from a ROCm image (`rocm/dev-ubuntu-22.04`, `rocm/pytorch`).
    """

    code = "HP504"
    slug = "cuda-base-image"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.rule
class CudaExtension:
    """A CUDA extension the repository compiles itself

    ## Why
    `CUDAExtension(...)` in setup.py, or `torch.utils.cpp_extension.load()` of `.cu`
    sources, compiles the repository's own kernels. PyTorch hipifies them on a ROCm build,
    but only textually: warp-size assumptions, inline PTX and CUDA-only libraries are left
    for a person (the HP2xx–HP4xx findings on those sources say where).

    ## Example

    ```python
    CUDAExtension("rasterizer", ["rasterize.cu", "ext.cpp"])
    ```

    ## Fix

    Review the extension's sources with `hipport scan` and build it on ROCm.
    """

    code = "HP511"
    slug = "cuda-extension"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


@REGISTRY.rule
class CudaSubmodule:
    """A git submodule that holds CUDA code

    ## Why
    The submodule's kernels are built with the repository but ported (or not) upstream.

    ## Example

    ```ini
    [submodule "submodules/diff-gaussian-rasterization"]
    ```

    ## Fix

    Look for a ROCm fork of the submodule, or scan and port it.
    """

    code = "HP512"
    slug = "cuda-submodule"
    severity = Severity.MEDIUM
    effort = Effort.MEDIUM


@REGISTRY.rule
class CudaSourceString:
    """Python code that names a CUDA-only provider or tool

    ## Why
    Strings such as `CUDAExecutionProvider` (onnxruntime) or `nvidia-smi` select CUDA-only
    code paths at run time.

    ## Example

    ```python
    ort.InferenceSession(path, providers=["CUDAExecutionProvider"])
    ```

    ```python
    ort.InferenceSession(path, providers=["MIGraphXExecutionProvider"])
    ```

    ## Fix

    Use the ROCm provider or tool (`MIGraphXExecutionProvider`, `rocm-smi`/`amd-smi`).
    """

    code = "HP513"
    slug = "cuda-source-string"
    severity = Severity.LOW
    effort = Effort.SMALL
