"""HP302 — dynamic parallelism: launches and device synchronisation from device code."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hipport import facts
from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.registry import any_word_of
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.device.common import plain_callee
from hipport.rules.released_headers.common import raw_data

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class DynamicParallelism(SaysWhatItIs):
    """Kernel launch or device synchronisation from device code (dynamic parallelism)

    ## Why
    HIP does not support dynamic parallelism: a `<<<...>>>` launch inside a `__global__` or
    `__device__` function, or `cudaDeviceSynchronize()` in device code, does not compile.
    Nor does the rest of CUDA's device runtime (`cudaMalloc`, `cudaStreamCreateWithFlags`,
    `cudaGetLastError`… in a kernel): HIP declares none of them for device code
    (`mappings/released_headers.toml` `[device_runtime]`).

    ## Example
    ```cuda
    // before
    __global__ void parent(int* d) { child<<<1, 32>>>(d); cudaDeviceSynchronize(); }
    // after: launch both from the host, in order on one stream
    parent<<<1, 1, 0, s>>>(d); child<<<1, 32, 0, s>>>(d);
    ```

    ## Fix
    Move the child launch to the host (same stream keeps the order), or flatten the
    recursion into a work queue processed by a persistent kernel.
    """

    code = "HP302"
    slug = "dynamic-parallelism"
    severity = Severity.BLOCKER
    effort = Effort.LARGE


_DEVICE_LAUNCH_APIS = frozenset({"cudaLaunchDevice", "cudaGetParameterBuffer", "cudaGetParameterBufferV2"})
_DEVICE_RUNTIME = frozenset(raw_data()["device_runtime"]["functions"])


@REGISTRY.visits("call_expression",
                 names=any_word_of(_DEVICE_LAUNCH_APIS | _DEVICE_RUNTIME | {"cudaDeviceSynchronize"}),
                 codes=(DynamicParallelism,))
def _call(node: Node, ctx: "Context") -> None:
    plain = plain_callee(ctx, node)
    if plain is None:
        return
    name = plain[1]
    if name == "cudaDeviceSynchronize" and facts.is_device_code(ctx, node):
        ctx.report(DynamicParallelism, node, "`cudaDeviceSynchronize()` in device code "
                   "(dynamic parallelism) is not supported by HIP",
                   "synchronise on the host after the launch")
    elif name in _DEVICE_RUNTIME and facts.is_device_code(ctx, node):
        ctx.report(DynamicParallelism, node, f"`{name}` in device code (CUDA's device runtime): "
                   "HIP declares it for the host only", "call it on the host, before or after the kernel")
    elif name in _DEVICE_LAUNCH_APIS:
        ctx.report(DynamicParallelism, node, f"`{name}` launches kernels from the device; "
                   "HIP has no dynamic parallelism", "launch from the host")


@REGISTRY.visits("kernel_call_syntax", codes=(DynamicParallelism,))
def _launch(node: Node, ctx: "Context") -> None:
    if facts.is_device_code(ctx, node):
        call = node.parent if node.parent is not None else node
        ctx.report(DynamicParallelism, call, "kernel launch from device code (dynamic parallelism) "
                   "is not supported by HIP", "launch the child kernel from the host on the same stream")
