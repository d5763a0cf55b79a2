"""HP219 — a ballot or active mask cast to a 32-bit integer, which drops lanes 32–63."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hipport.facts import normalised
from hipport.findings import Effort, Severity
from hipport.parse import Node, call_name, text
from hipport.registry import any_word_of
from hipport.rules import REGISTRY
from hipport.rules.warp.vocab import BALLOTS, MASK32_TYPES

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class BallotNarrowingCast:
    """Ballot or active mask cast to a 32-bit integer

    ## Why
    `__ballot_sync`, `__ballot`, `__activemask` and `__match_*_sync` return a 64-bit mask on
    HIP. A cast to `unsigned`, `uint32_t` or `int` (C-style, `static_cast` or functional)
    keeps lanes 0–31 only: on a 64-lane wave (CDNA) every vote of lanes 32–63 is lost, so
    counts are halved and "no lane voted" tests pass when half the wave did. Widening the
    variable that receives it (HP202) does not help while the cast stays.

    ## Example
    ```cuda
    uint32_t votes = static_cast<uint32_t>(__ballot_sync(mask, ok));
    ```
    becomes
    ```cuda
    unsigned long long votes = __ballot_sync(mask, ok);
    ```

    ## Fix
    Drop the cast (or cast to `unsigned long long`) and keep the mask in a 64-bit variable,
    with the 64-bit bit operations (`__popcll`, `__ffsll`). hipport does not rewrite it:
    what the 32 bits fed decides the right width.
    """

    code = "HP219"
    run_time_only = True  # judged by the GPU passes (Rule.run_time_only)
    slug = "ballot-narrowing-cast"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.visits("call_expression", names=any_word_of(BALLOTS), codes=(BallotNarrowingCast,))
def check_ballot_cast(call: Node, ctx: Context) -> None:
    """At each ballot call: is the value it returns (through parentheses) cast to 32 bits?"""
    name = call_name(ctx.src, call)
    if name not in BALLOTS:
        return
    value = call
    while value.parent is not None and value.parent.type == "parenthesized_expression":
        value = value.parent
    narrow = _narrowing_cast(ctx, value)
    if narrow is not None:
        cast, type_text = narrow
        ctx.report(BallotNarrowingCast, cast,
                   f"`{name}` result cast to `{type_text}` (32 bits): a wave on CDNA has 64 lanes, "
                   "so the votes of lanes 32-63 are dropped",
                   "drop the cast and keep the mask in `unsigned long long` (use `__popcll`, `__ffsll`)")


def _narrowing_cast(ctx: Context, value: Node) -> tuple[Node, str] | None:
    """(the cast, its type) when ``value`` is the operand of a cast to a 32-bit type:
    ``(T)value``, ``static_cast<T>(value)`` or ``T(value)``."""
    src, parent = ctx.src, value.parent
    if parent is None:
        return None
    if parent.type == "cast_expression" and parent.child_by_field_name("value") == value:
        return _if_narrow(parent, parent.child_by_field_name("type"), src)
    args = parent if parent.type == "argument_list" else None
    call = args.parent if args is not None else None
    if call is None or call.type != "call_expression" or len(args.named_children) != 1:
        return None
    fn = call.child_by_field_name("function")
    template = fn.child_by_field_name("name") if fn is not None and fn.type == "template_function" else None
    if template is not None and text(src, template) == "static_cast":
        types = fn.child_by_field_name("arguments")
        return _if_narrow(call, types.named_children[0] if types is not None and types.named_child_count else None, src)
    if fn is not None and fn.type in ("primitive_type", "type_identifier", "sized_type_specifier"):
        return _if_narrow(call, fn, src)
    return None


def _if_narrow(cast: Node, type_node: Node | None, src: bytes) -> tuple[Node, str] | None:
    type_text = normalised(text(src, type_node)) if type_node is not None else ""
    return (cast, type_text) if type_text in MASK32_TYPES else None
