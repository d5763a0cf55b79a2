"""An xor shuffle's offset that has the same value in a CUDA and a HIP build.

On CUDA, ``__shfl_xor_sync(m, v, off)`` reads lane ``lane ^ off`` of the caller's 32-lane
warp; an ``off`` of 32 or more names a lane past the warp, and the caller gets its own
value back: no exchange. CUDA code that means the exchange it writes therefore uses
offsets under 32, and where the offset's value cannot change with the platform, it is
under 32 in the HIP build too: ``lane ^ off`` keeps bit 5, so each 32-lane half of a
64-lane wave exchanges within itself, as a 32-lane warp does (``logical._below_32``).

vLLM's fused_qknorm_rope_kernel.cu pairs the two halves of a head's rotary dimension::

    constexpr int numElemsPerThread = head_dim / 32;        // head_dim: a template parameter
    ...
    int pairOffset = (rotary_dim / 2) / numElemsPerThread;  // rotary_dim: a parameter
    elements2[i] = __shfl_xor_sync(FINAL_MASK, elements[i], pairOffset);

(its host code checks ``rotary_dim <= head_dim``, so the offset is at most 16 — on CUDA it
had to be under 32 to pair anything). What may change with the platform is refused: a
``__device__`` helper's parameter (its caller may pass ``warpSize / 2``), a
name of the wave or warp size (``warpSize``, ``WARP_SIZE``, ``kWarpSize``…), the thread
and block indices and sizes, calls, members, a variable assigned more than once or
declared by a loop (a ladder: ``_below_32`` judges those), a name not declared in the
function or its parameter lists.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hipport.parse import Node, ancestors, enclosing_function, function_declarator, function_qualifiers, walk
from hipport.rules.warp.syntax import strip, writes_of
from hipport.rules.warp.vocab import is_warp_size_name

if TYPE_CHECKING:
    from hipport.context import Context

#: How many local definitions are followed from the offset (``a = b / 2; b = n / c; …``).
MAX_DEPTH = 4
#: Operators whose result is the same on both platforms when their operands are.
_OPERATORS = frozenset({"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"})
#: The thread hierarchy: its values differ from lane to lane, or with the launch.
_BUILTIN = frozenset({"warpSize", "threadIdx", "blockIdx", "blockDim", "gridDim"})


def platform_fixed(ctx: Context, offset: Node, call: Node) -> bool:
    """``offset`` (of the shuffle ``call``) has the same value in a CUDA and a HIP build:
    integer literals, and names of the enclosing function's parameters, its template
    parameters, or locals declared once from such values and never assigned again, joined
    by arithmetic. See the module's docstring for why that keeps it under 32."""
    func = enclosing_function(call)
    return func is not None and _fixed(ctx, offset, func, 0)


def _fixed(ctx: Context, node: Node, func: Node, depth: int) -> bool:
    node = strip(node)
    if node.type == "number_literal":
        return True
    if node.type == "binary_expression":
        op = ctx.text(node.child_by_field_name("operator"))
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        return op in _OPERATORS and left is not None and right is not None \
            and _fixed(ctx, left, func, depth) and _fixed(ctx, right, func, depth)
    if node.type != "identifier":
        return False  # a call, a member, a cast, sizeof…: not followed
    name = ctx.text(node)
    if name in _BUILTIN or is_warp_size_name(name):
        return False
    if _a_parameter(ctx, func, name):
        return True
    value = _single_definition(ctx, func, name)
    return value is not None and depth < MAX_DEPTH and _fixed(ctx, value, func, depth + 1)


def _a_parameter(ctx: Context, func: Node, name: str) -> bool:
    """``name`` is declared by ``func``'s template parameter list, or by its parameter list
    when ``func`` is a ``__global__`` kernel: the host passes its arguments. A ``__device__``
    helper's argument may be its caller's ``warpSize / 2``."""
    lists = []
    declarator = function_declarator(func)
    if declarator is not None and (params := declarator.child_by_field_name("parameters")) is not None \
            and "__global__" in function_qualifiers(ctx.src, func):
        lists.append(params)
    for a in ancestors(func):
        if a.type == "template_declaration" and (params := a.child_by_field_name("parameters")) is not None:
            lists.append(params)
            break
    for params in lists:
        for p in params.named_children:
            found = p.child_by_field_name("declarator")
            while found is not None and found.type not in ("identifier", "type_identifier"):
                found = found.child_by_field_name("declarator")
            if found is not None and ctx.text(found) == name:
                return True
    return False


def _single_definition(ctx: Context, func: Node, name: str) -> Node | None:
    """The initial value of the one local ``name`` of ``func``, when it is declared once,
    not by a ``for`` (a loop variable), and never assigned, incremented or decremented."""
    body = func.child_by_field_name("body")
    if body is None:
        return None
    found = None
    for n in walk(body):
        if n.type != "init_declarator" or ctx.text(n.child_by_field_name("declarator")) != name:
            continue
        decl = n.parent
        if found is not None or decl is None or decl.parent is None or decl.parent.type == "for_statement":
            return None
        found = n
    value = found.child_by_field_name("value") if found is not None else None
    if value is None:
        return None
    at = [m.start() for m in writes_of(name).finditer(ctx.src, body.start_byte, body.end_byte)]
    return value if at == [found.child_by_field_name("declarator").start_byte] else None
