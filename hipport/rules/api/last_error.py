"""HP110: before ROCm 7.0, hipGetLastError returns the last call's status."""

from __future__ import annotations

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.parse import Node, call_name
from hipport.registry import any_word_of
from hipport.rules import REGISTRY


@REGISTRY.rule
class GetLastErrorSemantics:
    """hipGetLastError before ROCm 7.0 returns the last call's status, not the last error

    ## Why
    Before ROCm 7.0, `hipGetLastError` returned the status of the most recent HIP call:
    an earlier failure was lost after any successful call. CUDA (and ROCm 7.0+) return
    the last real error of the thread. Error checks placed after other runtime calls can
    miss a failure on ROCm 6.x. (rocm-versions.md RT-01)

    ## Example

    ```cuda
    kernel<<<g, b>>>(p);
    cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost);
    CHECK(cudaGetLastError());   // on 6.3: only the memcpy's status
    ```

    ## Fix

    Check errors right after the call that can fail (the launch), or target ROCm 7.x.
    """

    code = "HP110"
    slug = "get-last-error-semantics"
    severity = Severity.LOW
    effort = Effort.SMALL
    rocm_max = (7, 0, 0)


@REGISTRY.visits("call_expression", names=any_word_of(("cudaGetLastError", "cudaPeekAtLastError")),
                 codes=(GetLastErrorSemantics,))
def last_error_call(node: Node, ctx: Context) -> None:
    name = call_name(ctx.src, node)
    if name in ("cudaGetLastError", "cudaPeekAtLastError"):
        ctx.report(GetLastErrorSemantics, node,
                   f"{name}: on ROCm < 7.0 the HIP call returns the status of the last HIP "
                   "call, so an earlier failure can be lost",
                   "Check right after the call that can fail, or target ROCm 7.x.")
