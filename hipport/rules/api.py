"""HP1xx — API mapping: what the tables say about each CUDA name, for the target release.

The rewriter and these rules read the same ``MappingView`` decision, so a name is either
rewritten or reported, never silently left. Behaviour changes between ROCm 6.3 and 7.x
(../shared/reference/rocm-versions.md) are rules with a version range.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache

from hipport.context import Context
from hipport.datafiles import mappings
from hipport.findings import Effort, Severity
from hipport.mapping import Status
from hipport.parse import Node, call_name
from hipport.names import NAME_NODES, PerName, in_tables, resolution_for
from hipport.rule import Rule
from hipport.versions import short_version
from hipport.registry import any_bytes_of, any_word_of
from hipport.rules import REGISTRY, AboutAName

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


@REGISTRY.rule
class NoHipCounterpart(AboutAName):
    """CUDA API with no HIP counterpart

    ## Why
    HIPIFY's tables list this CUDA name with no HIP (or, with `--roc`, ROC) equivalent, so
    hipport leaves it as written. The converted file will not compile on ROCm until a
    person replaces it.

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


@REGISTRY.rule
class CudaMacroTest(AboutAName):
    """A CUDA macro whose meaning does not carry over to HIP

    ## Why
    Code tests CUDA version or toolkit macros (`CUDART_VERSION`, `CUDA_VERSION`,
    `__CUDA_ARCH__`, header include guards…). Under hipcc they are undefined or mean
    something else, so the branch taken changes silently.

    ## Example

    ```cuda
    #if CUDART_VERSION >= 11020
      cudaMallocAsync(&p, n, s);
    #endif
    ```

    ```cuda
    #if CUDART_VERSION >= 11020 || defined(__HIP_PLATFORM_AMD__)
      hipMallocAsync(&p, n, s);
    #endif
    ```

    ## Fix

    Decide what the test is for and add the HIP condition (`HIP_VERSION`,
    `__HIP_PLATFORM_AMD__`, `__HIP_DEVICE_COMPILE__`) explicitly.
    """

    code = "HP106"
    slug = "cuda-macro-test"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.rule
class SignatureDiffersForCuda:
    """HIP counterpart follows an older CUDA signature

    ## Why
    HIPIFY's tables mark the mapping unsupported for some CUDA versions (the `U` column):
    CUDA changed the function's signature in those versions and HIP kept the older one.
    The name is rewritten, but a call written against the newer CUDA signature will not
    compile, or will pass its arguments differently.

    ## Example

    ```cuda
    cudaMemPrefetchAsync(ptr, bytes, location, 0, stream);   // CUDA 13: cudaMemLocation
    ```

    ```cuda
    hipMemPrefetchAsync(ptr, bytes, device, stream);           // HIP: a device ordinal
    ```

    ## Fix

    Compare the call with the HIP signature (`hipport map NAME` shows the versions), and
    use the HIP function that matches, such as a `_v2` variant where one exists.
    """

    code = "HP107"
    slug = "api-signature-differs"
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
    NoHipCounterpart, NewerThanTarget, RemovedInTarget, DeprecatedInTarget, ExperimentalMapping, CudaMacroTest,
    SignatureDiffersForCuda))
def api_status(node: Node, ctx: Context) -> None:
    found = _status_of(ctx, node)
    if found is not None:
        ctx.report(found[0], node, found[1], found[2])


def _status(ctx: Context, node: Node, name: str) -> tuple[Rule, str, str] | None:
    """(rule, message, suggestion) of what the tables say about one name token, or None."""
    macro = ctx.view.macro(name)
    if macro is not None:
        if macro.action == "report":
            return (CudaMacroTest, f"{name}: {macro.note}",
                    "Add the HIP condition explicitly (HIP_VERSION, __HIP_PLATFORM_AMD__).")
        return None
    res = resolution_for(ctx, node, name)
    if res is None:
        return None
    if res.status is Status.MAPPED:
        if res.entry.hip_unsupported_cuda and res.cuda == name:
            versions = ", ".join(short_version(v) for v in res.entry.hip_unsupported_cuda)
            return (SignatureDiffersForCuda,
                    f"{name} → {res.target}: HIPIFY marks this mapping unsupported for code "
                    f"written against CUDA {versions}, whose signature differs",
                    f"Compare the call with {res.target}'s HIP signature.")
        return None
    rule = _STATUS_RULES[res.status]
    alias = _alias_spelling(ctx, name) if res.status is Status.UNSUPPORTED else None
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


def _alias_spelling(ctx: Context, name: str) -> tuple[str, str] | None:
    """(aliased CUDA name, its HIP spelling) when ``name`` is a CUDA typedef of a mapped name."""
    aliased = _cuda_aliases().get(name)
    if aliased is None:
        return None
    res = ctx.view.resolve(aliased)
    if res is None or res.status is not Status.MAPPED or not res.target:
        return None
    return aliased, res.target


@lru_cache(maxsize=1)
def _cuda_aliases() -> dict[str, str]:
    with mappings().joinpath("cuda_aliases.toml").open("rb") as f:
        return dict(tomllib.load(f)["aliases"])


# -- behaviour changes between ROCm 6.3 and 7.x --------------------------------------


@REGISTRY.rule
class GetLastErrorSemantics:
    """hipGetLastError before ROCm 7.0 returns the last call's status, not the last error

    ## Why
    Before ROCm 7.0, `hipGetLastError` returned the status of the most recent HIP call:
    an earlier failure was lost after any successful call. CUDA (and ROCm 7.0+) return
    the last real error of the thread. Error checks placed after other runtime calls can
    miss a failure on ROCm 6.x. (rocm-versions.md RT-01)

    ## Example

    ```cuda
    kernel<<<g, b>>>(p);
    cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost);
    CHECK(cudaGetLastError());   // on 6.3: only the memcpy's status
    ```

    ## Fix

    Check errors right after the call that can fail (the launch), or target ROCm 7.x.
    """

    code = "HP110"
    slug = "get-last-error-semantics"
    severity = Severity.LOW
    effort = Effort.SMALL
    rocm_max = (7, 0, 0)


@REGISTRY.rule
class FreeOfStreamOrderedMemory:
    """hipFree no longer waits for stream-ordered allocations (ROCm 7.0)

    ## Why
    From ROCm 7.0 `hipFree` of memory from `hipMallocAsync`/`hipMallocFromPoolAsync` does
    not synchronize implicitly, exactly like CUDA. Code that only worked because ROCm 6.x
    synchronized there now races. (rocm-versions.md RT-03)

    ## Example

    ```cuda
    cudaMallocAsync(&p, n, s);
    kernel<<<g, b, 0, s>>>(p);
    cudaFree(p);                   // races with the kernel on 7.x
    ```

    ```cuda
    cudaFreeAsync(p, s);           // or synchronize s first
    ```

    ## Fix

    Free stream-ordered memory with `hipFreeAsync` on its stream, or synchronize first.
    """

    code = "HP111"
    slug = "free-stream-ordered"
    severity = Severity.MEDIUM
    effort = Effort.SMALL
    rocm_min = (7, 0, 0)


@REGISTRY.rule
class RtcLinkAndTypes:
    """hipRTC in ROCm 7.0: link libhiprtc, and no fixed-width integer types in kernels

    ## Why
    ROCm 7.0 removed the hipRTC symbols from `libamdhip64`: programs must link `hiprtc`
    (`-lhiprtc`, CMake `hiprtc::hiprtc`). hipRTC also stopped defining `int64_t`,
    `uint32_t` and friends for runtime-compiled code. (rocm-versions.md REM-01, REM-02)

    ## Example

    ```cuda
    nvrtcCreateProgram(&prog, src, "k.cu", 0, nullptr, nullptr);   // link -lnvrtc
    ```

    ```cuda
    hiprtcCreateProgram(&prog, src, "k.cu", 0, nullptr, nullptr);  // link -lhiprtc
    ```

    ## Fix

    Add `hiprtc` to the link line, and define the integer types your kernel strings use.
    """

    code = "HP112"
    slug = "hiprtc-link"
    severity = Severity.MEDIUM
    effort = Effort.SMALL
    rocm_min = (7, 0, 0)


@REGISTRY.rule
class MemsetParamsLayout:
    """Positional initialisation of cudaMemsetParams

    ## Why
    `hipMemsetParams` has another field order than CUDA's
    (`{dst, elementSize, height, pitch, value, width}` vs
    `{dst, pitch, value, elementSize, width, height}`), so a positional aggregate
    initialiser puts values in the wrong fields. The HIP 7.0 notes announce CUDA's order
    (rocm-versions.md SIG-05), but the released HIP 7.1.25424 headers still have the old
    one, so no target is sure: assign by name.

    ## Example

    ```cuda
    cudaMemsetParams p = {ptr, pitch, 0, 4, width, height};
    ```

    ```cuda
    cudaMemsetParams p = {};
    p.dst = ptr; p.pitch = pitch; p.value = 0; p.elementSize = 4; p.width = width; p.height = height;
    ```

    ## Fix

    Assign the members by name.
    """

    code = "HP114"
    slug = "memset-params-positional"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.rule
class LaunchErrorCodes:
    """Comparing against a specific launch error code: ROCm 6.x returns another one

    ## Why
    Before ROCm 7.0 invalid launch configurations returned `hipErrorInvalidValue` where
    CUDA (and ROCm 7.0+) return `…InvalidConfiguration`, `…ContextIsDestroyed` or
    `…CooperativeLaunchTooLarge`. (rocm-versions.md RT-08)

    ## Example

    ```cuda
    if (cudaGetLastError() == cudaErrorInvalidConfiguration) retry_smaller_block();
    ```

    ## Fix

    Treat any error as a failed launch, or also accept `hipErrorInvalidValue` on 6.x.
    """

    code = "HP115"
    slug = "launch-error-code"
    severity = Severity.LOW
    effort = Effort.SMALL
    rocm_max = (7, 0, 0)


_LAUNCH_ERRORS = {
    "cudaErrorInvalidConfiguration", "cudaErrorCooperativeLaunchTooLarge",
    "CUDA_ERROR_INVALID_CONFIGURATION", "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
}


_BEHAVIOUR_CALLS = frozenset({"cudaGetLastError", "cudaPeekAtLastError", "cudaFree", "cuMemFree",
                              "nvrtcCreateProgram"})


@REGISTRY.visits("call_expression", names=any_word_of(_BEHAVIOUR_CALLS), codes=(
    GetLastErrorSemantics, FreeOfStreamOrderedMemory, RtcLinkAndTypes))
def behaviour_calls(node: Node, ctx: Context) -> None:
    name = call_name(ctx.src, node)
    if name is None:
        return
    if name in ("cudaGetLastError", "cudaPeekAtLastError"):
        ctx.report(GetLastErrorSemantics, node,
                   f"{name}: on ROCm < 7.0 the HIP call returns the status of the last HIP "
                   "call, so an earlier failure can be lost",
                   "Check right after the call that can fail, or target ROCm 7.x.")
    elif name in ("cudaFree", "cuMemFree") and _uses_stream_ordered_alloc(ctx):
        ctx.report(FreeOfStreamOrderedMemory, node,
                   f"{name} in a file that allocates with cudaMallocAsync: hipFree does not "
                   "wait for stream-ordered work from ROCm 7.0",
                   "Use cudaFreeAsync on the allocation's stream, or synchronize first.")
    elif name == "nvrtcCreateProgram":
        ctx.report(RtcLinkAndTypes, node,
                   "nvrtcCreateProgram → hiprtcCreateProgram: link hiprtc explicitly (-lhiprtc) "
                   "on ROCm 7.x; runtime-compiled code gets no int64_t/uint32_t typedefs",
                   "Add hiprtc to the link line; define fixed-width types in kernel strings.")


@dataclass
class _StreamOrdered:
    """Per file: whether it allocates stream-ordered memory (None until asked)."""

    allocates: bool | None = None


def _uses_stream_ordered_alloc(ctx: Context) -> bool:
    state = ctx.state(_StreamOrdered)
    if state.allocates is None:
        state.allocates = b"cudaMallocAsync" in ctx.src or b"cudaMallocFromPoolAsync" in ctx.src \
            or b"cuMemAllocAsync" in ctx.src
    return state.allocates


@REGISTRY.visits("init_declarator", source=any_bytes_of(b"cudaMemsetParams", b"CUDA_MEMSET_NODE_PARAMS"),
                 codes=(MemsetParamsLayout,))
def memset_params_init(node: Node, ctx: Context) -> None:
    decl = node.parent
    if decl is None or decl.type != "declaration":
        return
    type_node = decl.child_by_field_name("type")
    if type_node is None or ctx.text(type_node) not in ("cudaMemsetParams", "CUDA_MEMSET_NODE_PARAMS"):
        return
    value = node.child_by_field_name("value")
    if value is None or value.type != "initializer_list":
        return
    items = [c for c in value.named_children if c.type != "comment"]
    if items and all(c.type != "initializer_pair" for c in items):
        ctx.report(MemsetParamsLayout, value,
                   f"positional initialiser of {ctx.text(type_node)}: the HIP struct's field "
                   "order differs from CUDA's (the HIP 7.1 headers still have the 6.x order)",
                   "Assign the members by name (p.dst = …; p.pitch = …).")


@REGISTRY.visits("binary_expression", source=any_bytes_of(*(n.encode() for n in _LAUNCH_ERRORS)),
                 codes=(LaunchErrorCodes,))
def launch_error_compare(node: Node, ctx: Context) -> None:
    op = node.child_by_field_name("operator")
    if op is None or op.type not in ("==", "!="):
        return
    for side in (node.child_by_field_name("left"), node.child_by_field_name("right")):
        if side is not None and side.type == "identifier" and ctx.text(side) in _LAUNCH_ERRORS:
            ctx.report(LaunchErrorCodes, node,
                       f"comparison with {ctx.text(side)}: ROCm < 7.0 reports "
                       "hipErrorInvalidValue for this launch failure",
                       "Treat any launch error as a failure, or accept hipErrorInvalidValue on 6.x.")
            return


