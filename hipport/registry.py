"""Dispatch tables: which functions look at which tree-sitter node types.

pyupgrade's shape: a rewriter or rule registers a function for node types; one walk of
the tree calls every registered function for each node. ``hipport.rewrite`` and
``hipport.rules`` each own a Registry; the pipeline walks once with both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from hipport.rule import Rule, rule_from_class

if TYPE_CHECKING:
    from hipport.context import Context
    from hipport.parse import Node

Visitor = Callable[["Node", "Context"], None]
FileVisitor = Callable[["Context"], None]
#: ``names(text) -> bool``: False when the visitor surely does nothing for a node with
#: this text, whatever the file and options (a pre-filter, never the rule itself).
NameFilter = Callable[[str], bool]


class Registry:
    def __init__(self) -> None:
        self.visitors: dict[str, list[Visitor]] = {}
        self.file_visitors: list[FileVisitor] = []
        self.rules: dict[str, Rule] = {}

    def visits(self, *node_types: str, names: NameFilter | None = None) -> Callable[[Visitor], Visitor]:
        """Register ``fn(node, ctx)`` for each named node type.

        ``names`` lets the walk skip the call for leaves (identifiers) whose text the
        visitor cannot care about: the walk decides once per distinct text, so the millions
        of ordinary names in a tree cost a dictionary lookup instead of a call per visitor.
        The filter must depend on the text alone and must be true whenever the visitor
        might act; the visitor still makes its own full decision.
        """

        def deco(fn: Visitor) -> Visitor:
            if names is not None:
                fn.visits_names = names  # type: ignore[attr-defined]
            for t in node_types:
                self.visitors.setdefault(t, []).append(fn)
            return fn

        return deco

    def visits_file(self, fn: FileVisitor) -> FileVisitor:
        """Register ``fn(ctx)`` to run once per file after the walk (whole-file analyses)."""
        self.file_visitors.append(fn)
        return fn

    def rule(self, cls: type) -> Rule:
        """Class decorator: turn a documented rule class into a registered Rule."""
        r = rule_from_class(cls)
        if r.code in self.rules:
            raise ValueError(f"duplicate rule code {r.code}")
        self.rules[r.code] = r
        return r
