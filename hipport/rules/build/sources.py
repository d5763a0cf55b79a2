"""HP609, HP610: CUDA sources a build names that convert cannot see or rename surely
(``hipport.rewrite.buildfiles``)."""

from __future__ import annotations

from hipport.findings import Effort, Severity
from hipport.rules import REGISTRY


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
