"""HP121: a typed pointer passed where the released HIP headers declare only ``void**``."""

from __future__ import annotations

import re

from hipport.context import Context
from hipport.edits import Edit
from hipport.findings import Effort, Severity
from hipport.parse import Node, call_arguments
from hipport.registry import any_word_of
from hipport.rules import REGISTRY
from hipport.rules.released_headers.common import callee, data, declared_type


@REGISTRY.rule
class VoidPointerArgument:
    """A typed pointer passed where the HIP function takes `void**`

    ## Why
    CUDA's `cuda_runtime.h` adds `template <class T> f(T **ptr, ...)` overloads; HIP's
    `hipHostGetDevicePointer`, `hipGetSymbolAddress`, `hipIpcOpenMemHandle` (and, in 6.x,
    `hipHostAlloc` and `hipMallocPitch`) take `void**` only, so `&typed_pointer` does not
    compile ("no matching function"). `hipport convert` casts the argument.

    ## Example

    ```cuda
    float *d; cudaHostGetDevicePointer(&d, host, 0);
    ```
    becomes
    ```cuda
    float *d; hipHostGetDevicePointer(reinterpret_cast<void**>(&d), host, 0);
    ```

    ## Fix
    `hipport convert` adds the `reinterpret_cast<void**>`; by hand, cast the argument or
    pass a `void*` variable and convert after the call.
    """

    code = "HP121"
    slug = "void-pointer-argument"
    severity = Severity.MEDIUM
    effort = Effort.NONE


_VOID_CAST = re.compile(r"^\(\s*void\s*\*\s*\*\s*\)|^reinterpret_cast\s*<\s*void\s*\*\s*\*\s*>")


@REGISTRY.visits("call_expression", names=any_word_of(data().void_pointer), codes=(VoidPointerArgument,))
def _void_pointer_call(node: Node, ctx: Context) -> None:
    found = callee(ctx, node, data().void_pointer)
    if found is not None:
        _check_void_pointer(ctx, node, found.name, call_arguments(node), *data().void_pointer[found.name])


def _check_void_pointer(ctx: Context, call: Node, name: str, args: list[Node], index: int,
                        majors: tuple[int, ...]) -> None:
    if ctx.rocm[0] not in majors or len(args) <= index:
        return
    arg = args[index]
    arg_text = ctx.text(arg)
    if _VOID_CAST.match(arg_text) or _points_to_void(ctx, call, arg):
        return
    edits = [Edit(arg.start_byte, arg.start_byte, b"reinterpret_cast<void**>("),
             Edit(arg.end_byte, arg.end_byte, b")")]
    hip = name.replace("cuda", "hip", 1)
    ctx.report(VoidPointerArgument, arg,
               f"`{arg_text}` passed to {hip}, which takes void** in the HIP "
               f"{ctx.rocm[0]}.x headers (CUDA's T** overload is not there)",
               f"reinterpret_cast<void**>({arg_text})", fix=edits)


def _points_to_void(ctx: Context, call: Node, arg: Node) -> bool:
    """``&p`` where ``p`` is declared ``void*`` in the function: already void**."""
    if arg.type != "pointer_expression" or not ctx.text(arg).startswith("&"):
        return False
    inner = arg.child_by_field_name("argument")
    return inner is not None and inner.type == "identifier" and \
        declared_type(ctx, call, ctx.text(inner), pointer=True) == "void*"
