"""Dispatch tables: which functions look at which tree-sitter node types.

pyupgrade's shape: a rewriter or rule registers a function for node types; one walk of
the tree calls every registered function for each node. ``hipport.rewrite`` and
``hipport.rules`` each own a Registry; the pipeline walks once with both.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from hipport.rule import Rule, rule_from_class

if TYPE_CHECKING:
    from hipport.context import Context
    from hipport.options import Options
    from hipport.parse import Node

Visitor = Callable[["Node", "Context"], None]
FileVisitor = Callable[["Context"], None]
#: ``names(text) -> bool``: False when the visitor surely does nothing for a node with
#: this text, whatever the file and options (a pre-filter, never the rule itself). For a
#: ``call_expression`` the text is its callee's (the ``function`` child: ``f``, ``ns::f``,
#: ``f<T>``, ``obj.f``).
NameFilter = Callable[[str], bool]
#: ``when(options) -> bool``: False when the visitor surely does nothing in a run with these
#: options; such a visitor is left out of that run's dispatch table.
OptionsFilter = Callable[["Options"], bool]
#: ``source(src) -> bool``: False when the visitor surely does nothing in a file with these
#: bytes (it needs a name the file never spells); such a visitor is left out for the file.
SourceFilter = Callable[[bytes], bool]


_WORD = re.compile(r"[A-Za-z0-9_]+")


def any_word_of(words: Iterable[str]) -> NameFilter:
    """A name filter true when the text contains one of ``words`` as a whole word.

    For calls: a visitor that only acts when the called name (``f`` of ``f(x)``,
    ``ns::f``, ``f<T>``, ``obj.f``; any part of it) is one of ``words``.
    """
    wanted = frozenset(words)
    return lambda text: not wanted.isdisjoint(_WORD.findall(text))


def any_bytes_of(*needles: bytes) -> SourceFilter:
    """A source filter true when the file contains one of ``needles``."""
    return lambda src: any(n in src for n in needles)


class Registry:
    def __init__(self) -> None:
        self.visitors: dict[str, list[Visitor]] = {}
        self.file_visitors: list[FileVisitor] = []
        self.rules: dict[str, Rule] = {}

    def visits(self, *node_types: str, names: NameFilter | None = None,
               when: OptionsFilter | None = None,
               source: SourceFilter | None = None) -> Callable[[Visitor], Visitor]:
        """Register ``fn(node, ctx)`` for each named node type.

        ``names`` lets the walk skip the call for leaves (identifiers) whose text the
        visitor cannot care about: the walk decides once per distinct text, so the millions
        of ordinary names in a tree cost a dictionary lookup instead of a call per visitor.
        The filter must depend on the text alone and must be true whenever the visitor
        might act; the visitor still makes its own full decision. For ``call_expression``
        the filter is given the callee's text (see ``NameFilter``).

        ``when`` leaves the visitor out of a run whose options make it a no-op (e.g. a
        rewrite that only applies with ``--launch-syntax hip``); ``source`` leaves it out of
        a file whose bytes make it a no-op (see ``any_bytes_of``).
        """

        def deco(fn: Visitor) -> Visitor:
            if names is not None:
                fn.visits_names = names  # type: ignore[attr-defined]
            if when is not None:
                fn.visits_when = when  # type: ignore[attr-defined]
            if source is not None:
                fn.visits_source = source  # type: ignore[attr-defined]
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
