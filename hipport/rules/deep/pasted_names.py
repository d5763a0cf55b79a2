"""HP190, and the HP101–HP103 findings on CUDA API names a macro builds by token pasting:
only the deep engine sees them, because the name exists only after preprocessing.

A name is ours when clang resolves (or fails to resolve) it at a place inside a macro use
in the main file, the text there does not spell it, and a macro reached from that use
pastes (``##``). When the name is written anywhere in the expansion, tree-sitter sees it
where it is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hipport.findings import Effort, Severity
from hipport.mapping import Status
from hipport.rule import Rule
from hipport.rules import REGISTRY
from hipport.rules.api.status import NewerThanTarget, NoHipCounterpart, RemovedInTarget

if TYPE_CHECKING:
    from clang.cindex import Cursor, TranslationUnit

    from hipport.deep import ClangUnit


@REGISTRY.rule
class ApiNameBuiltByMacro:
    """CUDA API name assembled by a macro (token pasting)

    ## Why
    A macro such as `#define CALL(f) cuda##f` builds the API name with the preprocessor's
    `##` operator, so `cudaMalloc` never appears in the text. hipport rewrites names where
    they are written; it cannot rewrite half of a pasted token, so after conversion the
    expansion still produces the CUDA name and the file fails to compile (or links against
    nothing). The deep engine (`--engine clang`, which runs the preprocessor) sees these
    uses and reports each where the macro is used; the default engine reports the macro's
    definition when its body pastes a CUDA prefix (`cuda##name`, rules/released_headers/pasting.py).

    ## Example
    ```cuda
    #define CALL(f) cuda##f
    CALL(Malloc)(&p, n);
    ```
    becomes
    ```cuda
    #if defined(__HIP_PLATFORM_AMD__)
    #define CALL(f) hip##f
    #else
    #define CALL(f) cuda##f
    #endif
    CALL(Malloc)(&p, n);
    ```

    ## Fix
    Write the API name in full inside the macro (the converter then rewrites it), or give
    the macro a HIP branch that pastes the `hip` prefix. When the name has no HIP
    counterpart, an HP1xx finding at the same place says so.
    """

    code = "HP190"
    slug = "api-name-built-by-macro"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


#: Statuses for which the default engine reports an HP1xx finding on a written name.
_STATUS_RULES: dict[Status, Rule] = {
    Status.UNSUPPORTED: NoHipCounterpart,
    Status.NEWER: NewerThanTarget,
    Status.REMOVED: RemovedInTarget,
}
_CODES = (ApiNameBuiltByMacro, *_STATUS_RULES.values())
_UNDECLARED_RE = re.compile(r"(?:use of undeclared identifier|unknown type name) '(\w+)'")
_IDENT_RE = re.compile(r"[A-Za-z_]\w*")
#: What clang calls for ``k<<<...>>>()``; declared in the shipped header, never written.
_LAUNCH_HOOKS = frozenset({"cudaConfigureCall", "__cudaPushCallConfiguration"})


@dataclass
class _Seen:
    """Per unit: (name, macro use start) already looked at."""

    names: set[tuple[str, int]] = field(default_factory=set)


@REGISTRY.visits_clang("DECL_REF_EXPR", "TYPE_REF", codes=_CODES)
def _reference(cursor: "Cursor", unit: "ClangUnit") -> None:
    if unit.in_main(cursor):
        ref = cursor.referenced
        if ref is not None and ref.spelling:
            _api_name(unit, ref.spelling, cursor.location.offset)


@REGISTRY.visits_clang(codes=_CODES)
def _undeclared_names(unit: "ClangUnit", tu: "TranslationUnit") -> None:
    """Names libclang could not resolve (absent from the stubs) still have a use site."""
    for d in tu.diagnostics:
        m = _UNDECLARED_RE.search(d.spelling)
        loc = d.location
        if m and loc.file is not None and loc.file.name == unit.main:
            _api_name(unit, m.group(1), loc.offset)


def _api_name(unit: "ClangUnit", name: str, offset: int) -> None:
    """Report ``name`` used at ``offset`` when no text the default engine reads spells it."""
    ctx = unit.ctx
    res = ctx.view.resolve(name)
    if res is None or name in _LAUNCH_HOOKS or ctx.src.startswith(name.encode(), offset):
        return
    around = [e for e in unit.expansions if e[0] <= offset < e[1]]
    if not around:
        return
    start, end, use = min(around, key=lambda e: e[1] - e[0])
    seen = unit.state(_Seen).names
    if (name, start) in seen:
        return
    seen.add((name, start))
    macro = _pasting_macro(unit, name, use, ctx.src[start:end].decode("utf-8", "replace"))
    if macro is None:
        return
    target = f" (HIP: `{res.target}`)" if res.target and res.status is not Status.UNSUPPORTED else ""
    unit.report(
        ApiNameBuiltByMacro, (start, end),
        f"`{name}` is assembled by token pasting in macro `{macro}`{target}; the converter "
        "rewrites names only where they are written, so this stays CUDA",
        f"write `{name}` in full in the macro, or give `{macro}` a HIP branch",
    )
    rule = _STATUS_RULES.get(res.status)
    if rule is not None:
        unit.report(rule, (start, end), f"{name} (built by macro `{macro}`): {res.detail}; left as written",
                    f"Replace {name} by hand; `hipport map {name}` shows what is known.")


def _pasting_macro(unit: "ClangUnit", name: str, use: str, invocation: str) -> str | None:
    """The macro that pastes ``name`` together at a use of ``use``, or None.

    None when ``name`` is written somewhere in the expansion (an argument, the body of
    ``use`` or of a macro it reaches, a header's ``#define hipX cudaX`` alias): the
    text has it, so tree-sitter sees it where it is written. None also when no macro
    involved pastes (``##``): then the name came some other way and is not ours to guess.
    """
    idents = set(_IDENT_RE.findall(invocation))
    queue = [use, *sorted(i for i in idents if i in unit.macros)]
    seen: set[str] = set()
    pasting = None
    while queue:
        macro = queue.pop(0)
        if macro in seen or macro not in unit.macros:
            continue
        seen.add(macro)
        body = unit.macro_body(macro)
        idents.update(body)
        if pasting is None and "##" in body:
            pasting = macro
        queue.extend(t for t in body if t in unit.macros)
    return None if name in idents else pasting
