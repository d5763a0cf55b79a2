"""HP124: a byte offset added to a CUdeviceptr, an integer in CUDA and `void*` in HIP."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from hipport.context import Context
from hipport.edits import Edit
from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.registry import any_bytes_of
from hipport.rules import REGISTRY
from hipport.rules.released_headers.common import declared_type, raw_data


@REGISTRY.rule
class DevicePointerArithmetic:
    """A byte offset added to a `CUdeviceptr`, which is a `void*` in HIP

    ## Why
    CUDA's `CUdeviceptr` is an integer (`unsigned long long`), so driver-API code adds
    byte offsets to it: `cuMemMap(d_ptr + i * chunk, …)`. HIP's `hipDeviceptr_t` is
    `void*` (6.2 and 7.1 headers), and C++ has no arithmetic on `void*`: "arithmetic on a
    pointer to void".

    ## Example

    ```cuda
    CUdeviceptr d_ptr;
    cuMemMap(d_ptr + (i * mapSize), mapSize, 0, handle, 0);
    ```
    becomes
    ```cuda
    hipDeviceptr_t d_ptr;
    hipMemMap(static_cast<char*>(d_ptr) + (i * mapSize), mapSize, 0, handle, 0);
    ```

    ## Fix
    `hipport convert` adds the offset to a `char*` view of the pointer (a byte offset, as
    the integer sum was) in C++ files. A compound `+=`/`-=`, a difference of two device
    pointers, or integer use (masks, comparisons with numbers) is reported: cast by hand.
    So is an integer assigned to a device pointer or stored through a `CUdeviceptr*`
    (`*(CUdeviceptr*)&args[off] = width;`, the 64-bit slots of a kernel argument buffer):
    "incompatible integer to pointer conversion" on HIP; store it through a pointer to its
    own type instead.
    """

    code = "HP124"
    slug = "device-pointer-arithmetic"
    severity = Severity.HIGH
    effort = Effort.NONE


_TYPES = raw_data()["device_pointer"]["types"]
_DECLARED = re.compile(rb"\b(?:%s)\b\s*(\*?)\s*(?:const\s+)?([A-Za-z_]\w*)" % b"|".join(t.encode() for t in _TYPES))


@dataclass
class _Names:
    """Per file: each name declared CUdeviceptr (b"") or CUdeviceptr* (b"*") — both, in
    different functions — found once."""

    found: dict[bytes, set[bytes]] | None = None
    seen: set[int] = field(default_factory=set)


def _declared(ctx: Context) -> dict[bytes, set[bytes]]:
    state = ctx.state(_Names)
    if state.found is None:
        state.found = {}
        for m in _DECLARED.finditer(ctx.src):
            state.found.setdefault(m[2], set()).add(m[1])
    return state.found


@REGISTRY.visits("binary_expression", "assignment_expression", source=any_bytes_of(b"CUdeviceptr"),
                 codes=(DevicePointerArithmetic,))
def _arithmetic(node: Node, ctx: Context) -> None:
    op = node.child_by_field_name("operator")
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if op is None or left is None or right is None:
        return
    if ctx.text(op) == "=":
        _stored(node, left, right, ctx)
        return
    if ctx.text(op) not in ("+", "-", "+=", "-="):
        return
    names = _declared(ctx)
    if not _is_device_pointer(ctx, left, names) or left.start_byte in ctx.state(_Names).seen:
        return
    ctx.state(_Names).seen.add(left.start_byte)
    shown = ctx.text(left)
    if ctx.text(op) in ("+", "-") and not _is_device_pointer(ctx, right, names) and Path(ctx.path).suffix.lower() != ".c":
        ctx.report(DevicePointerArithmetic, node, f"`{shown} {ctx.text(op)} …`: CUdeviceptr is an integer "
                   "in CUDA, hipDeviceptr_t a void* in HIP", "a byte offset on a char pointer",
                   fix=[Edit(left.start_byte, left.end_byte, f"static_cast<char*>({shown})".encode())])
    else:
        ctx.report(DevicePointerArithmetic, node, f"`{' '.join(ctx.text(node).split())}`: CUdeviceptr is "
                   "an integer in CUDA, hipDeviceptr_t a void* in HIP",
                   "cast through char* (offsets) or uintptr_t (integer use) by hand")


def _stored(node: Node, left: Node, right: Node, ctx: Context) -> None:
    """``d = n`` or ``*(CUdeviceptr*)p = n`` with ``n`` an integer: a literal other than 0,
    ``sizeof``, or a name the function declares with a type that is no pointer and no
    device pointer (any other right side may well be a CUdeviceptr: not judged)."""
    if node.type != "assignment_expression" or node.start_byte in ctx.state(_Names).seen:
        return
    names = _declared(ctx)
    if not (_is_device_pointer(ctx, left, names) or _through_cast(ctx, left)):
        return
    value = right
    while value.type == "parenthesized_expression" and value.named_child_count == 1:
        value = value.named_children[0]
    if value.type == "number_literal":
        integer = ctx.text(value).rstrip("uUlL") not in ("0", "0x0")
    elif value.type == "sizeof_expression":
        integer = True
    elif value.type == "identifier":
        declared = declared_type(ctx, node, ctx.text(value), pointer=True)
        integer = declared is not None and "*" not in declared and declared not in _TYPES
    else:
        integer = False
    if integer:
        ctx.state(_Names).seen.add(node.start_byte)
        ctx.report(DevicePointerArithmetic, node, f"`{' '.join(ctx.text(node).split())}`: an integer "
                   "stored as a CUdeviceptr (an integer in CUDA, hipDeviceptr_t a void* in HIP)",
                   "store it through a pointer to its own type (or cast through uintptr_t)")


def _through_cast(ctx: Context, node: Node) -> bool:
    """``*(CUdeviceptr*)p`` or ``*(reinterpret_cast<CUdeviceptr*>(p))``."""
    if node.type != "pointer_expression" or not ctx.text(node).startswith("*"):
        return False
    arg = node.child_by_field_name("argument")
    while arg is not None and arg.type == "parenthesized_expression" and arg.named_child_count == 1:
        arg = arg.named_children[0]
    if arg is None:
        return False
    if arg.type == "cast_expression":
        target = arg.child_by_field_name("type")
    elif arg.type == "call_expression" and (fn := arg.child_by_field_name("function")) is not None \
            and fn.type == "template_function" and ctx.text(fn.child_by_field_name("name")) == "reinterpret_cast":
        args = fn.child_by_field_name("arguments")
        target = args.named_children[0] if args is not None and args.named_child_count == 1 else None
    else:
        return False
    if target is None:
        return False
    spelled = "".join(ctx.text(target).split())
    return any(spelled == f"{t}*" for t in _TYPES)


def _is_device_pointer(ctx: Context, node: Node, names: dict[bytes, set[bytes]]) -> bool:
    """``d`` declared CUdeviceptr, or ``*p`` with ``p`` declared CUdeviceptr*."""
    if node.type == "identifier":
        return b"" in names.get(ctx.src[node.start_byte:node.end_byte], ())
    if node.type == "pointer_expression" and ctx.text(node).startswith("*"):
        arg = node.child_by_field_name("argument")
        return arg is not None and arg.type == "identifier" and \
            b"*" in names.get(ctx.src[arg.start_byte:arg.end_byte], ())
    return False
