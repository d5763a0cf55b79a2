"""Name resolution against the mapping view: what a CUDA name token means for the target.

Shared by the rewriters (``rewrite.identifiers`` spells the new name) and the rules
(``rules.api.status`` reports what the tables say), so both read one decision and sit side by
side above this module (../shared/DESIGN.md). A name is either rewritten or reported,
never silently left.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from hipport import gpus, usermaps
from hipport.parse import Node
from hipport.preprocessor.apart import Decision, Tests, Verdict

if TYPE_CHECKING:
    from hipport.context import Context
    from hipport.mapping import Resolution

#: Leaf node types that name things. ``field_identifier`` (``s.member``) is left alone:
#: struct members keep their names across CUDA and HIP.
NAME_NODES = ("identifier", "type_identifier", "namespace_identifier")


@lru_cache(maxsize=1)
def _overloaded_names(table: object) -> frozenset[str]:
    """CUDA names whose meaning depends on their call's argument count (``overloads.toml``)."""
    return frozenset(name for name, _ in table.overloads)  # type: ignore[attr-defined]


def in_tables(name: str) -> bool:
    """Whether the mapping tables know ``name`` at all (API, macro, namespace or overload),
    whatever the target, or a project mapping names it (``hipport.usermaps.NAMES``): the
    name pre-filter of the visitors that ask the mapping view."""
    return name in _known_names() or name in usermaps.NAMES


@lru_cache(maxsize=1)
def _known_names() -> frozenset[str]:
    from hipport.mapping import load_table

    table = load_table()
    return frozenset(table.entries) | frozenset(table.macros) | frozenset(table.namespaces) \
        | _overloaded_names(table)


def resolution_for(ctx: "Context", node: Node, name: str) -> "Resolution | None":
    """The mapping decision for one name token, seen in its call when that matters.

    A call whose CUDA signature changed (``overloads.toml``) resolves as the CUDA function
    it means, e.g. a 3-argument ``cudaGraphInstantiate`` as ``cudaGraphInstantiateWithFlags``.
    """
    if name not in _overloaded_names(ctx.view.table):
        return ctx.view.resolve(name)  # no call of this name means another function
    call = node.parent
    if call is not None and call.type == "call_expression" and call.child_by_field_name("function") == node:
        args = call.child_by_field_name("arguments")
        if args is not None:
            count = sum(1 for c in args.named_children if c.type != "comment")
            found = ctx.view.overload(name, count)
            if found is not None:
                return found[1]
    return ctx.view.resolve(name)


def target_for(ctx: "Context", node: Node, name: str) -> str | None:
    """The new spelling of one name token, or None to leave it."""
    if node.type == "namespace_identifier":
        ns = ctx.view.namespace(name)
        if ns and ns != name:
            return ns
    macro = ctx.view.macro(name)
    if macro is not None:
        return macro.target if macro.action == "rewrite" and macro.target != name else None
    res = resolution_for(ctx, node, name)
    if res is not None and res.apply and res.target and res.target != name:
        if is_fnuz(res.target) and "ocp" in gpus.fp8_formats(gpus.archs_of(ctx.options)):
            return None  # an OCP target (gfx950, gfx12): FNUZ would change the values; HP310
        return res.target
    return None


def is_fnuz(hip_name: str) -> bool:
    """Whether a HIP spelling names gfx942's FNUZ fp8 encoding (``__hip_fp8_e4m3_fnuz``)."""
    return hip_name.lower().endswith("_fnuz")


class PerName:
    """``compute(ctx, node, name)`` for a name token, remembered per target (mapping view
    and GPUs), token bytes and node kind, except for names whose meaning depends on their
    call (``overloads.toml``): the same few hundred API names recur in every file, and
    ``rename`` and ``api_status`` ask about each of them.

    Keyed by the token's bytes, so a name is decoded only the first time; the memo of the
    target last asked about is kept at hand, since a run asks for one target file after
    file (building and hashing a (view, GPUs, name, kind) key per token was most of what
    a token cost)."""

    def __init__(self, compute: Callable) -> None:
        self.compute = compute
        self._by_target: dict[tuple, dict] = {}
        self._view: object = None
        self._options: object = None
        self._memo: dict = {}

    def __call__(self, ctx: "Context", node: Node):
        options, view = ctx.options, ctx.view
        if options is not self._options or view is not self._view:
            self._memo = self._by_target.setdefault((view, gpus.archs_of(options)), {})
            self._options, self._view = options, view
        token = ctx.src[node.start_byte:node.end_byte]
        key = (token, node.kind_id)
        found = self._memo.get(key, _UNSEEN)
        if found is _UNSEEN:
            name = token.decode("utf-8", "replace")
            if name in _overloaded_names(view.table):
                self._memo[key] = _PER_CALL
                return self.compute(ctx, node, name)
            found = self._memo[key] = self.compute(ctx, node, name)
        elif found is _PER_CALL:
            return self.compute(ctx, node, token.decode("utf-8", "replace"))
        return found


_UNSEEN = object()
_PER_CALL = object()  # the name's meaning depends on its call: computed every time


@dataclass
class _Defined:
    """Per file: which macro names it ``#define``s or ``#undef``s itself, asked by name."""

    names: dict[bytes, bool] = field(default_factory=dict)


def defined_in_file(ctx: "Context", name: str) -> bool:
    """Whether this file ``#define``s or ``#undef``s macro ``name`` itself. Such a macro is
    the file's own: its ``#define`` keeps the name (a directive's name is never renamed), so
    its tests must keep it too. A stand-in header guarded ``#ifndef CURAND_H_`` /
    ``#define CURAND_H_`` became ``#ifndef HIPRAND_H_`` / ``#define CURAND_H_``: after
    hiprand.h its whole body was skipped."""
    seen = ctx.state(_Defined).names
    key = name.encode()
    found = seen.get(key)
    if found is None:
        found = seen[key] = key in ctx.src and re.search(
            rb"^[ \t]*#[ \t]*(?:define|undef)[ \t]+%s\b" % re.escape(key), ctx.src, re.M) is not None
    return found


#: A ``#define``/``#undef`` directive's name; the line start is checked per hit (a pattern
#: that starts with the literal ``#`` lets sre skip to each ``#`` instead of trying every byte).
_DIRECTIVE_NAME = re.compile(rb"#[ \t]*(?:define|undef)[ \t]+([A-Za-z_][A-Za-z0-9_]*)")


def defined_names(data: bytes, names: frozenset[bytes]) -> set[bytes]:
    """Which of ``names`` the source ``data`` ``#define``s or ``#undef``s (a directive at the
    start of a line, after blanks): the tree-wide pass of ``pipeline.tree_macros``."""
    found: set[bytes] = set()
    for m in _DIRECTIVE_NAME.finditer(data):
        name = m.group(1)
        if name in names and not data[data.rfind(b"\n", 0, m.start()) + 1:m.start()].strip(b" \t"):
            found.add(name)
    return found


@lru_cache(maxsize=1)
def bundled_names() -> dict[str, frozenset[bytes]]:
    """The directory a copy of a library sits in → the names of its family, for the libraries
    a tree can carry a copy of (``families.toml``: ``bundled``)."""
    from hipport.mapping import load_table

    return {d: frozenset(n.encode() for n in names) for d, names in load_table().bundled().items()}


@dataclass
class _Apart:
    """Per file: the decisions on its tests of macros whose rewrite it can keep, by macro."""

    tests: dict[str, Tests] = field(default_factory=dict)


def compiler_test(ctx: "Context", name: str, offset: int) -> Decision | None:
    """Whether the rewrite of macro ``name`` at ``offset`` is applied (``preprocessor.apart``):
    None where the macro has no ``kept_if_tested`` or the file tests none of those names (the
    rewrite holds), else the decision with its reason."""
    macro = ctx.view.macro(name)
    if macro is None or not macro.kept_if_tested or not any(h.encode() in ctx.src for h in macro.kept_if_tested):
        return None
    per_file = ctx.state(_Apart).tests
    tests = per_file.get(name)
    if tests is None:
        tests = per_file[name] = Tests(ctx.src, name, macro.kept_if_tested, macro.twins, macro.needed)
    return tests.at(offset)


def kept_at(ctx: "Context", name: str, offset: int) -> bool:
    """Whether the rewrite of ``name`` at ``offset`` is not applied: kept, sure or not."""
    found = compiler_test(ctx, name, offset)
    return found is not None and found.verdict is not Verdict.REWRITE
