"""One visitor for declarations and parameters, shared by the hazards that record or
check them (shared arrays, constants, managed variables, texture references, half
values, pointer attributes, group variables).

Nearly every declaration is ordinary, so the visitor first asks whether the text spells
one of the hints the recorders declared (``ctx.may_contain``); each recorder then makes its
own full decision. Recorders run in registration order; a hazard that reads what another
records for the same declaration registers after it in the same module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from hipport.parse import Node, text
from hipport.rule import Rule
from hipport.rules import REGISTRY
from hipport.rules.device.common import func_key

if TYPE_CHECKING:
    from hipport.context import Context


@dataclass
class Declaration:
    """A ``declaration`` or ``parameter_declaration`` node, its parts worked out once for
    every recorder that reads them."""

    node: Node
    ctx: "Context"

    @cached_property
    def qualifiers(self) -> set[str]:
        src = self.ctx.src
        return {text(src, c) for c in self.node.named_children
                if c.type in ("type_qualifier", "storage_class_specifier")}

    @cached_property
    def type_node(self) -> Node | None:
        return self.node.child_by_field_name("type")

    @cached_property
    def type_text(self) -> str:
        return " ".join(text(self.ctx.src, self.type_node).split()) if self.type_node is not None else ""

    @cached_property
    def last_type_part(self) -> str:
        """``grid_group`` of ``cg::grid_group``."""
        return self.type_text.rsplit("::", 1)[-1]

    @cached_property
    def function_key(self) -> int:
        return func_key(self.ctx, self.node)


Recorder = Callable[[Declaration], None]


@dataclass(frozen=True)
class _Entry:
    fn: Recorder
    hints: tuple[bytes, ...]
    parameters: bool
    codes: tuple[Rule, ...]
    #: ``always(ctx)``: True when the recorder may act on a declaration without its hints
    #: (a variable initialised from a group variable seen before).
    always: Callable[["Context"], bool] | None


_RECORDERS: list[_Entry] = []


def recorder(*hints: bytes, codes: Iterable[Rule], parameters: bool = True,
             always: Callable[["Context"], bool] | None = None) -> Callable[[Recorder], Recorder]:
    """Register ``fn(declaration)`` for the declarations whose text spells one of ``hints``
    (and for parameters too, unless ``parameters`` is False). ``codes`` are the rules it
    reports, and those that read what it records: it runs while any of them is enabled."""

    def deco(fn: Recorder) -> Recorder:
        _RECORDERS.append(_Entry(fn, hints, parameters, tuple(codes), always))
        return fn

    return deco


def _hints(entries: list[_Entry]) -> re.Pattern[bytes]:
    return re.compile(b"|".join(re.escape(h) for e in entries for h in e.hints))


def register() -> None:
    """Register the declaration and parameter visitors over every recorder (called once,
    after the hazard modules are imported)."""
    fns = tuple(e.fn for e in _RECORDERS)
    codes = tuple(dict.fromkeys(r for e in _RECORDERS for r in e.codes))
    always = tuple(e.always for e in _RECORDERS if e.always is not None)
    declaration_hints = _hints(_RECORDERS)
    parameter_hints = _hints([e for e in _RECORDERS if e.parameters])

    def visit(hints: re.Pattern[bytes]) -> Callable[[Node, "Context"], None]:
        def _declaration(node: Node, ctx: "Context") -> None:
            if not ctx.may_contain(hints, within=node):
                for may_act in always:
                    if may_act(ctx):
                        break
                else:
                    return  # the common case, kept cheap: nearly every declaration is ordinary
            decl = Declaration(node, ctx)
            for fn in fns:
                fn(decl)

        return _declaration

    REGISTRY.visits("declaration", codes=codes)(visit(declaration_hints))
    REGISTRY.visits("parameter_declaration", codes=codes)(visit(parameter_hints))


def declared_names(decl: Node) -> list[Node]:
    """Identifier nodes declared by a declaration or parameter (through pointers, arrays, inits)."""
    return [n for n, _ in declared_names_and_indirection(decl)]


def declared_names_and_indirection(decl: Node) -> list[tuple[Node, bool]]:
    """``declared_names`` with, for each, whether a pointer or array declarator is on the way."""
    out = []
    for d in decl.children_by_field_name("declarator"):
        indirect = False
        while d is not None and d.type != "identifier":
            indirect |= d.type in ("pointer_declarator", "array_declarator", "abstract_pointer_declarator")
            d = d.child_by_field_name("declarator")
        if d is not None:
            out.append((d, indirect))
    return out
