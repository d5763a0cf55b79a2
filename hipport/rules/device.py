"""HP3xx: device-code features that HIP lacks, implements differently, or sizes differently.

Reporting policy. A construct that must be rewritten where it stands (inline PTX, a launch
from device code, an oversized ``__shared__`` array, a texture-reference fetch, a grid or
cluster barrier, an ``__CUDA_ARCH__`` test) is reported at every site. A name-level note
(fp8 types, managed memory, ``__ldg``, ``clock64``…) is reported once per name (or once per
rule) per file, so that a kernel library does not drown its own report.

Per-file state (constants seen so far, texture references, group variables, the "already
noted" set) lives on the Context under one private attribute; the walk is in document
order, so declarations are seen before the code that uses them.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import lru_cache

from hipport import facts, gpus
from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.parse import (
    Node, call_arguments, call_name, qualified_parts, text,
)
from hipport.rule import Rule, Supersedes
from hipport.registry import any_bytes_of, any_word_of
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.versions import short_version



# --------------------------------------------------------------------------- rules


@REGISTRY.rule
class InlinePtx(SaysWhatItIs):
    """Inline PTX assembly

    ## Why
    AMD GPUs do not execute PTX: an `asm(...)` block written for NVIDIA fails to assemble
    (or, inside a macro, fails wherever the macro is used). HIPIFY has no automatic path
    (HIPIFY#731). hipport names the PTX instructions and special registers it found.

    ## Example
    ```cuda
    // before
    unsigned lane; asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    // after
    unsigned lane = __lane_id();
    ```

    ## Fix
    Use the HIP intrinsic (`__lane_id()`, `__smid()`, `__shfl_*`, `__syncthreads()`,
    `__threadfence()`), rocWMMA or `__builtin_amdgcn_mfma_*` for `mma.sync`, plain
    global→shared copies for `cp.async`; or keep the PTX under `#ifndef __HIP_PLATFORM_AMD__`
    and add an AMD branch. An empty `asm volatile("" ::: "memory")` barrier is portable and
    not reported.
    """

    code = "HP301"
    slug = "inline-ptx-asm"
    severity = Severity.BLOCKER
    effort = Effort.LARGE


@REGISTRY.rule
class DynamicParallelism(SaysWhatItIs):
    """Kernel launch or device synchronisation from device code (dynamic parallelism)

    ## Why
    HIP does not support dynamic parallelism: a `<<<...>>>` launch inside a `__global__` or
    `__device__` function, or `cudaDeviceSynchronize()` in device code, does not compile.

    ## Example
    ```cuda
    // before
    __global__ void parent(int* d) { child<<<1, 32>>>(d); cudaDeviceSynchronize(); }
    // after: launch both from the host, in order on one stream
    parent<<<1, 1, 0, s>>>(d); child<<<1, 32, 0, s>>>(d);
    ```

    ## Fix
    Move the child launch to the host (same stream keeps the order), or flatten the
    recursion into a work queue processed by a persistent kernel.
    """

    code = "HP302"
    slug = "dynamic-parallelism"
    severity = Severity.BLOCKER
    effort = Effort.LARGE


@REGISTRY.rule
class HopperOnly(SaysWhatItIs):
    """Thread-block clusters, distributed shared memory or TMA (Hopper-only)

    ## Why
    Clusters (`__cluster_dims__`, `cg::this_cluster()`, `cluster.sync()`,
    `map_shared_rank`, the cluster launch attributes) and the Tensor Memory Accelerator
    (`CUtensorMap`, `cuTensorMapEncode*`) exist only on sm_90+. AMD GPUs have no cluster
    level between the block and the grid and no TMA unit.

    ## Example
    ```cuda
    // before
    __global__ void __cluster_dims__(2, 1, 1) k(float* x) {
      auto cluster = cg::this_cluster(); cluster.sync(); }
    // after: one block per tile; exchange through global memory between kernels
    __global__ void k(float* x) { __syncthreads(); }
    ```

    ## Fix
    Redesign the kernel for one block per tile; share data through global memory or
    larger blocks; replace TMA copies with ordinary vectorised loads.
    """

    code = "HP303"
    slug = "hopper-cluster-tma"
    severity = Severity.BLOCKER
    effort = Effort.LARGE


@REGISTRY.rule
class Wmma(SaysWhatItIs):
    """Warp matrix functions (`nvcuda::wmma`, `<mma.h>`)

    ## Why
    HIP has no warp-matrix API. The fragments also assume a 32-lane warp; AMD matrix cores
    (MFMA on CDNA, WMMA on RDNA3/4) are programmed through rocWMMA.

    ## Example
    ```cuda
    // before
    #include <mma.h>
    nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half, nvcuda::wmma::row_major> a;
    // after
    #include <rocwmma/rocwmma.hpp>
    rocwmma::fragment<rocwmma::matrix_a, 16, 16, 16, rocwmma::float16_t, rocwmma::row_major> a;
    ```

    ## Fix
    Port to rocWMMA (same structure: fragment, load_matrix_sync, mma_sync,
    store_matrix_sync); check the supported tile shapes per GPU.
    """

    code = "HP304"
    slug = "wmma-rocwmma"
    severity = Severity.HIGH
    effort = Effort.LARGE


@REGISTRY.rule
class AsyncCopy(SaysWhatItIs):
    """Asynchronous copies and pipelines (`cuda::memcpy_async`, `cuda::pipeline`, `cuda::barrier`)

    ## Why
    libcu++'s asynchronous-copy pipeline, `cuda::barrier` and the `__pipeline_*`
    primitives have no HIP implementation; they compile only with NVIDIA's headers.

    ## Example
    ```cuda
    // before
    cuda::memcpy_async(block, smem, gmem, sizeof(float) * n, pipe);
    pipe.consumer_wait();
    // after
    for (int i = threadIdx.x; i < n; i += blockDim.x) smem[i] = gmem[i];
    __syncthreads();
    ```

    ## Fix
    Synchronous global→shared loads followed by `__syncthreads()`; double-buffer by
    hand if the overlap matters.
    """

    code = "HP305"
    slug = "async-copy-pipeline"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


@REGISTRY.rule
class SharedMemoryOver64K(SaysWhatItIs):
    """Shared memory above 64 KiB per block

    ## Why
    LDS is 64 KiB per workgroup on gfx908/gfx90a/gfx942 and the RDNA GPUs; only gfx950
    (MI350/MI355, ROCm 7.0+) has 160 KiB. Kernels tuned for an H100 (up to ~227 KiB) fail
    to launch or to compile. hipport sums constant-sized `__shared__` arrays per function
    (element size × extents, using `#define`/`constexpr` constants of the same file), and
    checks constant sizes given to `cudaFuncAttributeMaxDynamicSharedMemorySize` and to the
    third `<<<>>>` argument.

    ## Example
    ```cuda
    // before
    __shared__ float tile[128][160];   // 80 KiB
    // after
    __shared__ float tile[64][160];    // 40 KiB: smaller tile, more blocks
    ```

    ## Fix
    Shrink the tiles (template the kernel on the tile size and pick per GPU), or keep
    part of the working set in registers.
    """

    code = "HP306"
    slug = "shared-memory-over-64k"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


@REGISTRY.rule
class TextureReference(SaysWhatItIs):
    """Texture references (`texture<>`, `cudaBindTexture*`, `tex1Dfetch` on a reference)

    ## Why
    Texture references were removed in CUDA 12 and are deprecated in HIP since 3.8; their
    HIP emulation returns different error codes and is not maintained.

    ## Example
    ```cuda
    // before
    texture<float, 1, cudaReadModeElementType> texRef;
    float v = tex1Dfetch(texRef, i);
    // after
    cudaTextureObject_t tex;   // created with cudaCreateTextureObject on the host
    float v = tex1Dfetch<float>(tex, i);
    ```

    ## Fix
    Create a texture object on the host and pass it to the kernel.
    """

    code = "HP307"
    slug = "texture-reference"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


@REGISTRY.rule
class ThreadfenceSystem(SaysWhatItIs):
    """`__threadfence_system()` does not flush to the host on AMD

    ## Why
    The fence orders memory but does not make device writes visible to the host or peer
    GPUs the way CUDA's does unless the memory is fine-grained (coherent) host memory.

    ## Example
    ```cuda
    // before
    flag_in_pinned_memory[0] = 1; __threadfence_system();
    // after: allocate the flag coherent
    hipHostMalloc(&flag, sizeof(int), hipHostMallocCoherent);
    ```

    ## Fix
    Allocate host-visible flags with `hipHostMallocCoherent` (or
    `hipExtMallocWithFlags(..., hipDeviceMallocFinegrained)`) and keep the fence.
    """

    code = "HP308"
    slug = "threadfence-system"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.rule
class CudaArchTest(SaysWhatItIs):
    """`__CUDA_ARCH__` tests in preprocessor conditions

    ## Why
    hipcc does not define `__CUDA_ARCH__` for AMD targets: `#ifdef __CUDA_ARCH__` device
    paths are dropped, and `#if __CUDA_ARCH__ >= 800` evaluates with 0, silently selecting
    the oldest code path.

    ## Example
    ```cuda
    // before
    #if __CUDA_ARCH__ >= 800
    // after
    #if defined(__HIP_DEVICE_COMPILE__) && (defined(__gfx90a__) || defined(__gfx942__))
    ```

    ## Fix
    Test `__HIP_DEVICE_COMPILE__` for "device pass", `__gfx*__` or
    `__HIP_ARCH_HAS_*` for features; keep the CUDA test beside it for NVIDIA builds.
    """

    #: One finding per condition: no HP106 for the ``__CUDA_ARCH__`` tokens inside it
    #: (another CUDA macro in it keeps its own).
    supersedes = (*SaysWhatItIs.supersedes, Supersedes(frozenset({"HP106"}), within=True, token="__CUDA_ARCH__"))
    code = "HP309"
    slug = "cuda-arch-test"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.rule
class Fp8Format(SaysWhatItIs):
    """fp8 types: FNUZ on gfx942, OCP on gfx950/gfx12

    ## Why
    `__nv_fp8_e4m3`/`__nv_fp8_e5m2` are OCP formats. gfx942 (MI300) implements the FNUZ
    variants (different bias, no negative zero, different NaN), so bit patterns and ranges
    differ (pytorch#144351); gfx950 and RDNA4 use OCP like NVIDIA.

    ## Example
    ```cuda
    // before
    __nv_fp8_e4m3 q = __nv_fp8_e4m3(x);
    // after
    #if defined(__gfx942__)
    __hip_fp8_e4m3_fnuz q(x);
    #else
    __hip_fp8_e4m3 q(x);
    #endif
    ```

    ## Fix
    Pick the format per target and rescale (e4m3 max is 448 in OCP, 240 in FNUZ);
    never reinterpret stored fp8 bytes across the two.
    """

    code = "HP310"
    slug = "fp8-format"
    severity = Severity.MEDIUM
    effort = Effort.MEDIUM


@REGISTRY.rule
class HalfOperators(SaysWhatItIs):
    """Arithmetic operators on `__half` / `__nv_bfloat16` values

    ## Why
    HIP defines these operators, but builds that define `__HIP_NO_HALF_OPERATORS__` or
    `__HIP_NO_BFLOAT16_OPERATORS__` (PyTorch extension builds do) reject them.

    ## Example
    ```cuda
    // before
    __half y = a * b + c;
    // after
    __half y = __hadd(__hmul(a, b), c);
    ```

    ## Fix
    Use the intrinsic functions (`__hadd`, `__hmul`, `__hlt`…) or compute in float.
    """

    code = "HP311"
    slug = "half-operators"
    severity = Severity.LOW
    effort = Effort.SMALL


@REGISTRY.rule
class CooperativeGroupsGap(SaysWhatItIs):
    """Cooperative-groups algorithms HIP lacks (`cg::reduce`, scans, `cg::memcpy_async`)

    ## Why
    HIP's cooperative groups are a subset: `cooperative_groups::reduce` arrives in 7.13,
    `inclusive_scan`/`exclusive_scan` in 10.0, and `memcpy_async`/`wait` not at all, so
    none of them exist in ROCm 6.3 or 7.2.1.

    ## Example
    ```cuda
    // before
    int s = cg::reduce(tile, v, cg::plus<int>());
    // after
    int s = v;
    for (int o = tile.size() / 2; o > 0; o /= 2) s += tile.shfl_down(s, o);
    ```

    ## Fix
    A shuffle loop over the tile, or hipCUB `WarpReduce`/`WarpScan`/`BlockReduce`.
    """

    code = "HP312"
    slug = "cg-unsupported"
    severity = Severity.MEDIUM
    effort = Effort.MEDIUM


@REGISTRY.rule
class GridSync(SaysWhatItIs):
    """Grid-wide synchronisation (`this_grid().sync()`) needs a cooperative launch

    ## Why
    A grid barrier only works when the kernel is launched with `hipLaunchCooperativeKernel`
    and every block is resident at once; block residency differs on AMD (LDS, wave64
    registers), so a grid size chosen for an NVIDIA GPU can deadlock or fail to launch.
    Cooperative grid launches are validated from ROCm 7.0.

    ## Example
    ```cuda
    // before
    kernel<<<blocks, threads>>>(args);
    // after
    hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, kernel, threads, 0);
    hipLaunchCooperativeKernel((void*)kernel, blocks, threads, argv, 0, stream);
    ```

    ## Fix
    Size the grid from the occupancy query and launch cooperatively.
    """

    code = "HP313"
    slug = "cg-grid-sync"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.rule
class GraphConditional(SaysWhatItIs):
    """CUDA graph conditional nodes (IF / WHILE / SWITCH)

    ## Why
    Conditional graph nodes (`cudaGraphConditionalHandle`, `cudaGraphCondType*`,
    `cudaConditionalNodeParams`) are not implemented in HIP graphs in 6.3 or 7.2.1.

    ## Example
    ```cuda
    // before
    cudaGraphConditionalHandleCreate(&h, graph, 1, cudaGraphCondAssignDefault);
    // after: decide on the host, launch one of two instantiated graphs
    hipGraphLaunch(done ? exec_tail : exec_loop, stream);
    ```

    ## Fix
    Move the control flow to the host (several graphs), or into a persistent kernel.
    """

    code = "HP314"
    slug = "graph-conditional-node"
    severity = Severity.MEDIUM
    effort = Effort.MEDIUM


@REGISTRY.rule
class GraphBeta(SaysWhatItIs):
    """HIP graphs are a beta API before ROCm 7.0

    ## Why
    On ROCm 6.x hipGraph prints beta warnings and has known capture gaps; 7.0 removed the
    beta status and aligned stream-capture errors with CUDA.

    ## Example
    ```cuda
    // before (targeting 6.3)
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    // after: keep a non-graph fallback path, or target ROCm >= 7.0
    ```

    ## Fix
    Test graph capture on the target release; keep a stream-only fallback.
    """

    code = "HP315"
    slug = "graph-beta"
    severity = Severity.LOW
    effort = Effort.SMALL
    rocm_max = (7, 0, 0)


@REGISTRY.rule
class ManagedMemory(SaysWhatItIs):
    """Managed (unified) memory without HMM

    ## Why
    `cudaMallocManaged` memory migrates on demand only when the GPU and kernel support HMM
    with XNACK (`HSA_XNACK=1`, gfx90a/gfx942); otherwise it is host memory accessed over the
    bus, and `cudaMemAdvise`/`cudaMemPrefetchAsync` are hints with little effect.

    ## Example
    ```cuda
    // before
    cudaMallocManaged(&p, n); kernel<<<g, b>>>(p);
    // after (performance-critical data)
    hipMalloc(&d, n); hipMemcpy(d, h, n, hipMemcpyHostToDevice); kernel<<<g, b>>>(d);
    ```

    ## Fix
    Use explicit device allocations for hot data, or document `HSA_XNACK=1` and a
    supported GPU.
    """

    code = "HP316"
    slug = "managed-memory"
    severity = Severity.MEDIUM
    effort = Effort.MEDIUM


@REGISTRY.rule
class MemoryTypeNumeric(SaysWhatItIs):
    """`cudaMemoryType` compared as a number

    ## Why
    The numbering of `hipMemoryType` has changed across HIP releases and includes AMD-only
    members (`hipMemoryTypeArray`, `hipMemoryTypeUnified`); a literal `2` does not mean
    "device" everywhere.

    ## Example
    ```cuda
    // before
    if (attr.type == 2) { ... }
    // after
    if (attr.type == cudaMemoryTypeDevice) { ... }
    ```

    ## Fix
    Compare against the named enumerators, which hipport rewrites.
    """

    code = "HP317"
    slug = "memory-type-numeric"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.rule
class TrapSleep(SaysWhatItIs):
    """`__trap`, `__nanosleep`, `__prof_trigger`

    ## Why
    HIPIFY maps none of these: `__trap` ends the kernel differently (use `abort()` or
    `__builtin_trap()`), `__nanosleep` has no nanosecond sleep (`__builtin_amdgcn_s_sleep`
    takes ~64-cycle units), and `__prof_trigger` has no counterpart.

    ## Example
    ```cuda
    // before
    if (bad) __trap();
    __nanosleep(100);
    // after
    if (bad) abort();
    __builtin_amdgcn_s_sleep(2);
    ```

    ## Fix
    Replace `__trap()` with `abort()` (or `__builtin_trap()`), `__nanosleep(ns)` with
    `__builtin_amdgcn_s_sleep(n)` where `n` counts units of about 64 clock cycles (re-tune
    any back-off loop), and drop `__prof_trigger` or guard it with
    `#ifndef __HIP_PLATFORM_AMD__`.
    """

    code = "HP318"
    slug = "device-trap-sleep"
    severity = Severity.LOW
    effort = Effort.SMALL


@REGISTRY.rule
class DeviceClock(SaysWhatItIs):
    """`clock()` / `clock64()` in device code

    ## Why
    The shader clock counts at a GPU-specific rate and is unreliable on RDNA3; timings and
    spin-waits built on it behave differently.

    ## Example
    ```cuda
    // before
    long long t0 = clock64();
    // after
    long long t0 = wall_clock64();   // rate: hipDeviceAttributeWallClockRate (kHz)
    ```

    ## Fix
    Measure time with `wall_clock64()` and convert with `hipDeviceAttributeWallClockRate`
    (kHz); keep `clock64()` only for relative cycle counts on one GPU, never for time-outs.
    """

    code = "HP319"
    slug = "device-clock"
    severity = Severity.LOW
    effort = Effort.SMALL


@REGISTRY.rule
class Ldg(SaysWhatItIs):
    """`__ldg` is a plain load on AMD

    ## Why
    `__ldg` compiles, but AMD GPUs have no separate read-only data cache path: the call is a
    normal global load. Code that relied on it for performance should be measured.

    ## Example
    ```cuda
    // before
    float v = __ldg(&in[i]);
    // after (equivalent on AMD)
    float v = in[i];
    ```

    ## Fix
    Nothing is required for correctness. Keep `__ldg` (it compiles) or write the plain load;
    if the kernel was tuned around the read-only cache, profile it on the AMD target.
    """

    code = "HP320"
    slug = "ldg-noop"
    severity = Severity.INFO
    effort = Effort.NONE


# --------------------------------------------------------------------------- per-file state


@dataclass
class _State:
    constants: dict[str, int] = field(default_factory=dict)
    texture_refs: set[str] = field(default_factory=set)
    #: (function start byte, variable name) → "grid" | "cluster"
    groups: dict[tuple[int, str], str] = field(default_factory=dict)
    half_vars: set[tuple[int, str]] = field(default_factory=set)
    #: half/bfloat16 pointers and arrays: ``p + i`` is address arithmetic, ``p[i] * x`` is not
    half_ptrs: set[tuple[int, str]] = field(default_factory=set)
    pointer_attrs: set[str] = field(default_factory=set)
    cg_namespaces: set[str] = field(default_factory=lambda: {"cg", "cooperative_groups"})
    shared_bytes: dict[int, int] = field(default_factory=dict)  # function start → bytes
    noted: set[str] = field(default_factory=set)
    _memory_type: bool | None = None

    def mentions_memory_type(self, src: bytes) -> bool:
        """Whether the file says ``memoryType`` at all (asked once per file)."""
        if self._memory_type is None:
            self._memory_type = b"memoryType" in src
        return self._memory_type


def _state(ctx: Context) -> _State:
    """This family's state for one file, created on first use."""
    st = vars(ctx).get("_hp3xx")
    if st is None:
        st = vars(ctx)["_hp3xx"] = _State()
    return st


def _once(ctx: Context, key: str, rule: Rule, where: Node | tuple[int, int], message: str,
          suggestion: str = "") -> None:
    """Report ``rule`` at its first occurrence of ``key`` in the file.

    A site inside a CUDA-only guard branch does not count as the first occurrence, so the
    first unguarded use is still reported; a site silenced by an ignore comment does.
    """
    st = _state(ctx)
    if key in st.noted:
        return
    start = where[0] if isinstance(where, tuple) else where.start_byte
    if ctx.in_cuda_only_branch(start):
        return
    st.noted.add(key)
    ctx.report(rule, where, message, suggestion)


def _func_key(ctx: Context, node: Node) -> int:
    func = facts.enclosing_function(ctx, node)
    return func.start_byte if func is not None else -1


# --------------------------------------------------------------------------- constants


_INT_SUFFIX_RE = re.compile(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b")
#: Every text ``_const_value`` can give a value for is made of these (names, numbers,
#: + - * / % << >>, parentheses, blanks, line continuations); anything else is not parsed,
#: which spares a Python parse and its SyntaxError for every ``a.size()`` initialiser.
_CONST_CHARS = re.compile(r"[\w\s+\-*/%<>()\\]*\Z")


@lru_cache(maxsize=4096)
def _const_ast(expr: str) -> ast.Expression | None:
    """``expr`` (integer suffixes dropped) parsed as a Python expression; None if it is not one."""
    try:
        return ast.parse(_INT_SUFFIX_RE.sub(r"\1", expr.strip()), mode="eval")
    except SyntaxError:
        return None


def _const_value(expr: str, env: dict[str, int]) -> int | None:
    """Value of a constant integer expression (literals, known names, + - * / % << >>).

    ``sizeof``, casts, templates and unknown names give None: hipport only claims a size
    it can compute.
    """
    if _CONST_CHARS.match(expr) is None:
        return None  # a member, an index, a string, a comparison…: never a constant here
    tree = _const_ast(expr)
    if tree is None:
        return None
    ops = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__,
           ast.Div: int.__floordiv__, ast.FloorDiv: int.__floordiv__, ast.Mod: int.__mod__,
           ast.LShift: int.__lshift__, ast.RShift: int.__rshift__}

    def ev(n: ast.AST) -> int | None:
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.Name):
            return env.get(n.id)
        if isinstance(n, ast.BinOp) and type(n.op) in ops:
            a, b = ev(n.left), ev(n.right)
            if a is None or b is None or (b == 0 and isinstance(n.op, (ast.Div, ast.FloorDiv, ast.Mod))):
                return None
            return ops[type(n.op)](a, b)
        return None

    return ev(tree.body)


@REGISTRY.visits("preproc_def")
def _define(node: Node, ctx: Context) -> None:
    """Remember integer ``#define`` constants: shared-memory extents are usually macros."""
    name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
    if name is None or value is None:
        return
    st = _state(ctx)
    v = _const_value(text(ctx.src, value), st.constants)
    if v is not None:
        st.constants[text(ctx.src, name)] = v


# --------------------------------------------------------------------------- HP301 inline PTX

_SREG_RE = re.compile(
    r"%%?(laneid|warpid|nwarpid|smid|nsmid|gridid|lanemask_(?:eq|le|lt|ge|gt)|clock64|clock"
    r"|globaltimer(?:_lo|_hi)?|dynamic_smem_size|total_smem_size|cluster_\w+|ctaid|nctaid|ntid|tid)\b"
)
_TYPE_PART_RE = re.compile(
    r"^(?:[usbf]\d+|bf16x?2?|f16x2|e4m3|e5m2|tf32|pred|v\d|x\d|m\d+n\d+k\d+|aligned|row|col|sat"
    r"|rn|rz|rm|rp|ftz|approx|full|trans|num|\d+)$"
)
#: AMD GCN/CDNA/RDNA mnemonics (``v_dot2_f32_f16``, ``s_waitcnt``, ``ds_read_b128``,
#: ``buffer_load_dword``, ``global_load_dword``…): an asm block made of these is AMD's own.
_AMD_MNEMONIC_RE = re.compile(r"^(?:v|s|ds|buffer|tbuffer|global|flat|scratch|image|exp)_[a-z0-9_]+$")
_LONG_OPCODES = ("cp.async.bulk", "ld.global.nc")
_HOPPER_OPCODES = ("wgmma", "cp.async.bulk", "setmaxnreg", "barrier.cluster", "fence.proxy.async",
                   "elect.sync", "stmatrix", "multimem", "mapa")
_PTX_HINTS = {
    "%laneid": "__lane_id()", "%smid": "__smid()", "%warpid": "threadIdx-based wave id",
    "%clock": "clock64()/wall_clock64()", "%clock64": "clock64()/wall_clock64()",
    "%globaltimer": "wall_clock64()", "mma.sync": "rocWMMA or __builtin_amdgcn_mfma_*",
    "wgmma.mma_async": "rocWMMA or __builtin_amdgcn_mfma_*", "ldmatrix": "rocWMMA load_matrix_sync",
    "cp.async": "plain global→shared loads + __syncthreads()",
    "ld.global.nc": "a plain load (or __ldg)", "shfl.sync": "__shfl_*", "bar.sync": "__syncthreads()",
    "membar": "__threadfence*()", "fence": "__threadfence*()", "vote.sync": "__ballot/__any/__all",
}


def _asm_template(src: bytes, node: Node) -> str | None:
    """The assembly template of a ``gnu_asm_expression``, adjacent literals joined."""
    tmpl = node.child_by_field_name("assembly_code")
    if tmpl is None:
        tmpl = next((c for c in node.named_children if c.type in ("string_literal", "concatenated_string")), None)
    if tmpl is None:
        return None
    parts = [text(src, c) for c in (tmpl.named_children if tmpl.type == "concatenated_string" else [tmpl])]
    return "".join(p[1:-1] if p.startswith('"') else "" for p in parts)


@lru_cache(maxsize=4096)
def _ptx_items(template: str) -> tuple[str, ...]:
    """Distinct notable PTX opcodes and special registers in an asm template, in order.

    Cached: generated kernels repeat the same few asm templates thousands of times."""
    body = template.replace("\\n", "\n").replace("\\t", " ")
    items: list[str] = []
    for stmt in re.split(r"[;\n{}]", body):
        stmt = re.sub(r"^\s*(?:\w+:)?\s*(?:@!?%?\w+\s+)?", "", stmt)
        m = re.match(r"[a-z][\w.:]*", stmt)
        if not m or stmt.startswith("."):
            continue
        op = m.group(0)
        name = next((p for p in _LONG_OPCODES if op.startswith(p)), None)
        if name is None:
            keep = []
            for part in op.split(".")[:2]:
                if keep and _TYPE_PART_RE.match(part):
                    break
                keep.append(part)
            name = ".".join(keep)
        items.append(name)
    items += ["%" + m.group(1) for m in _SREG_RE.finditer(body)]
    return tuple(dict.fromkeys(items))


def _report_ptx(ctx: Context, where: Node, template: str, in_device: bool | None = None) -> None:
    """Report an asm block in device code, or anywhere when its template is recognisably PTX.

    ``analyze`` reparses ``#define`` bodies, so an asm macro arrives here outside any
    function: there, only a PTX-looking template (dotted opcodes, special registers) counts.
    """
    if not template.strip():
        return  # asm volatile("" ::: "memory") is a portable compiler barrier
    items = _ptx_items(template)
    if items and all(_AMD_MNEMONIC_RE.match(i) for i in items):
        return  # AMD assembly (an AMD-only branch of a ported file), not PTX
    looks_ptx = any("." in i or i.startswith("%") for i in items)
    if in_device is None and not looks_ptx:  # not given: ``where`` is the asm node itself
        in_device = facts.is_device_code(ctx, where)
    if not (in_device or looks_ptx):
        return  # host inline assembly (x86, Arm) is not a GPU porting problem
    shown = ", ".join(f"`{i}`" for i in items[:4]) or "PTX"
    hopper = [i for i in items if i.startswith(_HOPPER_OPCODES)]
    msg = f"inline PTX asm ({shown}): AMD GPUs do not run PTX"
    if hopper:
        msg += f"; `{hopper[0]}` is Hopper-only"
    hints = list(dict.fromkeys(h for i in items for k, h in _PTX_HINTS.items() if i == k or i.startswith(k + ".")))
    suggestion = "replace with " + "; ".join(hints) if hints else \
        "rewrite with HIP intrinsics, or keep the PTX under #ifndef __HIP_PLATFORM_AMD__ and add an AMD path"
    ctx.report(InlinePtx, where, msg, suggestion)


@REGISTRY.visits("gnu_asm_expression", codes=(InlinePtx,))
def _asm(node: Node, ctx: Context) -> None:
    template = _asm_template(ctx.src, node)
    if template is not None:
        _report_ptx(ctx, node, template)


# --------------------------------------------------------------------------- calls


_TEX_FETCH = {"tex1Dfetch", "tex1D", "tex2D", "tex3D", "tex1DLayered", "tex2DLayered", "texCubemap",
              "tex1DLod", "tex2DLod", "tex3DLod", "tex2DGather"}
_TEX_BIND = {"cudaBindTexture", "cudaBindTexture2D", "cudaBindTextureToArray",
             "cudaBindTextureToMipmappedArray", "cudaUnbindTexture", "cudaGetTextureReference",
             "cudaGetTextureAlignmentOffset"}
# The reduce and scan headers also bring the operator functors (cg::plus…), absent with them.
_CG_MISSING = {"reduce", "inclusive_scan", "exclusive_scan", "memcpy_async", "wait", "wait_prior",
               "plus", "less", "greater", "bit_and", "bit_or", "bit_xor",
               # not in HIP 6.2's amd_hip_cooperative_groups.h (which 7.1's set shares)
               "binary_partition", "labeled_partition", "invoke_one", "invoke_one_broadcast"}
_DEVICE_LAUNCH_APIS = {"cudaLaunchDevice", "cudaGetParameterBuffer", "cudaGetParameterBufferV2"}
#: The called names whose arguments ``_call`` reads (the others never need them listed).
_ARGS_READ = frozenset({"sync", "cudaFuncSetAttribute", "static_cast", "reinterpret_cast"} | _TEX_FETCH)


def _fn_node(call: Node) -> Node | None:
    fn = call.child_by_field_name("function")
    if fn is not None and fn.type == "template_function":
        return fn.child_by_field_name("name")
    return fn


def _group_kind(node: Node | None, ctx: Context) -> str | None:
    """"grid"/"cluster" when ``node`` is ``cg::this_grid()``/``this_cluster()`` or a variable holding one."""
    if node is None:
        return None
    if node.type == "call_expression":
        name = call_name(ctx.src, node) or ""
        last = name.rsplit("::", 1)[-1]
        return {"this_grid": "grid", "this_cluster": "cluster"}.get(last)
    if node.type == "identifier":
        groups = _state(ctx).groups
        return groups.get((_func_key(ctx, node), text(ctx.src, node))) if groups else None
    return None


def _report_group_sync(ctx: Context, call: Node, kind: str | None) -> None:
    if kind == "grid":
        on_63 = ctx.options.rocm < (7, 0, 0)
        note = (f"; cooperative grid launches are only validated from ROCm 7.0 (target "
                f"{short_version(ctx.options.rocm)})") if on_63 else ""
        ctx.report(GridSync, call, f"grid-wide sync `{ctx.text(call)}` requires a cooperative launch "
                   f"with every block resident{note}",
                   "launch with hipLaunchCooperativeKernel and size the grid from "
                   "hipOccupancyMaxActiveBlocksPerMultiprocessor")
    elif kind == "cluster":
        ctx.report(HopperOnly, call, f"cluster barrier `{ctx.text(call)}`: thread-block clusters are "
                   "Hopper-only", "restructure to one block per tile; exchange data via global memory")


#: Every name ``_call`` compares the called name (or its last part) with.
_CALLS_CHECKED = frozenset(
    _CG_MISSING | _DEVICE_LAUNCH_APIS | _TEX_BIND | _TEX_FETCH | _ARGS_READ
    | {"cudaDeviceSynchronize", "clock", "clock64", "__threadfence_system", "__trap", "__nanosleep",
       "__prof_trigger", "__ldg"})


@REGISTRY.visits("call_expression", names=any_word_of(_CALLS_CHECKED), codes=(
    DynamicParallelism, HopperOnly, SharedMemoryOver64K, TextureReference, ThreadfenceSystem, CooperativeGroupsGap,
    GridSync, MemoryTypeNumeric, TrapSleep, DeviceClock, Ldg))
def _call(node: Node, ctx: Context) -> None:
    fn = _fn_node(node)
    if fn is None:
        return
    src = ctx.src
    if fn.type == "field_expression":
        field_ = fn.child_by_field_name("field")
        if field_ is not None and text(src, field_) == "sync":
            _report_group_sync(ctx, node, _group_kind(fn.child_by_field_name("argument"), ctx))
        return
    parts = qualified_parts(src, fn) if fn.type == "qualified_identifier" else [text(src, fn)]
    name = parts[-1]
    args = call_arguments(node) if name in _ARGS_READ else ()
    if len(parts) > 1 and parts[0] in _state(ctx).cg_namespaces:
        if name in _CG_MISSING:
            ctx.report(CooperativeGroupsGap, node, f"`{'::'.join(parts)}` is not in HIP's cooperative "
                       f"groups in ROCm {short_version(ctx.options.rocm)}",
                       "use a shuffle loop over the tile or hipCUB WarpReduce/WarpScan/BlockLoad")
        elif name == "sync" and args:
            _report_group_sync(ctx, node, _group_kind(args[0], ctx))
        return
    if len(parts) > 1:
        return
    if name == "cudaDeviceSynchronize" and facts.is_device_code(ctx, node):
        ctx.report(DynamicParallelism, node, "`cudaDeviceSynchronize()` in device code "
                   "(dynamic parallelism) is not supported by HIP",
                   "synchronise on the host after the launch")
    elif name in _DEVICE_LAUNCH_APIS:
        ctx.report(DynamicParallelism, node, f"`{name}` launches kernels from the device; "
                   "HIP has no dynamic parallelism", "launch from the host")
    elif name in _TEX_BIND:
        ctx.report(TextureReference, node, f"`{name}` binds a texture reference",
                   "create a texture object (cudaCreateTextureObject) and pass it to the kernel")
    elif name in _TEX_FETCH and fn.type == "identifier" and node.child_by_field_name("function").type \
            != "template_function":
        ref = text(src, args[0]) if args else ""
        ctx.report(TextureReference, node, f"`{name}({ref}, ...)` reads through a texture reference",
                   f"use a texture object: {name}<T>(tex_object, ...)")
    elif name == "cudaFuncSetAttribute" and len(args) >= 3 and \
            text(src, args[1]) == "cudaFuncAttributeMaxDynamicSharedMemorySize":
        _check_shared_size(ctx, args[2], "dynamic shared memory limit set by cudaFuncSetAttribute")
    elif name in ("clock", "clock64") and facts.is_device_code(ctx, node):
        _once(ctx, f"clock:{name}", DeviceClock, node, f"`{name}()` in device code counts at a "
              "GPU-specific rate (unreliable on RDNA3)",
              "use wall_clock64() with hipDeviceAttributeWallClockRate for time")
    elif name == "__threadfence_system":
        ctx.report(ThreadfenceSystem, node, "`__threadfence_system()` does not make writes visible "
                   "to the host unless the memory is fine-grained (coherent)",
                   "allocate the shared flag/buffer with hipHostMallocCoherent")
    elif name in ("__trap", "__nanosleep", "__prof_trigger"):
        hint = {"__trap": "abort() or __builtin_trap()",
                "__nanosleep": "__builtin_amdgcn_s_sleep(n) (units of ~64 cycles)",
                "__prof_trigger": "remove it (no AMD counterpart); use rocprof markers on the host"}[name]
        _once(ctx, f"trap:{name}", TrapSleep, node, f"`{name}` has no direct HIP counterpart", hint)
    elif name == "__ldg":
        _once(ctx, "ldg", Ldg, node, "`__ldg` is an ordinary global load on AMD GPUs",
              "keep it, or use a plain load; measure if it was a performance trick")
    elif name in ("static_cast", "reinterpret_cast") and args and args[0].type == "number_literal":
        targs = node.child_by_field_name("function").child_by_field_name("arguments")
        if targs is not None and text(src, targs).strip("<> ") == "cudaMemoryType":
            _report_memtype(ctx, node)


@REGISTRY.visits("kernel_call_syntax", codes=(DynamicParallelism, SharedMemoryOver64K))
def _launch(node: Node, ctx: Context) -> None:
    if facts.is_device_code(ctx, node):
        call = node.parent if node.parent is not None else node
        ctx.report(DynamicParallelism, call, "kernel launch from device code (dynamic parallelism) "
                   "is not supported by HIP", "launch the child kernel from the host on the same stream")
    config = [c for c in node.named_children if c.type != "comment"]
    if len(config) >= 3:
        _check_shared_size(ctx, config[2], "dynamic shared memory in this launch")


# --------------------------------------------------------------------------- HP306 shared memory


_TYPE_SIZES = {
    "char": 1, "bool": 1, "int8_t": 1, "uint8_t": 1, "short": 2, "int16_t": 2, "uint16_t": 2,
    "half": 2, "__half": 2, "__nv_bfloat16": 2, "nv_bfloat16": 2, "int": 4, "unsigned": 4,
    "float": 4, "int32_t": 4, "uint32_t": 4, "half2": 4, "__half2": 4, "__nv_bfloat162": 4,
    "long": 8, "double": 8, "int64_t": 8, "uint64_t": 8, "size_t": 8, "long long": 8,
    "float2": 8, "int2": 8, "uint2": 8, "float3": 12, "int3": 12, "float4": 16, "int4": 16,
    "uint4": 16, "double2": 16, "longlong2": 16, "double4": 32, "char4": 4, "uchar4": 4,
}


def _lds_limit(ctx: Context) -> int:
    """LDS bytes per block every --offload-arch GPU has (64 KiB; 160 KiB when all are gfx950)."""
    return gpus.lds_limit(gpus.archs_of(ctx.options))


def _lds_note(ctx: Context) -> str:
    archs = ", ".join(a.split(":")[0] for a in gpus.archs_of(ctx.options))
    note = f"LDS per block is {_lds_limit(ctx) // 1024} KiB on {archs}"
    if ctx.options.rocm < (7, 0, 0):
        return f"{note}, as on every GPU supported by ROCm {short_version(ctx.options.rocm)}"
    return note if "gfx950" in archs else f"{note}; only gfx950 (MI350/MI355) has 160 KiB"


def _check_shared_size(ctx: Context, expr: Node, what: str) -> None:
    size = _const_value(text(ctx.src, expr), _state(ctx).constants)
    limit = _lds_limit(ctx)
    if size is not None and size > limit:
        ctx.report(SharedMemoryOver64K, expr, f"{what} is {size} bytes (> {limit // 1024} KiB): {_lds_note(ctx)}",
                   "shrink the tile, or choose the size per GPU at run time")


def _element_size(src: bytes, decl: Node) -> int | None:
    type_node = decl.child_by_field_name("type")
    if type_node is None:
        return None
    name = " ".join(text(src, type_node).split())
    name = re.sub(r"^(?:unsigned|signed)\s+", "", name) if name not in _TYPE_SIZES else name
    return _TYPE_SIZES.get(name) or _TYPE_SIZES.get(name.removesuffix(" int"))


def _array_extents(src: bytes, decl: Node) -> list[str] | None:
    """Extent texts of an array declarator; None for non-arrays and unsized (dynamic) arrays."""
    extents: list[str] = []
    node = decl
    while node is not None and node.type == "array_declarator":
        size = node.child_by_field_name("size")
        if size is None:
            return None  # extern __shared__ T x[]: dynamic, sized at launch
        extents.append(text(src, size))
        node = node.child_by_field_name("declarator")
    return extents or None


def _function_name(ctx: Context, node: Node) -> str:
    func = facts.enclosing_function(ctx, node)
    decl = func.child_by_field_name("declarator") if func is not None else None
    return f"`{ctx.text(decl).split('(')[0].strip()}`" if decl is not None else "this translation unit"


def _shared_decl(node: Node, ctx: Context) -> None:
    """Add constant-sized ``__shared__`` arrays to their function's total; report the one crossing 64 KiB."""
    elem = _element_size(ctx.src, node)
    if elem is None:
        return
    st = _state(ctx)
    for d in node.children_by_field_name("declarator"):
        extents = _array_extents(ctx.src, d)
        if extents is None:
            continue
        total = elem
        for e in extents:
            v = _const_value(e, st.constants)
            if v is None:
                return
            total *= v
        key = _func_key(ctx, node)
        before = st.shared_bytes.get(key, 0)
        st.shared_bytes[key] = before + total
        limit = _lds_limit(ctx)
        if before <= limit < before + total:
            ctx.report(SharedMemoryOver64K, node, f"static __shared__ memory in {_function_name(ctx, node)} reaches "
                       f"{before + total} bytes (> {limit // 1024} KiB): {_lds_note(ctx)}",
                       "shrink the tile, or move part of the buffer to dynamic shared memory sized per GPU")


# --------------------------------------------------------------------------- declarations


_HALF_TYPES = {"half", "__half", "half2", "__half2", "__nv_bfloat16", "nv_bfloat16", "__nv_bfloat162",
               "nv_bfloat162"}


def _declared_names(decl: Node) -> list[Node]:
    """Identifier nodes declared by a declaration or parameter (through pointers, arrays, inits)."""
    out = []
    for d in decl.children_by_field_name("declarator"):
        while d is not None and d.type != "identifier":
            d = d.child_by_field_name("declarator")
        if d is not None:
            out.append(d)
    return out


def _declared_names_and_indirection(decl: Node) -> list[tuple[Node, bool]]:
    """``_declared_names`` with, for each, whether a pointer or array declarator is on the way."""
    out = []
    for d in decl.children_by_field_name("declarator"):
        indirect = False
        while d is not None and d.type != "identifier":
            indirect |= d.type in ("pointer_declarator", "array_declarator", "abstract_pointer_declarator")
            d = d.child_by_field_name("declarator")
        if d is not None:
            out.append((d, indirect))
    return out


def _qualifiers(src: bytes, decl: Node) -> set[str]:
    return {text(src, c) for c in decl.named_children if c.type in ("type_qualifier", "storage_class_specifier")}


#: A declaration ``_declaration`` can act on spells one of these (a qualifier, a half or
#: group type, ``texture<>``, ``cudaPointerAttributes``, a ``this_grid()`` initialiser), or
#: is initialised from a group variable seen before.
_DECLARATION_HINTS = re.compile(
    rb"__shared__|__managed__|const|texture|half|bfloat16|cudaPointerAttributes|_group|this_grid|this_cluster")
#: The same for a parameter, which the ``const``/``constexpr`` branch never reads.
_PARAMETER_HINTS = re.compile(
    rb"__shared__|__managed__|texture|half|bfloat16|cudaPointerAttributes|_group|this_grid|this_cluster")


#: What declarations can report, and what they record for others to report: groups
#: (HP313), texture references (HP307), constants (HP306), half values (HP311) and pointer
#: attributes (HP317). Leaving them out needs all of these disabled.
_DECLARATION_CODES = (SharedMemoryOver64K, TextureReference, HalfOperators, GridSync, ManagedMemory,
                      MemoryTypeNumeric)


@REGISTRY.visits("declaration", codes=_DECLARATION_CODES)
def _declaration(node: Node, ctx: Context) -> None:
    if _DECLARATION_HINTS.search(ctx.src, node.start_byte, node.end_byte) is None \
            and not _state(ctx).groups:
        return  # the common case, kept cheap: nearly every declaration is ordinary
    _declared(node, ctx)


@REGISTRY.visits("parameter_declaration", codes=_DECLARATION_CODES)
def _parameter(node: Node, ctx: Context) -> None:
    if _PARAMETER_HINTS.search(ctx.src, node.start_byte, node.end_byte) is None \
            and not _state(ctx).groups:
        return
    _declared(node, ctx)


def _declared(node: Node, ctx: Context) -> None:
    """What a declaration or parameter adds to the file's state, and what it reports."""
    src, st = ctx.src, _state(ctx)
    quals = _qualifiers(src, node)
    type_node = node.child_by_field_name("type")
    type_text = " ".join(text(src, type_node).split()) if type_node is not None else ""
    if "__shared__" in quals:
        _shared_decl(node, ctx)
    if "__managed__" in quals:
        _note_managed(ctx, node, "__managed__")
    if quals & {"constexpr", "const"} and node.type == "declaration":
        for d in node.children_by_field_name("declarator"):
            name, value = d.child_by_field_name("declarator"), d.child_by_field_name("value")
            if d.type == "init_declarator" and name is not None and name.type == "identifier" and value is not None:
                v = _const_value(text(src, value), st.constants)
                if v is not None:
                    st.constants[text(src, name)] = v
    if type_node is not None and type_node.type == "template_type":
        tname = type_node.child_by_field_name("name")
        if tname is not None and text(src, tname) == "texture":
            for ident in _declared_names(node):
                st.texture_refs.add(text(src, ident))
            ctx.report(TextureReference, node, f"texture reference `{type_text}` (deprecated in HIP, "
                       "removed in CUDA 12)", "use a cudaTextureObject_t created on the host")
    key = None  # the enclosing function, found only when needed (it climbs the tree)
    last = type_text.rsplit("::", 1)[-1]
    if last in _HALF_TYPES:
        key = _func_key(ctx, node)
        for n, indirect in _declared_names_and_indirection(node):
            (st.half_ptrs if indirect else st.half_vars).add((key, text(src, n)))
    if "cudaPointerAttributes" in type_text:
        st.pointer_attrs.update(text(src, n) for n in _declared_names(node))
    group = {"grid_group": "grid", "cluster_group": "cluster"}.get(last)
    for d in node.children_by_field_name("declarator"):
        value = d.child_by_field_name("value") if d.type == "init_declarator" else None
        kind = group or _group_kind(value, ctx)
        ident = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
        if kind and ident is not None and ident.type == "identifier":
            if key is None:
                key = _func_key(ctx, node)
            st.groups[(key, text(src, ident))] = kind


@REGISTRY.visits("namespace_alias_definition")
def _namespace_alias(node: Node, ctx: Context) -> None:
    names = [text(ctx.src, c) for c in node.named_children]
    if len(names) == 2 and names[1] == "cooperative_groups":
        _state(ctx).cg_namespaces.add(names[0])


# --------------------------------------------------------------------------- HP309 __CUDA_ARCH__


_ARCH_RE = re.compile(r"\b__CUDA_ARCH(?:__|_FEAT_\w+|_SPECIFIC__|_FAMILY_SPECIFIC__)")
_HIP_AWARE_RE = re.compile(r"\b(?:__HIP\w*|__gfx\w+|USE_ROCM)\b")


@REGISTRY.visits("preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef",
                 codes=(CudaArchTest,))
def _arch_test(node: Node, ctx: Context) -> None:
    cond = node.child_by_field_name("condition") or node.child_by_field_name("name")
    if cond is None:
        return
    cond_text = text(ctx.src, cond)
    if not _ARCH_RE.search(cond_text) or _HIP_AWARE_RE.search(cond_text):
        return
    if ctx.in_cuda_only_branch(cond.end_byte):
        return  # the CUDA side of a HIP guard (#elif after a HIP test, or !defined(HIP) && ...)
    arch_at = [cond.start_byte + m.start() for m in _ARCH_RE.finditer(cond_text)]
    if all(ctx.in_cuda_only_branch(at) or ctx.branches.provides(_ARCH_RE.match(cond_text, at - cond.start_byte)[0])
           for at in arch_at):
        return  # every arch test cannot change the result under HIP, or the project defines it for HIP
    directive = " ".join(text(ctx.src, node.children[0]).split())
    shown = f"{directive} {cond_text}"
    if re.search(r"[<>=]", cond_text):
        msg = f"`{shown}`: hipcc does not define __CUDA_ARCH__, so the comparison uses 0 and picks the wrong path"
        fix = "test __gfx*__ / __HIP_ARCH_HAS_* for the feature (keep the CUDA test for NVIDIA)"
    else:
        msg = f"`{shown}`: hipcc does not define __CUDA_ARCH__, so this device-pass test is false on AMD"
        fix = "use defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)"
    ctx.report(CudaArchTest, cond, msg, fix)


# --------------------------------------------------------------------------- names and includes


_HOPPER_NAMES = {
    "__cluster_dims__", "this_cluster", "cluster_group", "map_shared_rank",
    "cudaLaunchAttributeClusterDimension", "cudaFuncAttributeRequiredClusterWidth",
    "cudaFuncAttributeRequiredClusterHeight", "cudaFuncAttributeRequiredClusterDepth",
    "cudaFuncAttributeNonPortableClusterSizeAllowed", "cudaOccupancyMaxActiveClusters",
    "cudaOccupancyMaxPotentialClusterSize", "CUtensorMap", "cuTensorMapEncodeTiled",
    "cuTensorMapEncodeIm2col", "cuTensorMapEncodeIm2colWide", "cuTensorMapReplaceAddress",
}
_PIPELINE_NAMES = {"__pipeline_memcpy_async", "__pipeline_commit", "__pipeline_wait_prior",
                   "__pipeline_arrive_on"}
_CUDA_ASYNC = {"memcpy_async", "pipeline", "make_pipeline", "pipeline_shared_state", "barrier",
               "pipeline_consumer_wait_prior", "pipeline_producer_commit"}
_GRAPH_CONDITIONAL_RE = re.compile(
    r"^(?:cudaGraphConditional\w*|cudaGraphCond\w+|cudaConditionalNodeParams|cudaGraphSetConditional"
    r"|cudaGraphNodeTypeConditional|CUgraphConditional\w*|cuGraphConditional\w*|CU_GRAPH_NODE_TYPE_CONDITIONAL"
    r"|CUDA_CONDITIONAL_NODE_PARAMS)$"
)
_GRAPH_RE = re.compile(r"^(?:cudaGraph\w+|cudaStreamBeginCapture\w*)$")
_FP8_RE = re.compile(r"^__nv_(?:fp8\w*|cvt_\w*fp8\w*)$")
_MANAGED = {"cudaMallocManaged", "cudaMemAdvise", "cudaMemAdvise_v2", "cudaMemPrefetchAsync",
            "cudaMemPrefetchAsync_v2", "cudaStreamAttachMemAsync"}


def _note_managed(ctx: Context, where: Node, name: str) -> None:
    _once(ctx, "managed", ManagedMemory, where,
          f"managed memory (`{name}`): without HMM/XNACK it is host memory accessed over the bus, "
          "and advice/prefetch have little effect",
          "use explicit device allocations for hot data, or require HSA_XNACK=1 on gfx90a/gfx942")


def _maybe_noted_name(name: str) -> bool:
    """Pre-filter for ``_name``: true for every name one of its branches can report."""
    return bool(name in _HOPPER_NAMES or name in _PIPELINE_NAMES or name in _MANAGED or _FP8_RE.match(name)
                or _GRAPH_CONDITIONAL_RE.match(name) or _GRAPH_RE.match(name))


@REGISTRY.visits("identifier", "type_identifier", "field_identifier", names=_maybe_noted_name,
                 codes=(HopperOnly, AsyncCopy, Fp8Format, GraphConditional, GraphBeta, ManagedMemory))
def _name(node: Node, ctx: Context) -> None:
    name = text(ctx.src, node)
    if name in _HOPPER_NAMES:
        _once(ctx, f"hopper:{name}", HopperOnly, node,
              f"`{name}`: thread-block clusters / TMA are Hopper-only; AMD GPUs have neither",
              "redesign for one block per tile; use ordinary vectorised loads instead of TMA")
    elif name in _PIPELINE_NAMES:
        _once(ctx, f"pipe:{name}", AsyncCopy, node, f"`{name}` (asynchronous copy pipeline) has no HIP API",
              "copy global→shared synchronously and __syncthreads()")
    elif _FP8_RE.match(name):
        fix = "choose __hip_fp8_e4m3_fnuz (gfx942) or __hip_fp8_e4m3 (gfx950, gfx12) per target"
        note = "" if ctx.options.rocm >= (7, 0, 0) else "; the OCP fp8 API compatible with cuda_fp8.h arrives in ROCm 7.0"
        _once(ctx, "fp8", Fp8Format, node, f"fp8 type `{name}`: {_fp8_targets(ctx)}{note}", fix)
    elif node.type != "field_identifier" and _GRAPH_CONDITIONAL_RE.match(name):
        _once(ctx, "graph-cond", GraphConditional, node, f"`{name}`: conditional graph nodes are not "
              f"implemented in HIP graphs (ROCm {short_version(ctx.options.rocm)})",
              "move the control flow to the host or into a persistent kernel")
    elif node.type != "field_identifier" and name in _MANAGED:
        _note_managed(ctx, node, name)
    if node.type == "identifier" and _GRAPH_RE.match(name):
        _once(ctx, "graph-beta", GraphBeta, node, f"`{name}`: HIP graphs are a beta API before ROCm 7.0",
              "test capture on the target release and keep a stream-only fallback")


def _fp8_targets(ctx: Context) -> str:
    """What the --offload-arch GPUs make of CUDA's (OCP) fp8, for HP310's message."""
    targets = gpus.gpus(gpus.archs_of(ctx.options))
    ocp = [g.arch for g in targets if g.fp8 == "ocp"]
    fnuz = [g.arch for g in targets if g.fp8 != "ocp"]
    if ocp and fnuz:
        return (f"{', '.join(ocp)} {_use(ocp)} CUDA's OCP encoding, {', '.join(fnuz)} FNUZ: no one HIP type "
                "means the same on all targets, so it is left as written")
    if ocp:
        return f"{', '.join(ocp)} {_use(ocp)} CUDA's OCP encoding: left as written, not mapped to gfx942's FNUZ type"
    return (f"{', '.join(fnuz)} {_use(fnuz)} the FNUZ encoding (gfx950/gfx12 the OCP one NVIDIA uses): values "
            "convert, bit patterns and ranges differ")


def _use(archs: list[str]) -> str:
    return "uses" if len(archs) == 1 else "use"


@REGISTRY.visits("qualified_identifier", codes=(Wmma, AsyncCopy))
def _qualified(node: Node, ctx: Context) -> None:
    if not facts.outermost_qualified(ctx, node):
        return
    parts = qualified_parts(ctx.src, node)
    if parts[0] in ("nvcuda", "wmma") and len(parts) > 1:  # once per function that uses it
        _once(ctx, f"wmma:{_func_key(ctx, node)}", Wmma, node, f"`{'::'.join(parts)}`: HIP has no warp-matrix (wmma) API",
              "port to rocWMMA (rocwmma::fragment, load_matrix_sync, mma_sync, store_matrix_sync)")
    elif parts[0] == "cuda" and len(parts) == 2 and parts[1] in _CUDA_ASYNC:
        _once(ctx, f"async:{parts[1]}", AsyncCopy, node, f"`cuda::{parts[1]}` has no HIP implementation",
              "copy global→shared synchronously and __syncthreads(); double-buffer by hand")


@REGISTRY.visits("using_declaration", codes=(Wmma,))
def _using(node: Node, ctx: Context) -> None:
    if re.search(r"\bnvcuda\b", text(ctx.src, node)):
        _once(ctx, "wmma-ns", Wmma, node, f"`{text(ctx.src, node)}`: HIP has no warp-matrix (wmma) API",
              "port to rocWMMA")


_INCLUDES = {
    "mma.h": (Wmma, "wmma-inc", "HIP has no warp-matrix (wmma) API", "include <rocwmma/rocwmma.hpp> and port to rocWMMA"),
    "cuda/pipeline": (AsyncCopy, "async-inc", "libcu++ pipelines have no HIP implementation", "synchronous copies + __syncthreads()"),
    "cuda/barrier": (AsyncCopy, "async-inc", "cuda::barrier has no HIP implementation", "__syncthreads() or a hand-written barrier"),
    "cuda_pipeline.h": (AsyncCopy, "async-inc", "the __pipeline_* primitives have no HIP implementation", "synchronous copies + __syncthreads()"),
    "cuda_pipeline_primitives.h": (AsyncCopy, "async-inc", "the __pipeline_* primitives have no HIP implementation", "synchronous copies + __syncthreads()"),
    "cuda_awbarrier.h": (AsyncCopy, "async-inc", "arrive/wait barriers have no HIP implementation", "__syncthreads()"),
}


@REGISTRY.visits("preproc_include", codes=(Wmma, AsyncCopy))
def _include(node: Node, ctx: Context) -> None:
    path = node.child_by_field_name("path")
    if path is None:
        return
    header = text(ctx.src, path).strip('<>"')
    entry = _INCLUDES.get(header)
    if entry is not None:
        rule, key, why, fix = entry
        _once(ctx, key, rule, node, f"`#include <{header}>`: {why}", fix)


# --------------------------------------------------------------------------- expressions


_ARITH_OPS = {"+", "-", "*", "/", "<", ">", "<=", ">=", "==", "!="}


def _operand_name(src: bytes, n: Node | None) -> str | None:
    if n is not None and n.type == "subscript_expression":
        n = n.child_by_field_name("argument")
    return text(src, n) if n is not None and n.type == "identifier" else None


def _report_memtype(ctx: Context, node: Node) -> None:
    ctx.report(MemoryTypeNumeric, node, f"`{ctx.text(node)}` compares or builds a cudaMemoryType from a "
               "number; hipMemoryType numbering differs across HIP releases",
               "use the named enumerators (cudaMemoryTypeDevice, …)")


#: HP311 needs a half/bfloat16 variable, HP317 memoryType or a cudaPointerAttributes variable.
@REGISTRY.visits("binary_expression", "assignment_expression",
                 source=any_bytes_of(b"half", b"bfloat16", b"memoryType", b"cudaPointerAttributes"),
                 codes=(HalfOperators, MemoryTypeNumeric))
def _binary(node: Node, ctx: Context) -> None:
    st = _state(ctx)
    if not st.half_vars and not st.half_ptrs and not st.pointer_attrs and not st.mentions_memory_type(ctx.src):
        return  # neither HP311 (a half variable) nor HP317 (memoryType / a pointer attribute) can apply
    op = node.child_by_field_name("operator")
    if op is None:
        return
    op_text = text(ctx.src, op).rstrip("=") if node.type == "assignment_expression" else text(ctx.src, op)
    if op_text not in _ARITH_OPS:
        return
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    for a, b in ((left, right), (right, left)):
        if a is not None and a.type == "field_expression" and b is not None and b.type == "number_literal" \
                and node.type == "binary_expression":
            field_ = text(ctx.src, a.child_by_field_name("field"))
            obj = _operand_name(ctx.src, a.child_by_field_name("argument"))
            if field_ == "memoryType" or (field_ == "type" and obj in st.pointer_attrs):
                _report_memtype(ctx, node)
                return
    if not st.half_vars and not st.half_ptrs:
        return
    key = _func_key(ctx, node)
    for side in (left, right):
        name = _operand_name(ctx.src, side)
        element = side is not None and side.type == "subscript_expression"  # p[i]: a value
        if name is not None and ((key, name) in st.half_vars or (element and (key, name) in st.half_ptrs)):
            _once(ctx, "half-ops", HalfOperators, node, f"operator `{text(ctx.src, op)}` on half/bfloat16 "
                  f"value `{name}`: rejected when __HIP_NO_HALF_OPERATORS__ / __HIP_NO_BFLOAT16_OPERATORS__ "
                  "are defined (PyTorch extension builds)", "use __hadd/__hmul/__hlt… or compute in float")
            return


@REGISTRY.visits("cast_expression", source=any_bytes_of(b"cudaMemoryType"), codes=(MemoryTypeNumeric,))
def _cast(node: Node, ctx: Context) -> None:
    type_node = node.child_by_field_name("type")
    value = node.child_by_field_name("value")
    if type_node is not None and value is not None and value.type == "number_literal" \
            and text(ctx.src, type_node).strip() == "cudaMemoryType":
        _report_memtype(ctx, node)
