"""HP2xx — code that assumes a 32-lane warp.

A wave on CDNA / Instinct (gfx908, gfx90a, gfx942, gfx950) has 64 lanes; RDNA runs HIP in
wave32. CUDA code hard-codes 32 in masks, lane arithmetic, shuffle ladders, shared-array
sizes and constants; on wave64 most of these compile and then compute half the answer.
Facts: ../shared/reference/porting-hazards.md "Warp size" and rocm-versions.md §5.

Precision matters more than recall here: a 32 or a 0xffffffff is only reported where the
syntax ties it to a warp (the mask argument of a ``*_sync`` builtin, an operand derived
from ``threadIdx``, a name that says "warp" or "lane", a shuffle).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from hipport.edits import Edit
from hipport.findings import Effort, Severity
from hipport.parse import Node, call_arguments, call_name, find_all, function_qualifiers, parse, text, walk
from hipport.registry import any_bytes_of, any_word_of
from hipport.rules import REGISTRY
from hipport.versions import short_version

if TYPE_CHECKING:
    from hipport.context import Context

# -- vocabulary ----------------------------------------------------------------------------

#: Warp-sync builtins HIP gates behind HIP_ENABLE_WARP_SYNC_BUILTINS before 7.0.
SYNC_BUILTINS = frozenset({
    "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
    "__any_sync", "__all_sync", "__uni_sync", "__match_any_sync", "__match_all_sync",
})
#: Warp-sync builtins that do not exist at all before ROCm 7.0.
NEW_IN_7 = frozenset({
    "__syncwarp", "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
    "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync",
})
#: Builtins whose first argument is a lane mask.
MASKED = SYNC_BUILTINS | NEW_IN_7
#: Builtins that return a lane mask (64 bits on HIP).
BALLOTS = frozenset({"__ballot", "__ballot_sync", "__activemask", "__match_any_sync", "__match_all_sync"})
#: 32-bit bit operations and their 64-bit counterparts.
BIT_OPS = {"__popc": "__popcll", "__ffs": "__ffsll", "__clz": "__clzll", "__brev": "__brevll"}
#: Shuffles: index of the lane-offset argument and of the optional ``width`` argument.
SHUFFLES: dict[str, tuple[int | None, int]] = {
    "__shfl": (None, 2), "__shfl_up": (1, 2), "__shfl_down": (1, 2), "__shfl_xor": (1, 2),
    "__shfl_sync": (None, 3), "__shfl_up_sync": (2, 3), "__shfl_down_sync": (2, 3),
    "__shfl_xor_sync": (2, 3),
}
#: Types of 32 bits a mask must not be stored in.
MASK32_TYPES = frozenset({
    "unsigned", "unsigned int", "uint32_t", "std::uint32_t", "int", "int32_t", "uint", "signed",
})
#: Names that, in device code, hold a thread index.
THREAD_NAMES = frozenset({"tid", "tidx", "thread_id", "threadId", "thread_idx", "threadIdx_x", "ltid"})
THREAD_BUILTINS = frozenset({"threadIdx", "blockDim"})
AMDGCN_MACROS = frozenset({"__AMDGCN_WAVEFRONT_SIZE", "__AMDGCN_WAVEFRONT_SIZE__"})

_WARP_SIZE_NAME = re.compile(
    r"(?:^|_)(?:k_?)?warp(?:_?(?:size|sz|threads|lanes|width|len))?$|(?:threads|lanes)_?per_?warp$", re.I
)
_WARP_LOG_NAME = re.compile(r"log2?_?warp|warp_?(?:size_?)?log", re.I)
_LANE_NAME = re.compile(r"lane", re.I)
_AMDGCN_RE = re.compile(rb"\b__AMDGCN_WAVEFRONT_SIZE(?:__)?\b")
_COMMENT_RE = re.compile(r"/\*.*?\*/|//.*", re.S)
_INT_RE = re.compile(r"^(0[xX][0-9a-fA-F']+|0[bB][01']+|[0-9']+)([uUlLzZ]*)$")

FULL_MASK_64 = b"0xffffffffffffffffull"


# -- rules ---------------------------------------------------------------------------------

@REGISTRY.rule
class WarpMask32:
    """32-bit full mask passed to a warp-sync builtin

    ## Why
    HIP's `*_sync` builtins take a 64-bit lane mask and `static_assert` on its type: a
    32-bit literal such as `0xffffffff`, `~0u`, `(unsigned)-1` or `-1` does not compile, and
    a 64-bit-typed `0xffffffffull` compiles but names only lanes 0–31 of a 64-lane wave
    (CDNA), so half the wave silently drops out of the reduction. Also reported when the
    mask is a macro or a file-scope constant defined as such a value in the same file.

    ## Example
    ```cuda
    v += __shfl_down_sync(0xffffffff, v, offset);
    ```
    becomes
    ```cuda
    v += __shfl_down_sync(0xffffffffffffffffull, v, offset);
    ```

    ## Fix
    `hipport convert` replaces a literal full mask with `0xffffffffffffffffull`. Masks that
    come from a macro or a constant are reported at the use: widen the definition, or use
    `__activemask()` where the intent is "the lanes that are running".
    """

    code = "HP201"
    slug = "warp-mask-32bit"
    severity = Severity.HIGH
    effort = Effort.NONE


@REGISTRY.rule
class WarpMaskVariable32:
    """Lane mask stored in a 32-bit variable

    ## Why
    `__ballot_sync`, `__ballot`, `__activemask` and `__match_*_sync` return 64-bit masks on
    HIP. Storing one in `unsigned`/`uint32_t` drops lanes 32–63 of a wave64; passing a 32-bit
    variable as the mask of a `*_sync` builtin trips HIP's "mask must be a 64-bit integer"
    `static_assert`.

    ## Example
    ```cuda
    unsigned active = __ballot_sync(0xffffffffffffffffull, x > 0);
    ```
    becomes
    ```cuda
    unsigned long long active = __ballot_sync(0xffffffffffffffffull, x > 0);
    ```

    ## Fix
    Declare masks as `unsigned long long` (or `uint64_t`), including function parameters
    that carry a mask into a shuffle helper.
    """

    code = "HP202"
    slug = "warp-mask-variable-32bit"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.rule
class BallotBitOp32:
    """32-bit bit operation applied to a ballot or active mask

    ## Why
    `__popc`, `__ffs`, `__clz` and `__brev` take 32 bits. Applied to a 64-bit ballot they
    count or search only lanes 0–31: a vote over a 64-lane wave is silently wrong.

    ## Example
    ```cuda
    int n = __popc(__ballot_sync(mask, pred));
    ```
    becomes
    ```cuda
    int n = __popcll(__ballot_sync(mask, pred));
    ```

    ## Fix
    Use `__popcll`, `__ffsll`, `__clzll`, `__brevll`. For `__clz`/`__brev` also re-derive the
    arithmetic around them (`31 - __clz(m)` becomes `63 - __clzll(m)`).
    """

    code = "HP203"
    slug = "ballot-bitop-32bit"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.rule
class LaneArithmetic32:
    """Lane or warp index computed with a hard-coded 32

    ## Why
    `threadIdx.x & 31`, `% 32`, `/ 32` and `>> 5` compute the lane and the warp of a thread
    for a 32-lane warp; on a 64-lane wave they give the wrong lane and twice as many
    "warps". `1u << lane` is a 32-bit lane bit: for lanes 32–63 it is undefined. Only
    reported when the operand is a thread index (`threadIdx`, `blockDim`, a variable
    assigned from them, or a name such as `tid`/`lane`).

    ## Example
    ```cuda
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x / 32;
    unsigned bit = 1u << lane;
    ```
    becomes
    ```cuda
    int lane = threadIdx.x % warpSize;
    int warp = threadIdx.x / warpSize;
    unsigned long long bit = 1ull << lane;
    ```

    ## Fix
    Use `warpSize` (a run-time value from ROCm 7.0) or a per-architecture `WARP_SIZE`
    constant, and 64-bit lane bits.
    """

    code = "HP204"
    slug = "lane-arithmetic-32"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.rule
class SharedArrayWarp32:
    """`__shared__` array sized for 32-lane warps

    ## Why
    Block reductions keep one slot per lane or per warp: `__shared__ float s[32]`,
    `s[BLOCK / 32]`, `s[WARP_SIZE]`. With 64-lane waves a per-lane array is too small and a
    per-warp array is indexed by a warp id that is now computed differently. Worth a look,
    not always a bug (a per-warp array of 32 still fits 1024 threads of wave64).

    ## Example
    ```cuda
    __shared__ float partial[32];
    ```
    becomes
    ```cuda
    __shared__ float partial[1024 / 32];  // one slot per wave for either wave size
    ```

    ## Fix
    Size per-lane storage for 64 lanes and per-warp storage for the smallest wave (32), and
    index it with `warpSize`-based lane/warp ids.
    """

    code = "HP205"
    slug = "shared-array-warp32"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.rule
class WarpTemplate32:
    """Template or `static_assert` that fixes the warp size at 32

    ## Why
    `template <int WARP_SIZE = 32>`, `WarpReduce<float, 32>` and
    `static_assert(kWarpSize == 32, ...)` build the 32-lane warp into types. On a 64-lane
    wave they reduce half the wave, or the assertion stops being true for the code it
    guards.

    ## Example
    ```cuda
    template <int WARP_SIZE = 32> __device__ float warp_sum(float v);
    ```
    becomes
    ```cuda
    template <int WARP_SIZE> __device__ float warp_sum(float v);  // instantiated per device
    ```

    ## Fix
    Query `hipDeviceAttributeWarpSize` on the host and launch the instantiation for it, or
    use a per-architecture compile-time constant in device code.
    """

    code = "HP206"
    slug = "warp-template-32"
    severity = Severity.MEDIUM
    effort = Effort.MEDIUM


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


@REGISTRY.rule
class WarpSizeConstant32:
    """Warp size defined as 32

    ## Why
    `#define WARP_SIZE 32`, `constexpr int kWarpSize = 32`, `C10_WARP_SIZE`-style names
    (and `LOG_WARP_SIZE 5`) carry the 32-lane assumption into every mask, lane id, ladder
    and buffer that uses them (ROCm/pytorch #857, apex #231, bitsandbytes #86).

    ## Example
    ```cuda
    #define WARP_SIZE 32
    ```
    becomes
    ```cuda
    #if defined(__GFX8__) || defined(__GFX9__)
    #define WARP_SIZE 64
    #else
    #define WARP_SIZE 32
    #endif
    ```

    ## Fix
    Per-architecture value in device code; `hipDeviceAttributeWarpSize` on the host (a
    host-side 32 is wrong for Instinct GPUs whatever the device code does).
    """

    code = "HP209"
    slug = "warp-size-constant-32"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


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


@REGISTRY.rule
class LaunchBoundsSecondArgument:
    """`__launch_bounds__` with a second argument

    ## Why
    In CUDA the second argument is the minimum number of *blocks per multiprocessor*; in
    HIP it is the minimum number of *waves per execution unit*. The same number asks the
    compiler for a different occupancy, which changes register allocation (spills or a
    compile error when the request cannot be met).

    ## Example
    ```cuda
    __global__ void __launch_bounds__(256, 4) k(float* x);
    ```
    becomes
    ```cuda
    __global__ void __launch_bounds__(256) k(float* x);  // or a re-derived waves-per-EU value
    ```

    ## Fix
    Drop the second argument or re-derive it as waves per EU for the target GPU.
    """

    code = "HP212"
    slug = "launch-bounds-min-blocks"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.rule
class ShuffleWidth32:
    """Shuffle with `width` 32

    ## Why
    `__shfl*(…, 32)` splits the wave into 32-lane segments. On a 64-lane wave that is two
    independent halves: a reduction or broadcast meant for "the whole warp" covers half.

    ## Example
    ```cuda
    v = __shfl_sync(mask, v, 0, 32);
    ```
    becomes
    ```cuda
    v = __shfl_sync(mask, v, 0);  // whole wave; or keep 32 if 32-lane tiles are intended
    ```

    ## Fix
    Omit `width` (defaults to `warpSize`) unless 32-lane sub-groups are really meant.
    """

    code = "HP213"
    slug = "shuffle-width-32"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@REGISTRY.rule
class ShuffleLadder16:
    """Shuffle ladder that starts at 16

    ## Why
    `for (int o = 16; o > 0; o >>= 1)` or the unrolled `16, 8, 4, 2, 1` sequence reduces 32
    lanes. On a 64-lane wave lanes 32–63 are never combined with 0–31: wrong sums (cupy PR
    #9977). Ascending ladders bounded by 32 (`o < 32`) have the same problem.

    ## Example
    ```cuda
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(mask, v, o);
    ```
    becomes
    ```cuda
    for (int o = warpSize / 2; o > 0; o >>= 1) v += __shfl_down_sync(mask, v, o);
    ```

    ## Fix
    Start at `warpSize / 2` (or a per-architecture `WARP_SIZE / 2`).
    """

    code = "HP214"
    slug = "shuffle-ladder-16"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.rule
class WarpSyncBuiltinsGated:
    """Warp-sync builtins are off by default before ROCm 7.0

    ## Why
    `__shfl_*_sync`, `__ballot_sync`, `__any_sync`, `__all_sync`, `__match_*_sync` exist
    since ROCm 6.2 but only when `HIP_ENABLE_WARP_SYNC_BUILTINS` is defined; without it the
    file does not compile. From 7.0 they are on by default. Reported once per function.

    ## Example
    ```cuda
    v += __shfl_down_sync(0xffffffffffffffffull, v, o);
    ```
    compiles on 6.3 with
    ```cuda
    #define HIP_ENABLE_WARP_SYNC_BUILTINS
    #include <hip/hip_runtime.h>
    ```

    ## Fix
    Build with `-DHIP_ENABLE_WARP_SYNC_BUILTINS` (or define it before including the HIP
    runtime), or use the mask-less `__shfl_down` family.
    """

    code = "HP215"
    slug = "warp-sync-builtins-gated"
    severity = Severity.MEDIUM
    effort = Effort.SMALL
    rocm_max = (7, 0, 0)


@REGISTRY.rule
class WarpSyncMissing:
    """`__syncwarp` / `__reduce_*_sync` do not exist before ROCm 7.0

    ## Why
    ROCm 7.0 added `__syncwarp` and `__reduce_{add,min,max,and,or,xor}_sync`; earlier
    releases have no such functions, with or without `HIP_ENABLE_WARP_SYNC_BUILTINS`.

    ## Example
    ```cuda
    int total = __reduce_add_sync(mask, x);
    ```
    becomes
    ```cuda
    int total = x;
    for (int o = warpSize / 2; o > 0; o >>= 1) total += __shfl_xor(total, o);
    ```

    ## Fix
    Target ROCm 7.0 or later; otherwise drop `__syncwarp()` (lanes of a wave execute in
    lockstep) or replace it with `__builtin_amdgcn_wave_barrier()`, and write reductions
    with shuffles or hipCUB `WarpReduce`.
    """

    code = "HP216"
    slug = "warp-sync-missing"
    severity = Severity.HIGH
    effort = Effort.MEDIUM
    rocm_max = (7, 0, 0)


# -- small syntax helpers ------------------------------------------------------------------

def _strip(node: Node) -> Node:
    """The expression inside any parentheses."""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def _int_value(src: bytes, node: Node) -> tuple[int, str] | None:
    """(value, suffix) of an integer literal, with ``-1`` written as ``-1`` or ``- 1``."""
    node = _strip(node)
    sign = 1
    if node.type == "unary_expression" and text(src, node.children[0]) == "-":
        sign, node = -1, _strip(node.named_children[0])
    if node.type != "number_literal":
        return None
    raw = text(src, node)
    if raw.startswith("-"):
        sign, raw = -sign, raw[1:]
    m = _INT_RE.match(raw)
    if not m:
        return None
    digits = m.group(1).replace("'", "")
    prefix = digits[:2].lower()
    base = 16 if prefix == "0x" else 2 if prefix == "0b" else 8 if len(digits) > 1 and digits[0] == "0" else 10
    try:
        return sign * int(digits, base), m.group(2).lower()
    except ValueError:  # 09 and friends: not a valid literal
        return None


def _is_int(src: bytes, node: Node | None, *values: int) -> bool:
    v = _int_value(src, node) if node is not None else None
    return v is not None and v[0] in values


def _is_full_mask32(src: bytes, node: Node) -> bool:
    """True for the spellings of "all 32 lanes": 0xffffffff (any suffix), ~0u, -1, (unsigned)-1."""
    node = _strip(node)
    if node.type == "cast_expression":
        ty = node.child_by_field_name("type")
        value = node.child_by_field_name("value")
        if ty is None or value is None or _norm(text(src, ty)) not in MASK32_TYPES:
            return False
        return _is_full_mask32(src, value) or _is_int(src, value, -1)
    if node.type == "unary_expression" and text(src, node.children[0]) == "~":
        v = _int_value(src, node.named_children[0])
        return v is not None and v[0] == 0 and "l" not in v[1]
    v = _int_value(src, node)
    if v is None:
        return False
    return v[0] == 0xFFFFFFFF or (v[0] == -1 and "l" not in v[1])


@lru_cache(maxsize=256)
def _macro_is_full_mask32(body: str) -> bool:
    """Whether a macro body is a 32-bit full mask: parse it as an expression and ask."""
    src = f"int __hipport_probe = ({body});".encode()
    tree = parse(src)
    for node in walk(tree.root_node):
        if node.type == "init_declarator":
            value = node.child_by_field_name("value")
            return value is not None and not tree.root_node.has_error and _is_full_mask32(src, value)
    return False


def _norm(type_text: str) -> str:
    return " ".join(type_text.split())


def _macro_body(src: bytes, define: Node) -> str:
    value = define.child_by_field_name("value")
    return _COMMENT_RE.sub(" ", text(src, value)).strip() if value is not None else ""


# -- per-file facts (macros, file-scope variables) -----------------------------------------

class _Var(NamedTuple):
    """A declared variable: enough to know its width and where its value came from.
    (A named tuple: functions declare many, and this is built for each.)"""

    name: str
    type: str
    node: Node  # the declared identifier
    init: Node | None
    in_for_init: bool = False


@dataclass
class _FileFacts:
    macros: dict[str, list[tuple[str, Node]]] = field(default_factory=dict)  # name -> [(body, #define)]
    globals: dict[str, _Var] = field(default_factory=dict)
    warp_size_aliases: set[str] = field(default_factory=set)  # macros defined as warpSize
    enables_warp_sync: bool = False


def _warp_size_aliases(ctx: Context) -> set[str] | frozenset[str]:
    """Macros defined as ``warpSize``; none (and no file walk) when the file never says it."""
    aliases = ctx.scratch.get("warp:aliases")
    if aliases is None:
        aliases = ctx.scratch["warp:aliases"] = (
            _file_facts(ctx).warp_size_aliases if b"warpSize" in ctx.src else frozenset())
    return aliases


def _file_facts(ctx: Context) -> _FileFacts:
    """Object-like macros and file-scope variables, collected once per file: from the
    nodes the walk recorded once it is over (``check_functions`` runs then), else (a
    visitor asking during the walk) from a query of the whole tree. Both see the same
    nodes in the same order."""
    facts = ctx.scratch.get("warp:facts")
    if facts is None:
        if ctx.scratch.get("warp:walked"):
            nodes = [n for n in ctx.scratch.get("warp:nodes", ()) if n.type in _FACT_NODES]
        else:
            nodes = find_all(ctx.tree.root_node, _FACT_NODES)
        facts = ctx.scratch["warp:facts"] = _collect_file_facts(ctx.src, nodes)
    return facts


_FACT_NODES = ("preproc_def", "declaration")


def _collect_file_facts(src: bytes, nodes: list[Node]) -> _FileFacts:
    facts = _FileFacts()
    for node in nodes:
        if node.type == "preproc_def":
            name = node.child_by_field_name("name")
            if name is not None:
                macro, body = text(src, name), _macro_body(src, node)
                facts.macros.setdefault(macro, []).append((body, node))
                if body.strip("() ") == "warpSize":
                    facts.warp_size_aliases.add(macro)
                facts.enables_warp_sync |= macro == "HIP_ENABLE_WARP_SYNC_BUILTINS"
        elif not _in_function(node):
            for var in _declared_vars(src, node):
                facts.globals[var.name] = var
    return facts


def _in_function(node: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type == "function_definition":
            return True
        parent = parent.parent
    return False


def _declared_vars(src: bytes, decl: Node, in_for_init: bool = False) -> Iterator[_Var]:
    """Variables declared by a declaration or parameter declaration."""
    ty = decl.child_by_field_name("type")
    type_text = _norm(text(src, ty)) if ty is not None else ""
    for d in decl.children_by_field_name("declarator"):
        init = None
        if d.type == "init_declarator":
            init = d.child_by_field_name("value")
            d = d.child_by_field_name("declarator")
        if decl.type == "optional_parameter_declaration":
            init = decl.child_by_field_name("default_value")
        if d is not None and d.type == "identifier":
            yield _Var(text(src, d), type_text, d, init, in_for_init)


# -- per-function analysis: masks, ballots, lane arithmetic ---------------------------------

@dataclass
class _Function:
    """What one function body declares and computes, gathered in one walk."""

    vars: dict[str, _Var] = field(default_factory=dict)
    assigned: dict[str, list[Node]] = field(default_factory=dict)  # name -> values assigned
    calls: list[tuple[str, Node]] = field(default_factory=list)
    binaries: list[Node] = field(default_factory=list)  # those with a lane-arithmetic operator
    device_like: bool = False


_LANE_OPERATORS = frozenset({"&", "%", "/", ">>", "<<", "<", ">="})
#: Operator -> the right operand that makes it warp arithmetic (``_Scope.lane_op``);
#: ``tid < 32`` only in the condition of an ``if`` whose body does warp work (``_first_warp``).
_LANE_OPERANDS = {"&": (31,), "%": (32,), "/": (32,), ">>": (5,), "<": (32,), ">=": (32,)}
_WARP_WORK_RE = re.compile(rb"shfl|warp|ballot|__any|__all|__activemask|__syncwarp|volatile", re.I)
_GATHERED = ("declaration", "assignment_expression", "call_expression", "binary_expression", "field_expression")


@REGISTRY.visits(*(t for t in _GATHERED if t != "call_expression"), "preproc_def")
def _record(node: Node, ctx: Context) -> None:
    """Keep, in document order, the nodes ``_gather`` and ``_file_facts`` read: the walk
    meets them anyway, and a query per function body (and one of the whole tree for the
    file's macros) was a second traversal of nearly every node."""
    if not ctx.in_macro_body:  # another tree: not part of any function body here
        nodes = ctx.scratch.get("warp:nodes")
        if nodes is None:
            nodes = ctx.scratch["warp:nodes"] = []
        nodes.append(node)


#: The only calls the function checks read (``_Function.calls`` is looked up by these).
_GATHERED_CALLS = MASKED | BALLOTS | frozenset(BIT_OPS) | SYNC_BUILTINS


@REGISTRY.visits("call_expression", names=any_word_of(_GATHERED_CALLS))
def _record_call(node: Node, ctx: Context) -> None:
    """``_record`` for the calls some function check can read; most calls are none."""
    _record(node, ctx)


def _gather(ctx: Context, func: Node) -> _Function:
    """What ``func`` declares, assigns and calls, from the nodes the walk recorded (or,
    for a function in a ``#define`` body, from a query of that body's own tree)."""
    src = ctx.src
    info = _Function(device_like=bool(function_qualifiers(src, func) & {"__global__", "__device__"}))
    declarator = func.child_by_field_name("declarator")
    params = declarator.child_by_field_name("parameters") if declarator is not None else None
    for p in params.named_children if params is not None else ():
        if p.type in ("parameter_declaration", "optional_parameter_declaration"):
            for var in _declared_vars(src, p):
                info.vars[var.name] = var
    body = func.child_by_field_name("body")
    if body is None:
        return info
    nodes = find_all(body, _GATHERED) if ctx.in_macro_body else _recorded_within(ctx, body)
    for node in nodes:
        t = node.type
        if t == "declaration":
            parent = node.parent
            in_for = parent is not None and parent.type == "for_statement" and (
                parent.child_by_field_name("initializer") == node
            )
            for var in _declared_vars(src, node, in_for):
                info.vars[var.name] = var
        elif t == "assignment_expression" and text(src, node.child_by_field_name("operator")) == "=":
            left = node.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                info.assigned.setdefault(text(src, left), []).append(node.child_by_field_name("right"))
        elif t == "call_expression":
            name = call_name(src, node)
            if name:
                info.calls.append((name, node))
                info.device_like |= name in MASKED or name in BALLOTS
        elif t == "binary_expression":
            op = node.child_by_field_name("operator")
            if op is None or op.type in _LANE_OPERATORS:  # the only ones _check_lane_arithmetic reads
                info.binaries.append(node)
        elif t == "field_expression" and not info.device_like:  # it only sets device_like
            arg = node.child_by_field_name("argument")
            info.device_like |= arg is not None and text(src, arg) in THREAD_BUILTINS
    return info


def _recorded_within(ctx: Context, node: Node) -> list[Node]:
    """The recorded nodes inside ``node`` (those starting within it), in document order."""
    nodes = ctx.scratch.get("warp:nodes", [])
    starts = ctx.scratch.get("warp:starts")
    if starts is None or len(starts) != len(nodes):
        starts = ctx.scratch["warp:starts"] = [n.start_byte for n in nodes]
    return nodes[bisect_left(starts, node.start_byte):bisect_left(starts, node.end_byte)]


class _Scope:
    """Answers "is this expression a thread index / a lane / a ballot?" inside one function."""

    def __init__(self, ctx: Context, info: _Function) -> None:
        self.src, self.info = ctx.src, info
        self._thread_vars: dict[str, str] | None = None  # derived on first use: most functions never ask
        self._lane_vars: set[str] = set()

    @property
    def thread_vars(self) -> dict[str, str]:
        """Variables initialised from a thread index: name -> ``"local"`` | ``"global"``."""
        if self._thread_vars is None:
            self._derive()
        return self._thread_vars  # type: ignore[return-value]

    @property
    def lane_vars(self) -> set[str]:
        """Variables initialised with a lane expression."""
        if self._thread_vars is None:
            self._derive()
        return self._lane_vars

    def _derive(self) -> None:
        self._thread_vars = {}  # seen (partly filled) by the derivations below
        for var in self.info.vars.values():  # document order: a derivation sees earlier ones
            if var.init is None or var.in_for_init:
                continue
            kind = self.thread_index_kind(var.init)
            if kind:
                self._thread_vars[var.name] = kind
            if self._is_lane_expr(var.init):
                self._lane_vars.add(var.name)

    def thread_index_kind(self, node: Node) -> str | None:
        """``"local"`` for an index within the block (threadIdx, blockDim, tid…), ``"global"``
        when blockIdx is mixed in (then ``% 32`` is as often a bitmap word as a lane), else None."""
        thread = block = False
        thread_vars = self.thread_vars
        for n in _index_parts(self.src, node):
            if n.type == "field_expression":
                arg = n.child_by_field_name("argument")
                name = text(self.src, arg) if arg is not None else ""
                block |= name == "blockIdx"
                thread |= name in THREAD_BUILTINS
            elif n.type == "identifier":
                name = text(self.src, n)
                kind = thread_vars.get(name)
                thread |= kind is not None or (self.info.device_like and name in THREAD_NAMES)
                block |= kind == "global"
        if not thread:
            return None
        return "global" if block else "local"

    def _is_lane_expr(self, node: Node) -> bool:
        node = _strip(node)
        if node.type == "call_expression" and call_name(self.src, node) == "__lane_id":
            return True
        return node.type == "binary_expression" and self.lane_op(node) is not None

    def is_lane(self, node: Node) -> bool:
        node = _strip(node)
        if node.type == "identifier":
            name = text(self.src, node)
            return name in self.lane_vars or (self.info.device_like and bool(_LANE_NAME.search(name)))
        return self._is_lane_expr(node)

    def lane_op(self, node: Node) -> str | None:
        """``"& 31"`` etc. when ``node`` is warp arithmetic with 32 on a thread index."""
        op = text(self.src, node.child_by_field_name("operator"))
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None:
            return None
        want = _LANE_OPERANDS.get(op)
        if want is None:
            return None
        if op == "&" and _is_int(self.src, left, 31):
            left, right = right, left
        v = _int_value(self.src, right)
        kind = self.thread_index_kind(left) if v is not None and v[0] in want else None
        if kind is None or (kind == "global" and not _assigned_to_lane_or_warp(self.src, node)):
            return None
        if op in ("<", ">=") and (kind != "local" or not _first_warp(self.src, node)):
            return None
        return f"{op} {text(self.src, right)}"

    def is_ballot(self, node: Node, depth: int = 0) -> str | None:
        """The ballot builtin a value comes from (directly, through casts, &|^~, or a variable)."""
        node = _strip(node)
        if depth > 4:
            return None
        if node.type == "call_expression":
            name = call_name(self.src, node)
            return name if name in BALLOTS else None
        if node.type == "cast_expression":
            value = node.child_by_field_name("value")
            return self.is_ballot(value, depth + 1) if value is not None else None
        if node.type in ("binary_expression", "unary_expression"):
            op = text(self.src, node.child_by_field_name("operator"))
            if op in ("&", "|", "^", "~"):
                for c in node.named_children:
                    found = self.is_ballot(c, depth + 1)
                    if found:
                        return found
            return None
        if node.type == "identifier":
            name = text(self.src, node)
            var = self.info.vars.get(name)
            values = self.info.assigned.get(name, [])
            if var is not None and var.init is not None:
                values = [var.init, *values]
            for v in values:
                if v is not None and v != node:
                    found = self.is_ballot(v, depth + 1)
                    if found:
                        return found
        return None


def _assigned_to_lane_or_warp(src: bytes, node: Node) -> bool:
    """``int lane = gid % 32;``: the name says the value is a lane or warp id."""
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    target = None
    if parent is not None and parent.type == "init_declarator":
        target = parent.child_by_field_name("declarator")
    elif parent is not None and parent.type == "assignment_expression":
        target = parent.child_by_field_name("left")
    return target is not None and bool(re.search(r"lane|warp|wid", text(src, target), re.I))


#: Bytes one of which a function's text contains when ``_gather`` can find it device-like
#: without qualifiers: every MASKED and BALLOTS name, and the THREAD_BUILTINS.
_DEVICE_LIKE_HINTS = (b"_sync", b"__ballot", b"__activemask", b"threadIdx", b"blockDim")
assert all(any(h.decode() in n for h in _DEVICE_LIKE_HINTS) for n in MASKED | BALLOTS | THREAD_BUILTINS)


def _may_be_device_like(ctx: Context, func: Node) -> bool:
    if function_qualifiers(ctx.src, func) & {"__global__", "__device__"}:
        return True
    return _contains_any(ctx.src, _DEVICE_LIKE_HINTS, func.start_byte, func.end_byte)


def _contains_any(src: bytes, needles: tuple[bytes, ...], start: int, end: int) -> bool:
    """Whether ``src[start:end]`` contains one of ``needles`` (a loop, not ``any()`` over a
    generator: this runs for every function of every file)."""
    for needle in needles:
        if src.find(needle, start, end) >= 0:
            return True
    return False


#: Bytes one of which a function's text contains when it calls a MASKED or BALLOTS builtin
#: (what every check of ``check_function`` but lane arithmetic starts from).
_WARP_CALL_HINTS = (b"_sync", b"__ballot", b"__activemask")
assert all(any(h.decode() in n for h in _WARP_CALL_HINTS) for n in MASKED | BALLOTS | SYNC_BUILTINS)
#: An integer literal that may be 31, 32 or 5 (any base, any suffix; also some others):
#: the operand ``_Scope.lane_op`` needs. A ``<<`` (``1 << lane``) or a ``'`` (digit
#: separators) makes a function a candidate too.
_LANE_NUMBER = re.compile(
    rb"(?<![\w.'])(?:0[xX]0*(?:1[fF]|20|5)|0[bB]0*(?:11111|100000|101)|0*(?:37|40|5)|31|32)[uUlLzZ]*(?![\w.'])")


def _may_have_lane_arithmetic(src: bytes, start: int, end: int) -> bool:
    """False when ``src[start:end]`` has no ``<<`` and no literal 31/32/5: then
    ``_check_lane_arithmetic`` cannot report anything."""
    if src.find(b"<<", start, end) >= 0 or src.find(b"'", start, end) >= 0:
        return True
    return _LANE_NUMBER.search(src, start, end) is not None


@REGISTRY.visits("function_definition")
def check_function(func: Node, ctx: Context) -> None:
    """Masks, ballots and lane arithmetic need the function's declarations, so they are
    judged per body, once the walk has recorded its nodes (``check_functions``)."""
    src, start, end = ctx.src, func.start_byte, func.end_byte
    if not _contains_any(src, _WARP_CALL_HINTS, start, end):
        # No warp builtin (and so no mask, ballot or gated-builtin finding): only lane
        # arithmetic remains, in device code. (With one, the function is device-like.)
        if not _may_be_device_like(ctx, func):
            return  # host code: _gather would find it not device-like, without walking it
        if not _may_have_lane_arithmetic(src, start, end):
            return  # nothing to find: skip the gathering walk
    if ctx.in_macro_body:  # a function in a #define body: judged now, from its own tree
        _check_function(ctx, func)
    else:
        ctx.scratch.setdefault("warp:functions", []).append(func)


@REGISTRY.visits_file
def check_functions(ctx: Context) -> None:
    ctx.scratch["warp:walked"] = True  # what _record kept is now the whole file
    for func in ctx.scratch.get("warp:functions", ()):
        _check_function(ctx, func)


def _check_function(ctx: Context, func: Node) -> None:
    info = _gather(ctx, func)
    if not info.device_like:
        return
    scope = _Scope(ctx, info)
    _check_mask_variables(ctx, scope)
    _check_bit_ops(ctx, scope)
    _check_lane_arithmetic(ctx, scope)
    _check_gated_builtins(ctx, info)


def _check_mask_variables(ctx: Context, scope: _Scope) -> None:
    src, info = ctx.src, scope.info
    reported: set[str] = set()

    def report_var(var: _Var, why: str, builtin: str = "") -> None:
        if var.name in reported:
            return
        if var.type in MASK32_TYPES:
            reported.add(var.name)
            ctx.report(
                WarpMaskVariable32, var.node,
                f"mask variable `{var.name}` is `{var.type}` (32 bits) but {why}; HIP lane masks are 64-bit",
                f"declare `{var.name}` as `unsigned long long`",
            )
        elif builtin and var.init is not None and _is_full_mask32(src, var.init):
            reported.add(var.name)  # a 64-bit variable holding a 32-lane value; not fixed: used elsewhere
            _report_full_mask(ctx, var.init, builtin, fix=False)

    for var in info.vars.values():
        source = scope.is_ballot(var.node)
        if source:
            report_var(var, f"receives `{source}`")
    for name, call in info.calls:
        if name not in MASKED or ctx.branches.provides(name):
            continue
        args = call_arguments(call)
        mask = _strip(args[0]) if args else None
        if mask is None or mask.type != "identifier":
            continue
        mask_name = text(src, mask)
        var = info.vars.get(mask_name)
        if var is not None:
            report_var(var, f"is the mask of `{name}`", name)
            continue
        _check_file_level_mask(ctx, mask, mask_name, name)


#: Calls whose value is still an index when their arguments are (``min(tid, n - 1)``).
_INDEX_BUILTINS = THREAD_BUILTINS | {"blockIdx", "gridDim"}
_INDEX_CALLS = frozenset({"min", "max", "std::min", "std::max", "__mul24", "__umul24", "umin", "umax"})


def _index_parts(src: bytes, node: Node) -> Iterator[Node]:
    """The nodes of ``node`` that make its value an index: not what it merely loads.

    ``a[tid]``, ``f(tid)``, ``*p``, ``p->field`` and ``x >> (4 * tid)`` are data read at,
    or shifted by, a thread-dependent amount; their value is not a thread index (llama.cpp's
    ``qh = get_int_b2(bxi->qh, 0) >> (4 * kqsx)`` is a quant word, and ``qh >> 5`` bit
    twiddling, not a warp id).
    """
    stack = [node]
    while stack:
        n = stack.pop()
        kind = n.type
        if kind == "subscript_expression":
            continue
        if kind == "call_expression" and call_name(src, n) not in _INDEX_CALLS:
            continue
        if kind == "pointer_expression" and text(src, n).lstrip().startswith("*"):
            continue
        if kind == "field_expression":
            arg = n.child_by_field_name("argument")
            if arg is None or text(src, arg) not in _INDEX_BUILTINS:
                continue
        yield n
        children = n.children
        if kind == "binary_expression" and text(src, n.child_by_field_name("operator")) in ("<<", ">>"):
            children = [n.child_by_field_name("left")]  # the shift count does not index
        stack.extend(reversed([c for c in children if c is not None]))


def _first_warp(src: bytes, cond: Node) -> bool:
    """Whether ``cond`` (``tid < 32``) is an ``if`` condition whose body does warp work: the
    CUDA idiom "the first warp finishes the reduction", half a wave on wave64."""
    node = cond.parent
    while node is not None and node.type in ("parenthesized_expression", "condition_clause"):
        node = node.parent
    if node is None or node.type != "if_statement":
        return False
    body = node.child_by_field_name("consequence")
    return body is not None and _WARP_WORK_RE.search(src, body.start_byte, body.end_byte) is not None


def _check_file_level_mask(ctx: Context, mask: Node, mask_name: str, builtin: str) -> None:
    """A mask named by a macro or a file-scope constant: report at the use, no fix."""
    facts = _file_facts(ctx)
    if mask_name in facts.macros:
        # A definition on the CUDA side of a HIP guard is not what HIP compiles.
        live = [(b, d) for b, d in facts.macros[mask_name] if not ctx.in_cuda_only_branch(d.start_byte)]
        narrow = [(b, d) for b, d in live if _macro_is_full_mask32(b)]
        if narrow:
            body, define = narrow[0]
            line, _ = ctx.position(define.start_byte)
            ctx.report(
                WarpMask32, mask,
                f"`{mask_name}` (defined as `{body}` at line {line}) is a 32-bit full mask for `{builtin}`; "
                "a wave on CDNA has 64 lanes and HIP masks are 64-bit",
                f"define `{mask_name}` as `0xffffffffffffffffull`",
            )
        return
    var = facts.globals.get(mask_name)
    if var is None:
        return
    line, _ = ctx.position(var.node.start_byte)
    if var.type in MASK32_TYPES:
        ctx.report(
            WarpMaskVariable32, mask,
            f"mask `{mask_name}` (line {line}) is `{var.type}` (32 bits); HIP lane masks are 64-bit",
            f"declare `{mask_name}` as `unsigned long long` with a 64-bit value",
        )
    elif var.init is not None and _is_full_mask32(ctx.src, var.init):
        ctx.report(
            WarpMask32, mask,
            f"`{mask_name}` (line {line}) holds a 32-lane full mask for `{builtin}`; a wave on CDNA has 64",
            f"initialise `{mask_name}` with `0xffffffffffffffffull`",
        )


def _report_full_mask(ctx: Context, node: Node, builtin: str, fix: bool) -> None:
    literal = ctx.text(node)
    ctx.report(
        WarpMask32, node,
        f"mask `{literal}` of `{builtin}` covers 32 lanes; a wave on CDNA has 64 and HIP masks are 64-bit",
        "use the 64-bit full mask `0xffffffffffffffffull`",
        fix=[Edit(node.start_byte, node.end_byte, FULL_MASK_64)] if fix else (),
    )


def _check_bit_ops(ctx: Context, scope: _Scope) -> None:
    for name, call in scope.info.calls:
        wide = BIT_OPS.get(name)
        args = call_arguments(call)
        if wide is None or len(args) != 1:
            continue
        source = scope.is_ballot(args[0])
        if source:
            ctx.report(
                BallotBitOp32, call,
                f"`{name}` takes 32 bits but its argument comes from `{source}` (64 lanes on CDNA)",
                f"use `{wide}`",
            )


def _check_lane_arithmetic(ctx: Context, scope: _Scope) -> None:
    src = ctx.src
    for node in scope.info.binaries:
        op = scope.lane_op(node)
        if op and op.startswith(("<", ">=")):
            ctx.report(
                LaneArithmetic32, node,
                f"`{ctx.text(node)}` takes the first 32 threads as one warp for warp-level work; "
                "a wave on CDNA has 64",
                "test `threadIdx.x < warpSize` (and size the work for warpSize lanes)",
            )
            continue
        if op:
            ctx.report(
                LaneArithmetic32, node,
                f"`{ctx.text(node)}` computes a lane/warp index with `{op}` for 32-lane warps; "
                "a wave on CDNA has 64",
                "use `warpSize` (e.g. `% warpSize`, `/ warpSize`) or a per-architecture WARP_SIZE",
            )
            continue
        if text(src, node.child_by_field_name("operator")) != "<<":
            continue
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        one = _int_value(src, left) if left is not None else None
        if one and one[0] == 1 and "l" not in one[1] and right is not None and scope.is_lane(right):
            ctx.report(
                LaneArithmetic32, node,
                f"`{ctx.text(node)}` is a 32-bit lane bit; lanes 32-63 of a 64-lane wave overflow it",
                "use `1ull << lane` and a 64-bit mask variable",
            )


def _check_gated_builtins(ctx: Context, info: _Function) -> None:
    if ctx.options.rocm >= (7, 0, 0):
        return
    used = [(name, call) for name, call in info.calls if name in SYNC_BUILTINS]
    if not used or _file_facts(ctx).enables_warp_sync:
        return
    names = sorted({name for name, _ in used})
    ctx.report(
        WarpSyncBuiltinsGated, used[0][1],
        f"{', '.join(f'`{n}`' for n in names)} need HIP_ENABLE_WARP_SYNC_BUILTINS on ROCm "
        f"{short_version(ctx.options.rocm)} (on by default from 7.0)",
        "build with -DHIP_ENABLE_WARP_SYNC_BUILTINS or define it before including hip_runtime.h",
    )


# -- calls: literal masks, widths, unrolled ladders, 7.0-only builtins ----------------------

_CHECKED_CALLS = MASKED | NEW_IN_7 | frozenset(SHUFFLES)


@REGISTRY.visits("call_expression", names=any_word_of(_CHECKED_CALLS))
def check_call(call: Node, ctx: Context) -> None:
    src = ctx.src
    name = call_name(src, call)
    if name is None or name not in _CHECKED_CALLS:
        return
    args = call_arguments(call)
    # A name the project defines itself for HIP (a compat header's macro) decides what its
    # mask and its existence mean; its width and offsets still reach HIP's shuffle.
    own = ctx.branches.provides(name)
    if name in MASKED and args and not own and _is_full_mask32(src, args[0]):
        _report_full_mask(ctx, args[0], name, fix=True)
    if name in NEW_IN_7 and not own:
        ctx.report(
            WarpSyncMissing, call,
            f"`{name}` does not exist before ROCm 7.0 (target {short_version(ctx.options.rocm)})",
            "target ROCm >= 7.0, or replace with a shuffle-based equivalent"
            if name != "__syncwarp" else "target ROCm >= 7.0, or drop it (a wave runs in lockstep)",
        )
    if name in SHUFFLES:
        delta_at, width_at = SHUFFLES[name]
        width = args[width_at] if len(args) > width_at else None
        if width is not None and _is_int(src, width, 32):
            ctx.report(
                ShuffleWidth32, width,
                f"`{name}` with width 32 shuffles within 32-lane halves of a 64-lane wave",
                "omit width (defaults to warpSize) unless 32-lane groups are intended",
            )
        delta = args[delta_at] if delta_at is not None and len(args) > delta_at else None
        narrow = width is not None and (v := _int_value(src, width)) is not None and v[0] < 32
        if delta is not None and _is_int(src, delta, 16) and not narrow:
            ctx.report(
                ShuffleLadder16, delta,
                f"`{name}` with offset 16 starts a 32-lane reduction ladder; "
                "lanes 32-63 of a wave are never combined",
                "start the ladder at warpSize / 2",
            )


_SHFL_RE = re.compile(rb"shfl", re.I)


@REGISTRY.visits("for_statement", source=lambda src: _SHFL_RE.search(src) is not None)  # _shuffles_with
def check_ladder_loop(loop: Node, ctx: Context) -> None:
    """``for (o = 16; ...; o >>= 1)`` and ``for (o = 1; o < 32; o <<= 1)`` around a shuffle."""
    src = ctx.src
    if _SHFL_RE.search(src, loop.start_byte, loop.end_byte) is None:
        return  # no shuffle in the loop (_shuffles_with)
    init, cond, update = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    if init is None or cond is None or update is None:
        return
    start: Node | None = None
    var = ""
    if init.type == "declaration":
        decl = init.child_by_field_name("declarator")
        if decl is not None and decl.type == "init_declarator":
            start, target = decl.child_by_field_name("value"), decl.child_by_field_name("declarator")
            var = text(src, target) if target is not None else ""
    elif init.type == "assignment_expression":
        start, var = init.child_by_field_name("right"), text(src, init.child_by_field_name("left"))
    if start is None or not var:
        return
    step = _step(src, update, var)
    if step == "down" and _is_int(src, start, 16):
        where = start
    elif step == "up" and _is_int(src, start, 1) and (bound := _upper_bound_32(src, cond, var)) is not None:
        where = bound
    else:
        return
    body = loop.child_by_field_name("body")
    if body is None or not _shuffles_with(src, body, var):
        return
    ctx.report(
        ShuffleLadder16, where,
        f"shuffle ladder over `{var}` {'starts at 16' if step == 'down' else 'stops at 32'}: "
        "it reduces 32 lanes; a wave on CDNA has 64",
        "start at warpSize / 2" if step == "down" else "bound the ladder by warpSize",
    )


def _step(src: bytes, update: Node, var: str) -> str | None:
    """``"down"`` for halving updates of ``var``, ``"up"`` for doubling ones."""
    s = "".join(text(src, update).split())
    if s in (f"{var}>>=1", f"{var}/=2", f"{var}={var}>>1", f"{var}={var}/2"):
        return "down"
    if s in (f"{var}<<=1", f"{var}*=2", f"{var}={var}<<1", f"{var}={var}*2"):
        return "up"
    return None


def _upper_bound_32(src: bytes, cond: Node, var: str) -> Node | None:
    cond = _strip(cond)
    if cond.type != "binary_expression" or text(src, cond.child_by_field_name("left")) != var:
        return None
    op, right = text(src, cond.child_by_field_name("operator")), cond.child_by_field_name("right")
    if (op == "<" and _is_int(src, right, 32)) or (op == "<=" and _is_int(src, right, 16)):
        return right
    return None


def _shuffles_with(src: bytes, body: Node, var: str) -> bool:
    """A call whose name mentions ``shfl`` takes ``var`` as an argument somewhere in ``body``."""
    for n in walk(body):
        if n.type == "call_expression":
            name = call_name(src, n) or ""
            if "shfl" in name.lower() and any(
                c.type == "identifier" and text(src, c) == var for a in call_arguments(n) for c in walk(a)
            ):
                return True
    return False


# -- constants, templates, arrays ------------------------------------------------------------

def _is_warp_size_name(name: str) -> bool:
    return name != "warpSize" and bool(_WARP_SIZE_NAME.search(name))


def _report_constant(ctx: Context, where: Node, name: str, value: str) -> None:
    ctx.report(
        WarpSizeConstant32, where,
        f"`{name}` = {value} hard-codes the 32-lane warp; a wave on CDNA has 64",
        "use a per-architecture value (#if defined(__GFX8__) || defined(__GFX9__) -> 64, else 32) "
        "in device code and hipDeviceAttributeWarpSize on the host",
    )


@REGISTRY.visits("preproc_def", "preproc_function_def")
def check_define(define: Node, ctx: Context) -> None:
    """``#define WARP_SIZE 32``, ``#define CUB_LOG_WARP_THREADS(arch) (5)``."""
    name_node = define.child_by_field_name("name")
    if name_node is None:
        return
    name, body = ctx.text(name_node), _macro_body(ctx.src, define)
    value = body.strip("() ").rstrip("uU")
    if (_is_warp_size_name(name) and value == "32") or (_WARP_LOG_NAME.search(name) and value == "5"):
        if not _defined_per_arch(ctx, name):
            _report_constant(ctx, define.child_by_field_name("value") or define, name, body)


def _defined_per_arch(ctx: Context, name: str) -> bool:
    """The file defines ``name`` with more than one value (the ported ``#if __GFX9__ … 64 #else 32``)."""
    bodies = {body for body, _ in _file_facts(ctx).macros.get(name, ())}
    return len(bodies) > 1


_WARP_WORD = re.compile(rb"warp", re.I)
assert all("warp" in p.pattern for p in (_WARP_SIZE_NAME, _WARP_LOG_NAME))

_CONSTANT_FIELDS = {  # node type -> (name field, value field)
    "init_declarator": ("declarator", "value"),
    "enumerator": ("name", "value"),
    "field_declaration": ("declarator", "default_value"),
}


@REGISTRY.visits(*_CONSTANT_FIELDS)
def check_constant(node: Node, ctx: Context) -> None:
    """``constexpr int kWarpSize = 32;``, ``enum { WARP_SIZE = 32 }``, class members alike."""
    if _WARP_WORD.search(ctx.src, node.start_byte, node.end_byte) is None:
        return  # both name patterns need "warp" in the name
    name_field, value_field = _CONSTANT_FIELDS[node.type]
    name_node, value = node.child_by_field_name(name_field), node.child_by_field_name(value_field)
    if name_node is None or value is None or name_node.type not in ("identifier", "field_identifier"):
        return
    name = ctx.text(name_node)
    if (_is_warp_size_name(name) and _is_int(ctx.src, value, 32)) or (
        _WARP_LOG_NAME.search(name) and _is_int(ctx.src, value, 5)
    ):
        _report_constant(ctx, value, name, ctx.text(value))


@REGISTRY.visits("optional_parameter_declaration")
def check_template_default(param: Node, ctx: Context) -> None:
    """``template <int WARP_SIZE = 32>``."""
    if param.parent is None or param.parent.type != "template_parameter_list":
        return
    name, default = param.child_by_field_name("declarator"), param.child_by_field_name("default_value")
    if name is not None and _is_warp_size_name(ctx.text(name)) and _is_int(ctx.src, default, 32):
        ctx.report(
            WarpTemplate32, param,
            f"template parameter `{ctx.text(name)}` defaults to 32 lanes; a wave on CDNA has 64",
            "drop the default and instantiate with the device's warp size",
        )


@REGISTRY.visits("template_argument_list")
def check_template_argument(args: Node, ctx: Context) -> None:
    """``WarpReduce<float, 32>``, ``warp_reduce<32>(v)``."""
    owner = args.parent
    name_node = owner.child_by_field_name("name") if owner is not None else None
    if name_node is None or "warp" not in ctx.text(name_node).lower():
        return
    for arg in args.named_children:
        if _is_int(ctx.src, arg, 32):
            ctx.report(
                WarpTemplate32, arg,
                f"`{ctx.text(name_node)}` instantiated for 32 lanes; a wave on CDNA has 64",
                "instantiate with the device's warp size",
            )


_COMPARE_OPS = frozenset({"==", "!=", "%", "/", "&", "<=", ">=", "<", ">"})


@REGISTRY.visits("static_assert_declaration")
def check_static_assert(node: Node, ctx: Context) -> None:
    """``static_assert(WARP_SIZE == 32, ...)`` and asserts whose message says "warp"."""
    cond = node.child_by_field_name("condition")
    message = node.child_by_field_name("message")
    if cond is None:
        return
    has_32 = any(  # a 32 compared or divided, not a 32 * 1024 size bound
        _is_int(ctx.src, n, 32, 31) and n.parent is not None and n.parent.type == "binary_expression"
        and ctx.text(n.parent.child_by_field_name("operator")) in _COMPARE_OPS
        for n in walk(cond)
    )
    names_warp = any(
        n.type in ("identifier", "type_identifier") and _is_warp_size_name(ctx.text(n)) for n in walk(cond)
    ) or (message is not None and "warp" in ctx.text(message).lower())
    if has_32 and names_warp:
        ctx.report(
            WarpTemplate32, node,
            f"`static_assert({ctx.text(cond)})` assumes 32-lane warps; a wave on CDNA has 64",
            "assert against the per-architecture warp size",
        )


@REGISTRY.visits("array_declarator")
def check_shared_array(array: Node, ctx: Context) -> None:
    if array.parent is not None and array.parent.type == "array_declarator":
        return  # visit each array once, from its outermost declarator
    decl = array
    while decl is not None and decl.type not in ("declaration", "field_declaration"):
        decl = decl.parent
    if decl is None or not _has_qualifier(decl, "__shared__"):
        return
    sizes: list[Node] = []
    node: Node | None = array
    while node is not None and node.type == "array_declarator":
        size = node.child_by_field_name("size")
        if size is not None:
            sizes.append(size)
        node = node.child_by_field_name("declarator")
    for size in sizes:
        why = _warp_sized(ctx, size, one_dimensional=len(sizes) == 1)
        if why:
            ctx.report(
                SharedArrayWarp32, size,
                f"`__shared__` array `{ctx.text(array)}` is sized {why}; a wave on CDNA has 64 lanes",
                "size per-lane storage for 64 lanes and index it with warpSize-based lane/warp ids",
            )


def _has_qualifier(decl: Node, keyword: str) -> bool:
    """``__shared__``/``constexpr`` among a declaration's type qualifiers."""
    return any(
        c.type == "type_qualifier" and c.child_count > 0 and c.children[0].type == keyword for c in decl.children
    )


def _warp_sized(ctx: Context, size: Node, one_dimensional: bool) -> str | None:
    size = _strip(size)
    if one_dimensional and _is_int(ctx.src, size, 32):
        return "for 32 lanes (one slot per lane or per warp)"
    if size.type == "identifier" and _is_warp_size_name(ctx.text(size)):
        name = ctx.text(size)
        facts = _file_facts(ctx)
        if name in facts.warp_size_aliases or _defined_per_arch(ctx, name):
            return None  # HP207 reports a warpSize alias; a per-architecture value is the fix
        return f"by `{name}`"
    if size.type == "binary_expression":
        op = ctx.text(size.child_by_field_name("operator"))
        right = size.child_by_field_name("right")
        if (op == "/" and _is_int(ctx.src, right, 32)) or (op == ">>" and _is_int(ctx.src, right, 5)):
            return f"as `{ctx.text(size)}` (one slot per 32-lane warp)"
    return None


@REGISTRY.visits("launch_bounds")
def check_launch_bounds(node: Node, ctx: Context) -> None:
    args = [c for c in node.named_children if c.type != "comment"]
    if len(args) >= 2 and (_int_value(ctx.src, args[1]) or (None,))[0] != 1:  # 1: the weakest ask in both
        ctx.report(
            LaunchBoundsSecondArgument, args[1],
            f"`__launch_bounds__` second argument `{ctx.text(args[1])}` means min blocks per SM in CUDA "
            "but min waves per execution unit in HIP",
            "drop it or re-derive it as waves per EU",
        )


# -- warpSize as a constant, __AMDGCN_WAVEFRONT_SIZE ------------------------------------------

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
            if decl is not None and _has_qualifier(decl, "constexpr"):
                return "a constexpr initializer"
        if t == "if_statement" and parent.child_by_field_name("condition") == child:
            return "if constexpr" if any(c.type == "constexpr" for c in parent.children) else None
        if t in ("compound_statement", "expression_statement", "function_definition", "translation_unit",
                 "for_statement", "return_statement", "declaration_list", "field_declaration_list"):
            return None
        child, parent = parent, parent.parent
    return None


def _maybe_warp_size(name: str) -> bool:
    """Pre-filter for ``check_identifier``: the names, and the macro names (upper case)
    that may alias ``warpSize``."""
    return name in AMDGCN_MACROS or name == "warpSize" or name.isupper()


#: Aliases of warpSize exist only in files that say warpSize.
@REGISTRY.visits("identifier", "type_identifier", names=_maybe_warp_size,
                 source=any_bytes_of(b"warpSize", b"__AMDGCN_WAVEFRONT_SIZE"))
def check_identifier(node: Node, ctx: Context) -> None:
    name = ctx.text(node)
    if name in AMDGCN_MACROS:
        _report_amdgcn(ctx, node, name)
        return
    if name == "warpSize":
        shown = "`warpSize`"
    elif name.isupper() and name in _warp_size_aliases(ctx):
        shown = f"`{name}` (defined as `warpSize`)"
    else:
        return
    where = _constant_context(node)
    if where is None:
        return
    if ctx.options.rocm >= (7, 0, 0):
        ctx.report(
            WarpSizeNotConstexpr, node,
            f"{shown} used in {where}: warpSize is not a compile-time constant from ROCm 7.0",
            "use a per-architecture macro (#if defined(__GFX8__) || defined(__GFX9__) -> 64, else 32) "
            "or a template parameter set from hipDeviceAttributeWarpSize",
        )
    else:
        ctx.report(
            WarpSizeConstexprDeprecated, node,
            f"{shown} used in {where}: compiles on ROCm {short_version(ctx.options.rocm)} "
            "but not from 7.0, where warpSize is a run-time value",
            "use a per-architecture macro or a template parameter set from hipDeviceAttributeWarpSize",
        )


@REGISTRY.visits("preproc_arg")
def check_macro_body(node: Node, ctx: Context) -> None:
    body = ctx.src[node.start_byte:node.end_byte]
    for m in _AMDGCN_RE.finditer(body):
        start = node.start_byte + m.start()
        _report_amdgcn(ctx, (start, node.start_byte + m.end()), m.group().decode())


def _report_amdgcn(ctx: Context, where: Node | tuple[int, int], name: str) -> None:
    fix = "use the architecture predicates: #if defined(__GFX8__) || defined(__GFX9__) -> 64, else 32"
    if ctx.options.rocm >= (7, 2, 0):
        ctx.report(
            AmdgcnWavefrontSizeRemoved, where,
            f"`{name}` was removed in ROCm 7.2: undeclared in code, silently undefined in #if/#ifdef",
            fix,
        )
    else:
        ctx.report(
            AmdgcnWavefrontSizeDeprecated, where,
            f"`{name}` is deprecated since ROCm 6.3.2 and removed in 7.2",
            fix,
        )
