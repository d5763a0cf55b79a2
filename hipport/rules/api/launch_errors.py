"""HP115: a comparison with a launch error code ROCm 6.x does not return."""

from __future__ import annotations

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.registry import any_bytes_of
from hipport.rules import REGISTRY


@REGISTRY.rule
class LaunchErrorCodes:
    """Comparing against a specific launch error code: ROCm 6.x returns another one

    ## Why
    Before ROCm 7.0 invalid launch configurations returned `hipErrorInvalidValue` where
    CUDA (and ROCm 7.0+) return `…InvalidConfiguration`, `…ContextIsDestroyed` or
    `…CooperativeLaunchTooLarge`. (rocm-versions.md RT-08)

    ## Example

    ```cuda
    if (cudaGetLastError() == cudaErrorInvalidConfiguration) retry_smaller_block();
    ```

    ## Fix

    Treat any error as a failed launch, or also accept `hipErrorInvalidValue` on 6.x.
    """

    code = "HP115"
    slug = "launch-error-code"
    severity = Severity.LOW
    effort = Effort.SMALL
    rocm_max = (7, 0, 0)

_LAUNCH_ERRORS = {
    "cudaErrorInvalidConfiguration", "cudaErrorCooperativeLaunchTooLarge",
    "CUDA_ERROR_INVALID_CONFIGURATION", "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
}


@REGISTRY.visits("binary_expression", source=any_bytes_of(*(n.encode() for n in _LAUNCH_ERRORS)),
                 codes=(LaunchErrorCodes,))
def launch_error_compare(node: Node, ctx: Context) -> None:
    op = node.child_by_field_name("operator")
    if op is None or op.type not in ("==", "!="):
        return
    for side in (node.child_by_field_name("left"), node.child_by_field_name("right")):
        if side is not None and side.type == "identifier" and ctx.text(side) in _LAUNCH_ERRORS:
            ctx.report(LaunchErrorCodes, node,
                       f"comparison with {ctx.text(side)}: ROCm < 7.0 reports "
                       "hipErrorInvalidValue for this launch failure",
                       "Treat any launch error as a failure, or accept hipErrorInvalidValue on 6.x.")
            return
