"""HP206 — the warp size fixed at 32 in types: template defaults and arguments, ``static_assert``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hipport.findings import Effort, Severity
from hipport.parse import Node, walk
from hipport.rules import REGISTRY
from hipport.rules.warp.syntax import is_int
from hipport.rules.warp.vocab import is_warp_size_name

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class WarpTemplate32:
    """Template or `static_assert` that fixes the warp size at 32

    ## Why
    `template <int WARP_SIZE = 32>`, `WarpReduce<float, 32>` and
    `static_assert(kWarpSize == 32, ...)` build the 32-lane warp into types. On a 64-lane
    wave they reduce half the wave, or the assertion stops being true for the code it
    guards.

    ## Example
    ```cuda
    template <int WARP_SIZE = 32> __device__ float warp_sum(float v);
    ```
    becomes
    ```cuda
    template <int WARP_SIZE> __device__ float warp_sum(float v);  // instantiated per device
    ```

    ## Fix
    Query `hipDeviceAttributeWarpSize` on the host and launch the instantiation for it, or
    use a per-architecture compile-time constant in device code.
    """

    code = "HP206"
    slug = "warp-template-32"
    severity = Severity.MEDIUM
    effort = Effort.MEDIUM


@REGISTRY.visits("optional_parameter_declaration", codes=(WarpTemplate32,))
def check_template_default(param: Node, ctx: Context) -> None:
    """``template <int WARP_SIZE = 32>``."""
    if param.parent is None or param.parent.type != "template_parameter_list":
        return
    name, default = param.child_by_field_name("declarator"), param.child_by_field_name("default_value")
    if name is not None and is_warp_size_name(ctx.text(name)) and is_int(ctx.src, default, 32):
        ctx.report(
            WarpTemplate32, param,
            f"template parameter `{ctx.text(name)}` defaults to 32 lanes; a wave on CDNA has 64",
            "drop the default and instantiate with the device's warp size",
        )


@REGISTRY.visits("template_argument_list", codes=(WarpTemplate32,))
def check_template_argument(args: Node, ctx: Context) -> None:
    """``WarpReduce<float, 32>``, ``warp_reduce<32>(v)``."""
    owner = args.parent
    name_node = owner.child_by_field_name("name") if owner is not None else None
    if name_node is None or "warp" not in ctx.text(name_node).lower():
        return
    for arg in args.named_children:
        if is_int(ctx.src, arg, 32):
            ctx.report(
                WarpTemplate32, arg,
                f"`{ctx.text(name_node)}` instantiated for 32 lanes; a wave on CDNA has 64",
                "instantiate with the device's warp size",
            )


_COMPARE_OPS = frozenset({"==", "!=", "%", "/", "&", "<=", ">=", "<", ">"})


@REGISTRY.visits("static_assert_declaration", codes=(WarpTemplate32,))
def check_static_assert(node: Node, ctx: Context) -> None:
    """``static_assert(WARP_SIZE == 32, ...)`` and asserts whose message says "warp"."""
    cond = node.child_by_field_name("condition")
    message = node.child_by_field_name("message")
    if cond is None:
        return
    has_32 = any(  # a 32 compared or divided, not a 32 * 1024 size bound
        is_int(ctx.src, n, 32, 31) and n.parent is not None and n.parent.type == "binary_expression"
        and ctx.text(n.parent.child_by_field_name("operator")) in _COMPARE_OPS
        for n in walk(cond)
    )
    names_warp = any(
        n.type in ("identifier", "type_identifier") and is_warp_size_name(ctx.text(n)) for n in walk(cond)
    ) or (message is not None and "warp" in ctx.text(message).lower())
    if has_32 and names_warp:
        ctx.report(
            WarpTemplate32, node,
            f"`static_assert({ctx.text(cond)})` assumes 32-lane warps; a wave on CDNA has 64",
            "assert against the per-architecture warp size",
        )
