"""A mask whose type is a template parameter, instantiated with a 32-bit type in the file.

``template <typename Mask> int vote(Mask m, int p) { return __ballot_sync(m, p); }`` is
fine for ``vote(~0ull, p)`` and a compile error for ``vote<unsigned>(...)``: HIP's
``*_sync`` functions ``static_assert`` a 64-bit mask, and the compiler reports it at the
call inside the template. The text of the file says which instantiations it writes out
(``vote<unsigned>``, ``Warp<uint32_t> w``), so HP217 can name the one that fails.
Deduced instantiations (``vote(0xffffffffu, p)``) are the deep engine's (``--engine clang``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hipport.parse import Node, ancestors, enclosing_function, function_declarator, text

if TYPE_CHECKING:
    from hipport.context import Context

_CLASSES = ("class_specifier", "struct_specifier")


def narrow_instantiation(ctx: Context, call: Node, var: str, declared: str | None,
                         narrow: frozenset[str]) -> tuple[str, str, int] | None:
    """(the template parameter ``var`` has as its type, the instantiation ``Name<T>`` the
    file writes with a ``narrow`` type in that place, its line), or None."""
    func = enclosing_function(call)
    if func is None:
        return None
    holder: Node = func
    if declared is None:  # not a parameter or local: a member of the enclosing class?
        cls = next((a for a in ancestors(func) if a.type in _CLASSES), None)
        declared = _field_type(ctx, cls, var) if cls is not None else None
        if cls is None or declared is None:
            return None
        holder = cls
    template = holder.parent
    if template is None or template.type != "template_declaration":
        return None
    params = template.child_by_field_name("parameters")
    names = [text(ctx.src, n) for p in (params.named_children if params else ())
             if p.type == "type_parameter_declaration" for n in p.named_children if n.type == "type_identifier"]
    if declared not in names:
        return None
    index = names.index(declared)
    name_node = holder.child_by_field_name("name") if holder is not func else _function_name(func)
    if name_node is None:
        return None
    name = text(ctx.src, name_node)
    for m in re.finditer(rb"(?<![\w.:>])" + re.escape(name.encode()) + rb"\s*<([^<>;{}()]*)>", ctx.src):
        args = [" ".join(a.split()) for a in m[1].decode("utf-8", "replace").split(",")]
        if len(args) > index and args[index] in narrow:
            return declared, f"{name}<{m[1].decode('utf-8', 'replace').strip()}>", ctx.position(m.start())[0]
    return None


def _function_name(func: Node) -> Node | None:
    node = function_declarator(func)
    return node.child_by_field_name("declarator") if node is not None else None


def _field_type(ctx: Context, cls: Node, var: str) -> str | None:
    body = cls.child_by_field_name("body")
    for member in body.named_children if body is not None else ():
        if member.type != "field_declaration":
            continue
        type_node = member.child_by_field_name("type")
        for declarator in member.children_by_field_name("declarator"):
            if declarator.type == "field_identifier" and text(ctx.src, declarator) == var and type_node is not None:
                return " ".join(text(ctx.src, type_node).split())
    return None
