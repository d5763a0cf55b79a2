"""HP4xx: CUDA-only libraries and version-dependent library facts.

The catalogue is data (``mappings/libraries.toml``); this module holds the rules' pages
and the matching. Reporting policy: one finding per library per file, at the first
``#include``, namespace or identifier that names it (document order), so that a file
using CuTe on every line gets one CUTLASS finding; plus a finding at each specific risky
API use listed under ``[[api]]`` (hipCUB removals, hipBLAS V2, hipSOLVER lwork units,
hipSPARSE SpSM_solve), some of which are once per file as the catalogue says.

A match inside the CUDA-only branch of a HIP guard does not count as the library's first
use, so the first unguarded use is still reported.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from hipport.datafiles import mappings
from hipport import facts
from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.parse import Node, qualified_parts, text
from hipport.rule import Rule
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.versions import Version, parse_version, short_version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


# --------------------------------------------------------------------------- rules


@REGISTRY.rule
class Cutlass(SaysWhatItIs):
    """CUTLASS / CuTe

    ## Why
    CUTLASS and CuTe are NVIDIA template libraries built on PTX, `mma.sync`, `wgmma` and
    TMA; nothing in them runs on AMD GPUs and there is no HIP build.

    ## Example
    ```cuda
    // before
    #include <cutlass/gemm/device/gemm.h>
    using Gemm = cutlass::gemm::device::Gemm<float, Row, float, Row, float, Row>;
    // after
    #include <hipblaslt/hipblaslt.h>   // or a Composable Kernel device op
    ```

    ## Fix
    Use hipBLASLt for plain GEMMs, Composable Kernel (CK) for fused kernels; keep the
    CUTLASS path behind `#ifndef __HIP_PLATFORM_AMD__`.
    """

    code = "HP401"
    slug = "cutlass-cute"
    severity = Severity.BLOCKER
    effort = Effort.LARGE


@REGISTRY.rule
class TensorRT(SaysWhatItIs):
    """TensorRT

    ## Why
    TensorRT (`NvInfer.h`, `nvinfer1::`, the ONNX parser) is NVIDIA-only.

    ## Example
    ```cuda
    // before
    auto builder = nvinfer1::createInferBuilder(logger);
    // after
    migraphx::program prog = migraphx::parse_onnx("model.onnx");
    ```

    ## Fix
    MIGraphX, or ONNX Runtime with the MIGraphX/ROCm execution provider; custom
    TensorRT plugins become MIGraphX custom ops or HIP kernels.
    """

    code = "HP402"
    slug = "tensorrt"
    severity = Severity.BLOCKER
    effort = Effort.LARGE


@REGISTRY.rule
class LibCudacxx(SaysWhatItIs):
    """libcu++ (`cuda::std`, `cuda::atomic`)

    ## Why
    NVIDIA's C++ standard library for device code has no HIP implementation.

    ## Example
    ```cuda
    // before
    #include <cuda/atomic>
    cuda::atomic_ref<int, cuda::thread_scope_device> r(*p); r.fetch_add(1);
    // after
    __hip_atomic_fetch_add(p, 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
    ```

    ## Fix
    `std::` in host code; HIP atomics and intrinsics in device code.
    """

    code = "HP403"
    slug = "libcudacxx"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


@REGISTRY.rule
class Cudnn(SaysWhatItIs):
    """cuDNN → MIOpen is a manual port

    ## Why
    MIOpen covers most of cuDNN's operations, but the API differs (descriptors, algorithm
    search, workspace handling) and there is no marshalling layer; HIPIFY 20 stopped
    translating to hipDNN by default.

    ## Example
    ```cuda
    // before
    cudnnConvolutionForward(h, &a, xD, x, wD, w, cD, algo, ws, wsSize, &b, yD, y);
    // after
    miopenConvolutionForward(h, &a, xD, x, wD, w, cD, algo, &b, yD, y, ws, wsSize);
    ```

    ## Fix
    Port to MIOpen call by call (use find/immediate mode for algorithm selection), or
    call the framework's own operators.
    """

    code = "HP404"
    slug = "cudnn-miopen"
    severity = Severity.HIGH
    effort = Effort.LARGE


@REGISTRY.rule
class CudnnFrontend(SaysWhatItIs):
    """cuDNN frontend (graph API)

    ## Why
    `cudnn_frontend` is a header-only C++ layer over cuDNN's backend graph API; MIOpen has
    nothing that accepts its graphs.

    ## Example
    ```cuda
    // before
    namespace fe = cudnn_frontend; auto graph = std::make_shared<fe::graph::Graph>();
    // after: MIOpen fusion plans, or a Composable Kernel fused op
    ```

    ## Fix
    Rebuild the graph with MIOpen's fusion API (`miopenCreateFusionPlan`) or a Composable
    Kernel fused operator; keep an unfused MIOpen path for the operations neither covers.
    """

    code = "HP405"
    slug = "cudnn-frontend"
    severity = Severity.BLOCKER
    effort = Effort.LARGE


@REGISTRY.rule
class Nvtx(SaysWhatItIs):
    """NVTX ranges map to roctx

    ## Why
    NVTX has no AMD build: `nvToolsExt.h` and `nvtx3/` are absent on ROCm, so profiling
    markers stop the file from compiling. roctx (from roctracer) has the same ranges and
    marks under other names.

    ## Example
    ```cuda
    // before
    #include <nvToolsExt.h>
    nvtxRangePushA("step"); nvtxRangePop();
    // after
    #include <roctracer/roctx.h>
    roctxRangePushA("step"); roctxRangePop();
    ```

    ## Fix
    Include `<roctracer/roctx.h>`, call the `roctx*` functions and link `roctx64`;
    `nvtxRangeStart`/`nvtxRangeEnd` become `roctxRangeStartA`/`roctxRangeStop`.
    """

    code = "HP406"
    slug = "nvtx-roctx"
    severity = Severity.INFO
    effort = Effort.SMALL


@REGISTRY.rule
class Nvtx3Cpp(SaysWhatItIs):
    """NVTX3 C++ API has no roctx counterpart

    ## Why
    `nvtx3::scoped_range`, domains and registered strings do not exist in roctx.

    ## Example
    ```cuda
    // before
    nvtx3::scoped_range r{"step"};
    // after
    struct RoctxRange { explicit RoctxRange(const char* n) { roctxRangePushA(n); } ~RoctxRange() { roctxRangePop(); } };
    RoctxRange r{"step"};
    ```

    ## Fix
    Wrap `roctxRangePushA`/`roctxRangePop` in a small RAII type as shown, and drop domains
    and registered strings (roctx has a single global domain).
    """

    code = "HP407"
    slug = "nvtx3-cpp"
    severity = Severity.LOW
    effort = Effort.SMALL


@REGISTRY.rule
class FlashAttention(SaysWhatItIs):
    """FlashAttention CUDA sources

    ## Why
    The flash-attn CUDA kernels (`flash.h`, `flash_fwd_kernel.h`, `namespace flash`) are
    CUTLASS/CuTe code for Ampere/Hopper. ROCm support comes from separate backends.

    ## Example
    ```cuda
    // before: vendored csrc/flash_attn/src/*.cu
    // after: depend on flash-attn >= 2.6.2 built for ROCm (CK or Triton backend)
    ```

    ## Fix
    Drop the vendored kernels and use the ROCm build of flash-attn (≥ 2.6.2, CK
    backend on MI200/MI300/MI355 and RDNA3/4) or PyTorch SDPA; FlashAttention-3 is
    Hopper-only.
    """

    code = "HP408"
    slug = "flash-attention"
    severity = Severity.HIGH
    effort = Effort.LARGE


@REGISTRY.rule
class CubThrust(SaysWhatItIs):
    """CUB / Thrust map to hipCUB / rocThrust

    ## Why
    The APIs match closely: `cub::` becomes `hipcub::`, Thrust keeps its names. From ROCm
    7.0 hipCUB 4, rocPRIM 4 and rocThrust 4 require C++17.

    ## Example
    ```cuda
    // before
    #include <cub/cub.cuh>
    cub::DeviceReduce::Sum(tmp, bytes, in, out, n);
    // after
    #include <hipcub/hipcub.hpp>
    hipcub::DeviceReduce::Sum(tmp, bytes, in, out, n);
    ```

    ## Fix
    `hipport convert` rewrites the includes and the `cub::` namespace; build with C++17 from
    ROCm 7.0, and check CUB features newer than the hipCUB release (`hipport map NAME`).
    """

    code = "HP409"
    slug = "cub-thrust"
    severity = Severity.INFO
    effort = Effort.SMALL


@REGISTRY.rule
class HipcubRemoved(SaysWhatItIs):
    """hipCUB APIs removed in ROCm 7.x

    ## Why
    hipCUB 4.0 (ROCm 7.0) removed `AsmThreadLoad`/`AsmThreadStore` and
    `BlockAdjacentDifference::FlagHeads/FlagTails/FlagHeadsAndTails` (as CCCL did);
    hipCUB 4.1 (ROCm 7.1) removed `TexRefInputIterator`.

    ## Example
    ```cuda
    // before
    BlockAdjDiff(temp).FlagHeads(flags, items, cub::Inequality());
    // after
    BlockDiscontinuity(temp).FlagHeads(flags, items, cub::Inequality());
    ```

    ## Fix
    Use `BlockDiscontinuity` for head/tail flags, plain loads and stores instead of
    `AsmThreadLoad`/`AsmThreadStore`, and a texture object or a pointer iterator instead of
    `TexRefInputIterator`.
    """

    code = "HP410"
    slug = "hipcub-removed-api"
    severity = Severity.HIGH
    effort = Effort.SMALL
    rocm_min = (7, 0, 0)


@REGISTRY.rule
class Nccl(SaysWhatItIs):
    """NCCL maps to RCCL

    ## Why
    RCCL implements the NCCL API (2.21 in ROCm 6.3, 2.27 in 7.1–7.2.1): only the header
    and library change.

    ## Example
    ```cuda
    // before
    #include <nccl.h>
    // after
    #include <rccl/rccl.h>
    ```

    ## Fix
    Include `<rccl/rccl.h>` and link `rccl`; the `nccl*` calls and types stay as written.
    Check features newer than the target's RCCL version (the NCCL version above).
    """

    code = "HP411"
    slug = "nccl-rccl"
    severity = Severity.INFO
    effort = Effort.NONE


@REGISTRY.rule
class HipblasV2(SaysWhatItIs):
    """hipBLAS V2 types need `-DHIPBLAS_V2` before ROCm 7.0

    ## Why
    cuBLAS code uses `cudaDataType` and `cublasComputeType_t`; hipport writes the hipBLAS
    V2 names (`hipDataType`, `hipblasComputeType_t`). They are the only API from hipBLAS
    3.0 (ROCm 7.0); on 6.x they are used by the `*Ex` functions only when `HIPBLAS_V2` is
    defined.

    ## Example
    ```cuda
    // before (targeting 6.3)
    cublasGemmEx(h, ta, tb, m, n, k, &a, A, CUDA_R_16F, lda, ...);
    // after: same call, built with -DHIPBLAS_V2
    ```

    ## Fix
    On ROCm 6.x add `-DHIPBLAS_V2` to the build (or define it before including hipBLAS);
    from ROCm 7.0 nothing is needed.
    """

    code = "HP412"
    slug = "hipblas-v2-define"
    severity = Severity.MEDIUM
    effort = Effort.SMALL
    rocm_max = (7, 0, 0)


@REGISTRY.rule
class HipsolverLwork(SaysWhatItIs):
    """hipSOLVER `*_bufferSize` units before ROCm 7.0

    ## Why
    Before hipSOLVER 3.0 (ROCm 7.0) the `*_bufferSize` functions listed in the release
    notes returned `lwork` in bytes; cuSOLVER (and hipSOLVER 3.0) return elements. CUDA
    code that allocates `sizeof(T) * lwork` over-allocates on 6.x (safe, wasteful).

    ## Example
    ```cuda
    // before
    cusolverDnSgesvd_bufferSize(h, m, n, &lwork); cudaMalloc(&work, sizeof(float) * lwork);
    // after (6.x only, if memory matters)
    hipsolverSgesvd_bufferSize(h, m, n, &lwork); hipMalloc(&work, lwork);
    ```

    ## Fix
    Nothing is required for correctness. On 6.x, allocate `lwork` bytes rather than
    `sizeof(T) * lwork` if the memory matters; from ROCm 7.0 the CUDA code is right as is.
    """

    code = "HP413"
    slug = "hipsolver-lwork-units"
    severity = Severity.INFO
    effort = Effort.SMALL
    rocm_max = (7, 0, 0)


@REGISTRY.rule
class HipsparseSpSM(SaysWhatItIs):
    """`hipsparseSpSM_solve` takes an extra buffer argument

    ## Why
    hipSPARSE's `hipsparseSpSM_solve` has a trailing external-buffer parameter that
    cuSPARSE's `cusparseSpSM_solve` does not (to be removed in a later release).

    ## Example
    ```cuda
    // before
    cusparseSpSM_solve(h, opA, opB, &alpha, A, B, C, type, alg, descr);
    // after
    hipsparseSpSM_solve(h, opA, opB, &alpha, A, B, C, type, alg, descr, nullptr);
    ```

    ## Fix
    Pass `nullptr` (or the buffer from `hipsparseSpSM_bufferSize`) as the last argument of
    `hipsparseSpSM_solve`.
    """

    code = "HP414"
    slug = "hipsparse-spsm-solve"
    severity = Severity.LOW
    effort = Effort.SMALL


# --------------------------------------------------------------------------- catalogue


@dataclass(frozen=True)
class Library:
    key: str
    rule: Rule
    includes: tuple[str, ...]
    include_prefixes: tuple[str, ...]
    namespaces: tuple[tuple[str, ...], ...]
    identifiers: frozenset[str]
    pattern: re.Pattern[str] | None
    message: str
    suggestion: str
    notes: tuple[tuple[Version | None, Version | None, str], ...] = ()

    def matches_include(self, header: str) -> bool:
        def under(p: str) -> bool:
            return header == p or header.endswith("/" + p)

        return any(under(i) for i in self.includes) or any(
            header.startswith(p) or f"/{p}" in header for p in self.include_prefixes)

    def matches_path(self, parts: list[str]) -> bool:
        return any(tuple(parts[:len(ns)]) == ns for ns in self.namespaces)


@dataclass(frozen=True)
class ApiUse:
    rule: Rule
    pattern: re.Pattern[str]
    message: str
    suggestion: str
    rocm_min: Version | None = None
    rocm_max: Version | None = None
    once: bool = False
    requires: bytes = b""
    receiver: str = ""


@dataclass(frozen=True)
class Catalogue:
    libraries: tuple[Library, ...]
    apis: tuple[ApiUse, ...]

    @cached_property
    def receivers(self) -> frozenset[str]:
        return frozenset(a.receiver for a in self.apis if a.receiver)

    @cached_property
    def names(self) -> re.Pattern[str]:
        """Every identifier any entry could match, as one pattern: most names match nothing."""
        alts = [lib.pattern.pattern for lib in self.libraries if lib.pattern is not None]
        alts += [re.escape(i) for lib in self.libraries for i in lib.identifiers]
        alts += [a.pattern.pattern for a in self.apis]
        return re.compile("|".join(f"(?:{p})" for p in alts))


def _version(value: object) -> Version | None:
    return parse_version(str(value)) if value is not None else None


def parse_catalogue(data: dict) -> Catalogue:
    """Build the catalogue from the TOML table; an unknown rule code is an error in the data."""

    def rule(code: str) -> Rule:
        if code not in REGISTRY.rules or not code.startswith("HP4"):
            raise ValueError(f"libraries.toml: unknown HP4xx rule {code!r}")
        return REGISTRY.rules[code]

    libs = tuple(
        Library(
            key=key,
            rule=rule(t["rule"]),
            includes=tuple(t.get("includes", ())),
            include_prefixes=tuple(t.get("include_prefixes", ())),
            namespaces=tuple(tuple(ns.split("::")) for ns in t.get("namespaces", ())),
            identifiers=frozenset(t.get("identifiers", ())),
            pattern=re.compile(t["pattern"]) if "pattern" in t else None,
            message=t["message"],
            suggestion=t.get("suggestion", ""),
            notes=tuple((_version(n.get("rocm_min")), _version(n.get("rocm_max")), n["text"])
                        for n in t.get("notes", ())),
        )
        for key, t in data.get("library", {}).items()
    )
    apis = tuple(
        ApiUse(
            rule=rule(a["rule"]),
            pattern=re.compile(a["pattern"]),
            message=a["message"],
            suggestion=a.get("suggestion", ""),
            rocm_min=_version(a.get("rocm_min")),
            rocm_max=_version(a.get("rocm_max")),
            once=bool(a.get("once", False)),
            requires=a.get("requires", "").encode(),
            receiver=a.get("receiver", ""),
        )
        for a in data.get("api", ())
    )
    return Catalogue(libs, apis)


@lru_cache(maxsize=1)
def catalogue() -> Catalogue:
    """The packaged catalogue, read once per process."""
    raw = (mappings() / "libraries.toml").read_text(encoding="utf-8")
    return parse_catalogue(tomllib.loads(raw))


# --------------------------------------------------------------------------- per-file state


@dataclass
class _State:
    noted: set[str] = field(default_factory=set)
    #: names (type aliases and variables) whose declared type mentions a receiver type
    typed: dict[str, set[str]] = field(default_factory=dict)


def _state(ctx: Context) -> _State:
    st = vars(ctx).get("_hp4xx")
    if st is None:
        st = vars(ctx)["_hp4xx"] = _State()
    return st


def _in_range(rocm: Version, lo: Version | None, hi: Version | None) -> bool:
    return (lo is None or rocm >= lo) and (hi is None or rocm < hi)


def _note_library(ctx: Context, lib: Library, where: Node, what: str) -> None:
    """Report ``lib`` once per file (guarded CUDA-only sites do not use up the once)."""
    st = _state(ctx)
    if lib.key in st.noted or ctx.in_cuda_only_branch(where.start_byte):
        return
    st.noted.add(lib.key)
    rocm = short_version(ctx.options.rocm)
    notes = "".join(t for lo, hi, t in lib.notes if _in_range(ctx.options.rocm, lo, hi))
    ctx.report(lib.rule, where, (lib.message.format(what=what, rocm=rocm) + notes.format(rocm=rocm)),
               lib.suggestion)


# --------------------------------------------------------------------------- visitors


#: The catalogue decides which of these a visitor reports; all are declared, so a visitor
#: is left out only when the whole family is.
_LIBRARY_RULES = (Cutlass, TensorRT, LibCudacxx, Cudnn, CudnnFrontend, Nvtx, Nvtx3Cpp, FlashAttention,
                  CubThrust, HipcubRemoved, Nccl, HipblasV2, HipsolverLwork, HipsparseSpSM)


@REGISTRY.visits("preproc_include", codes=_LIBRARY_RULES)
def _include(node: Node, ctx: Context) -> None:
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


def _match_path(ctx: Context, node: Node, parts: list[str], shown: str) -> None:
    for lib in _libraries_by_first_part().get(parts[0] if parts else "", ()):
        if lib.matches_path(parts):
            _note_library(ctx, lib, node, shown)


@lru_cache(maxsize=1)
def _libraries_by_first_part() -> dict[str, tuple[Library, ...]]:
    """First namespace component -> the libraries (in catalogue order) with a namespace
    starting there: most qualified names (``std::``) belong to none of them."""
    libraries = catalogue().libraries
    firsts = {ns[0] for lib in libraries for ns in lib.namespaces}
    return {first: tuple(lib for lib in libraries if any(ns[0] == first for ns in lib.namespaces))
            for first in firsts}


@REGISTRY.visits("qualified_identifier", codes=_LIBRARY_RULES)
def _qualified(node: Node, ctx: Context) -> None:
    if not facts.outermost_qualified(ctx, node):
        return
    parts = qualified_parts(ctx.src, node)
    _match_path(ctx, node, parts, f"`{'::'.join(parts)}`")


@REGISTRY.visits("namespace_definition", codes=_LIBRARY_RULES)
def _namespace(node: Node, ctx: Context) -> None:
    name = node.child_by_field_name("name")
    if name is None:
        return
    ident = text(ctx.src, name)
    parts = ident.split("::")
    for lib in catalogue().libraries:
        if lib.matches_path(parts) or ident in lib.identifiers:
            _note_library(ctx, lib, node, f"`namespace {ident}`")


@REGISTRY.visits("using_declaration", "namespace_alias_definition", codes=_LIBRARY_RULES)
def _using(node: Node, ctx: Context) -> None:
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
def _identifier(node: Node, ctx: Context) -> None:
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


def _api_use(ctx: Context, api: ApiUse, node: Node, name: str) -> None:
    if not _in_range(ctx.options.rocm, api.rocm_min, api.rocm_max):
        return
    if api.requires and api.requires not in ctx.src:
        return
    if api.receiver:
        if node.type != "field_identifier" or not _receiver_is(ctx, node, api.receiver):
            return
    elif node.type == "field_identifier":
        return
    st = _state(ctx)
    key = f"{api.rule.code}:{api.pattern.pattern}"
    if api.once:
        if key in st.noted or ctx.in_cuda_only_branch(node.start_byte):
            return
        st.noted.add(key)
    rocm = short_version(ctx.options.rocm)
    ctx.report(api.rule, node, api.message.format(name=name, rocm=rocm), api.suggestion.format(name=name))


def _receiver_is(ctx: Context, field_node: Node, type_text: str) -> bool:
    """True when ``x.method`` / ``Alias(temp).method`` has an object declared with ``type_text``."""
    expr = field_node.parent
    obj = expr.child_by_field_name("argument") if expr is not None else None
    if obj is None:
        return False
    root = re.match(r"\s*(\w+)", text(ctx.src, obj))
    return root is not None and root.group(1) in _state(ctx).typed.get(type_text, set())


def _names_a_receiver(src: bytes) -> bool:
    """Whether a file spells a receiver type at all (most never do)."""
    return any(receiver in src for receiver in _receiver_bytes())


@lru_cache(maxsize=1)
def _receiver_bytes() -> tuple[bytes, ...]:
    return tuple(r.encode() for r in catalogue().receivers)


@REGISTRY.visits("declaration", "type_definition", "alias_declaration", "field_declaration",
                 source=_names_a_receiver)
def _typed_names(node: Node, ctx: Context) -> None:
    """Remember aliases and variables whose type names a receiver type (``BlockAdjacentDifference``)."""
    body = text(ctx.src, node)
    for receiver in catalogue().receivers:
        if receiver not in body:
            continue
        names = _state(ctx).typed.setdefault(receiver, set())
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
