"""HP112: hipRTC in ROCm 7.0 is its own library and defines no fixed-width integer types."""

from __future__ import annotations

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.parse import Node, call_name
from hipport.registry import any_word_of
from hipport.rules import REGISTRY


@REGISTRY.rule
class RtcLinkAndTypes:
    """hipRTC in ROCm 7.0: link libhiprtc, and no fixed-width integer types in kernels

    ## Why
    ROCm 7.0 removed the hipRTC symbols from `libamdhip64`: programs must link `hiprtc`
    (`-lhiprtc`, CMake `hiprtc::hiprtc`). hipRTC also stopped defining `int64_t`,
    `uint32_t` and friends for runtime-compiled code. (rocm-versions.md REM-01, REM-02)

    ## Example

    ```cuda
    nvrtcCreateProgram(&prog, src, "k.cu", 0, nullptr, nullptr);   // link -lnvrtc
    ```

    ```cuda
    hiprtcCreateProgram(&prog, src, "k.cu", 0, nullptr, nullptr);  // link -lhiprtc
    ```

    ## Fix

    Add `hiprtc` to the link line, and define the integer types your kernel strings use.
    """

    code = "HP112"
    slug = "hiprtc-link"
    severity = Severity.MEDIUM
    effort = Effort.SMALL
    rocm_min = (7, 0, 0)


@REGISTRY.visits("call_expression", names=any_word_of(("nvrtcCreateProgram",)), codes=(RtcLinkAndTypes,))
def create_program_call(node: Node, ctx: Context) -> None:
    if call_name(ctx.src, node) == "nvrtcCreateProgram":
        ctx.report(RtcLinkAndTypes, node,
                   "nvrtcCreateProgram → hiprtcCreateProgram: link hiprtc explicitly (-lhiprtc) "
                   "on ROCm 7.x; runtime-compiled code gets no int64_t/uint32_t typedefs",
                   "Add hiprtc to the link line; define fixed-width types in kernel strings.")
