"""HP501–HP503: requirement lines that install CUDA builds (``hipport.deps.requirements``,
``pyproject``, ``conda``, ``setuppy``)."""

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
