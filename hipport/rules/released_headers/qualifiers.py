"""HP343: `__grid_constant__` on a kernel parameter, a CUDA 11.7 qualifier HIP does not have."""

from __future__ import annotations

from hipport.context import Context
from hipport.edits import Edit
from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.registry import any_bytes_of
from hipport.rules import REGISTRY, SaysWhatItIs

_GRID_CONSTANT = "__grid_constant__"


@REGISTRY.rule
class GridConstantParameter(SaysWhatItIs):
    """`__grid_constant__` on a kernel parameter, which HIP does not define

    ## Why
    CUDA 11.7 added `__grid_constant__` for a `const` parameter of a `__global__` function:
    the kernel reads it in place from parameter memory, and taking its address gives that
    one copy rather than a per-thread one (the CUDA samples' `LargeKernelParameter` marks its
    32 KB structs so). Neither the HIP 6.2 nor the 7.1 headers nor clang's HIP mode define
    it, so the parameter list does not compile ("unknown type name '__grid_constant__'").

    ## Example
    ```cuda
    __global__ void k(__grid_constant__ const param_t p) { *p.result = p.param[0]; }
    ```
    becomes
    ```cuda
    __global__ void k(const param_t p) { *p.result = p.param[0]; }
    ```

    ## Fix
    `hipport convert` drops the qualifier: the parameter is `const` (CUDA requires it), so
    every read gives the same value with or without it. Only code that compares the
    parameter's address across threads, or writes through a pointer cast from it (undefined
    in CUDA too), could tell the difference. A large parameter struct still needs checking
    against the target's kernel-argument limit at run time.
    """

    code = "HP343"
    slug = "grid-constant-parameter"
    severity = Severity.HIGH
    effort = Effort.NONE


@REGISTRY.visits("type_qualifier", source=any_bytes_of(_GRID_CONSTANT.encode()), codes=(GridConstantParameter,))
def _grid_constant(node: Node, ctx: Context) -> None:
    if ctx.text(node) != _GRID_CONSTANT:
        return
    end = node.end_byte
    while ctx.src[end:end + 1] in (b" ", b"\t"):
        end += 1
    ctx.report(GridConstantParameter, node,
               "`__grid_constant__` is CUDA's: HIP does not define it, and the parameter is "
               "`const` without it", "drop `__grid_constant__`",
               fix=[] if ctx.in_macro_body else [Edit(node.start_byte, end, b"")])
