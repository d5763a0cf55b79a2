"""HP214's first-lane case: a ladder from 16 whose sum only the first lane of each 32-lane group reads.

torch-sparse 0.6.18's ``spmm_value_bw_kernel`` (csrc/cuda/spmm_cuda.cu, built for ROCm by
its setup.py) gives each edge 32 threads and reduces their partial products::

    int lane_idx = thread_idx & (32 - 1);
    for (int i = 32 / 2; i > 0; i /= 2)
        val += SHFL_DOWN_SYNC(FULL_MASK, val, i);   // __shfl_down on ROCm
    if (lane_idx == 0) { ... out_data[index_idx] = val; }

On a wave of 64 lanes 0 and 32 both have ``lane_idx == 0``; with offsets 16, 8, 4, 2, 1 down
(or xor), each of them adds up exactly the 32 lanes of its own group, the ones CUDA's warp
adds. The lanes that read across the halves (16-31 at offset 16) are never read.

torch-scatter 2.1.2's ``segment_coo_kernel`` scans up instead: ``tmp = SHFL_UP_SYNC(FULL_MASK,
val, i)`` for i = 1 … 16, each result used only under ``if (lane_idx >= i && …)``. A lane
whose 32-lane index is at least i reads lane - i of its own group, so every lane's scan
covers its group only, on a wave of 64 as on CUDA.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from hipport.parse import Node, ancestors, call_arguments, call_name, declarators, find_all, function_qualifiers, text
from hipport.rules.warp.syntax import small_constant, strip
from hipport.rules.warp.vocab import SHUFFLES, WAVE_WIDE, is_warp_size_name

if TYPE_CHECKING:
    from hipport.context import Context


def read_by_group_lane_zero(ctx: Context, loop: Node, func: Node | None, shuffles: list[Node]) -> bool:
    """Whether the down ladder ``loop`` (``shuffles``: its calls) sums values that only lanes
    whose 32-lane index is 0 read afterwards, in a ``__global__`` kernel that spells no
    wave (no vote, no ``warpSize``, no warp-size name: nothing depends on the wave's width).
    Every shuffle must be a down or xor shuffle assigned back (``v += shfl_down(v, i)``),
    the kernel must compute a lane as ``x & 31`` / ``x % 32`` / ``x & (32 - 1)``, and each
    read of the sums after the loop must sit in the body of an ``if`` whose condition
    requires that lane to be 0."""
    body = func.child_by_field_name("body") if func is not None else None
    if body is None or not _spells_no_wave(ctx, func, body):
        return False
    sums = set()
    for call in shuffles:
        name, assign = (call_name(ctx.src, call) or "").lower(), call.parent
        while assign is not None and assign.type in ("binary_expression", "parenthesized_expression", "call_expression",
                                                     "argument_list"):
            assign = assign.parent
        target = assign.child_by_field_name("left") if assign is not None and assign.type == "assignment_expression" \
            else None
        if ("down" not in name and "xor" not in name) or target is None or target.type != "identifier":
            return False
        sums.add(ctx.text(target))
    lanes = _lanes_of_32(ctx, body)
    reads = [i for i in find_all(body, ("identifier",)) if i.start_byte >= loop.end_byte and ctx.text(i) in sums]
    first = partial(_requires, ctx, lanes=lanes, op="==", bound="0")
    return bool(lanes and reads) and all(_under(ctx, i, func, first) for i in reads)


def guarded_up_ladder(ctx: Context, loop: Node, func: Node | None, shuffles: list[Node], var: str) -> bool:
    """Whether the up ladder ``loop`` (``for (var = 1; var < 32; var *= 2)``, ``shuffles`` its
    calls) uses each up-shuffled value only where its lane's 32-lane index is at least
    ``var`` (``if (lane >= var && …) use(tmp)``), in a ``__global__`` kernel that spells no
    wave: no lane reads across its group. Each shuffle must be an up shuffle assigned to a
    local (``tmp = shfl_up(v, i)``) that the loop reads nowhere else, and that after the
    loop is assigned again before any read; and no indexed shuffle after the loop may read
    a scanned value (``__shfl_sync(m, v, 31)``, the warp's total: lanes 32-63 would read
    lane 31 of the first group)."""
    body = func.child_by_field_name("body") if func is not None else None
    loop_body = loop.child_by_field_name("body")
    if body is None or loop_body is None or not _spells_no_wave(ctx, func, body):
        return False
    lanes = _lanes_of_32(ctx, body)
    for call in shuffles:
        assign = call.parent
        target = assign.child_by_field_name("left") if assign is not None and assign.type == "assignment_expression" \
            and text(ctx.src, assign.child_by_field_name("operator")) == "=" else None
        if "up" not in (call_name(ctx.src, call) or "").lower() or target is None or target.type != "identifier":
            return False
        name = ctx.text(target)
        uses = [i for i in find_all(loop_body, ("identifier",))
                if ctx.text(i) == name and i.start_byte != target.start_byte]
        guarded = partial(_requires, ctx, lanes=lanes, op=">=", bound=var)
        if not uses or not all(_under(ctx, i, loop_body, guarded) for i in uses):
            return False
        after = [i for i in find_all(body, ("identifier",)) if i.start_byte >= loop.end_byte and ctx.text(i) == name]
        if after and not _assigned_at(after[0]):
            return False
    return bool(lanes) and not _broadcast_after(ctx, loop, body, shuffles)


def _shuffled_value(ctx: Context, call: Node) -> Node | None:
    """The value argument of a shuffle: the second of a ``_sync`` one (after the mask)."""
    args = call_arguments(call)
    at = 1 if "sync" in (call_name(ctx.src, call) or "").lower() else 0
    return args[at] if len(args) > at else None


def _broadcast_after(ctx: Context, loop: Node, body: Node, shuffles: list[Node]) -> bool:
    """An indexed shuffle (no up, down or xor) after ``loop`` of a value its ``shuffles``
    scanned, with no width of 32 or less: it reads a lane by its number in the wave."""
    values = {ctx.text(i) for call in shuffles if (v := _shuffled_value(ctx, call)) is not None
              for i in [v, *find_all(v, ("identifier",))] if i.type == "identifier"}
    for call in find_all(body, ("call_expression",)):
        name = call_name(ctx.src, call) or ""
        if call.start_byte < loop.end_byte or "shfl" not in name.lower() \
                or any(step in name.lower() for step in ("up", "down", "xor")):
            continue
        value, args = _shuffled_value(ctx, call), call_arguments(call)
        at = SHUFFLES.get(name, (None, 3 if "sync" in name.lower() else 2))[1]
        width = small_constant(ctx.src, args[at]) if len(args) > at else None
        if value is not None and (width is None or width > 32) \
                and any(ctx.text(i) in values for i in [value, *find_all(value, ("identifier",))]
                        if i.type == "identifier"):
            return True
    return False


def _assigned_at(ident: Node) -> bool:
    """``ident = …``: the left of a plain assignment."""
    parent = ident.parent
    op = parent.child_by_field_name("operator") if parent is not None else None
    return parent is not None and parent.type == "assignment_expression" and op is not None \
        and parent.child_by_field_name("left") == ident and op.type == "="


def _spells_no_wave(ctx: Context, func: Node, body: Node) -> bool:
    """A ``__global__`` kernel without votes, ``warpSize`` or a warp-size name (comments aside)."""
    if "__global__" not in function_qualifiers(ctx.src, func) \
            or WAVE_WIDE.search(ctx.src, func.start_byte, func.end_byte):
        return False
    return not any(ctx.text(n) == "warpSize" or is_warp_size_name(ctx.text(n))
                   for n in find_all(body, ("identifier", "type_identifier", "field_identifier")))


def _lanes_of_32(ctx: Context, body: Node) -> set[str]:
    """Locals initialised to a 32-lane index: ``x & 31``, ``x & (32 - 1)``, ``x % 32``."""
    out = set()
    for decl in declarators(body):
        if decl.type != "init_declarator":
            continue
        value, target = decl.child_by_field_name("value"), decl.child_by_field_name("declarator")
        value = strip(value) if value is not None else None
        if value is None or value.type != "binary_expression" or target is None or target.type != "identifier":
            continue
        op, right = text(ctx.src, value.child_by_field_name("operator")), value.child_by_field_name("right")
        n = small_constant(ctx.src, right) if right is not None else None
        if (op == "&" and n == 31) or (op == "%" and n == 32):
            out.add(ctx.text(target))
    return out


def _under(ctx: Context, ident: Node, within: Node, test: Callable[[Node], bool]) -> bool:
    """``ident`` is in the body of an ``if`` inside ``within`` whose condition passes ``test``."""
    for outer in ancestors(ident):
        if outer.start_byte < within.start_byte:
            return False
        if outer.type != "if_statement":
            continue
        consequence, cond = outer.child_by_field_name("consequence"), outer.child_by_field_name("condition")
        if consequence is not None and consequence.start_byte <= ident.start_byte < consequence.end_byte \
                and cond is not None and test(cond):
            return True
        if cond is not None and cond.start_byte <= ident.start_byte < cond.end_byte \
                and _after_guard(ctx, cond, ident, test):
            return True
    return False


def _after_guard(ctx: Context, node: Node, ident: Node, test: Callable[[Node], bool]) -> bool:
    """``ident`` is on the right of an ``&&`` whose left passes ``test``: evaluated only then."""
    node = node.child_by_field_name("value") if node.type == "condition_clause" else node
    node = strip(node) if node is not None else None
    if node is None or node.type != "binary_expression" or text(ctx.src, node.child_by_field_name("operator")) != "&&":
        return False
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if right is not None and right.start_byte <= ident.start_byte < right.end_byte:
        return (left is not None and test(left)) or _after_guard(ctx, right, ident, test)
    return left is not None and _after_guard(ctx, left, ident, test)


def _requires(ctx: Context, cond: Node, lanes: set[str], op: str, bound: str) -> bool:
    """``lane <op> bound`` (``lane == 0``, ``lane >= i``), alone or as a conjunct of ``&&``."""
    node = cond.child_by_field_name("value") if cond.type == "condition_clause" else cond
    node = strip(node) if node is not None else None
    if node is None or node.type != "binary_expression":
        return False
    this = text(ctx.src, node.child_by_field_name("operator"))
    left, right = (node.child_by_field_name(f) for f in ("left", "right"))
    left, right = (strip(n) if n is not None else None for n in (left, right))
    if this == "&&":
        return any(side is not None and _requires(ctx, side, lanes, op, bound) for side in (left, right))
    if left is None or right is None:
        return False
    if op == "==" and this == "==":
        sides = {ctx.text(left), ctx.text(right)}
        return bound in sides and bool(sides & lanes)
    return this == op and ctx.text(left) in lanes and ctx.text(right) == bound
