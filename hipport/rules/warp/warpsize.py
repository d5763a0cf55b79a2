"""HP207, HP208 — ``warpSize`` (or a macro defined as it) used as a compile-time constant.

An error from ROCm 7.0 (HP207), a deprecation before (HP208): the pair is declared
together and ``Context.applicable`` picks the one whose range holds the target.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hipport import facts
from hipport.findings import Effort, Severity
from hipport.parse import Node, text
from hipport.registry import any_bytes_of
from hipport.rules import REGISTRY
from hipport.rules.warp.syntax import has_qualifier
from hipport.rules.warp.vocab import AMDGCN_MACROS
from hipport.versions import short_version

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class WarpSizeNotConstexpr:
    """`warpSize` used as a compile-time constant (an error from ROCm 7.0)

    ## Why
    From ROCm 7.0 `warpSize` is a run-time variable, as in CUDA: it can still bound a loop,
    but not size an array, be a template argument, appear in `static_assert`, initialise a
    `constexpr` or a case label. Such code no longer compiles. In `#if` it is not a macro at
    all and evaluates to 0.

    ## Example
    ```cuda
    __shared__ float lanes[warpSize];
    ```
    becomes
    ```cuda
    #if defined(__GFX8__) || defined(__GFX9__)
    #define WARP_SIZE 64
    #else
    #define WARP_SIZE 32
    #endif
    __shared__ float lanes[WARP_SIZE];
    ```

    ## Fix
    In device code use a per-architecture macro as above; on the host query
    `hipDeviceAttributeWarpSize` and pass it as a template argument.
    """

    code = "HP207"
    slug = "warpsize-not-constexpr"
    severity = Severity.HIGH
    effort = Effort.MEDIUM
    rocm_min = (7, 0, 0)

@REGISTRY.rule
class WarpSizeConstexprDeprecated:
    """`warpSize` used as a compile-time constant (breaks when moving to ROCm 7.0)

    ## Why
    Before ROCm 7.0 `warpSize` is a `constexpr`, so array sizes, template arguments and
    `static_assert`s on it compile; 7.0 makes it a run-time variable and they stop
    compiling. In `#if` it is not a macro and evaluates to 0 on every release.

    ## Example
    ```cuda
    static_assert(warpSize == 64, "wave64 only");
    ```
    becomes
    ```cuda
    #if !(defined(__GFX8__) || defined(__GFX9__))
    #error "wave64 only"
    #endif
    ```

    ## Fix
    As for HP207: a per-architecture macro in device code, the device attribute on the host.
    """

    code = "HP208"
    slug = "warpsize-constexpr-deprecated"
    severity = Severity.LOW
    effort = Effort.MEDIUM
    rocm_max = (7, 0, 0)


@dataclass
class _Aliases:
    """Per file: the macros defined as ``warpSize`` (None until asked)."""

    names: frozenset[str] | None = None


def warp_size_aliases(ctx: Context) -> frozenset[str]:
    """Macros defined as ``warpSize``; none (and no file walk) when the file never says it."""
    state = ctx.state(_Aliases)
    if state.names is None:
        state.names = _defined_as_warp_size(ctx) if ctx.may_contain(b"warpSize") else frozenset()
    return state.names


def _defined_as_warp_size(ctx: Context) -> frozenset[str]:
    """The names of the object-like ``#define``s (``facts.file_facts``' macros) whose body is
    ``warpSize``, found from the places the file spells it.

    Asked during the walk, ``file_facts`` queries the whole tree for every declaration,
    function and ``#define`` (about 1 ms for a 9 KB file, 2 % of convert on the bench
    corpus). Such a body spells ``warpSize`` inside its ``preproc_arg`` (the only node a
    ``#define``'s value is), so the smallest node around each spelling, one step up, finds
    every candidate; each is judged by the same body test as before."""
    src, root = ctx.src, ctx.tree.root_node
    names: set[str] = set()
    at = src.find(b"warpSize")
    while at >= 0:
        arg = root.descendant_for_byte_range(at, at + 8)
        define = arg.parent if arg is not None and arg.type == "preproc_arg" else None
        if define is not None and define.type == "preproc_def":
            name = define.child_by_field_name("name")
            if name is not None and facts.macro_body(src, define).strip("() ") == "warpSize":
                names.add(text(src, name))
        at = src.find(b"warpSize", at + 8)
    return frozenset(names)


_CONSTANT_PLACES = {
    "enumerator": "an enumerator", "bitfield_clause": "a bit-field width", "launch_bounds": "__launch_bounds__",
}


def _constant_context(node: Node) -> str | None:
    """Name of the constant-expression context ``node`` sits in, if any."""
    child, parent = node, node.parent
    while parent is not None:
        t = parent.type
        if t == "array_declarator" and parent.child_by_field_name("size") == child:
            return "an array size"
        if t == "template_argument_list":
            return "a template argument"
        if t == "static_assert_declaration":
            return "a static_assert"
        if t in ("preproc_if", "preproc_elif") and parent.child_by_field_name("condition") == child:
            return "#if (where it is not a macro and evaluates to 0)"
        if t == "case_statement" and parent.child_by_field_name("value") == child:
            return "a case label"
        if t in _CONSTANT_PLACES:
            return _CONSTANT_PLACES[t]
        if t == "optional_parameter_declaration" and (
            parent.parent is not None and parent.parent.type == "template_parameter_list"
        ):
            return "a template parameter default"
        if t == "init_declarator" and parent.child_by_field_name("value") == child:
            decl = parent.parent
            if decl is not None and has_qualifier(decl, "constexpr"):
                return "a constexpr initializer"
        if t == "if_statement" and parent.child_by_field_name("condition") == child:
            return "if constexpr" if any(c.type == "constexpr" for c in parent.children) else None
        if t in ("compound_statement", "expression_statement", "function_definition", "translation_unit",
                 "for_statement", "return_statement", "declaration_list", "field_declaration_list"):
            return None
        child, parent = parent, parent.parent
    return None


def _maybe_warp_size(name: str) -> bool:
    """Pre-filter: ``warpSize``, and the macro names (upper case) that may alias it."""
    return name == "warpSize" or (name.isupper() and name not in AMDGCN_MACROS)


#: Aliases of warpSize exist only in files that say warpSize.
@REGISTRY.visits("identifier", "type_identifier", names=_maybe_warp_size, source=any_bytes_of(b"warpSize"),
                 codes=(WarpSizeNotConstexpr, WarpSizeConstexprDeprecated))
def check_warp_size(node: Node, ctx: Context) -> None:
    name = ctx.text(node)
    if name in AMDGCN_MACROS:
        return  # HP210/HP211
    if name == "warpSize":
        shown = "`warpSize`"
    elif name.isupper() and name in warp_size_aliases(ctx):
        shown = f"`{name}` (defined as `warpSize`)"
    else:
        return
    where = _constant_context(node)
    rule = ctx.applicable(WarpSizeNotConstexpr, WarpSizeConstexprDeprecated) if where is not None else None
    if rule is WarpSizeNotConstexpr:
        ctx.report(
            rule, node,
            f"{shown} used in {where}: warpSize is not a compile-time constant from ROCm 7.0",
            "use a per-architecture macro (#if defined(__GFX8__) || defined(__GFX9__) -> 64, else 32) "
            "or a template parameter set from hipDeviceAttributeWarpSize",
        )
    elif rule is WarpSizeConstexprDeprecated:
        ctx.report(
            rule, node,
            f"{shown} used in {where}: compiles on ROCm {short_version(ctx.rocm)} "
            "but not from 7.0, where warpSize is a run-time value",
            "use a per-architecture macro or a template parameter set from hipDeviceAttributeWarpSize",
        )
