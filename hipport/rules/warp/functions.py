"""Checks judged per function body: masks, ballots, lane arithmetic, gated builtins.

These need the function's declarations (a mask variable's type, where a lane index came
from), so the walk only notes each function; once it is over and ``hipport.facts`` holds
the whole file, every check registered with ``function_check`` reads the function's facts
through one ``Scope``. A function in a ``#define`` body belongs to another tree and is
judged at once, from that tree.

Each check brings a text hint (``hint(ctx, func)``): a function for which no hint holds is
not gathered at all (most host functions).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hipport import facts
from hipport.parse import Node, function_qualifiers
from hipport.registry import prefilters_on
from hipport.rule import Rule
from hipport.rules import REGISTRY
from hipport.rules.warp.scope import Scope
from hipport.rules.warp.vocab import BALLOTS, DEVICE_LIKE_HINTS, MASKED, WARP_CALL_HINTS

if TYPE_CHECKING:
    from hipport.context import Context

FunctionCheckFn = Callable[["Context", Scope], None]
Hint = Callable[["Context", Node], bool]


@dataclass(frozen=True)
class FunctionCheck:
    fn: FunctionCheckFn
    codes: tuple[Rule, ...]
    hint: Hint


CHECKS: list[FunctionCheck] = []
_HINTS: list[Hint] = []
facts.need(device_calls=MASKED | BALLOTS)


def function_check(*codes: Rule, hint: Hint) -> Callable[[FunctionCheckFn], FunctionCheckFn]:
    """Register ``fn(ctx, scope)`` to run on every device-like function whose text passes
    ``hint`` (true whenever ``fn`` might report), reporting ``codes``."""

    def deco(fn: FunctionCheckFn) -> FunctionCheckFn:
        CHECKS.append(FunctionCheck(fn, codes, hint))
        return fn

    return deco


@dataclass
class PendingFunctions:
    """Per file: the functions noted during the walk, judged once it is over."""

    functions: list[Node] = field(default_factory=list)


def calls_warp_builtin(ctx: "Context", func: Node) -> bool:
    """The hint of checks that start from a MASKED or BALLOTS call (which also makes the
    function device-like)."""
    return ctx.may_contain(*WARP_CALL_HINTS, within=func)


def may_be_device_like(ctx: "Context", func: Node) -> bool:
    """False when the facts surely find ``func`` host code."""
    if function_qualifiers(ctx.src, func) & {"__global__", "__device__"}:
        return True
    return ctx.may_contain(*DEVICE_LIKE_HINTS, within=func)


def check_function(func: Node, ctx: "Context") -> None:
    if not any(hint(ctx, func) for hint in _HINTS):
        return  # nothing any check could find: skip the gathering walk
    if ctx.in_macro_body:  # a function in a #define body: judged now, from its own tree
        _judge(ctx, func)
    else:
        ctx.state(PendingFunctions).functions.append(func)


def check_functions(ctx: "Context") -> None:
    for func in ctx.state(PendingFunctions).functions:
        _judge(ctx, func)


def _judge(ctx: "Context", func: Node) -> None:
    info = facts.function_facts(ctx, func)
    if not info.device_like:
        return
    scope = Scope(ctx.src, info)
    everything = not prefilters_on()
    for check in CHECKS:
        if everything or any(r.enabled(ctx.options) for r in check.codes):
            check.fn(ctx, scope)


def register() -> None:
    """Register the two visitors, once every check module has added its checks (so they
    carry every rule the checks report)."""
    codes = tuple(dict.fromkeys(r for check in CHECKS for r in check.codes))
    facts.need(by=codes)  # the checks read the recorded facts after the walk
    _HINTS[:] = dict.fromkeys(check.hint for check in CHECKS)  # each distinct hint once
    REGISTRY.visits("function_definition", codes=codes)(check_function)
    REGISTRY.visits_file(codes=codes)(check_functions)
