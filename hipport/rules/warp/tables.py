"""HP204's table case: ``tid / 32`` and ``tid % 32`` as the row and column of an array 32 wide.

auto-gptq 0.7.1's ``VecQuant3MatMulKernelFaster_old`` (autogptq_cuda_kernel_64.cu, built for
ROCm) fills a lookup table with the whole block::

    __shared__ half2 deq2[64][32];
    int val = threadIdx.x / 32;
    int off = threadIdx.x % 32;
    for (; val < 64; val += BLOCKWIDTH / 32)
        deq2[val][off] = ...;

The 32 is the table's row length, not a warp: no thread exchanges a value with another of
its "warp", so a wave of 64 fills and reads the table as a warp of 32 does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hipport import facts
from hipport.parse import Node, ancestors, declarators, find_all, function_declarator, text, walk
from hipport.rules.warp.syntax import initialised_local, int_value, strip

if TYPE_CHECKING:
    from hipport.context import Context

#: Warp-level work: with any of it in the function, a ``% 32`` may be a lane that work uses.
#: ``__shared__`` is not: the table is one (lanes.py's ``_WARP_LEVEL`` counts it).
_WARP_WORK = re.compile(rb"__shfl|__ballot|__any|__all|__activemask|__syncwarp|__match|__reduce_"
                        rb"|tiled_partition|coalesced_threads|warpSize|WARP_SIZE|\basm\b")
_NAME = re.compile(rb"[A-Za-z_]\w*")
_QUOTED_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"', re.M)
#: C++'s named casts, which tree-sitter reads as calls of a template function.
_CASTS = frozenset({"static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "bit_cast"})


def table_coordinate(ctx: Context, node: Node) -> bool:
    """Whether ``node`` (``x % N`` or ``x / N``, N a literal) initialises a table coordinate:
    in a function with no warp-level work, the remainder's local is used only as the index of
    a dimension the function declares N long (``deq2[…][off]`` of ``deq2[64][32]``), and the
    quotient's local is the index just before such a remainder of the same ``x`` and N
    (``deq2[val][off]``). A remainder used any other way (compared, shifted, passed on) or a
    quotient that never indexes with one stays a finding."""
    local = initialised_local(node)
    func = facts.enclosing_function(ctx, node)
    body = func.child_by_field_name("body") if func is not None else None
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    width = int_value(ctx.src, right) if right is not None else None
    if local is None or body is None or left is None or width is None:
        return False
    extents = ctx.state(_Tables).extents.get(body.start_byte)
    if extents is None:
        extents = ctx.state(_Tables).extents[body.start_byte] = _extents(ctx, body)
    if not any(width[0] in dims for dims in extents.values()) or _does_warp_work(ctx, func):
        return False  # no dimension that long (neither a column nor a row before one), or a lane
    if text(ctx.src, node.child_by_field_name("operator")) == "%":
        return _only_column(ctx, body, local, width[0], extents)
    columns = {text(ctx.src, d.child_by_field_name("declarator")) for d in declarators(body)
               if d.type == "init_declarator"
               and (raw := d.child_by_field_name("value")) is not None and (value := strip(raw)).type == "binary_expression"
               and text(ctx.src, value.child_by_field_name("operator")) == "%"
               and _same(ctx, value.child_by_field_name("left"), left)
               and (n := int_value(ctx.src, value.child_by_field_name("right"))) is not None and n[0] == width[0]
               and (target := initialised_local(value)) is not None
               and _only_column(ctx, body, target, width[0], extents)}
    return any(_index_of(ctx, outer) in columns for outer in _rows_indexed_by(ctx, body, local))


@dataclass
class _Definitions:
    """Per file: name -> the byte ranges of the functions and ``#define``s it defines."""

    ranges: dict[bytes, list[tuple[int, int]]] | None = None
    quoted: bool = False  # the file has an #include "…": a project header may define helpers


def _does_warp_work(ctx: Context, func: Node) -> bool:
    """Whether ``func``, or a function or macro of the file it names (transitively), does
    warp-level work: a helper ``warp_scan(v)`` that shuffles, or ``#define BCAST(v)
    __shfl_sync(…, v, 0)``, makes ``tile[tid / 32][tid % 32] = warp_scan(v)`` a warp's
    row of lanes, as the same shuffle written in the kernel does. In a file with an
    ``#include "…"``, a function called that the file does not define and that is no CUDA
    API of the tables (``warp_reduce`` from the included reduce.cuh) may do such work:
    hipport cannot tell, so it counts as doing it (a file including only ``<…>`` headers
    calls the system's and libraries', ``memset`` or ``torch``'s)."""
    state = ctx.state(_Definitions)
    if state.ranges is None:
        state.ranges = _definitions(ctx)
        state.quoted = _QUOTED_INCLUDE.search(ctx.src) is not None
    todo = [(func.start_byte, func.end_byte)]
    seen = set(todo)
    while todo:
        start, end = todo.pop()
        if _WARP_WORK.search(ctx.src, start, end):
            return True
        for name in set(_NAME.findall(ctx.src, start, end)):
            for where in state.ranges.get(name, ()):
                if where not in seen:
                    seen.add(where)
                    todo.append(where)
    return state.quoted and any(_unknown_callee(ctx, call, state.ranges) for start, end in seen
                                for node in [ctx.tree.root_node.descendant_for_byte_range(start, end)]
                                if node is not None for call in walk(node) if call.type == "call_expression")


def _unknown_callee(ctx: Context, call: Node, defined: dict[bytes, list[tuple[int, int]]]) -> bool:
    """``call`` names a function (``f(…)``, ``ns::f(…)``, ``f<4>(…)``) the file does not
    define, no template parameter of the enclosing template, not the standard library's and
    no CUDA API the tables know."""
    scope = callee = call.child_by_field_name("function")
    while callee is not None and callee.type in ("qualified_identifier", "template_function"):
        callee = callee.child_by_field_name("name")
    if callee is None or callee.type != "identifier":
        return False  # a method, a pointer, a cast to a built-in type
    if scope is not None and scope.type == "qualified_identifier" and ctx.text(scope).lstrip(":").startswith("std::"):
        return False  # the standard library's
    name = ctx.text(callee)
    return name not in _CASTS and name.encode() not in defined and ctx.view.table.lookup(name) is None \
        and name not in _template_parameters(ctx, call)


def _template_parameters(ctx: Context, node: Node) -> set[str]:
    """Names of the type parameters of the templates around ``node`` (``scalar_t(x)`` is a cast)."""
    out = set()
    for outer in ancestors(node):
        params = outer.child_by_field_name("parameters") if outer.type == "template_declaration" else None
        for param in params.named_children if params is not None else ():
            out.update(ctx.text(i) for i in find_all(param, ("type_identifier",)))
    return out


def _definitions(ctx: Context) -> dict[bytes, list[tuple[int, int]]]:
    out: dict[bytes, list[tuple[int, int]]] = {}
    for node in find_all(ctx.tree.root_node, ("function_definition", "preproc_def", "preproc_function_def")):
        name = node.child_by_field_name("name")
        if node.type == "function_definition":
            declarator = function_declarator(node)
            name = declarator.child_by_field_name("declarator") if declarator is not None else None
            while name is not None and name.type in ("qualified_identifier", "template_function"):
                name = name.child_by_field_name("name")
        if name is not None:
            out.setdefault(ctx.src[name.start_byte:name.end_byte], []).append((node.start_byte, node.end_byte))
    return out


@dataclass
class _Tables:
    """Per file: a function body's start -> its arrays' extents (``_extents``), read once
    for all the ``/`` and ``%`` of the body that HP204 asks about."""

    extents: dict[int, dict[str, list[int | None]]] = field(default_factory=dict)


def _same(ctx: Context, a: Node | None, b: Node) -> bool:
    return a is not None and ctx.text(a).replace(" ", "") == ctx.text(b).replace(" ", "")


def _extents(ctx: Context, body: Node) -> dict[str, list[int | None]]:
    """Array name -> its declared extents, outermost first (None: not a literal)."""
    out: dict[str, list[int | None]] = {}
    for decl in declarators(body):
        if decl.type == "init_declarator":
            decl = decl.child_by_field_name("declarator")  # int t[2][32] = {…}
        if decl is None or decl.type != "array_declarator":
            continue
        sizes: list[int | None] = []
        while decl is not None and decl.type == "array_declarator":
            size = decl.child_by_field_name("size")
            value = int_value(ctx.src, size) if size is not None else None
            sizes.append(value[0] if value else None)
            decl = decl.child_by_field_name("declarator")
        if decl is not None and decl.type == "identifier":
            out[ctx.text(decl)] = sizes[::-1]
    return out


def _dimension(ctx: Context, subscript: Node) -> tuple[str, int] | None:
    """(array name, dimension) a ``subscript_expression`` indexes: ``t[a][b]``'s outer is (t, 1)."""
    depth, arg = 0, subscript.child_by_field_name("argument")
    while arg is not None and arg.type == "subscript_expression":
        depth, arg = depth + 1, arg.child_by_field_name("argument")
    return (ctx.text(arg), depth) if arg is not None and arg.type == "identifier" else None


def _uses(ctx: Context, body: Node, local: Node) -> list[Node]:
    name = ctx.text(local)
    return [i for i in find_all(body, ("identifier",)) if i.start_byte != local.start_byte and ctx.text(i) == name]


def _subscript_of(use: Node) -> Node | None:
    """The ``subscript_expression`` whose only index is ``use``, or None."""
    indices = use.parent
    if indices is None or indices.type != "subscript_argument_list" or len(indices.named_children) != 1:
        return None
    return indices.parent if indices.parent is not None and indices.parent.type == "subscript_expression" else None


def _only_column(ctx: Context, body: Node, local: Node, width: int,
                 extents: dict[str, list[int | None]]) -> bool:
    """Every use of ``local`` indexes a dimension declared ``width`` long; there is one."""
    uses = _uses(ctx, body, local)
    for use in uses:
        subscript = _subscript_of(use)
        where = _dimension(ctx, subscript) if subscript is not None else None
        dims = extents.get(where[0]) if where is not None else None
        if dims is None or where[1] >= len(dims) or dims[where[1]] != width:
            return False
    return bool(uses)


def _rows_indexed_by(ctx: Context, body: Node, local: Node) -> list[Node]:
    """For each ``t[local]``, the subscript right outside it (``t[local][…]``)."""
    out = []
    for use in _uses(ctx, body, local):
        subscript = _subscript_of(use)
        outer = subscript.parent if subscript is not None else None
        if outer is not None and outer.type == "subscript_expression" \
                and outer.child_by_field_name("argument") == subscript:
            out.append(outer)
    return out


def _index_of(ctx: Context, subscript: Node) -> str | None:
    indices = subscript.child_by_field_name("indices")
    named = indices.named_children if indices is not None else []
    return ctx.text(named[0]) if len(named) == 1 else None
