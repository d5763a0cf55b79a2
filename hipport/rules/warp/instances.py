"""The values a function template's parameter takes at the instantiations its file spells.

DeepSpeed's transformer/softmax_kernels.cu (built for ROCm) tiles each block with
``cg::tiled_partition<tbSize>``, ``tbSize`` a template parameter, and launches the kernel
only as ``attn_softmax<2, …>`` … ``attn_softmax<32, …>``: every tile has at most 32 lanes,
so its shuffles stay inside 32-lane groups on a wave of 64 too (``logical._logical_groups``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hipport.parse import Node, ancestors, function_declarator, walk
from hipport.rules.warp.syntax import small_constant

if TYPE_CHECKING:
    from hipport.context import Context


def template_values(ctx: Context, func: Node, name: str) -> list[int] | None:
    """The constant values template parameter ``name`` of ``func`` takes at each
    ``f<…>`` the file spells outside ``func`` itself; None when ``name`` is no template
    parameter of ``func``, the file spells no instantiation, one gives that parameter
    something other than an integer constant (a name, a default left out, a pack), or a
    ``#define`` body spells ``f<``: the macro's uses give the values (``#define LAUNCH(n)
    f<n><<<…>>>`` then ``LAUNCH(64)``), which the tree of the file does not show."""
    template = next((a for a in ancestors(func) if a.type == "template_declaration"), None)
    params = template.child_by_field_name("parameters") if template is not None else None
    declarator = function_declarator(func)
    target = declarator.child_by_field_name("declarator") if declarator is not None else None
    if params is None or target is None or target.type != "identifier":
        return None
    at = next((i for i, p in enumerate(params.named_children)
               if (d := p.child_by_field_name("declarator")) is not None and ctx.text(d) == name), None)
    if at is None:
        return None
    fname, values = ctx.text(target), []
    in_macro = re.compile(rb"\b" + re.escape(fname.encode()) + rb"\s*<")
    for n in walk(ctx.tree.root_node):
        if n.type == "preproc_arg" and in_macro.search(ctx.src, n.start_byte, n.end_byte):
            return None
        if n.type != "template_function" or n.start_byte >= func.start_byte and n.end_byte <= func.end_byte:
            continue
        called, args = n.child_by_field_name("name"), n.child_by_field_name("arguments")
        if called is None or args is None or ctx.text(called) != fname:
            continue
        given = args.named_children
        value = small_constant(ctx.src, given[at]) if at < len(given) else None
        if value is None:
            return None
        values.append(value)
    return values or None
