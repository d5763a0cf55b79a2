"""HP309 — ``__CUDA_ARCH__`` tests in preprocessor conditions: hipcc does not define it.

A condition that also tests a HIP macro (``__HIP_*``, ``__gfx*__``, ``USE_ROCM``) is
already HIP-aware; one on the CUDA side of a HIP guard is not compiled by the HIP build.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hipport.findings import Effort, Severity
from hipport.parse import Node, text
from hipport.rule import Supersedes
from hipport.rules import REGISTRY, SaysWhatItIs

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class CudaArchTest(SaysWhatItIs):
    """`__CUDA_ARCH__` tests in preprocessor conditions

    ## Why
    hipcc does not define `__CUDA_ARCH__` for AMD targets: `#ifdef __CUDA_ARCH__` device
    paths are dropped, and `#if __CUDA_ARCH__ >= 800` evaluates with 0, silently selecting
    the oldest code path.

    ## Example
    ```cuda
    // before
    #if __CUDA_ARCH__ >= 800
    // after
    #if defined(__HIP_DEVICE_COMPILE__) && (defined(__gfx90a__) || defined(__gfx942__))
    ```

    ## Fix
    Test `__HIP_DEVICE_COMPILE__` for "device pass", `__gfx*__` or
    `__HIP_ARCH_HAS_*` for features; keep the CUDA test beside it for NVIDIA builds.
    """

    #: One finding per condition: no HP106 for the ``__CUDA_ARCH__`` tokens inside it
    #: (another CUDA macro in it keeps its own).
    supersedes = (*SaysWhatItIs.supersedes, Supersedes(frozenset({"HP106"}), within=True, token="__CUDA_ARCH__"))
    code = "HP309"
    slug = "cuda-arch-test"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


_ARCH_RE = re.compile(r"\b__CUDA_ARCH(?:__|_FEAT_\w+|_SPECIFIC__|_FAMILY_SPECIFIC__)")
_HIP_AWARE_RE = re.compile(r"\b(?:__HIP\w*|__gfx\w+|USE_ROCM)\b")


@REGISTRY.visits("preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef",
                 codes=(CudaArchTest,))
def _arch_test(node: Node, ctx: "Context") -> None:
    cond = node.child_by_field_name("condition") or node.child_by_field_name("name")
    if cond is None:
        return
    cond_text = text(ctx.src, cond)
    if not _ARCH_RE.search(cond_text) or _HIP_AWARE_RE.search(cond_text):
        return
    if ctx.in_cuda_only_branch(cond.end_byte):
        return  # the CUDA side of a HIP guard (#elif after a HIP test, or !defined(HIP) && ...)
    arch_at = [cond.start_byte + m.start() for m in _ARCH_RE.finditer(cond_text)]
    if all(ctx.in_cuda_only_branch(at) or ctx.branches.provides(_ARCH_RE.match(cond_text, at - cond.start_byte)[0])
           for at in arch_at):
        return  # every arch test cannot change the result under HIP, or the project defines it for HIP
    directive = " ".join(text(ctx.src, node.children[0]).split())
    shown = f"{directive} {cond_text}"
    if re.search(r"[<>=]", cond_text):
        msg = f"`{shown}`: hipcc does not define __CUDA_ARCH__, so the comparison uses 0 and picks the wrong path"
        fix = "test __gfx*__ / __HIP_ARCH_HAS_* for the feature (keep the CUDA test for NVIDIA)"
    else:
        msg = f"`{shown}`: hipcc does not define __CUDA_ARCH__, so this device-pass test is false on AMD"
        fix = "use defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)"
    ctx.report(CudaArchTest, cond, msg, fix)
