"""HP204 — lane and warp indices computed with a hard-coded 32 (``& 31``, ``/ 32``, ``1u << lane``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hipport import facts
from hipport.findings import Effort, Severity
from hipport.parse import Node, find_all, text
from hipport.rules import REGISTRY
from hipport.rules.warp.functions import function_check, may_be_device_like
from hipport.rules.warp.instances import never_instantiated
from hipport.rules.warp.logical import (
    UNLESS_INCLUDED, defer_to_includers, for_wave64_includers, logical_group_block, logical_group_function,
)
from hipport.rules.warp.scope import LANE_OPERANDS, Scope
from hipport.rules.warp.syntax import initialised_local, int_value, strip
from hipport.rules.warp.tables import table_coordinate

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class LaneArithmetic32:
    """Lane or warp index computed with a hard-coded 32

    ## Why
    `threadIdx.x & 31`, `% 32`, `/ 32` and `>> 5` compute the lane and the warp of a thread
    for a 32-lane warp; on a 64-lane wave they give the wrong lane and twice as many
    "warps". `1u << lane` is a 32-bit lane bit: for lanes 32–63 it is undefined. Only
    reported when the operand is a thread index (`threadIdx`, `blockDim`, a variable
    assigned from them, or a name such as `tid`/`lane`). Not reported in a function that
    votes on no wave and gives each shuffle a width of 32, in a project that also names a
    wave size of 64: its 32-lane groups are chosen, and a 64-lane wave runs two of them. The
    same holds in a block of such a function whose every shuffle is an xor by an offset
    under 32 (a constant, a ladder halving from one, or a value computed from a kernel's
    arguments and template arguments that is under 32 at every launch the file spells
    with constants): each half of the wave exchanges within itself. An offset from an
    argument hipport cannot see (a kernel in a header, launched through a helper or a
    pointer, or given a run-time value such as `prop.warpSize / 2`, which is 32 on a wave
    of 64) keeps the finding: hipport cannot tell. Nor for `tid / 32` and `tid % 32` giving
    the row and column of an array the function declares 32 wide, in a function without
    warp-level work (a block filling a lookup table). In a header that names no wave itself, a function without shuffles is
    left to the files that include it: when every one of the run that compiles the include
    names the 64, the finding is dropped. Nor in a function template a source file defines
    and never names again (no unit instantiates it), unless another file of the run
    includes that source.

    ## Example
    ```cuda
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x / 32;
    unsigned bit = 1u << lane;
    ```
    becomes
    ```cuda
    int lane = threadIdx.x % warpSize;
    int warp = threadIdx.x / warpSize;
    unsigned long long bit = 1ull << lane;
    ```

    ## Fix
    Use `warpSize` (a run-time value from ROCm 7.0) or a per-architecture `WARP_SIZE`
    constant, and 64-bit lane bits.
    """

    code = "HP204"
    run_time_only = True  # judged by the GPU passes (Rule.run_time_only)
    slug = "lane-arithmetic-32"
    severity = Severity.HIGH
    effort = Effort.SMALL

facts.need(operators=(*LANE_OPERANDS, "<<"))

#: An integer literal that may be 31, 32 or 5 (any base, any suffix; also some others):
#: the operand ``Scope.lane_op`` needs. A ``<<`` (``1 << lane``) or a ``'`` (digit
#: separators) makes a function a candidate too.
_LANE_NUMBER = re.compile(
    rb"(?<![\w.'])(?:0[xX]0*(?:1[fF]|20|5)|0[bB]0*(?:11111|100000|101)|0*(?:37|40|5)|31|32)[uUlLzZ]*(?![\w.'])")


def _may_have_lane_arithmetic(ctx: Context, func: Node) -> bool:
    """False when device code cannot hold lane arithmetic: no ``<<`` and no literal 31/32/5."""
    return may_be_device_like(ctx, func) and ctx.may_contain(b"<<", b"'", _LANE_NUMBER, within=func)


@function_check(LaneArithmetic32, hint=_may_have_lane_arithmetic)
def check_lane_arithmetic(ctx: Context, scope: Scope) -> None:
    src = ctx.src
    for node in scope.info.binaries:
        op = scope.lane_op(node)
        if op and op.startswith(("<", ">=")):
            _report(
                ctx, node,
                f"`{ctx.text(node)}` takes the first 32 threads as one warp for warp-level work; "
                "a wave on CDNA has 64",
                "test `threadIdx.x < warpSize` (and size the work for warpSize lanes)",
            )
            continue
        if op and op.startswith(("/", "%")) and (_data_layout_split(ctx, node) or table_coordinate(ctx, node)):
            continue
        if op and (logical_group_function(ctx, func := facts.enclosing_function(ctx, node))
                   or logical_group_block(ctx, node, func)):
            continue  # the 32-lane group of a wave64-aware project (logical.py)
        if op:
            if _report(
                ctx, node,
                f"`{ctx.text(node)}` computes a lane/warp index with `{op}` for 32-lane warps; "
                "a wave on CDNA has 64",
                "use `warpSize` (e.g. `% warpSize`, `/ warpSize`) or a per-architecture WARP_SIZE",
            ) and for_wave64_includers(ctx, func):
                defer_to_includers(ctx)  # its includers decide (logical.py, pipeline.collect)
            continue
        if text(src, node.child_by_field_name("operator")) != "<<":
            continue
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        one = int_value(src, left) if left is not None else None
        if one and one[0] == 1 and "l" not in one[1] and right is not None and scope.is_lane(right):
            _report(
                ctx, node,
                f"`{ctx.text(node)}` is a 32-bit lane bit; lanes 32-63 of a 64-lane wave overflow it",
                "use `1ull << lane` and a 64-bit mask variable",
            )


def _report(ctx: Context, node: Node, message: str, fix: str) -> bool:
    """Report HP204 at ``node``; in a template no HIP build instantiates (``never_instantiated``)
    it holds only where another file of the run includes this one."""
    if not ctx.report(LaneArithmetic32, node, message, fix):
        return False
    if never_instantiated(ctx, facts.enclosing_function(ctx, node)):
        defer_to_includers(ctx, UNLESS_INCLUDED)
    return True


#: What makes a function warp-level code: then a ``/ 32`` of its index is a warp id.
_WARP_LEVEL = re.compile(rb"__shfl|__ballot|__any|__all|__activemask|__syncwarp|__match|__reduce_"
                         rb"|__shared__|tiled_partition|coalesced_threads|warpSize|WARP_SIZE")


def _data_layout_split(ctx: Context, node: Node) -> bool:
    """``n = tid/32`` that splits a block's threads into 32-value chunks of a data block
    (llama.cpp's ``dequantize_block_q2_K``, launched with 64 threads, and its later
    ``dequantize_q2_K(…, const int tid)`` helper): the 32 is the size of a chunk of a quant
    block, not a warp. All of these must hold: the function does no warp-level work (no
    shuffle, vote, ``__syncwarp``, ``__shared__``, warp-size constant), the quotient
    initialises a local, and every use of that local is scaled by a literal stride
    (``32*n + l``, ``yy + 128*n``). A quotient returned, compared or used as an index
    itself, or one in a function with warp work, stays a finding."""
    target = initialised_local(node)
    if target is None:
        return False
    func = facts.enclosing_function(ctx, node)
    body = func.child_by_field_name("body") if func is not None else None
    if body is None or _WARP_LEVEL.search(ctx.src, func.start_byte, func.end_byte):
        return False
    name, uses = text(ctx.src, target), 0
    for ident in find_all(body, ("identifier",)):
        if ident.start_byte == target.start_byte or text(ctx.src, ident) != name:
            continue
        use = ident.parent
        if use is None or use.type != "binary_expression" \
                or text(ctx.src, use.child_by_field_name("operator")) != "*":
            return False
        other = use.child_by_field_name("left")
        if other is not None and other.start_byte == ident.start_byte:
            other = use.child_by_field_name("right")
        if other is None or int_value(ctx.src, other) is None:
            return False
        uses += 1
    return uses > 0
