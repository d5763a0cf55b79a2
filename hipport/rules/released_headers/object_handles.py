"""HP125: bit or arithmetic operators on a texture or surface object, an integer in CUDA
and a pointer in HIP."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.registry import any_bytes_of
from hipport.rules import REGISTRY
from hipport.rules.released_headers.common import declared_type, raw_data


@REGISTRY.rule
class ObjectHandleArithmetic:
    """Bit or arithmetic operators on a texture or surface object, a pointer in HIP

    ## Why
    CUDA's `cudaTextureObject_t` and `cudaSurfaceObject_t` (`CUtexObject`, `CUsurfObject`)
    are `unsigned long long`, so code packs them into other integers: two 32-bit halves in
    a `uint2`, a table of handles in a texture. HIP's `hipTextureObject_t` and
    `hipSurfaceObject_t` are pointers to opaque structs (6.2 and 7.1 headers), and `&`,
    `|`, `<<`, `>>` on a pointer do not compile: "invalid operands to binary expression".

    ## Example

    ```cuda
    uint2 encode(cudaTextureObject_t obj) {
      return make_uint2((uint)(obj & 0xFFFFFFFF), (uint)(obj >> 32));
    }
    ```
    becomes
    ```cuda
    uint2 encode(hipTextureObject_t obj) {
      unsigned long long bits = reinterpret_cast<unsigned long long>(obj);
      return make_uint2((uint)(bits & 0xFFFFFFFF), (uint)(bits >> 32));
    }
    ```

    ## Fix
    Convert the handle to `unsigned long long` (`reinterpret_cast`) before the operators and
    back with `reinterpret_cast<hipTextureObject_t>(bits)`: the value is 64 bits on both.
    """

    code = "HP125"
    slug = "object-handle-arithmetic"
    severity = Severity.HIGH
    effort = Effort.SMALL


_TYPES = frozenset(raw_data()["object_handles"]["types"])
#: What a pointer operand does not take (``+``/``-`` with an integer would compile as
#: pointer arithmetic on an incomplete type: also an error, also reported).
_OPERATORS = frozenset({"&", "|", "^", "<<", ">>", "+", "-", "*", "/", "%"})


#: After a handle type, up to the end of its declarators (or of the parameter list): the
#: words there include every name declared with that type (a superset: values, other
#: parameters); ``declared_type`` decides, for those only.
_DECLARED = re.compile(rb"\b(?:%s)\b([^;(){}]*)" % b"|".join(t.encode() for t in sorted(_TYPES)))
_WORD = re.compile(rb"[A-Za-z_]\w*")


@dataclass
class _State:
    """Per file: the end of the last expression reported (the walk meets an outer
    expression before the ones inside it, which are the same hazard), and the names some
    declaration spells with a handle type, found once: only those are looked up."""

    end: int = -1
    names: frozenset[str] | None = None


@REGISTRY.visits("binary_expression", source=any_bytes_of(*(t.encode() for t in sorted(_TYPES))),
                 codes=(ObjectHandleArithmetic,))
def _operator(node: Node, ctx: Context) -> None:
    op = node.child_by_field_name("operator")
    reported = ctx.state(_State)
    if op is None or ctx.text(op) not in _OPERATORS or node.start_byte < reported.end:
        return
    for side in (node.child_by_field_name("left"), node.child_by_field_name("right")):
        handle = _handle_type(ctx, side) if side is not None else None
        if handle is not None:
            ctx.report(ObjectHandleArithmetic, node,
                       f"`{' '.join(ctx.text(node).split())}`: `{handle}` is an integer in CUDA and a "
                       "pointer in HIP, which has no such operator",
                       "reinterpret_cast the handle to unsigned long long first (and the result back)")
            reported.end = node.end_byte
            return


def _handle_type(ctx: Context, node: Node) -> str | None:
    """The handle type of an operand: a cast to one, or a name the function declares so."""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    if node.type == "cast_expression":
        target = node.child_by_field_name("type")
        spelled = ctx.text(target) if target is not None else ""
        return spelled if spelled in _TYPES else None
    if node.type == "identifier":
        state = ctx.state(_State)
        if state.names is None:
            state.names = frozenset(w.decode("latin-1") for m in _DECLARED.finditer(ctx.src)
                                    for w in _WORD.findall(m[1]))
        if ctx.text(node) not in state.names:
            return None
        declared = declared_type(ctx, node, ctx.text(node))
        return declared if declared in _TYPES else None
    return None
