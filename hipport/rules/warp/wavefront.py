"""HP210, HP211 — ``__AMDGCN_WAVEFRONT_SIZE``: removed in ROCm 7.2, deprecated before.

The pair is declared together; ``Context.applicable`` picks the one for the target. The
macro is found as a name in code and as text in ``#if``/``#define`` bodies kept as tokens.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hipport import gpus
from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.registry import any_bytes_of
from hipport.rules import REGISTRY
from hipport.rules.warp.vocab import AMDGCN_MACROS

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class AmdgcnWavefrontSizeRemoved:
    """`__AMDGCN_WAVEFRONT_SIZE` is gone in ROCm 7.2

    ## Why
    The compiler macro was deprecated in ROCm 6.3.2, warns in 7.1 and is removed in 7.2
    (LLVM 22): code fails with "use of undeclared identifier", and `#ifdef
    __AMDGCN_WAVEFRONT_SIZE` silently takes the fallback branch. Not reported at a test
    whose later `#elif`s name an arch macro of every targeted GPU (`#elif
    defined(__gfx942__)`): the fallback is already the per-architecture code.

    ## Example
    ```cuda
    __shared__ float s[__AMDGCN_WAVEFRONT_SIZE];
    ```
    becomes
    ```cuda
    #if defined(__GFX8__) || defined(__GFX9__)
    #define WARP_SIZE 64
    #else
    #define WARP_SIZE 32
    #endif
    __shared__ float s[WARP_SIZE];
    ```

    ## Fix
    Use the architecture predicates (`__GFX9__`, `__gfx90a__`…) in device code and the
    device attribute on the host.
    """

    code = "HP210"
    slug = "amdgcn-wavefront-size-removed"
    severity = Severity.HIGH
    effort = Effort.SMALL
    rocm_min = (7, 2, 0)

@REGISTRY.rule
class AmdgcnWavefrontSizeDeprecated:
    """`__AMDGCN_WAVEFRONT_SIZE` is deprecated (removed in ROCm 7.2)

    ## Why
    Deprecated since ROCm 6.3.2, a warning in 7.1 and an error in 7.2. It still works on the
    target, but the code will break on upgrade.

    ## Example
    ```cuda
    #if __AMDGCN_WAVEFRONT_SIZE == 64
    ```
    becomes
    ```cuda
    #if defined(__GFX8__) || defined(__GFX9__)
    ```

    ## Fix
    Switch to the architecture predicates now.
    """

    code = "HP211"
    slug = "amdgcn-wavefront-size-deprecated"
    severity = Severity.LOW
    effort = Effort.SMALL
    rocm_max = (7, 2, 0)

_AMDGCN_RE = re.compile(rb"\b__AMDGCN_WAVEFRONT_SIZE(?:__)?\b")
_RULES = (AmdgcnWavefrontSizeRemoved, AmdgcnWavefrontSizeDeprecated)


@REGISTRY.visits("identifier", "type_identifier", names=AMDGCN_MACROS.__contains__,
                 source=any_bytes_of(b"__AMDGCN_WAVEFRONT_SIZE"), codes=_RULES)
def check_wavefront_name(node: Node, ctx: Context) -> None:
    name = ctx.text(node)
    if name in AMDGCN_MACROS:
        _report(ctx, node, name)


@REGISTRY.visits("preproc_arg", codes=_RULES)
def check_macro_body(node: Node, ctx: Context) -> None:
    body = ctx.src[node.start_byte:node.end_byte]
    for m in _AMDGCN_RE.finditer(body):
        start = node.start_byte + m.start()
        _report(ctx, (start, node.start_byte + m.end()), m.group().decode())


def _report(ctx: Context, where: Node | tuple[int, int], name: str) -> None:
    fix = "use the architecture predicates: #if defined(__GFX8__) || defined(__GFX9__) -> 64, else 32"
    rule = ctx.applicable(*_RULES)
    if rule is AmdgcnWavefrontSizeRemoved and isinstance(where, Node) and _arch_fallback(ctx, where):
        return
    if rule is AmdgcnWavefrontSizeRemoved:
        ctx.report(
            rule, where,
            f"`{name}` was removed in ROCm 7.2: undeclared in code, silently undefined in #if/#ifdef",
            fix,
        )
    elif rule is AmdgcnWavefrontSizeDeprecated:
        ctx.report(rule, where, f"`{name}` is deprecated since ROCm 6.3.2 and removed in 7.2", fix)


_CONDITIONALS = ("preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef")
_NAME = re.compile(r"\b__\w+__\b")


def _arch_fallback(ctx: Context, node: Node) -> bool:
    """Whether ``node`` is in the condition of an ``#if``/``#elif`` whose later ``#elif``s test,
    for every targeted GPU, one of its arch macros: then the branch taken once the macro is
    gone is the per-architecture one this rule asks for (mamba-ssm 2.3.2's reverse_scan.cuh:
    ``#if defined(__AMDGCN_WAVEFRONT_SIZE) … #elif defined(__gfx942__) … 64``). A chain that
    falls to an ``#else`` alone, or names no arch of some target, keeps the finding."""
    test = node.parent
    while test is not None and test.type not in _CONDITIONALS:
        test = test.parent
    if test is None:
        return False
    cond = test.child_by_field_name("condition") or test.child_by_field_name("name")
    if cond is None or not cond.start_byte <= node.start_byte < cond.end_byte:
        return False
    named: set[str] = set()
    alt = test.child_by_field_name("alternative")
    while alt is not None and alt.type in ("preproc_elif", "preproc_elifdef"):
        later = alt.child_by_field_name("condition") or alt.child_by_field_name("name")
        named.update(_NAME.findall(ctx.text(later)) if later is not None else ())
        alt = alt.child_by_field_name("alternative")
    return all(named.intersection(g.macros) for g in gpus.gpus(gpus.archs_of(ctx.options)))
