"""The HP4xx matching: which include, namespace or identifier names a catalogued library,
and which API uses the catalogue lists as risky.

Reporting policy: one finding per library per file, at the first ``#include``, namespace
or identifier that names it (document order), so that a file using CuTe on every line
gets one CUTLASS finding; plus a finding at each risky API use listed under ``[[api]]``,
some of them once per file as the catalogue says. A match inside the CUDA-only branch of
a HIP guard does not count as the library's first use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from hipport import facts
from hipport.library_catalogue import ApiUse, Catalogue, Library, read_catalogue
from hipport.parse import Node, ancestors, find_all, qualified_parts, text
from hipport.rules import REGISTRY
from hipport.rules.libraries.counterparts import Cudnn, CubThrust, Nccl, Nvtx, Nvtx3Cpp
from hipport.rules.libraries.nvidia_only import CudnnFrontend, Cutlass, FlashAttention, LibCudacxx, TensorRT
from hipport.rules.libraries.releases import HipblasV2, HipcubRemoved, HipsolverLwork, HipsparseSpSM
from hipport.versions import short_version

if TYPE_CHECKING:
    from hipport.context import Context


@lru_cache(maxsize=1)
def catalogue() -> Catalogue:
    """The packaged catalogue, read once per process."""
    return read_catalogue(REGISTRY.rules)


@dataclass
class _Noted:
    """Per file: the libraries (and once-per-file API uses) already reported, and the
    names (type aliases and variables) whose declared type mentions a receiver type."""

    keys: set[str] = field(default_factory=set)
    typed: dict[str, set[str]] = field(default_factory=dict)


def _note_library(ctx: "Context", lib: Library, where: Node, what: str) -> None:
    """Report ``lib`` once per file (guarded CUDA-only sites do not use up the once)."""
    noted = ctx.state(_Noted).keys
    if lib.key in noted or ctx.in_cuda_only_branch(where.start_byte):
        return
    noted.add(lib.key)
    rocm = short_version(ctx.rocm)
    ctx.report(lib.rule, where, (lib.message.format(what=what, rocm=rocm) + lib.notes_for(ctx.rocm).format(rocm=rocm)),
               lib.suggestion)


#: The catalogue decides which of these a visitor reports; all are declared, so a visitor
#: is left out only when the whole family is.
_LIBRARY_RULES = (Cutlass, TensorRT, LibCudacxx, Cudnn, CudnnFrontend, Nvtx, Nvtx3Cpp, FlashAttention,
                  CubThrust, HipcubRemoved, Nccl, HipblasV2, HipsolverLwork, HipsparseSpSM)


@REGISTRY.visits("preproc_include", codes=_LIBRARY_RULES)
def _include(node: Node, ctx: "Context") -> None:
    path = node.child_by_field_name("path")
    if path is None:
        return
    raw = text(ctx.src, path)
    for lib in _libraries_for_include(raw.strip('<>"')):
        _note_library(ctx, lib, node, f"#include {raw}")


@lru_cache(maxsize=4096)
def _libraries_for_include(header: str) -> tuple[Library, ...]:
    """The catalogue's libraries an include path belongs to (a handful of headers repeat)."""
    return tuple(lib for lib in catalogue().libraries if lib.matches_include(header))


def _match_path(ctx: "Context", node: Node, parts: list[str], shown: str) -> None:
    if parts and parts[0] in _libraries_by_first_part() and _own_alias(ctx, parts):
        return
    for lib in _libraries_by_first_part().get(parts[0] if parts else "", ()):
        if lib.matches_path(parts):
            _note_library(ctx, lib, node, shown)


@dataclass
class _Aliases:
    """Per file: the namespace aliases of the standard library (``std``) it defines outside
    CUDA-only code, as full paths. An alias of another namespace keeps its findings:
    ``namespace cub = hipcub;`` makes ``cub::`` hipCUB's, and HP409's hipCUB notes hold."""

    paths: tuple[tuple[str, ...], ...] | None = None


def _own_alias(ctx: "Context", parts: list[str]) -> bool:
    """Whether ``parts`` starts with a namespace alias the file defines where the HIP build
    compiles it: mamba-ssm 2.3.2's uninitialized_copy.cuh (built for ROCm) has, under
    ``#ifndef USE_ROCM … #else``, ``namespace cuda { namespace std = ::std; }``, so its
    ``::cuda::std::forward`` is ``std::forward`` there, not libcu++."""
    state = ctx.state(_Aliases)
    if state.paths is None:
        state.paths = tuple(_alias_paths(ctx)) if b"namespace" in ctx.src else ()
    return any(tuple(parts[:len(path)]) == path for path in state.paths)


def _alias_paths(ctx: "Context") -> list[tuple[str, ...]]:
    out = []
    for alias in find_all(ctx.tree.root_node, ("namespace_alias_definition",)):
        name, target = alias.child_by_field_name("name"), alias.named_children[-1]
        if name is None or ctx.in_cuda_only_branch(alias.start_byte) \
                or text(ctx.src, target).replace(" ", "").lstrip(":").split("::")[0] != "std":
            continue
        path = text(ctx.src, name).split("::")
        for outer in ancestors(alias):
            if outer.type == "namespace_definition" and (n := outer.child_by_field_name("name")) is not None:
                path = text(ctx.src, n).split("::") + path
        out.append(tuple(path))
    return out


@lru_cache(maxsize=1)
def _libraries_by_first_part() -> dict[str, tuple[Library, ...]]:
    """First namespace component -> the libraries (in catalogue order) with a namespace
    starting there: most qualified names (``std::``) belong to none of them."""
    libraries = catalogue().libraries
    firsts = {ns[0] for lib in libraries for ns in lib.namespaces}
    return {first: tuple(lib for lib in libraries if any(ns[0] == first for ns in lib.namespaces))
            for first in firsts}


@REGISTRY.visits("qualified_identifier", codes=_LIBRARY_RULES)
def _qualified(node: Node, ctx: "Context") -> None:
    if not facts.outermost_qualified(ctx, node):
        return
    parts = qualified_parts(ctx.src, node)
    _match_path(ctx, node, parts, f"`{'::'.join(parts)}`")


@REGISTRY.visits("namespace_definition", codes=_LIBRARY_RULES)
def _namespace(node: Node, ctx: "Context") -> None:
    name = node.child_by_field_name("name")
    if name is None:
        return
    ident = text(ctx.src, name)
    parts = ident.split("::")
    for lib in catalogue().libraries:
        if lib.matches_path(parts) or ident in lib.identifiers:
            _note_library(ctx, lib, node, f"`namespace {ident}`")


@REGISTRY.visits("using_declaration", "namespace_alias_definition", codes=_LIBRARY_RULES)
def _using(node: Node, ctx: "Context") -> None:
    target = node.named_children[-1] if node.named_children else None
    if target is None:
        return
    parts = qualified_parts(ctx.src, target) if target.type == "qualified_identifier" else \
        text(ctx.src, target).split("::")
    _match_path(ctx, node, parts, f"`{' '.join(text(ctx.src, node).split()).rstrip(';')}`")


def _maybe_library_name(name: str) -> bool:
    return catalogue().names.fullmatch(name) is not None


@REGISTRY.visits("identifier", "type_identifier", "field_identifier", names=_maybe_library_name,
                 codes=_LIBRARY_RULES)
def _identifier(node: Node, ctx: "Context") -> None:
    name = text(ctx.src, node)
    if not catalogue().names.fullmatch(name):
        return
    if node.type != "field_identifier":
        for lib in catalogue().libraries:
            if name in lib.identifiers or (lib.pattern is not None and lib.pattern.match(name)):
                _note_library(ctx, lib, node, f"`{name}`")
    for api in catalogue().apis:
        if api.pattern.fullmatch(name):
            _api_use(ctx, api, node, name)


def _api_use(ctx: "Context", api: ApiUse, node: Node, name: str) -> None:
    if not api.applies_to(ctx.rocm):
        return
    if api.requires and api.requires not in ctx.src:
        return
    if api.receiver:
        if node.type != "field_identifier" or not _receiver_is(ctx, node, api.receiver):
            return
    elif node.type == "field_identifier":
        return
    noted = ctx.state(_Noted).keys
    key = f"{api.rule.code}:{api.pattern.pattern}"
    if api.once:
        if key in noted or ctx.in_cuda_only_branch(node.start_byte):
            return
        noted.add(key)
    rocm = short_version(ctx.rocm)
    ctx.report(api.rule, node, api.message.format(name=name, rocm=rocm), api.suggestion.format(name=name))


def _receiver_is(ctx: "Context", field_node: Node, type_text: str) -> bool:
    """True when ``x.method`` / ``Alias(temp).method`` has an object declared with ``type_text``."""
    expr = field_node.parent
    obj = expr.child_by_field_name("argument") if expr is not None else None
    if obj is None:
        return False
    root = re.match(r"\s*(\w+)", text(ctx.src, obj))
    return root is not None and root.group(1) in ctx.state(_Noted).typed.get(type_text, set())


def _names_a_receiver(src: bytes) -> bool:
    """Whether a file spells a receiver type at all (most never do)."""
    return any(receiver in src for receiver in _receiver_bytes())


@lru_cache(maxsize=1)
def _receiver_bytes() -> tuple[bytes, ...]:
    return tuple(r.encode() for r in catalogue().receivers)


@REGISTRY.visits("declaration", "type_definition", "alias_declaration", "field_declaration",
                 source=_names_a_receiver)
def _typed_names(node: Node, ctx: "Context") -> None:
    """Remember aliases and variables whose type names a receiver type (``BlockAdjacentDifference``)."""
    body = text(ctx.src, node)
    for receiver in catalogue().receivers:
        if receiver not in body:
            continue
        names = ctx.state(_Noted).typed.setdefault(receiver, set())
        if node.type == "alias_declaration":
            name = node.child_by_field_name("name")
            if name is not None:
                names.add(text(ctx.src, name))
            continue
        for d in node.children_by_field_name("declarator"):
            while d is not None and d.type not in ("identifier", "type_identifier", "field_identifier"):
                d = d.child_by_field_name("declarator")
            if d is not None:
                names.add(text(ctx.src, d))
