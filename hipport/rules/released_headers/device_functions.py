"""HP332: CUDA device functions the released HIP headers do not declare, renamed to the
HIP function that does the same where the data names one."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hipport import facts
from hipport.context import Context
from hipport.edits import Edit
from hipport.findings import Effort, Severity
from hipport.parse import Node, function_qualifiers
from hipport.preprocessor.directives import declares
from hipport.registry import any_word_of
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.released_headers.common import callee, data


@REGISTRY.rule
class DeviceFunctionMissing(SaysWhatItIs):
    """A CUDA device function HIP's headers do not declare

    ## Why
    Block-scope atomics (`atomicAdd_block`…) and system-scope `atomicInc_system` /
    `atomicDec_system` are in no HIP header and in no mapping table. A block-scope atomic
    becomes the device-scope one, which orders more, never less; the system-scope increment
    and decrement need a CAS loop.

    ## Example

    ```cuda
    atomicAdd_block(&count, 1);
    ```
    becomes
    ```cuda
    atomicAdd(&count, 1);
    ```

    ## Fix
    Use the device-scope atomic for `*_block` (`hipport convert` does), and write
    `atomicInc_system` / `atomicDec_system` as an `atomicCAS_system` loop.
    """

    code = "HP332"
    slug = "device-function-missing"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.visits("call_expression", names=any_word_of(data().device), codes=(DeviceFunctionMissing,))
def _device_call(node: Node, ctx: Context) -> None:
    found = callee(ctx, node, data().device)
    if found is not None:
        _report_device(ctx, found.node, found.name, data().device[found.name])


def _report_device(ctx: Context, where: Node, name: str, facts: dict) -> None:
    """Rename to the HIP spelling the data gives, or report the route. A name the project
    defines itself is its own function; a device-only spelling is not applied where the
    call may run on the host."""
    if ctx.branches.provides(name) or _defined_here(ctx, name):
        return
    fix = facts.get("fix")
    if fix is None:
        ctx.report(DeviceFunctionMissing, where, f"`{name}` is not in HIP", facts["route"])
    elif facts.get("device_only") and not _device_only(ctx, where):
        ctx.report(DeviceFunctionMissing, where,
                   f"`{name}` is not in HIP; `{fix}` ({facts['why']}) is device-only and this "
                   "code may run on the host", f"`{fix}` in a device-only function; on the host, the "
                   "standard library's (with the arguments cast to CUDA's parameter type)")
    else:
        ctx.report(DeviceFunctionMissing, where, f"`{name}` is not in HIP: `{fix}` does the same "
                   f"({facts['why']})", fix, fix=[Edit(where.start_byte, where.end_byte, fix.encode())])


@dataclass
class _Defined:
    """Per file: whether the file defines a name itself, per name asked about."""

    names: dict[str, bool] = field(default_factory=dict)


def _defined_here(ctx: Context, name: str) -> bool:
    """The file defines ``name`` itself (a function or a macro): its own, not CUDA's."""
    cache = ctx.state(_Defined).names
    if name not in cache:
        cache[name] = bool(declares(ctx.src, (), name)) or re.search(
            rb"#[ \t]*define[ \t]+" + re.escape(name.encode()) + rb"\b", ctx.src) is not None
    return cache[name]


def _device_only(ctx: Context, node: Node) -> bool:
    """Inside a ``__global__`` or ``__device__`` function that is not also ``__host__``."""
    func = facts.enclosing_function(ctx, node)
    if func is None:
        return False
    quals = function_qualifiers(ctx.src, func)
    return "__host__" not in quals and bool(quals & {"__global__", "__device__"})
