"""HP212 — ``__launch_bounds__``'s second argument means something else in HIP."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.rules import REGISTRY
from hipport.rules.warp.syntax import int_value

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class LaunchBoundsSecondArgument:
    """`__launch_bounds__` with a second argument

    ## Why
    In CUDA the second argument is the minimum number of *blocks per multiprocessor*; in
    HIP it is the minimum number of *waves per execution unit*. The same number asks the
    compiler for a different occupancy, which changes register allocation (spills or a
    compile error when the request cannot be met).

    ## Example
    ```cuda
    __global__ void __launch_bounds__(256, 4) k(float* x);
    ```
    becomes
    ```cuda
    __global__ void __launch_bounds__(256) k(float* x);  // or a re-derived waves-per-EU value
    ```

    ## Fix
    Drop the second argument or re-derive it as waves per EU for the target GPU.
    """

    code = "HP212"
    slug = "launch-bounds-min-blocks"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.visits("launch_bounds", codes=(LaunchBoundsSecondArgument,))
def check_launch_bounds(node: Node, ctx: Context) -> None:
    args = [c for c in node.named_children if c.type != "comment"]
    if len(args) >= 2 and (int_value(ctx.src, args[1]) or (None,))[0] != 1:  # 1: the weakest ask in both
        ctx.report(
            LaunchBoundsSecondArgument, args[1],
            f"`__launch_bounds__` second argument `{ctx.text(args[1])}` means min blocks per SM in CUDA "
            "but min waves per execution unit in HIP",
            "drop it or re-derive it as waves per EU",
        )
