"""HP213, HP214 — shuffles built for 32 lanes: ``width`` 32, and ladders that start at 16.

A ladder is reported where it is written: the offset 16 of an unrolled shuffle, or the
``for`` loop around a shuffle that halves from 16 (or doubles up to 32).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hipport.findings import Effort, Severity
from hipport.parse import Node, call_arguments, call_name, text, walk
from hipport.registry import any_word_of
from hipport.rules import REGISTRY
from hipport import facts
from hipport.rules.warp.group_lane import guarded_up_ladder, read_by_group_lane_zero
from hipport.rules.warp.logical import logical_group_block, logical_tile, logical_width, wave_blind_function
from hipport.rules.warp.syntax import int_value, is_int, small_constant, step_of, strip
from hipport.rules.warp.vocab import SHUFFLES, XOR_SHUFFLES

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class ShuffleWidth32:
    """Shuffle with `width` 32

    ## Why
    `__shfl*(…, 32)` splits the wave into 32-lane segments. On a 64-lane wave that is two
    independent halves: a reduction or broadcast meant for "the whole warp" covers half.

    ## Example
    ```cuda
    v = __shfl_sync(mask, v, 0, 32);
    ```
    becomes
    ```cuda
    v = __shfl_sync(mask, v, 0);  // whole wave; or keep 32 if 32-lane tiles are intended
    ```

    ## Fix
    Omit `width` (defaults to `warpSize`) unless 32-lane sub-groups are really meant.
    """

    code = "HP213"
    run_time_only = True  # judged by the GPU passes (Rule.run_time_only)
    slug = "shuffle-width-32"
    severity = Severity.MEDIUM
    effort = Effort.SMALL

@REGISTRY.rule
class ShuffleLadder16:
    """Shuffle ladder that starts at 16

    ## Why
    `for (int o = 16; o > 0; o >>= 1)` or the unrolled `16, 8, 4, 2, 1` sequence reduces 32
    lanes. On a 64-lane wave lanes 32–63 are never combined with 0–31: wrong sums (cupy PR
    #9977). Ascending ladders bounded by 32 (`o < 32`) have the same problem.

    ## Example
    ```cuda
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(mask, v, o);
    ```
    becomes
    ```cuda
    for (int o = warpSize / 2; o > 0; o >>= 1) v += __shfl_down_sync(mask, v, o);
    ```

    ## Fix
    Start at `warpSize / 2` (or a per-architecture `WARP_SIZE / 2`).

    Not reported when every shuffle of the ladder passes a width of 32, or is a member of a
    cooperative-groups tile of 32 lanes (`g.shfl_down(v, i)`, `g = tiled_partition<32>(b)`),
    in a project that also names a wave size of 64 (logical.py): a 32-lane group it chose,
    reduced whole.
    Nor is a ladder of xors from 16 in a function of such a project that votes on no wave,
    shuffles only by xors under 32 (or width 32) and spells neither `warpSize` nor another
    warp-size name: a 64-lane wave runs it as two 32-lane warps, each reduced whole.
    Nor is a down (or xor) ladder from 16 in a kernel that spells no wave (no vote, no
    `warpSize`) whose sums only a lane with `x & 31 == 0` reads afterwards
    (`if (lane == 0) out[i] = v;`): on a wave of 64 lanes 0 and 32 each add up their own
    32-lane group, as CUDA's warp does. Nor an up ladder to 32 whose shuffled values are used
    only where that lane index is at least the offset (`if (lane >= i) v += tmp;`): no lane
    reads across its group.
    Nor is `float other = __shfl_xor(v, 16)` there, kept apart from `v`, in a block whose
    shuffles are all xors by offsets under 32: an exchange within a 32-lane group, which
    each half of a 64-lane wave makes within itself.
    """

    code = "HP214"
    run_time_only = True  # judged by the GPU passes (Rule.run_time_only)
    slug = "shuffle-ladder-16"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.visits("call_expression", names=any_word_of(SHUFFLES), codes=(ShuffleWidth32, ShuffleLadder16))
def check_shuffle(call: Node, ctx: Context) -> None:
    src = ctx.src
    name = call_name(src, call)
    if name is None or name not in SHUFFLES:
        return
    args = call_arguments(call)
    delta_at, width_at = SHUFFLES[name]
    width = args[width_at] if len(args) > width_at else None
    if width is not None and is_int(src, width, 32):
        ctx.report(
            ShuffleWidth32, width,
            f"`{name}` with width 32 shuffles within 32-lane halves of a 64-lane wave",
            "omit width (defaults to warpSize) unless 32-lane groups are intended",
        )
    delta = args[delta_at] if delta_at is not None and len(args) > delta_at else None
    narrow = width is not None and (v := int_value(src, width)) is not None and v[0] < 32
    if delta is not None and is_int(src, delta, 16) and not narrow and not logical_width(ctx, width) \
            and not _group_exchange(ctx, call, name, args):
        ctx.report(
            ShuffleLadder16, delta,
            f"`{name}` with offset 16 starts a 32-lane reduction ladder; "
            "lanes 32-63 of a wave are never combined",
            "start the ladder at warpSize / 2",
        )


def _group_exchange(ctx: Context, call: Node, name: str, args: list[Node]) -> bool:
    """``float other = __shfl_xor(v, 16)``: the partner's value kept apart, never folded
    back into ``v``, in a block whose shuffles all stay within 32-lane groups (xor by
    offsets under 32, ``logical.logical_group_block``): an exchange between the two
    16-lane halves of a 32-lane group, not the first step of a reduction over the wave.
    On a wave of 64 each half exchanges within itself (vLLM's rocm/skinny_gemms.cu pairs
    two rows' sums so ``lane % 32 == 0`` writes them as one half2)."""
    decl = call.parent
    if name not in XOR_SHUFFLES or not args or decl is None or decl.type != "init_declarator":
        return False
    target = decl.child_by_field_name("declarator")
    if target is None or target.type != "identifier":
        return False
    mine, shuffled = text(ctx.src, target), "".join(ctx.text(args[0]).split())
    block = decl.parent
    while block is not None and block.type != "compound_statement":
        block = block.parent
    if block is None:
        return False
    for n in walk(block):  # folded back: v += other, v = fmaxf(v, other)
        if n.type == "assignment_expression" and "".join(ctx.text(n.child_by_field_name("left")).split()) == shuffled \
                and re.search(rb"\b" + re.escape(mine.encode()) + rb"\b", ctx.src[n.start_byte:n.end_byte]):
            return False
    return logical_group_block(ctx, call, facts.enclosing_function(ctx, call))


_SHFL_RE = re.compile(rb"shfl", re.I)


def _spells_shfl(src: bytes) -> bool:
    """``_SHFL_RE`` over a whole file, answered by plain searches: the usual spelling, then
    the ASCII-folded bytes (the same answer: ``re.I`` on bytes folds ASCII only). The
    case-blind regex scan cost about 40 us a file."""
    return b"shfl" in src or b"shfl" in src.lower()


@REGISTRY.visits("for_statement", source=_spells_shfl, codes=(ShuffleLadder16,))  # _shuffles_with
def check_ladder_loop(loop: Node, ctx: Context) -> None:
    """``for (o = 16; ...; o >>= 1)`` and ``for (o = 1; o < 32; o <<= 1)`` around a shuffle;
    the start may be spelled as a constant expression (``32 / 2``, the CUDA samples' reduce)."""
    src = ctx.src
    if not ctx.may_contain(_SHFL_RE, within=loop):
        return  # no shuffle in the loop (_shuffles_with)
    init, cond, update = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    if init is None or cond is None or update is None:
        return
    start: Node | None = None
    var = ""
    if init.type == "declaration":
        decl = init.child_by_field_name("declarator")
        if decl is not None and decl.type == "init_declarator":
            start, target = decl.child_by_field_name("value"), decl.child_by_field_name("declarator")
            var = text(src, target) if target is not None else ""
    elif init.type == "assignment_expression":
        start, var = init.child_by_field_name("right"), text(src, init.child_by_field_name("left"))
    if start is None or not var:
        return
    step = step_of(src, update, var)
    if step == "down" and small_constant(src, start) == 16 and not _stops_early(src, cond, var):
        where = start
    elif step == "up" and is_int(src, start, 1) and (bound := _upper_bound_32(src, cond, var)) is not None:
        where = bound
    else:
        return
    body = loop.child_by_field_name("body")
    shuffles = _shuffles_with(src, body, var) if body is not None else []
    func = facts.enclosing_function(ctx, loop)
    if not shuffles or all(logical_width(ctx, _width(src, call)) or logical_tile(ctx, call, func)
                           for call in shuffles):
        return  # no shuffle of var, or each one's explicit 32 (or 32-lane tile) is a logical warp (logical.py)
    if step == "down" and wave_blind_function(ctx, func):
        return  # xors under 32 in code that never spells the wave: each half reduces itself
    if step == "down" and read_by_group_lane_zero(ctx, loop, func, shuffles):
        return  # only each 32-lane group's first lane reads the sums: its own group's (group_lane.py)
    if step == "up" and guarded_up_ladder(ctx, loop, func, shuffles, var):
        return  # each lane reads up only within its 32-lane group (group_lane.py)
    ctx.report(
        ShuffleLadder16, where,
        f"shuffle ladder over `{var}` {'starts at 16' if step == 'down' else 'stops at 32'}: "
        "it reduces 32 lanes; a wave on CDNA has 64",
        "start at warpSize / 2" if step == "down" else "bound the ladder by warpSize",
    )


def _stops_early(src: bytes, cond: Node, var: str) -> bool:
    """``o >= 4`` / ``o > 2``: a ladder from 16 that stops before offset 1 combines the few
    lanes of one element's layout (llama.cpp's fattn-mma-f16: "values per KQ column are
    spread across 8 threads"), not the lanes of a warp; wave64 has the same such groups."""
    cond = strip(cond)
    if cond.type != "binary_expression" or text(src, cond.child_by_field_name("left")) != var:
        return False
    op, right = text(src, cond.child_by_field_name("operator")), cond.child_by_field_name("right")
    bound = int_value(src, right) if right is not None else None
    return bound is not None and ((op == ">=" and bound[0] > 1) or (op == ">" and bound[0] >= 1))


def _upper_bound_32(src: bytes, cond: Node, var: str) -> Node | None:
    cond = strip(cond)
    if cond.type != "binary_expression" or text(src, cond.child_by_field_name("left")) != var:
        return None
    op, right = text(src, cond.child_by_field_name("operator")), cond.child_by_field_name("right")
    if (op == "<" and is_int(src, right, 32)) or (op == "<=" and is_int(src, right, 16)):
        return right
    return None


def _shuffles_with(src: bytes, body: Node, var: str) -> list[Node]:
    """The calls in ``body`` whose name mentions ``shfl`` and that take ``var`` as an argument."""
    found = []
    for n in walk(body):
        if n.type == "call_expression":
            name = call_name(src, n) or ""
            if "shfl" in name.lower() and any(
                c.type == "identifier" and text(src, c) == var for a in call_arguments(n) for c in walk(a)
            ):
                found.append(n)
    return found


def _width(src: bytes, call: Node) -> Node | None:
    """The explicit ``width`` argument of a builtin shuffle call (None: default or not one)."""
    name = call_name(src, call)
    if name not in SHUFFLES:
        return None
    args = call_arguments(call)
    at = SHUFFLES[name][1]
    return args[at] if len(args) > at else None
