"""What the released-header rules share: their data file, the callee of a call, the
type a name is declared with in the function around a node, and keeping a definition for
CUDA only."""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from hipport.context import Context
from hipport.datafiles import toml_data
from hipport.edits import Edit
from hipport.facts import enclosing_function
from hipport.parse import Node, find_all


class Data(NamedTuple):
    image: frozenset[str]
    surface: dict[str, int]
    void_pointer: dict[str, tuple[int, tuple[int, ...]]]
    device: dict[str, dict[str, str]]
    mask_functions: frozenset[str]
    narrow_types: frozenset[str]
    headers_elsewhere: frozenset[str]
    pasted_prefixes: tuple[str, ...]
    float_overload: dict[str, dict]  # CUDA math function -> HIP's float name ("float"), device_only


@lru_cache(maxsize=1)
def raw_data() -> dict:
    """``mappings/released_headers.toml`` as parsed, once a process: these rules and
    ``host``'s read the same file."""
    return toml_data("released_headers.toml")


@lru_cache(maxsize=1)
def data() -> Data:
    raw = raw_data()
    return Data(
        frozenset(raw["image"]["functions"]), dict(raw["surface"]),
        {k: (v["arg"], tuple(v["majors"])) for k, v in raw["void_pointer"].items()},
        dict(raw["device"]), frozenset(raw["mask"]["functions"]),
        frozenset(raw["mask"]["narrow_types"]),
        frozenset(raw["no_counterpart"]["left_to_other_rules"]), tuple(raw["token_paste"]["prefixes"]),
        dict(raw["float_overload"]))


class Callee(NamedTuple):
    node: Node  # the called name's identifier
    name: str
    templated: bool  # called with template arguments (``f<T>(...)``)


def callee(ctx: Context, call: Node, names: "Container[str]") -> Callee | None:
    """The callee of a call to a plain name (``f(...)``, ``f<T>(...)``) that is one of
    ``names``, else None: how each of these rules' call visitors starts."""
    fn = call.child_by_field_name("function")
    if fn is None:
        return None
    templated = fn.type == "template_function"
    name_node = fn.child_by_field_name("name") if templated else fn
    if name_node is None or name_node.type != "identifier":
        return None
    name = ctx.text(name_node)
    return Callee(name_node, name, templated) if name in names else None


#: The node types asked for are rewrite/arguments.py's (field declarations left out here): a
#: tree-sitter query costs ~10 ms of CPU to compile, once per process and set of types.
_DECLARATIONS = ("declaration", "parameter_declaration", "field_declaration")


@dataclass
class _Declarations:
    """Per file: for each function asked about, its declarations and parameters by the
    names they declare, in document order, each with the byte range of the scope it
    declares into, found once (a query in C) for every ``declared_type`` of the function:
    a walk of the whole function from Python for each operand asked about was quadratic
    (HP125 asks for both sides of every binary expression in a file naming a texture
    object)."""

    by_function: dict[tuple[int, int], dict[str, list[tuple[Node, int, int]]]] = field(
        default_factory=dict)


#: Nodes that open a scope in C++: a declaration is visible only inside its nearest one.
_SCOPES = frozenset({"compound_statement", "for_statement", "for_range_loop", "if_statement",
                     "while_statement", "switch_statement", "catch_clause", "function_definition",
                     "lambda_expression", "function_declarator", "abstract_function_declarator"})
_DECLARATOR_WRAPPERS = frozenset({"pointer_declarator", "reference_declarator"})


def _scope(decl: Node) -> tuple[int, int]:
    """The byte range ``decl``'s names are visible in: its nearest enclosing scope. A
    parameter of a function definition's (or lambda's) declarator is visible in the whole
    definition; one of any other function declarator (a prototype or a function pointer
    declared in the body) only inside that declarator, i.e. nowhere a rule asks about."""
    node = decl.parent
    while node is not None and node.type not in _SCOPES:
        node = node.parent
    if node is None:
        return decl.start_byte, decl.end_byte
    if node.type in ("function_declarator", "abstract_function_declarator"):
        outer = node.parent
        while outer is not None and outer.type in _DECLARATOR_WRAPPERS:
            outer = outer.parent
        if outer is not None and outer.type in ("function_definition", "lambda_expression"):
            node = outer
    return node.start_byte, node.end_byte


def declared_type(ctx: Context, at: Node, name: str, pointer: bool = False) -> str | None:
    """The type ``name`` is declared with in the function holding ``at`` (a parameter or a
    declaration before it), normalised (``unsigned  int`` → ``unsigned int``); with
    ``pointer``, a ``*`` declarator adds ``*``. None when not declared there.

    Only a declaration whose scope holds ``at`` counts, and of those the innermost (the
    first in the file within one scope): a block's ``int p`` beside the function's
    ``int *p`` is an integer inside the block and out of sight after it. The rules that
    rewrite on this answer (HP340's ``p > 0`` -> ``p != 0``, HP126's member rename) would
    otherwise change code on another variable's type."""
    func = enclosing_function(ctx, at)
    if func is None:
        return None
    by_function = ctx.state(_Declarations).by_function
    by_name = by_function.get((func.start_byte, func.end_byte))
    if by_name is None:
        by_name = by_function[(func.start_byte, func.end_byte)] = {}
        for decl in find_all(func, _DECLARATIONS):
            if decl.type == "field_declaration":
                continue
            names = dict.fromkeys(n for n, _ in _declarators(ctx, decl))
            if names:
                start, end = _scope(decl)
                for declared in names:
                    by_name.setdefault(declared, []).append((decl, start, end))
    here = at.start_byte
    chosen: Node | None = None
    chosen_scope = -1
    for decl, start, end in by_name.get(name, ()):
        if decl.start_byte >= here:
            break
        if start <= here < end and start > chosen_scope:
            chosen, chosen_scope = decl, start
    return None if chosen is None else _type_of(ctx, chosen, name, pointer)


def _declarators(ctx: Context, decl: Node) -> list[tuple[str, str]]:
    """(name, ``*`` per pointer level) of each declarator of ``decl`` that names an identifier."""
    out = []
    for declarator in decl.children_by_field_name("declarator"):
        node, stars = declarator, ""
        while node is not None and node.type in ("init_declarator", "pointer_declarator",
                                                 "reference_declarator"):
            if node.type == "pointer_declarator":
                stars += "*"
            node = node.child_by_field_name("declarator") or (
                node.named_children[0] if node.named_children else None)
        if node is not None and node.type == "identifier":
            out.append((ctx.text(node), stars))
    return out


def _type_of(ctx: Context, decl: Node, name: str, pointer: bool) -> str | None:
    type_node = decl.child_by_field_name("type")
    if type_node is None:
        return None
    for declared, stars in _declarators(ctx, decl):
        if declared == name:
            if stars and not pointer:
                return None
            quals = [ctx.text(c) for c in decl.named_children
                     if c.type in ("type_qualifier", "sized_type_specifier") and c != type_node]
            base = " ".join([*(q for q in quals if q != "const"), ctx.text(type_node)])
            return " ".join(base.split()) + (stars if pointer else "")
    return None


def cuda_only(ctx: Context, node: Node) -> list[Edit]:
    """Edits that put a definition (with its ``template <…>``) under
    ``#ifndef __HIP_PLATFORM_AMD__``; none when it does not stand on lines of its own."""
    if node.parent is not None and node.parent.type == "template_declaration":
        node = node.parent
    src = ctx.src
    start = src.rfind(b"\n", 0, node.start_byte) + 1
    end = src.find(b"\n", node.end_byte)
    end = len(src) if end < 0 else end
    rest = src[node.end_byte:end].strip()
    if src[start:node.start_byte].strip() or (rest and not rest.startswith(b"//")):
        return []
    newline = b"\r\n" if b"\r\n" in src else b"\n"
    return [Edit(start, start, b"#ifndef __HIP_PLATFORM_AMD__" + newline),
            Edit(node.end_byte, node.end_byte, newline + b"#endif")]
