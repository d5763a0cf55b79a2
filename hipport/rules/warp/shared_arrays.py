"""HP205 — ``__shared__`` arrays sized for 32-lane warps (``[32]``, ``[BLOCK / 32]``, ``[WARP_SIZE]``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.rules import REGISTRY
from hipport.rules.warp.constants import defined_per_arch
from hipport.rules.warp.syntax import has_qualifier, is_int, strip
from hipport.rules.warp.vocab import is_warp_size_name
from hipport.rules.warp.warpsize import warp_size_aliases

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class SharedArrayWarp32:
    """`__shared__` array sized for 32-lane warps

    ## Why
    Block reductions keep one slot per lane or per warp: `__shared__ float s[32]`,
    `s[BLOCK / 32]`, `s[WARP_SIZE]`. With 64-lane waves a per-lane array is too small and a
    per-warp array is indexed by a warp id that is now computed differently. Worth a look,
    not always a bug (a per-warp array of 32 still fits 1024 threads of wave64).

    ## Example
    ```cuda
    __shared__ float partial[32];
    ```
    becomes
    ```cuda
    __shared__ float partial[1024 / 32];  // one slot per wave for either wave size
    ```

    ## Fix
    Size per-lane storage for 64 lanes and per-warp storage for the smallest wave (32), and
    index it with `warpSize`-based lane/warp ids.
    """

    code = "HP205"
    run_time_only = True  # judged by the GPU passes (Rule.run_time_only)
    slug = "shared-array-warp32"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.visits("array_declarator", codes=(SharedArrayWarp32,))
def check_shared_array(array: Node, ctx: Context) -> None:
    if array.parent is not None and array.parent.type == "array_declarator":
        return  # visit each array once, from its outermost declarator
    decl = array
    while decl is not None and decl.type not in ("declaration", "field_declaration"):
        decl = decl.parent
    if decl is None or not has_qualifier(decl, "__shared__"):
        return
    sizes: list[Node] = []
    node: Node | None = array
    while node is not None and node.type == "array_declarator":
        size = node.child_by_field_name("size")
        if size is not None:
            sizes.append(size)
        node = node.child_by_field_name("declarator")
    for size in sizes:
        why = _warp_sized(ctx, size, one_dimensional=len(sizes) == 1)
        if why:
            ctx.report(
                SharedArrayWarp32, size,
                f"`__shared__` array `{ctx.text(array)}` is sized {why}; a wave on CDNA has 64 lanes",
                "size per-lane storage for 64 lanes and index it with warpSize-based lane/warp ids",
            )


def _warp_sized(ctx: Context, size: Node, one_dimensional: bool) -> str | None:
    size = strip(size)
    if one_dimensional and is_int(ctx.src, size, 32):
        return "for 32 lanes (one slot per lane or per warp)"
    if size.type == "identifier" and is_warp_size_name(ctx.text(size)):
        name = ctx.text(size)
        if name in warp_size_aliases(ctx) or defined_per_arch(ctx, name):
            return None  # HP207 reports a warpSize alias; a per-architecture value is the fix
        return f"by `{name}`"
    if size.type == "binary_expression":
        op = ctx.text(size.child_by_field_name("operator"))
        right = size.child_by_field_name("right")
        if (op == "/" and is_int(ctx.src, right, 32)) or (op == ">>" and is_int(ctx.src, right, 5)):
            return f"as `{ctx.text(size)}` (one slot per 32-lane warp)"
    return None
