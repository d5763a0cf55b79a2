"""Typed dispatch tables: which visitors look at which tree-sitter node types.

pyupgrade's shape: a rewriter or rule registers a function for node types; one walk of
the tree calls every registered function for each node. ``hipport.rewrite``,
``hipport.facts`` and ``hipport.rules`` each own a Registry; the engine walks once with all.

A visitor is a value (``Visitor``): its function, node types, pre-filters and the rules it
can report. The engine reads only these values, never a rule by name: a visitor whose
rules are all ignored, or outside the target's ROCm range, is left out of the run, as ruff
skips disabled rules at dispatch.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hipport.rule import Rule, rule_from_class

if TYPE_CHECKING:
    from hipport.context import Context
    from hipport.options import Options
    from hipport.parse import Node

VisitFn = Callable[["Node", "Context"], None]
FileVisitFn = Callable[["Context"], None]
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


@dataclass(frozen=True, eq=False)
class Visitor:
    """One registered ``fn(node, ctx)`` and what the engine may know about it.

    ``codes`` are the rules it can report; empty for a rewriter or a fact gatherer, which
    is never left out for a rule's sake. A rule visitor must declare every rule it reports
    (a test checks this over the fixtures): the engine leaves it out when none is enabled.
    """

    fn: VisitFn
    node_types: tuple[str, ...]
    names: NameFilter | None = None
    when: OptionsFilter | None = None
    source: SourceFilter | None = None
    codes: tuple[Rule, ...] = ()

    def wanted(self, options: "Options") -> bool:
        """False when a run with ``options`` surely gets nothing from this visitor."""
        if self.when is not None and not self.when(options):
            return False
        return not self.codes or any(r.enabled(options) for r in self.codes)


@dataclass(frozen=True, eq=False)
class FileVisitor:
    """``fn(ctx)`` run once per file after the walk, and the rules it can report."""

    fn: FileVisitFn
    codes: tuple[Rule, ...] = ()

    def wanted(self, options: "Options") -> bool:
        return not self.codes or any(r.enabled(options) for r in self.codes)


@dataclass(frozen=True, eq=False)
class ClangVisitor:
    """A visitor of the deep engine (``hipport.deep``): ``fn(cursor, unit)`` for the libclang
    cursors of ``kinds`` (``CursorKind`` names), or, with no kinds, ``fn(unit, tu)`` once per
    translation unit after the walk. ``codes`` as for ``Visitor``."""

    fn: Callable[..., None]
    kinds: tuple[str, ...]
    codes: tuple[Rule, ...] = ()

    def wanted(self, options: "Options") -> bool:
        return not self.codes or any(r.enabled(options) for r in self.codes)


_WORD = re.compile(r"[A-Za-z0-9_]+")


def any_word_of(words: Iterable[str]) -> NameFilter:
    """A name filter true when the text contains one of ``words`` as a whole word.

    For calls: a visitor that only acts when the called name (``f`` of ``f(x)``,
    ``ns::f``, ``f<T>``, ``obj.f``; any part of it) is one of ``words``.
    """
    wanted = frozenset(words)
    return lambda text: not wanted.isdisjoint(words_of(text))


def words_of(text: str) -> list[str]:
    """The ``[A-Za-z0-9_]+`` words of ``text``: most callee texts are one ASCII name, answered
    without the regex (filters split each distinct text once each, and a file has
    thousands; the regex was most of what a released-header or API call filter cost)."""
    if text.isascii() and text.isidentifier():
        return [text]
    return _WORD.findall(text)


def any_bytes_of(*needles: bytes) -> SourceFilter:
    """A source filter true when the file contains one of ``needles``."""
    return lambda src: any(n in src for n in needles)


_PREFILTERS = [os.environ.get("HIPPORT_NO_PREFILTERS", "") in ("", "0")]


def prefilters_on() -> bool:
    """False when every pre-filter is off (``prefilters(False)``, or the environment
    variable ``HIPPORT_NO_PREFILTERS=1`` for worker processes): name, source and rule
    filters, the engine's skipped macro bodies, ``Context.may_contain``, recording only
    what rules declared. Output must not change; the differential test checks it."""
    return _PREFILTERS[0]


@contextmanager
def prefilters(on: bool) -> Iterator[None]:
    """Run the block with every pre-filter on or off (the differential test's hook)."""
    before, _PREFILTERS[0] = _PREFILTERS[0], on
    try:
        yield
    finally:
        _PREFILTERS[0] = before


class Registry:
    def __init__(self) -> None:
        self.visitors: dict[str, list[Visitor]] = {}
        self.file_visitors: list[FileVisitor] = []
        self.clang_visitors: list[ClangVisitor] = []
        self.rules: dict[str, Rule] = {}

    def visits(self, *node_types: str, names: NameFilter | None = None,
               when: OptionsFilter | None = None, source: SourceFilter | None = None,
               codes: Iterable[Rule] = ()) -> Callable[[VisitFn], VisitFn]:
        """Register ``fn(node, ctx)`` for each named node type; ``fn`` is returned as is.

        ``names`` lets the walk skip the call for leaves (identifiers) whose text the
        visitor cannot care about: the walk decides once per distinct text, so the millions
        of ordinary names in a tree cost a dictionary lookup instead of a call per visitor.
        The filter must depend on the text alone and must be true whenever the visitor
        might act; the visitor still makes its own full decision. For ``call_expression``
        the filter is given the callee's text (see ``NameFilter``).

        ``when`` leaves the visitor out of a run whose options make it a no-op (e.g. a
        rewrite that only applies with ``--launch-syntax hip``); ``source`` leaves it out of
        a file whose bytes make it a no-op (see ``any_bytes_of``); ``codes`` (the rules it
        reports) leaves it out of a run where all of them are ignored or out of range.
        """

        def deco(fn: VisitFn) -> VisitFn:
            v = Visitor(fn, node_types, names, when, source, tuple(codes))
            for t in node_types:
                self.visitors.setdefault(t, []).append(v)
            return fn

        return deco

    def visits_file(self, fn: FileVisitFn | None = None, *, codes: Iterable[Rule] = ()):
        """Register ``fn(ctx)`` to run once per file after the walk (whole-file analyses);
        ``@visits_file`` bare, or ``@visits_file(codes=...)`` for one that reports."""
        if fn is None:
            return lambda f: self.visits_file(f, codes=codes)
        self.file_visitors.append(FileVisitor(fn, tuple(codes)))
        return fn

    def visits_clang(self, *kinds: str, codes: Iterable[Rule] = ()) -> Callable[[Callable], Callable]:
        """Register a deep-engine visitor (``ClangVisitor``); ``fn`` is returned as is. The
        default engine never calls it, and the deep engine leaves it out of a run where
        every rule in ``codes`` is disabled."""

        def deco(fn: Callable) -> Callable:
            self.clang_visitors.append(ClangVisitor(fn, kinds, tuple(codes)))
            return fn

        return deco

    def rule(self, cls: type) -> Rule:
        """Class decorator: turn a documented rule class into a registered Rule."""
        r = rule_from_class(cls)
        if r.code in self.rules:
            raise ValueError(f"duplicate rule code {r.code}")
        self.rules[r.code] = r
        return r
