"""HP111: from ROCm 7.0, hipFree does not wait for stream-ordered allocations."""

from __future__ import annotations

from dataclasses import dataclass

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.parse import Node, call_name
from hipport.registry import any_word_of
from hipport.rules import REGISTRY


@REGISTRY.rule
class FreeOfStreamOrderedMemory:
    """hipFree no longer waits for stream-ordered allocations (ROCm 7.0)

    ## Why
    From ROCm 7.0 `hipFree` of memory from `hipMallocAsync`/`hipMallocFromPoolAsync` does
    not synchronize implicitly, exactly like CUDA. Code that only worked because ROCm 6.x
    synchronized there now races. (rocm-versions.md RT-03)

    ## Example

    ```cuda
    cudaMallocAsync(&p, n, s);
    kernel<<<g, b, 0, s>>>(p);
    cudaFree(p);                   // races with the kernel on 7.x
    ```

    ```cuda
    cudaFreeAsync(p, s);           // or synchronize s first
    ```

    ## Fix

    Free stream-ordered memory with `hipFreeAsync` on its stream, or synchronize first.
    """

    code = "HP111"
    slug = "free-stream-ordered"
    severity = Severity.MEDIUM
    effort = Effort.SMALL
    rocm_min = (7, 0, 0)


@REGISTRY.visits("call_expression", names=any_word_of(("cudaFree", "cuMemFree")), codes=(FreeOfStreamOrderedMemory,))
def free_call(node: Node, ctx: Context) -> None:
    name = call_name(ctx.src, node)
    if name in ("cudaFree", "cuMemFree") and _uses_stream_ordered_alloc(ctx):
        ctx.report(FreeOfStreamOrderedMemory, node,
                   f"{name} in a file that allocates with cudaMallocAsync: hipFree does not "
                   "wait for stream-ordered work from ROCm 7.0",
                   "Use cudaFreeAsync on the allocation's stream, or synchronize first.")


@dataclass
class _StreamOrdered:
    """Per file: whether it allocates stream-ordered memory (None until asked)."""

    allocates: bool | None = None


def _uses_stream_ordered_alloc(ctx: Context) -> bool:
    state = ctx.state(_StreamOrdered)
    if state.allocates is None:
        state.allocates = b"cudaMallocAsync" in ctx.src or b"cudaMallocFromPoolAsync" in ctx.src \
            or b"cuMemAllocAsync" in ctx.src
    return state.allocates
