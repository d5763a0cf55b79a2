"""HP203 — a 32-bit bit operation (``__popc``, ``__ffs``…) applied to a 64-bit ballot."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hipport import facts
from hipport.findings import Effort, Severity
from hipport.parse import call_arguments
from hipport.rules import REGISTRY
from hipport.rules.warp.functions import calls_warp_builtin, function_check
from hipport.rules.warp.scope import Scope
from hipport.rules.warp.vocab import BIT_OPS

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class BallotBitOp32:
    """32-bit bit operation applied to a ballot or active mask

    ## Why
    `__popc`, `__ffs`, `__clz` and `__brev` take 32 bits. Applied to a 64-bit ballot they
    count or search only lanes 0–31: a vote over a 64-lane wave is silently wrong.

    ## Example
    ```cuda
    int n = __popc(__ballot_sync(mask, pred));
    ```
    becomes
    ```cuda
    int n = __popcll(__ballot_sync(mask, pred));
    ```

    ## Fix
    Use `__popcll`, `__ffsll`, `__clzll`, `__brevll`. For `__clz`/`__brev` also re-derive the
    arithmetic around them (`31 - __clz(m)` becomes `63 - __clzll(m)`).
    """

    code = "HP203"
    run_time_only = True  # judged by the GPU passes (Rule.run_time_only)
    slug = "ballot-bitop-32bit"
    severity = Severity.HIGH
    effort = Effort.SMALL

facts.need(calls=BIT_OPS)


@function_check(BallotBitOp32, hint=calls_warp_builtin)  # a ballot is a warp builtin's call
def check_bit_ops(ctx: Context, scope: Scope) -> None:
    for name, call in scope.info.calls:
        wide = BIT_OPS.get(name)
        args = call_arguments(call)
        if wide is None or len(args) != 1:
            continue
        source = scope.is_ballot(args[0])
        if source:
            ctx.report(
                BallotBitOp32, call,
                f"`{name}` takes 32 bits but its argument comes from `{source}` (64 lanes on CDNA)",
                f"use `{wide}`",
            )
