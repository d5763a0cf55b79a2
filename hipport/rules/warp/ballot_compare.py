"""HP218 — a ballot compared with a 32-bit all-ones constant ("did every lane vote?")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hipport import facts
from hipport.findings import Effort, Severity
from hipport.parse import text
from hipport.rules import REGISTRY
from hipport.rules.warp.functions import calls_warp_builtin, function_check
from hipport.rules.warp.scope import Scope
from hipport.rules.warp.syntax import is_full_mask32

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class BallotComparedWithFullMask32:
    """Ballot or active mask compared with a 32-bit all-ones constant

    ## Why
    `__ballot_sync`, `__ballot` and `__activemask` return a 64-bit mask on HIP. The CUDA
    idiom `__ballot_sync(mask, pred) == 0xffffffff` asks "did all 32 lanes vote?"; on a
    64-lane wave (CDNA) a full vote is `0xffffffffffffffff`, so the test is false whenever
    lanes 32–63 vote too and true when only the lower half does: an "all lanes agree" fast
    path that silently never runs, or runs for the wrong wave. `!= 0xffffffff`,
    `== ~0u` and `== (unsigned)-1` have the same problem.

    ## Example
    ```cuda
    if (__ballot_sync(0xffffffffffffffffull, ok) == 0xffffffff) fast_path();
    ```
    becomes
    ```cuda
    if (__ballot_sync(0xffffffffffffffffull, ok) == __activemask()) fast_path();
    ```

    ## Fix
    Compare with the lanes that are running (`__activemask()`), or use `__all_sync(mask,
    pred)`, which asks the question directly for any wave size. hipport does not rewrite
    the constant: `0xffffffffffffffffull` is right only when the whole wave is active.
    """

    code = "HP218"
    run_time_only = True  # judged by the GPU passes (Rule.run_time_only)
    slug = "ballot-compared-with-full-mask-32"
    severity = Severity.HIGH
    effort = Effort.SMALL


facts.need(operators=("==", "!="))


@function_check(BallotComparedWithFullMask32, hint=calls_warp_builtin)  # a ballot is a warp builtin's call
def check_ballot_compare(ctx: Context, scope: Scope) -> None:
    src = ctx.src
    for node in scope.info.binaries:
        op = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op is None or op.type not in ("==", "!=") or left is None or right is None:
            continue
        for ballot, constant in ((left, right), (right, left)):
            source = is_full_mask32(src, constant) and scope.is_ballot(ballot)
            if source:
                ctx.report(
                    BallotComparedWithFullMask32, node,
                    f"`{source}` result compared with the 32-lane mask `{text(src, constant)}`; "
                    "a wave on CDNA has 64 lanes, so a full vote is 64 bits of ones",
                    "compare with `__activemask()`, or use `__all_sync(mask, pred)`",
                )
                break
