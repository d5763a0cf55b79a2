"""HP308, HP318–HP320 — device builtins that compile but behave differently on AMD, or
have no counterpart: ``__threadfence_system``, ``__trap``/``__nanosleep``/
``__prof_trigger``, ``clock``/``clock64``, ``__ldg``. The fence is reported at every
site, the others once per name per file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hipport import facts
from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.registry import any_word_of
from hipport.rules import REGISTRY, AboutAName, SaysWhatItIs
from hipport.rules.device.common import once, plain_callee

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class ThreadfenceSystem(SaysWhatItIs):
    """`__threadfence_system()` does not flush to the host on AMD

    ## Why
    The fence orders memory but does not make device writes visible to the host or peer
    GPUs the way CUDA's does unless the memory is fine-grained (coherent) host memory.

    ## Example
    ```cuda
    // before
    flag_in_pinned_memory[0] = 1; __threadfence_system();
    // after: allocate the flag coherent
    hipHostMalloc(&flag, sizeof(int), hipHostMallocCoherent);
    ```

    ## Fix
    Allocate host-visible flags with `hipHostMallocCoherent` (or
    `hipExtMallocWithFlags(..., hipDeviceMallocFinegrained)`) and keep the fence.
    """

    code = "HP308"
    slug = "threadfence-system"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.rule
class TrapSleep(SaysWhatItIs, AboutAName):
    """`__trap`, `__nanosleep`, `__prof_trigger`

    ## Why
    HIPIFY maps none of these: `__trap` ends the kernel differently (use `abort()` or
    `__builtin_trap()`), `__nanosleep` has no nanosecond sleep (`__builtin_amdgcn_s_sleep`
    takes ~64-cycle units), and `__prof_trigger` has no counterpart.

    ## Example
    ```cuda
    // before
    if (bad) __trap();
    __nanosleep(100);
    // after
    if (bad) abort();
    __builtin_amdgcn_s_sleep(2);
    ```

    ## Fix
    Replace `__trap()` with `abort()` (or `__builtin_trap()`), `__nanosleep(ns)` with
    `__builtin_amdgcn_s_sleep(n)` where `n` counts units of about 64 clock cycles (re-tune
    any back-off loop), and drop `__prof_trigger` or guard it with
    `#ifndef __HIP_PLATFORM_AMD__`.
    """

    code = "HP318"
    slug = "device-trap-sleep"
    severity = Severity.LOW
    effort = Effort.SMALL


@REGISTRY.rule
class DeviceClock(SaysWhatItIs):
    """`clock()` / `clock64()` in device code

    ## Why
    The shader clock counts at a GPU-specific rate and is unreliable on RDNA3; timings and
    spin-waits built on it behave differently.

    ## Example
    ```cuda
    // before
    long long t0 = clock64();
    // after
    long long t0 = wall_clock64();   // rate: hipDeviceAttributeWallClockRate (kHz)
    ```

    ## Fix
    Measure time with `wall_clock64()` and convert with `hipDeviceAttributeWallClockRate`
    (kHz); keep `clock64()` only for relative cycle counts on one GPU, never for time-outs.
    """

    code = "HP319"
    slug = "device-clock"
    severity = Severity.LOW
    effort = Effort.SMALL


@REGISTRY.rule
class Ldg(SaysWhatItIs):
    """`__ldg` is a plain load on AMD

    ## Why
    `__ldg` compiles, but AMD GPUs have no separate read-only data cache path: the call is a
    normal global load. Code that relied on it for performance should be measured.

    ## Example
    ```cuda
    // before
    float v = __ldg(&in[i]);
    // after (equivalent on AMD)
    float v = in[i];
    ```

    ## Fix
    Nothing is required for correctness. Keep `__ldg` (it compiles) or write the plain load;
    if the kernel was tuned around the read-only cache, profile it on the AMD target.
    """

    code = "HP320"
    slug = "ldg-noop"
    severity = Severity.INFO
    effort = Effort.NONE


_NO_COUNTERPART = {"__trap": "abort() or __builtin_trap()",
                   "__nanosleep": "__builtin_amdgcn_s_sleep(n) (units of ~64 cycles)",
                   "__prof_trigger": "remove it (no AMD counterpart); use rocprof markers on the host"}
_NAMES = frozenset({"clock", "clock64", "__threadfence_system", "__ldg", *_NO_COUNTERPART})


@REGISTRY.visits("call_expression", names=any_word_of(_NAMES), codes=(ThreadfenceSystem, TrapSleep, DeviceClock, Ldg))
def _call(node: Node, ctx: "Context") -> None:
    plain = plain_callee(ctx, node)
    if plain is None:
        return
    name = plain[1]
    if name in ("clock", "clock64") and facts.is_device_code(ctx, node):
        once(ctx, f"clock:{name}", DeviceClock, node, f"`{name}()` in device code counts at a "
             "GPU-specific rate (unreliable on RDNA3)",
             "use wall_clock64() with hipDeviceAttributeWallClockRate for time")
    elif name == "__threadfence_system":
        ctx.report(ThreadfenceSystem, node, "`__threadfence_system()` does not make writes visible "
                   "to the host unless the memory is fine-grained (coherent)",
                   "allocate the shared flag/buffer with hipHostMallocCoherent")
    elif name in _NO_COUNTERPART:
        once(ctx, f"trap:{name}", TrapSleep, node, f"`{name}` has no direct HIP counterpart", _NO_COUNTERPART[name])
    elif name == "__ldg":
        once(ctx, "ldg", Ldg, node, "`__ldg` is an ordinary global load on AMD GPUs",
             "keep it, or use a plain load; measure if it was a performance trick")
