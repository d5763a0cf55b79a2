"""HP217: a 32-bit variable as the mask of a ``*_sync`` builtin, which HIP's headers reject."""

from __future__ import annotations

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.parse import Node, call_arguments
from hipport.registry import any_word_of
from hipport.rules import REGISTRY
from hipport.rules.released_headers.common import callee, data, declared_type
from hipport.rules.warp import widen
from hipport.rules.warp.template_masks import narrow_instantiation


@REGISTRY.rule
class SyncMaskNarrowCall:
    """A 32-bit variable passed as the mask of a `*_sync` builtin: a compile error

    ## Why
    HIP's `*_sync` warp functions `static_assert` that the mask is a 64-bit integer (HIP 6.2
    and 7.1 headers: "The mask must be a 64-bit integer"), so a call whose mask is an
    `unsigned` variable does not compile. Reported at the call, where the compiler stops;
    HP202 is the same variable's declaration.

    ## Example
    ```cuda
    unsigned active = __activemask();
    v += __shfl_up_sync(active, v, 1);          // error on HIP
    ```
    becomes
    ```cuda
    unsigned long long active = __activemask();
    v += __shfl_up_sync(active, v, 1);
    ```

    ## Fix
    Declare the mask `unsigned long long` (and use `__popcll`/`__ffsll` on it).
    """

    code = "HP217"
    slug = "sync-mask-narrow-call"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.visits("call_expression", names=any_word_of(data().mask_functions), codes=(SyncMaskNarrowCall,))
def _mask_call(node: Node, ctx: Context) -> None:
    found = callee(ctx, node, data().mask_functions)
    args = call_arguments(node) if found is not None else None
    if args:
        _check_mask(ctx, node, found.name, args[0])


def _check_mask(ctx: Context, call: Node, name: str, mask: Node) -> None:
    if ctx.rocm < (7, 0, 0) and (name == "__syncwarp" or name.startswith("__reduce_")):
        return  # not in HIP 6.x at all: the warp rules say so
    while mask.type == "parenthesized_expression" and mask.named_child_count == 1:
        mask = mask.named_children[0]
    if mask.type != "identifier":
        return
    var = ctx.text(mask)
    declared = declared_type(ctx, call, var)
    if declared in data().narrow_types:
        ctx.report(SyncMaskNarrowCall, call,
                   f"`{var}` (`{declared}`, 32 bits or less) is the mask of `{name}`: HIP's "
                   "*_sync functions static_assert a 64-bit mask, so this does not compile",
                   f"declare `{var}` as `unsigned long long`", fix=widen.variable_edits(ctx, call, var))
    elif found := narrow_instantiation(ctx, call, var, declared, data().narrow_types):
        param, instance, line = found
        ctx.report(SyncMaskNarrowCall, call,
                   f"`{var}` (template type `{param}`) is the mask of `{name}`, and `{instance}` "
                   f"(line {line}) makes it 32 bits: HIP's *_sync functions static_assert a 64-bit "
                   "mask, so that instantiation does not compile",
                   f"instantiate with `unsigned long long`, or convert `{var}` to it at the call")
