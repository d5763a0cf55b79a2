"""HP114: a positional initialiser of cudaMemsetParams, whose HIP field order differs."""

from __future__ import annotations

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.registry import any_bytes_of
from hipport.rules import REGISTRY


@REGISTRY.rule
class MemsetParamsLayout:
    """Positional initialisation of cudaMemsetParams

    ## Why
    `hipMemsetParams` has another field order than CUDA's
    (`{dst, elementSize, height, pitch, value, width}` vs
    `{dst, pitch, value, elementSize, width, height}`), so a positional aggregate
    initialiser puts values in the wrong fields. The HIP 7.0 notes announce CUDA's order
    (rocm-versions.md SIG-05), but the released HIP 7.1.25424 headers still have the old
    one, so no target is sure: assign by name.

    ## Example

    ```cuda
    cudaMemsetParams p = {ptr, pitch, 0, 4, width, height};
    ```

    ```cuda
    cudaMemsetParams p = {};
    p.dst = ptr; p.pitch = pitch; p.value = 0; p.elementSize = 4; p.width = width; p.height = height;
    ```

    ## Fix

    Assign the members by name.
    """

    code = "HP114"
    slug = "memset-params-positional"
    severity = Severity.HIGH
    effort = Effort.SMALL

@REGISTRY.visits("init_declarator", source=any_bytes_of(b"cudaMemsetParams", b"CUDA_MEMSET_NODE_PARAMS"),
                 codes=(MemsetParamsLayout,))
def memset_params_init(node: Node, ctx: Context) -> None:
    decl = node.parent
    if decl is None or decl.type != "declaration":
        return
    type_node = decl.child_by_field_name("type")
    if type_node is None or ctx.text(type_node) not in ("cudaMemsetParams", "CUDA_MEMSET_NODE_PARAMS"):
        return
    value = node.child_by_field_name("value")
    if value is None or value.type != "initializer_list":
        return
    items = [c for c in value.named_children if c.type != "comment"]
    if items and all(c.type != "initializer_pair" for c in items):
        ctx.report(MemsetParamsLayout, value,
                   f"positional initialiser of {ctx.text(type_node)}: the HIP struct's field "
                   "order differs from CUDA's (the HIP 7.1 headers still have the 6.x order)",
                   "Assign the members by name (p.dst = …; p.pitch = …).")
