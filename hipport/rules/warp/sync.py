"""HP215, HP216 — warp-sync builtins before ROCm 7.0: gated behind a macro, or missing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hipport import facts
from hipport.findings import Effort, Severity
from hipport.parse import Node, call_name
from hipport.registry import any_word_of
from hipport.rules import REGISTRY
from hipport.rules.warp.functions import calls_warp_builtin, function_check
from hipport.rules.warp.scope import Scope
from hipport.rules.warp.vocab import NEW_IN_7, SYNC_BUILTINS
from hipport.versions import short_version

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class WarpSyncBuiltinsGated:
    """Warp-sync builtins are off by default before ROCm 7.0

    ## Why
    `__shfl_*_sync`, `__ballot_sync`, `__any_sync`, `__all_sync`, `__match_*_sync` exist
    since ROCm 6.2 but only when `HIP_ENABLE_WARP_SYNC_BUILTINS` is defined; without it the
    file does not compile. From 7.0 they are on by default. Reported once per function.

    ## Example
    ```cuda
    v += __shfl_down_sync(0xffffffffffffffffull, v, o);
    ```
    compiles on 6.3 with
    ```cuda
    #define HIP_ENABLE_WARP_SYNC_BUILTINS
    #include <hip/hip_runtime.h>
    ```

    ## Fix
    Build with `-DHIP_ENABLE_WARP_SYNC_BUILTINS` (or define it before including the HIP
    runtime), or use the mask-less `__shfl_down` family.
    """

    code = "HP215"
    slug = "warp-sync-builtins-gated"
    severity = Severity.MEDIUM
    effort = Effort.SMALL
    rocm_max = (7, 0, 0)

@REGISTRY.rule
class WarpSyncMissing:
    """`__syncwarp` / `__reduce_*_sync` do not exist before ROCm 7.0

    ## Why
    ROCm 7.0 added `__syncwarp` and `__reduce_{add,min,max,and,or,xor}_sync`; earlier
    releases have no such functions, with or without `HIP_ENABLE_WARP_SYNC_BUILTINS`.

    ## Example
    ```cuda
    int total = __reduce_add_sync(mask, x);
    ```
    becomes
    ```cuda
    int total = x;
    for (int o = warpSize / 2; o > 0; o >>= 1) total += __shfl_xor(total, o);
    ```

    ## Fix
    Target ROCm 7.0 or later; otherwise drop `__syncwarp()` (lanes of a wave execute in
    lockstep) or replace it with `__builtin_amdgcn_wave_barrier()`, and write reductions
    with shuffles or hipCUB `WarpReduce`.
    """

    code = "HP216"
    slug = "warp-sync-missing"
    severity = Severity.HIGH
    effort = Effort.MEDIUM
    rocm_max = (7, 0, 0)

facts.need(calls=SYNC_BUILTINS)


@function_check(WarpSyncBuiltinsGated, hint=calls_warp_builtin)
def check_gated_builtins(ctx: Context, scope: Scope) -> None:
    """Once per function, unless the file defines HIP_ENABLE_WARP_SYNC_BUILTINS."""
    used = [(name, call) for name, call in scope.info.calls if name in SYNC_BUILTINS]
    if not used or "HIP_ENABLE_WARP_SYNC_BUILTINS" in facts.file_facts(ctx).macros:
        return
    names = sorted({name for name, _ in used})
    ctx.report(
        WarpSyncBuiltinsGated, used[0][1],
        f"{', '.join(f'`{n}`' for n in names)} need HIP_ENABLE_WARP_SYNC_BUILTINS on ROCm "
        f"{short_version(ctx.rocm)} (on by default from 7.0)",
        "build with -DHIP_ENABLE_WARP_SYNC_BUILTINS or define it before including hip_runtime.h",
    )


@REGISTRY.visits("call_expression", names=any_word_of(NEW_IN_7), codes=(WarpSyncMissing,))
def check_missing_builtin(call: Node, ctx: Context) -> None:
    name = call_name(ctx.src, call)
    if name is None or name not in NEW_IN_7 or ctx.branches.provides(name):
        return  # (a name the project defines itself for HIP exists)
    ctx.report(
        WarpSyncMissing, call,
        f"`{name}` does not exist before ROCm 7.0 (target {short_version(ctx.rocm)})",
        "target ROCm >= 7.0, or replace with a shuffle-based equivalent"
        if name != "__syncwarp" else "target ROCm >= 7.0, or drop it (a wave runs in lockstep)",
    )
