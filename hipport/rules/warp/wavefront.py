"""HP210, HP211 — ``__AMDGCN_WAVEFRONT_SIZE``: removed in ROCm 7.2, deprecated before.

The pair is declared together; ``Context.applicable`` picks the one for the target. The
macro is found as a name in code and as text in ``#if``/``#define`` bodies kept as tokens.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

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
    __AMDGCN_WAVEFRONT_SIZE` silently takes the fallback branch.

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
    if rule is AmdgcnWavefrontSizeRemoved:
        ctx.report(
            rule, where,
            f"`{name}` was removed in ROCm 7.2: undeclared in code, silently undefined in #if/#ifdef",
            fix,
        )
    elif rule is AmdgcnWavefrontSizeDeprecated:
        ctx.report(rule, where, f"`{name}` is deprecated since ROCm 6.3.2 and removed in 7.2", fix)
