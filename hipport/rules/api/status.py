"""HP101–HP105, HP107: what the mapping tables say about a CUDA name for the target.

One visitor for every name the tables know: the name is rewritten, or reported as having
no counterpart, being newer than the target, removed, deprecated or experimental, or
(HP107, ``signatures``) mapped to a function with an older CUDA signature. The verdict is
remembered per name and target (``PerName``): the same few hundred names recur in every
file.
"""

from __future__ import annotations

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.mapping import Status
from hipport.names import NAME_NODES, PerName, in_tables, resolution_for
from hipport.parse import Node
from hipport.rule import Rule
from hipport.rules import REGISTRY, AboutAName
from hipport.rules.api.aliases import alias_spelling
from hipport.rules.api.macros import CudaMacroTest
from hipport.rules.api.signatures import SignatureDiffersForCuda, signature_differs


@REGISTRY.rule
class NoHipCounterpart(AboutAName):
    """CUDA API with no HIP counterpart

    ## Why
    HIPIFY's tables list this CUDA name with no HIP (or, with `--roc`, ROC) equivalent, so
    hipport leaves it as written. The converted file will not compile on ROCm until a
    person replaces it. A CUDA driver-API constant (`CU_` and capitals) that no table lists
    at all, such as `CU_MEM_ALLOCATION_COMP_GENERIC`, is left as written and reported the
    same way, unless the project defines it itself.

    ## Example

    ```cuda
    cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
                                       cudaFlushGPUDirectRDMAWritesToOwner);
    ```

    ## Fix

    Find what the call is for and rewrite that part with the HIP APIs that exist (or
    guard it with `#if !defined(__HIP_PLATFORM_AMD__)` when it is an NVIDIA-only
    optimisation). `hipport map NAME` shows what the tables know.
    """

    code = "HP101"
    slug = "api-unsupported"
    severity = Severity.HIGH
    effort = Effort.MEDIUM

@REGISTRY.rule
class NewerThanTarget(AboutAName):
    """HIP counterpart exists only in a newer ROCm than the target

    ## Why
    The HIP API exists, but was added after the ROCm release you target, so hipport does
    not rewrite the name: the result would not compile against the target's headers.

    ## Example

    ```cuda
    cudaStreamCopyAttributes(dst, src);   // hipStreamCopyAttributes: ROCm 7.2.0+
    ```

    With `--rocm 6.3` this stays as written and is reported; with `--rocm 7.2.1` it
    becomes `hipStreamCopyAttributes(dst, src)`.

    ## Fix

    Target the newer release (`--rocm 7.2.1`), or replace the call with what the older
    release offers, guarded by `#if HIP_VERSION >= ...`.
    """

    code = "HP102"
    slug = "api-newer-than-target"
    severity = Severity.HIGH
    effort = Effort.SMALL

@REGISTRY.rule
class RemovedInTarget(AboutAName):
    """HIP counterpart was removed at or before the target release

    ## Why
    The tables record a HIP name that existed once but is removed in the target release;
    rewriting to it would not compile.

    ## Example

    ```cuda
    cusparseScsrmv(h, op, m, n, nnz, &alpha, descr, val, rowPtr, colInd, x, &beta, y);
    ```

    ## Fix

    Port to the replacement API (usually the generic API the CUDA library also moved to,
    e.g. `cusparseSpMV` → `hipsparseSpMV`).
    """

    code = "HP103"
    slug = "api-removed"
    severity = Severity.HIGH
    effort = Effort.MEDIUM

@REGISTRY.rule
class DeprecatedInTarget(AboutAName):
    """Rewritten to a HIP API that is deprecated in the target release

    ## Why
    The name is rewritten (it still compiles), but the HIP API is deprecated in the
    target release and may go away in a later one.

    ## Example

    ```cuda
    cudaBindTexture(0, texRef, d_ptr, size);   // → hipBindTexture, deprecated
    ```

    ## Fix

    Plan a move to the replacement the HIP documentation names.
    """

    code = "HP104"
    slug = "api-deprecated"
    severity = Severity.LOW
    effort = Effort.SMALL

@REGISTRY.rule
class ExperimentalMapping(AboutAName):
    """HIP counterpart is experimental

    ## Why
    HIPIFY marks this mapping experimental. Without `--experimental` hipport leaves the
    name as written; with it, the name is rewritten and this note remains.

    ## Example

    ```cuda
    cuGraphAddNode(&node, graph, deps, n, &params);
    ```

    ## Fix

    Check the HIP API's documentation for the target release; pass `--experimental` to
    accept the rewrite.
    """

    code = "HP105"
    slug = "api-experimental"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


_STATUS_RULES = {
    Status.UNSUPPORTED: NoHipCounterpart,
    Status.NEWER: NewerThanTarget,
    Status.REMOVED: RemovedInTarget,
    Status.DEPRECATED: DeprecatedInTarget,
    Status.EXPERIMENTAL: ExperimentalMapping,
}


@REGISTRY.visits(*NAME_NODES, names=in_tables, codes=(
    NoHipCounterpart, NewerThanTarget, RemovedInTarget, DeprecatedInTarget, ExperimentalMapping,
    SignatureDiffersForCuda, CudaMacroTest))
def api_status(node: Node, ctx: Context) -> None:
    found = _status_of(ctx, node)
    if found is None:
        return
    if found[0] is NoHipCounterpart and _tested_by_preprocessor(node):
        # `#ifdef CUB_USE_COOPERATIVE_GROUPS`: nothing at the test fails to compile; the HIP
        # build, where the name is not defined, silently takes the other branch (HP106).
        name = ctx.text(node)
        ctx.report(CudaMacroTest, node,
                   f"{name} is tested by the preprocessor and has no HIP counterpart: the HIP "
                   "build does not define it and takes the other branch",
                   "Decide which branch the HIP build needs and test a HIP macro for it.")
        return
    ctx.report(found[0], node, found[1], found[2])


def _tested_by_preprocessor(node: Node) -> bool:
    """Whether the name is what `#ifdef`/`#ifndef`/`#elifdef` or `defined(...)` tests."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "preproc_defined":
        return True
    return parent.type in ("preproc_ifdef", "preproc_elifdef") and parent.child_by_field_name("name") == node


def _status(ctx: Context, node: Node, name: str) -> tuple[Rule, str, str] | None:
    """(rule, message, suggestion) of what the tables say about one name token, or None."""
    if ctx.view.macro(name) is not None:
        return None  # a CUDA macro: rules/api/macros.py
    res = resolution_for(ctx, node, name)
    if res is None:
        return None
    if res.status is Status.MAPPED:
        return signature_differs(name, res)
    rule = _STATUS_RULES[res.status]
    alias = alias_spelling(ctx, name) if res.status is Status.UNSUPPORTED else None
    if alias is not None:
        return (rule, f"{name} is CUDA's alias of {alias[0]}, which HIP spells {alias[1]}; "
                "the tables have no entry for the alias, so it is left as written",
                f"Write {alias[1]} (or `typedef {alias[1]} {name};` in a HIP header).")
    if res.status is Status.EXPERIMENTAL and res.apply:
        message = f"{name} → {res.target} (experimental mapping, applied): {res.detail}"
    elif res.status is Status.DEPRECATED:
        message = f"{name} → {res.target}: {res.detail}"
    else:
        message = f"{name}: {res.detail}; left as written"
    hint = {
        Status.UNSUPPORTED: f"Replace {name} by hand; `hipport map {name}` shows what is known.",
        Status.NEWER: "Target a newer ROCm (--rocm) or replace the call for this release.",
        Status.REMOVED: "Port to the replacement API.",
        Status.DEPRECATED: "Plan a move to the non-deprecated replacement.",
        Status.EXPERIMENTAL: "Review the HIP API; --experimental applies the rewrite.",
    }[res.status]
    return rule, message, hint


#: What ``_status`` says of a name token, remembered per name.
_status_of = PerName(_status)
