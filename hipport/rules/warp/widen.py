"""Widen a 32-bit lane mask where that is surely all the code means by it.

HIP's ``*_sync`` builtins ``static_assert`` a 64-bit mask, so a mask macro defined as
``0xffffffff`` or an ``unsigned`` variable holding a ballot stops the compile. Widening is
sure only when every use of the name is a mask: then the 64-bit spelling is what each use
needs and no other expression changes meaning. Any other use (``__popc(mask)``,
``mask == 0xffffffff``, a comment, another macro's body) leaves the name as written, and
the findings (HP201, HP202, HP217) say what to do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hipport.edits import Edit
from hipport.facts import normalised
from hipport.parse import Node, ancestors, call_name, enclosing_function, text
from hipport.rules.warp.syntax import is_full_mask32, macro_is_full_mask32, strip
from hipport.rules.warp.vocab import BALLOTS, FULL_MASK_64, MASK32_TYPES, MASKED

if TYPE_CHECKING:
    from hipport.context import Context

#: Sources other files do not include as a rule: a macro they define is seen by them alone.
_OWN_SCOPE_SUFFIXES = frozenset({".cu", ".hip", ".cpp", ".cc", ".cxx", ".c"})
WIDE_TYPE = b"unsigned long long"


def _is_mask_argument(src: bytes, node: Node) -> bool:
    """``node`` is the first argument of a call of a MASKED builtin."""
    args = node.parent
    if args is None or args.type != "argument_list" or not args.named_children:
        return False
    if args.named_children[0] != node:
        return False
    call = args.parent
    return call is not None and call.type == "call_expression" and call_name(src, call) in MASKED


def _ballot_call(src: bytes, node: Node | None) -> bool:
    node = strip(node) if node is not None else None
    return node is not None and node.type == "call_expression" and call_name(src, node) in BALLOTS


def _occurrences(src: bytes, name: str, start: int, end: int) -> list[int]:
    return [m.start() for m in re.finditer(rb"(?<![\w$])" + re.escape(name.encode()) + rb"(?![\w$])",
                                           src[start:end])]


@dataclass
class _Widened:
    """Per file: the edits worked out for each mask macro, and for each (function start,
    variable): the mask rules and the released-header rule ask about the same names."""

    macros: dict[str, list[Edit]] = field(default_factory=dict)
    variables: dict[tuple[int, str], list[Edit]] = field(default_factory=dict)


def macro_edits(ctx: Context, name: str) -> list[Edit]:
    """The edit that redefines mask macro ``name`` as the 64-bit full mask, when this file
    is not a header, defines it once as a 32-bit full mask, and uses it only as the mask of
    ``*_sync`` builtins (or tests whether it is defined); else none."""
    if ctx.in_macro_body or Path(ctx.path).suffix.lower() not in _OWN_SCOPE_SUFFIXES:
        return []
    cache = ctx.state(_Widened).macros
    if name not in cache:
        cache[name] = _macro_edits(ctx, name)
    return cache[name]


def _macro_edits(ctx: Context, name: str) -> list[Edit]:
    from hipport import facts

    definitions = facts.file_facts(ctx).macros.get(name, [])
    if len(definitions) != 1:
        return []
    _, define = definitions[0]
    value = define.child_by_field_name("value")
    if value is None or ctx.in_cuda_only_branch(define.start_byte):
        return []
    src, root = ctx.src, ctx.tree.root_node
    for at in _occurrences(src, name, 0, len(src)):
        node = root.descendant_for_byte_range(at, at + len(name))
        if node is None or node.type != "identifier":
            return []
        parent = node.parent
        if parent == define or (parent is not None and parent.type in ("preproc_ifdef", "preproc_defined")):
            continue
        if not _is_mask_argument(src, node):
            return []
    raw = text(src, value)
    lead = len(raw) - len(raw.lstrip())
    body = facts.macro_body(src, define)  # comments blanked
    # Only a body written on one line before any comment is replaced.
    if not body or "\\" in body or not raw[lead:].startswith(body) or not macro_is_full_mask32(body):
        return []
    start = value.start_byte + len(raw[:lead].encode())
    return [Edit(start, start + len(body.encode()), FULL_MASK_64)]


def variable_edits(ctx: Context, at: Node, name: str) -> list[Edit]:
    """The edit that declares local mask variable ``name`` (the declaration seen from
    ``at``, inside its function) ``unsigned long long``, when it is alone in its
    declaration, with a 32-bit type, and every use in its scope (not those of a same-named
    variable of an inner block) is the mask of a ``*_sync`` builtin or a new ballot
    assigned to it; else none. A ballot value is kept, a 32-bit full mask becomes the
    64-bit one, any other value is converted to ``unsigned`` first: the lanes CUDA's
    ``unsigned`` mask parameter named, and only those."""
    if ctx.in_macro_body:
        return []
    func = enclosing_function(at)
    if func is None:
        return []
    found = _visible_declaration(ctx.src, func, name, at.start_byte)
    if found is None:
        return []
    cache = ctx.state(_Widened).variables
    key = (found[0].start_byte, name)
    if key not in cache:
        cache[key] = _variable_edits(ctx, func, name, found)
    return cache[key]


#: Where a local's scope ends: the innermost of these around its declaration.
_SCOPES = ("compound_statement", "for_statement", "for_range_loop")


def _visible_declaration(src: bytes, func: Node, name: str, at: int) -> tuple[Node, int, list[tuple[int, int]]] | None:
    """The local declaration of ``name`` in scope at byte ``at``, the end of its scope and
    the scopes of the same-named locals declared inside it (their uses are not its)."""
    scopes: list[tuple[Node, int]] = []
    for pos in _occurrences(src, name, func.start_byte, func.end_byte):
        pos += func.start_byte
        node = func.descendant_for_byte_range(pos, pos + len(name))
        parent = node.parent if node is not None else None
        if parent is None or parent.type != "init_declarator" or parent.child_by_field_name("declarator") != node:
            continue
        declaration = parent.parent
        if declaration is None or declaration.type != "declaration":
            continue
        scope = next((a for a in ancestors(declaration) if a.type in _SCOPES), None)
        if scope is not None:
            scopes.append((declaration, scope.end_byte))
    inside = [(d, end) for d, end in scopes if d.start_byte <= at < end]
    if not inside:
        return None
    declaration, end = max(inside, key=lambda d: d[0].start_byte)
    inner = [(d.start_byte, e) for d, e in scopes if declaration.start_byte < d.start_byte < end]
    return declaration, end, inner


def _variable_edits(ctx: Context, func: Node, name: str,
                    found: tuple[Node, int, list[tuple[int, int]]]) -> list[Edit]:
    src = ctx.src
    declaration, end, inner = found
    body = func.child_by_field_name("body")
    if body is None:
        return []
    for at in _occurrences(src, name, declaration.start_byte, end):
        at += declaration.start_byte
        if any(s <= at < e for s, e in inner):
            continue  # an inner block's own variable of the same name
        node = func.descendant_for_byte_range(at, at + len(name))
        if node is None or node.type != "identifier":
            return []
        parent = node.parent
        if parent is not None and parent.parent == declaration and parent.type == "init_declarator" \
                and parent.child_by_field_name("declarator") == node:
            continue
        if parent is not None and parent.type == "assignment_expression" \
                and parent.child_by_field_name("left") == node \
                and text(src, parent.child_by_field_name("operator")) == "=" \
                and _ballot_call(src, parent.child_by_field_name("right")):
            continue
        if not _is_mask_argument(src, node):
            return []
    if declaration.start_byte < body.start_byte:
        return []
    declarators = declaration.children_by_field_name("declarator")
    type_node = declaration.child_by_field_name("type")
    if len(declarators) != 1 or type_node is None or normalised(text(src, type_node)) not in MASK32_TYPES:
        return []
    if any(c.type in ("storage_class_specifier", "sized_type_specifier") and c != type_node
           for c in declaration.named_children):
        return []  # static locals; `unsigned` split from its `int` by a qualifier
    value = declarators[0].child_by_field_name("value")
    edits = [Edit(type_node.start_byte, type_node.end_byte, WIDE_TYPE)]
    if _ballot_call(src, value):
        return edits
    if value is None:
        return []
    if is_full_mask32(src, value):
        return edits + [Edit(value.start_byte, value.end_byte, FULL_MASK_64)]
    return edits + [Edit(value.start_byte, value.start_byte, b"(unsigned)("),
                    Edit(value.end_byte, value.end_byte, b")")]
