"""HP123: a CUDA map flag passed as the register flags of a graphics-interop call."""

from __future__ import annotations

from hipport.context import Context
from hipport.edits import Edit
from hipport.findings import Effort, Severity
from hipport.parse import Node, call_name
from hipport.registry import any_word_of
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.released_headers.common import raw_data


@REGISTRY.rule
class MapFlagAsRegisterFlag(SaysWhatItIs):
    """A CUDA map flag passed where the call reads register flags

    ## Why
    `cudaGraphicsMapFlagsWriteDiscard` and its two siblings have no HIP counterpart (HIP
    has no `cudaGraphicsResourceSetMapFlags`), so the name is left as written and does not
    compile. CUDA code (the samples' OpenGL interop) often passes it to
    `cudaGraphicsGLRegisterBuffer`/`Image`, whose flags are register flags: CUDA's map and
    register flags have the same values there (None 0, ReadOnly 1, WriteDiscard 2), and so
    do HIP's `hipGraphicsRegisterFlags` that `hipGraphicsGLRegisterBuffer`/`Image` take
    (6.2 and 7.1 headers).

    ## Example

    ```cuda
    cudaGraphicsGLRegisterBuffer(&res, pbo, cudaGraphicsMapFlagsWriteDiscard);
    ```
    becomes
    ```cuda
    hipGraphicsGLRegisterBuffer(&res, pbo, hipGraphicsRegisterFlagsWriteDiscard);
    ```

    ## Fix
    `hipport convert` writes the register flag of the same value in those calls' flags;
    anywhere else the name stays reported (HP101).
    """

    code = "HP123"
    slug = "map-flag-as-register-flag"
    severity = Severity.HIGH
    effort = Effort.NONE


_FLAGS = {k: v for k, v in raw_data()["register_flags"].items() if k != "calls"}
_CALLS = frozenset(raw_data()["register_flags"]["calls"])


@REGISTRY.visits("identifier", names=any_word_of(_FLAGS), codes=(MapFlagAsRegisterFlag,))
def _flag(node: Node, ctx: Context) -> None:
    name = ctx.text(node)
    target = _FLAGS.get(name)
    call = _flags_call(node)
    if target is None or call is None or call_name(ctx.src, call) not in _CALLS:
        return
    ctx.report(MapFlagAsRegisterFlag, node, f"`{name}` as the register flags of "
               f"`{call_name(ctx.src, call)}`: HIP has no map flags; its register flag of the "
               "same value is meant", target, fix=[Edit(node.start_byte, node.end_byte, target.encode())])


def _flags_call(node: Node) -> Node | None:
    """The call whose last argument is ``node``, alone or in an ``|`` of flags."""
    arg = node
    while arg.parent is not None and arg.parent.type in ("binary_expression", "parenthesized_expression"):
        arg = arg.parent
    args = arg.parent
    if args is None or args.type != "argument_list" or args.named_children[-1] != arg:
        return None
    return args.parent if args.parent is not None and args.parent.type == "call_expression" else None
