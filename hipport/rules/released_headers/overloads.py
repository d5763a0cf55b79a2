"""HP120: two CUDA overloads that become one function after mapping (a redefinition)."""

from __future__ import annotations

import collections
import re
from dataclasses import dataclass, field

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.parse import Node, function_declarator
from hipport.rules import REGISTRY
from hipport.rules.released_headers.common import cuda_only


@REGISTRY.rule
class OverloadCollapse:
    """Two CUDA overloads that become one function after mapping

    ## Why
    Overloads that differ only in CUDA types HIP merges — `cudaError_t` and `CUresult` both
    become `hipError_t` — turn into two definitions of the same function: "redefinition of
    `_cudaGetErrorEnum`" (the CUDA samples' `helper_cuda.h`).

    ## Example

    ```cuda
    static const char *_cudaGetErrorEnum(cudaError_t error) { ... }
    static const char *_cudaGetErrorEnum(CUresult error) { ... }   // same as the first on HIP
    ```
    becomes
    ```cuda
    static const char *_cudaGetErrorEnum(hipError_t error) { ... }
    #ifndef __HIP_PLATFORM_AMD__
    static const char *_cudaGetErrorEnum(hipError_t error) { ... }
    #endif
    ```

    ## Fix

    `hipport convert` keeps the second definition for CUDA only (`#ifndef
    __HIP_PLATFORM_AMD__`): on HIP every call, with either error type, reaches the first.
    A definition that shares its lines with other code is reported, not changed.
    """

    code = "HP120"
    slug = "overload-collapse"
    severity = Severity.HIGH
    effort = Effort.NONE


@dataclass
class _Definitions:
    """Per file: every function definition, in walk order, and how often each name is
    defined. Only a name defined twice can collapse, so only those are judged (mapping
    every parameter of every definition was a visible share of convert)."""

    found: list[tuple[Node, Node, str, bool]] = field(default_factory=list)  # (def, declarator, name, in macro)
    names: collections.Counter = field(default_factory=collections.Counter)


@REGISTRY.visits("function_definition", codes=(OverloadCollapse,))
def _definition(node: Node, ctx: Context) -> None:
    """Note each definition's name; ``_overloads`` judges them once the walk is over."""
    func = function_declarator(node)
    if func is None or (name_node := func.child_by_field_name("declarator")) is None:
        return
    name = ctx.text(name_node)
    state = ctx.state(_Definitions)
    state.found.append((node, func, name, ctx.in_macro_body))
    state.names[name] += 1


@REGISTRY.visits_file(codes=(OverloadCollapse,))
def _overloads(ctx: Context) -> None:
    """Remember each definition's mapped signature; a second with the same one collapses."""
    state = ctx.states.get(_Definitions)
    if state is None:
        return
    seen: dict[tuple, tuple[tuple[str, ...], int]] = {}
    for node, func, name, in_macro in state.found:
        if state.names[name] > 1:
            _judge_definition(ctx, node, func, name, in_macro, seen)


def _judge_definition(ctx: Context, node: Node, func: Node, name: str, in_macro: bool,
                      seen: dict[tuple, tuple[tuple[str, ...], int]]) -> None:
    params = func.child_by_field_name("parameters")
    written = tuple(_parameter_type(ctx, p) for p in (params.named_children if params else ())
                    if p.type in ("parameter_declaration", "optional_parameter_declaration"))
    mapped = tuple(_WORD.sub(lambda m: _hip_name(ctx, m[0]), t) for t in written)
    if mapped == written:
        return
    key = (_scope(ctx, node), name, mapped)
    if key not in seen:
        seen[key] = (written, ctx.position(node.start_byte)[0])
        return
    first, line = seen[key]
    if first != written:
        ctx.report(OverloadCollapse, func,
                   f"`{name}({', '.join(written)})` and `{name}({', '.join(first)})` (line {line}) "
                   f"both become `{name}({', '.join(mapped)})` on HIP: a redefinition",
                   "the second is kept for CUDA only (#ifndef __HIP_PLATFORM_AMD__): on HIP "
                   "every call reaches the first", fix=[] if in_macro else cuda_only(ctx, node))


_WORD = re.compile(r"[A-Za-z_]\w*")


def _hip_name(ctx: Context, word: str) -> str:
    res = ctx.view.resolve(word)
    return res.target if res is not None and res.apply and res.target else word


def _parameter_type(ctx: Context, param: Node) -> str:
    """A parameter's text without its name or default: ``const CUresult &e`` → ``const CUresult &``."""
    out = ctx.text(param)
    default = param.child_by_field_name("default_value")
    if default is not None:
        out = ctx.src[param.start_byte:default.start_byte].decode("utf-8", "replace").rstrip(" =")
    node = param.child_by_field_name("declarator")
    while node is not None and node.type != "identifier":
        node = node.child_by_field_name("declarator") or (
            node.named_children[-1] if node.named_children else None)
    if node is not None:
        cut_from, cut_to = node.start_byte - param.start_byte, node.end_byte - param.start_byte
        raw = ctx.text(param)
        out = (raw[:cut_from] + raw[cut_to:])[:len(out) - (cut_to - cut_from)] \
            if cut_to <= len(out) else out
    return " ".join(out.replace("*", " * ").replace("&", " & ").split())


def _scope(ctx: Context, node: Node) -> tuple[str, ...]:
    """The namespaces and classes around a definition, outermost last."""
    out = []
    parent = node.parent
    while parent is not None:
        if parent.type in ("namespace_definition", "class_specifier", "struct_specifier"):
            named = parent.child_by_field_name("name")
            out.append(ctx.text(named) if named is not None else f"@{parent.start_byte}")
        parent = parent.parent
    return tuple(out)
