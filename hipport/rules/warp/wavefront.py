"""HP210, HP211 — ``__AMDGCN_WAVEFRONT_SIZE``: removed in ROCm 7.2, deprecated before.

The pair is declared together; ``Context.applicable`` picks the one for the target. The
macro is found as a name in code and as text in ``#if``/``#define`` bodies kept as tokens.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hipport import facts, gpus
from hipport.findings import Effort, Severity
from hipport.parse import Node, find_all
from hipport.preprocessor.expr import evaluate
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
    whose later `#elif`s give every targeted GPU its own branch (`#elif
    defined(__gfx942__)`) and whose `#else`, which the host pass takes, defines what each
    target's branch does: the fallback is already the per-architecture code.

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
_ARCH = re.compile(gpus.table()["build"]["arch_pattern"])


def _arch_fallback(ctx: Context, node: Node) -> bool:
    """Whether ``node`` is in the condition of an ``#if``/``#elif`` whose later ``#elif``s
    give every targeted GPU its own branch, read with the arch macros of each device pass:
    then the branch taken once the macro is gone is the per-architecture one this rule asks
    for (mamba-ssm 2.3.2's reverse_scan.cuh: ``#if defined(__AMDGCN_WAVEFRONT_SIZE) … #elif
    defined(__gfx942__) … 64``). The host pass names no GPU: from 7.2 it takes the branch no
    arch opens (the ``#else``) where clang had given it the wave size, so that branch must
    ``#define`` what each target's does (a host launch sized for 32 lanes of a kernel built
    for 64 is the silent change). A chain that falls to an ``#else`` alone, names no arch of
    some target, or has an ``#elif`` hipport cannot decide first (``#elif
    defined(__HIP_PLATFORM_AMD__)``) keeps the finding."""
    test = node.parent
    while test is not None and test.type not in _CONDITIONALS:
        test = test.parent
    if test is None:
        return False
    cond = test.child_by_field_name("condition") or test.child_by_field_name("name")
    if cond is None or not cond.start_byte <= node.start_byte < cond.end_byte:
        return False
    chain: list[tuple[str, Node]] = []
    alt = test.child_by_field_name("alternative")
    while alt is not None and alt.type in ("preproc_elif", "preproc_elifdef"):
        later = alt.child_by_field_name("condition") or alt.child_by_field_name("name")
        word = alt.children[0].type if alt.children else ""  # the token: "# elifndef" too
        cond_text = ctx.text(later) if later is not None else "0"
        if word in ("#elifdef", "#elifndef"):
            cond_text = f"{'!' if word == '#elifndef' else ''}defined({cond_text})"
        chain.append((cond_text, alt))
        alt = alt.child_by_field_name("alternative")
    otherwise = alt if alt is not None and alt.type == "preproc_else" else None
    host = _taken(chain, otherwise, frozenset())
    if host is False:
        return False
    for gpu in gpus.gpus(gpus.archs_of(ctx.options)):
        taken = _taken(chain, otherwise, frozenset(gpu.macros))
        if not isinstance(taken, Node) or taken == otherwise:
            return False  # undecided, nothing, or the branch no arch opens
        if host is not None and _defines(ctx, taken) != _defines(ctx, host):
            return False
    return True


def _taken(chain: list[tuple[str, Node]], otherwise: Node | None, archs: frozenset[str]) -> Node | None | bool:
    """The branch of ``chain`` (then ``otherwise``) a pass whose arch macros are ``archs``
    takes: only arch macros are known (``archs`` defined as 1, any other arch undefined);
    False when a condition before the branch depends on anything else."""

    def value_of(name: str) -> int | None:
        return (1 if name in archs else 0) if _ARCH.match(name) else None

    for cond_text, branch in chain:
        value = evaluate(cond_text, value_of, value_of).value
        if value is None:
            return False
        if value:
            return branch
    return otherwise


def _defines(ctx: Context, branch: Node) -> set[tuple[str, str]]:
    """The ``#define``s of one branch of a chain (not of the ``#elif``s after it), as
    (name, body without spaces and comments)."""
    later = branch.child_by_field_name("alternative")
    out = set()
    for define in find_all(branch, ("preproc_def", "preproc_function_def")):
        if later is not None and later.start_byte <= define.start_byte < later.end_byte:
            continue
        name = define.child_by_field_name("name")
        out.add((ctx.text(name) if name is not None else "", "".join(facts.macro_body(ctx.src, define).split())))
    return out
