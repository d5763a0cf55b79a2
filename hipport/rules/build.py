"""HP5xx — build and Python: what a repository's manifests, images and extensions pin to CUDA.

These rules are reported by ``hipport deps`` (its readers find them in requirements files,
pyproject.toml, setup.py, environment.yml, Dockerfiles, .gitmodules and Python imports),
not by the tree walk; they live here so that, like every other rule, each has a code, a
name and a page of documentation (``hipport rules HP501``).
"""

from __future__ import annotations

from hipport.findings import Effort, Severity
from hipport.rules import REGISTRY


@REGISTRY.rule
class CudaIndexUrl:
    """Package index or conda channel that serves CUDA builds

    ## Why
    An `--index-url`/`--extra-index-url`/`--find-links` line (or a conda channel such as
    `nvidia`) that serves CUDA wheels decides the backend of every package it provides:
    `pip install -r requirements.txt` installs CUDA builds on an AMD machine.

    ## Example

    ```text
    --extra-index-url https://download.pytorch.org/whl/cu121
    torch==2.3.1
    ```

    ```text
    --extra-index-url https://download.pytorch.org/whl/rocm6.3
    torch==2.5.1
    ```

    ## Fix

    Point the index at the ROCm builds (or make it a per-platform install instruction).
    """

    code = "HP501"
    slug = "cuda-index-url"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.rule
class CudaLocalVersion:
    """A `+cuXYZ` local version pins the CUDA build of a package

    ## Why
    `torch==2.3.1+cu121` names the CUDA 12.1 build; no ROCm machine can satisfy it.

    ## Example

    ```text
    torch==2.3.1+cu121
    ```

    ```text
    torch==2.3.1        # from the ROCm index, or +rocm6.3 where pinned
    ```

    ## Fix

    Drop the local version and choose the build with the index URL.
    """

    code = "HP502"
    slug = "cuda-local-version"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.rule
class CudaOnlyWheel:
    """The CUDA flavour of a package that has a ROCm route

    ## Why
    Packages such as `cupy-cuda12x`, `nvidia-*-cu12` or `jax[cuda12]` are the CUDA builds of
    projects that ship ROCm builds under another name or index.

    ## Example

    ```text
    cupy-cuda12x==13.3.0
    ```

    ```text
    cupy-rocm-6-3      # or build cupy from source with CUPY_INSTALL_USE_HIP=1
    ```

    ## Fix

    Use the ROCm flavour that `hipport deps` names in its install route.
    """

    code = "HP503"
    slug = "cuda-only-wheel"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


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
