"""HP2xx warp-size rules: (source, expected) pairs, and cases the fixtures cannot show.

The fixtures in fixtures/rules/warp/ are checked against their markers by the one rules
harness (tests/test_rules_fixtures.py). Findings of other families are ignored here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hipport.analyze import analyze
from hipport.edits import apply_edits
from hipport.options import Options
from hipport.versions import parse_version

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rules" / "warp"
ROCM_72 = Options(rocm=parse_version("7.2.1"))
ROCM_63 = Options(rocm=parse_version("6.3"))


def warp_findings(src: str | bytes, options: Options = ROCM_72) -> list[tuple[str, int]]:
    data = src.encode() if isinstance(src, str) else src
    ctx = analyze(data, "t.cu", options)
    return sorted((f.code, f.line) for f in ctx.findings if f.code.startswith("HP2"))


# -- (source, expected) pairs, target 7.2.1 ---------------------------------------------------

CASES_72: list[tuple[str, str, list[tuple[str, int]]]] = [
    # HP201: the spellings of a 32-lane full mask, and what is not one
    ("mask-literal-ul", "__device__ void f(float v){\n v = __shfl_sync(0xffffffffUL, v, 0);\n}",
     [("HP201", 2)]),
    ("mask-minus-one", "__device__ void f(float v){\n v = __shfl_sync(-1, v, 0);\n}", [("HP201", 2)]),
    ("mask-syncwarp", "__device__ void f(){\n __syncwarp(0xffffffff);\n}", [("HP201", 2)]),
    ("mask-global-const", "constexpr unsigned long long kAll = 0xffffffff;\n"
     "__device__ void f(float v){\n v = __shfl_sync(kAll, v, 0);\n}", [("HP201", 3)]),
    ("mask-64bit-ok", "__device__ void f(float v){\n v = __shfl_sync(~0ull, v, 0);\n"
     " v = __shfl_sync(-1ll, v, 0);\n}", []),
    ("mask-not-an-argument", "__device__ bool f(unsigned k){ return k == 0xffffffff; }", []),
    ("mask-macro-not-full", "#define HALF 0x0000ffffull\n__device__ void f(float v){\n"
     " v = __shfl_sync(HALF, v, 0);\n}", []),
    # HP202
    ("mask-var-ballot", "__device__ void f(int p){\n unsigned int m = __ballot_sync(~0ull, p);\n}",
     [("HP202", 2)]),
    ("mask-var-assigned", "__device__ void f(int p){\n unsigned m;\n m = __activemask();\n}",
     [("HP202", 2)]),
    ("mask-var-64-ok", "__device__ void f(int p){\n unsigned long long m = __ballot_sync(~0ull, p);\n"
     " auto a = __activemask();\n}", []),
    ("mask-var-not-a-mask", "__device__ int f(unsigned x){\n unsigned h = x * 2654435761u;\n"
     " return __shfl_sync(~0ull, h, 0);\n}", []),
    # HP203
    ("popc-direct", "__device__ int f(int p){\n return __popc(__ballot_sync(~0ull, p));\n}", [("HP203", 2)]),
    ("clz-via-var", "__device__ int f(int p){\n auto b = __ballot(p);\n return 31 - __clz(b);\n}",
     [("HP203", 3)]),
    ("popc-on-data", "__device__ int f(unsigned bits){\n return __popc(bits & 0xff);\n}", []),
    ("popcll-ok", "__device__ int f(int p){\n return __popcll(__ballot_sync(~0ull, p));\n}", []),
    # HP204
    ("lane-mod-derived", "__global__ void k(int* o){\n int t = threadIdx.x;\n o[t / 32] = t;\n}",
     [("HP204", 3)]),
    ("lane-global-named", "__global__ void k(){\n int g = threadIdx.x + blockIdx.x * blockDim.x;\n"
     " int warp_id = g / 32;\n}", [("HP204", 3)]),
    ("bitmap-global-index", "__global__ void k(unsigned* bits){\n int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     " atomicOr(&bits[i >> 5], 1u << (i & 31));\n}", []),
    ("lane-shift-int", "__device__ unsigned f(int laneId){\n return 1 << laneId;\n}", [("HP204", 2)]),
    ("lane-warp-ok", "__global__ void k(){\n int lane = threadIdx.x % warpSize;\n"
     " int w = threadIdx.x / warpSize;\n unsigned long long b = 1ull << lane;\n}", []),
    ("lane-loop-index", "__global__ void k(float* a, int n){\n for (int i = threadIdx.x; i < n; ++i)"
     " a[i % 32] += a[i / 32];\n}", []),
    ("lane-bytes", "__global__ void k(size_t bytes, int* o){\n o[0] = (bytes & 31) + (bytes >> 5);\n}", []),
    ("lane-shift-non-lane", "__global__ void k(int* o, int bit){\n o[0] = 1u << bit;\n}", []),
    # HP205
    ("shared-warp-name", "#define WARP_SIZE 32\n__global__ void k(){\n __shared__ float s[WARP_SIZE];\n}",
     [("HP205", 3), ("HP209", 1)]),
    ("shared-other-size", "__global__ void k(){\n __shared__ float s[256];\n float r[32];\n}", []),
    # HP206
    ("template-arg-warp", "__global__ void k(float v){\n v = warp_reduce<32>(v);\n}", [("HP206", 2)]),
    ("template-arg-other", "__global__ void k(){\n Vec<float, 32> v;\n}", []),
    ("static-assert-other", "static_assert(sizeof(Key) == 32, \"key size\");\n"
     "static_assert(sizeof(WarpStorage) <= 32 * 1024, \"warp storage too big\");", []),
    # HP207
    ("warpsize-template-arg", "__global__ void k(float v){\n v = reduce<warpSize>(v);\n}", [("HP207", 2)]),
    ("warpsize-macro-alias", "#define C10_WARP_SIZE warpSize\n__global__ void k(){\n"
     " __shared__ float s[C10_WARP_SIZE];\n}", [("HP207", 3)]),
    ("warpsize-if", "#if warpSize == 64\n#endif", [("HP207", 1)]),
    ("warpsize-template-default", "template <int W = warpSize> __device__ void f();", [("HP207", 1)]),
    ("warpsize-runtime-ok", "__global__ void k(float* a){\n for (int o = warpSize / 2; o > 0; o >>= 1)"
     " a[0] += __shfl_xor(a[0], o);\n int n = warpSize;\n if (warpSize == 64) a[1] = n;\n}", []),
    # HP209
    ("const-warp", "const int WARP = 32;", [("HP209", 1)]),
    ("enum-warp", "enum { WARP_SIZE = 32 };", [("HP209", 1)]),
    ("function-macro-log", "#define LOG_WARP_THREADS(arch) (5)", [("HP209", 1)]),
    ("per-arch-define", "#if defined(__GFX8__) || defined(__GFX9__)\n#define WARP_SIZE 64\n#else\n"
     "#define WARP_SIZE 32\n#endif\n__global__ void k(){\n __shared__ float s[WARP_SIZE];\n}", []),
    ("const-other", "#define NUM_WARPS 32\n#define BLOCK_SIZE 32\nconstexpr int kTile = 32;\n"
     "#define WARP_SIZE 64", []),
    # HP210
    ("amdgcn-ifdef", "#ifdef __AMDGCN_WAVEFRONT_SIZE\n#endif", [("HP210", 1)]),
    ("amdgcn-macro-body", "#define WS (__AMDGCN_WAVEFRONT_SIZE__)", [("HP210", 1)]),
    ("amdgcn-in-comment", "// __AMDGCN_WAVEFRONT_SIZE is gone\nconst char* s = \"__AMDGCN_WAVEFRONT_SIZE\";", []),
    # HP212
    ("launch-bounds-one", "__global__ void __launch_bounds__(256) k() {}", []),
    # HP213
    ("width-nonsync", "__device__ float f(float v){\n return __shfl(v, 0, 32);\n}", [("HP213", 2)]),
    ("width-16", "__device__ float f(float v){\n return __shfl(v, 0, 16);\n}", []),
    # HP214
    ("ladder-assignment-init", "__device__ float f(float v){\n int o;\n for (o = 16; o; o = o >> 1)\n"
     "  v += __shfl_down(v, o);\n return v;\n}", [("HP214", 3)]),
    ("ladder-no-shuffle", "__global__ void k(float* s){\n for (int o = 16; o > 0; o >>= 1)"
     " if (threadIdx.x < o) s[threadIdx.x] += s[threadIdx.x + o];\n}", []),
    ("ladder-subwarp", "__device__ float f(float v){\n return v + __shfl_xor(v, 16, 16);\n}", []),
    ("ladder-warpsize", "__device__ float f(float v){\n for (int o = warpSize / 2; o > 0; o /= 2)"
     " v += __shfl_down(v, o);\n return v;\n}", []),
]


@pytest.mark.parametrize(("src", "expected"), [c[1:] for c in CASES_72], ids=[c[0] for c in CASES_72])
def test_cases_rocm_72(src: str, expected: list[tuple[str, int]]) -> None:
    assert warp_findings(src) == sorted(expected)


# -- the mechanical fix --------------------------------------------------------------------

FIX_SRC = b"""__device__ float f(float v, int p) {
    v += __shfl_down_sync(0xffffffff, v, 1);
    v += __shfl_down_sync((unsigned)-1, v, 2);
    return v + __all_sync(~0u, p);
}
"""


def test_full_mask_is_widened_by_convert() -> None:
    ctx = analyze(FIX_SRC, "t.cu", ROCM_72.with_(apply_fixes=True))
    masks = [f for f in ctx.findings if f.code == "HP201"]
    assert [f.line for f in masks] == [2, 3, 4]
    assert all(f.fixed for f in masks)
    out = apply_edits(FIX_SRC, ctx.edits)
    assert out.count(b"0xffffffffffffffffull") == 3
    assert b"0xffffffff," not in out and b"(unsigned)-1" not in out and b"~0u" not in out
    again = analyze(out, "t.cu", ROCM_72.with_(apply_fixes=True))
    assert not [f for f in again.findings if f.code == "HP201"]  # idempotent


def test_scan_reports_but_does_not_fix() -> None:
    ctx = analyze(FIX_SRC, "t.cu", ROCM_72)
    assert [f.fixed for f in ctx.findings if f.code == "HP201"] == [False] * 3
    assert b"0xffffffffffffffffull" not in apply_edits(FIX_SRC, ctx.edits)


MACRO_MASK = (b"#ifndef FULL_MASK\n#define FULL_MASK 0xffffffff  // all lanes\n#endif\n"
              b"__device__ float f(float v){ return __shfl_sync(FULL_MASK, v, 0) + __ballot_sync(FULL_MASK, v > 0); }\n")


def test_mask_macro_used_only_as_masks_is_redefined_in_a_source_file() -> None:
    ctx = analyze(MACRO_MASK, "t.cu", ROCM_72.with_(apply_fixes=True))
    found = [f for f in ctx.findings if f.code == "HP201"]
    assert [(f.line, f.fixed) for f in found] == [(4, True), (4, True)]
    assert "line 2" in found[0].message
    out = apply_edits(MACRO_MASK, ctx.edits)
    assert out.startswith(b"#ifndef FULL_MASK\n#define FULL_MASK 0xffffffffffffffffull  // all lanes\n")
    again = analyze(out, "t.cu", ROCM_72.with_(apply_fixes=True))
    assert not [f for f in again.findings if f.code == "HP201"]  # idempotent


@pytest.mark.parametrize(("path", "extra"), [
    ("t.cuh", b""),  # a header: the files that include it may use the macro otherwise
    ("t.cu", b"__device__ bool all(unsigned b){ return b == FULL_MASK; }\n"),  # a use that is no mask
    ("t.cu", b"#define SHFL(v) __shfl_sync(FULL_MASK, v, 0)\n"),  # another macro's body: not judged
    ("t.cu", b"#define FULL_MASK 0xffffffff\n"),  # defined twice
])
def test_mask_macro_is_reported_not_fixed_unless_every_use_is_a_mask(path: str, extra: bytes) -> None:
    ctx = analyze(MACRO_MASK + extra, path, ROCM_72.with_(apply_fixes=True))
    found = [f for f in ctx.findings if f.code == "HP201"]
    assert found and not any(f.fixed for f in found)
    assert b"0xffffffffffffffffull" not in apply_edits(MACRO_MASK + extra, ctx.edits)


BALLOT_VAR = ("__device__ int f(int v){\n  unsigned m = __ballot_sync(~0ull, v > 0);\n"
              "  v += __shfl_down_sync(m, v, 1);\n  m = __activemask();\n  return __shfl_sync(m, v, 0);\n}\n")


def test_local_mask_variable_used_only_as_masks_is_widened() -> None:
    ctx = analyze(BALLOT_VAR.encode(), "t.cu", ROCM_72.with_(apply_fixes=True))
    found = sorted((f.code, f.line, f.fixed) for f in ctx.findings if f.code in ("HP202", "HP217"))
    assert found == [("HP202", 2, True), ("HP217", 3, True), ("HP217", 5, True)]
    out = apply_edits(BALLOT_VAR.encode(), ctx.edits).decode()
    assert out.endswith(BALLOT_VAR.replace("unsigned m", "unsigned long long m"))


#: cuda-samples 11.8 shfl_scan.cu:77/100 (BSD-3-Clause), cut down: two locals named `mask`,
#: one per block, the second a computed subset of the lanes.
SCAN_MASKS = """__global__ void k(int *d, int width) {
  int value = d[threadIdx.x], lane_id = threadIdx.x % warpSize;
  for (int i = 1; i <= width; i *= 2) {
    unsigned int mask = 0xffffffff;
    int n = __shfl_up_sync(mask, value, i, width);
    if (lane_id >= i) value += n;
  }
  if (lane_id < (blockDim.x / warpSize)) {
    int mask = (1 << (blockDim.x / warpSize)) - 1;
    value += __shfl_up_sync(mask, value, 1, (blockDim.x / warpSize));
  }
  d[threadIdx.x] = value;
}
"""


def test_same_named_masks_of_two_blocks_are_each_widened() -> None:
    """Each declaration is judged by the uses in its own scope (before: a second
    declaration of the name anywhere in the function stopped both, HIP: 'The mask must be
    a 64-bit integer'). A value that is no ballot or full mask is converted to `unsigned`
    first, the lanes CUDA's unsigned mask parameter named."""
    ctx = analyze(SCAN_MASKS.encode(), "t.cu", ROCM_72.with_(apply_fixes=True))
    assert all(f.fixed for f in ctx.findings if f.code in ("HP202", "HP217"))
    out = apply_edits(SCAN_MASKS.encode(), ctx.edits).decode()
    assert "    unsigned long long mask = 0xffffffffffffffffull;\n" in out
    assert "    unsigned long long mask = (unsigned)((1 << (blockDim.x / warpSize)) - 1);\n" in out
    # an inner block's own `m` with a 32-bit use stays; the outer one, only masks, is widened
    src = BALLOT_VAR.replace("  m = __activemask();\n", "  { unsigned m = __activemask(); v += __popc(m); }\n")
    out = apply_edits(src.encode(), analyze(src.encode(), "t.cu", ROCM_72.with_(apply_fixes=True)).edits).decode()
    assert "  unsigned long long m = __ballot_sync" in out and "{ unsigned m = __activemask();" in out


@pytest.mark.parametrize("change", [
    ("return __shfl_sync(m, v, 0);", "return __shfl_sync(m, v, 0) + __popc(m);"),  # a 32-bit use
    ("  m = __activemask();\n", "  m &= 1;\n"),  # another value
    ("unsigned m =", "static unsigned m ="),  # a static local
    ("unsigned m =", "unsigned n = 0, m ="),  # declared with another
    ("  m = __activemask();\n", "  m = v;\n"),  # a value no ballot
])
def test_mask_variable_with_another_use_is_reported_not_widened(change: tuple[str, str]) -> None:
    src = BALLOT_VAR.replace(*change).encode()
    ctx = analyze(src, "t.cu", ROCM_72.with_(apply_fixes=True))
    assert [f for f in ctx.findings if f.code == "HP202"]
    assert b"unsigned long long" not in apply_edits(src, ctx.edits)


# -- target versions -----------------------------------------------------------------------

WARPSIZE_ARRAY = "__global__ void k(){\n __shared__ float s[warpSize];\n}"
AMDGCN = "#if __AMDGCN_WAVEFRONT_SIZE == 64\n#endif"
SYNC_USE = "__device__ float f(float v){\n v += __shfl_down_sync(~0ull, v, 1);\n return __shfl_sync(~0ull, v, 0);\n}"
NEW_IN_7 = "__device__ int f(int v){\n __syncwarp();\n return __reduce_add_sync(~0ull, v);\n}"


@pytest.mark.parametrize(("src", "on_63", "on_72"), [
    (WARPSIZE_ARRAY, [("HP208", 2)], [("HP207", 2)]),
    (AMDGCN, [("HP211", 1)], [("HP210", 1)]),
    (SYNC_USE, [("HP215", 2)], []),
    ("#define HIP_ENABLE_WARP_SYNC_BUILTINS\n" + SYNC_USE, [], []),
    (NEW_IN_7, [("HP216", 2), ("HP216", 3)], []),
], ids=["warpsize-constexpr", "amdgcn-macro", "sync-gated", "sync-enabled", "new-in-7"])
def test_target_versions(src: str, on_63: list, on_72: list) -> None:
    assert warp_findings(src, ROCM_63) == sorted(on_63)
    assert warp_findings(src, ROCM_72) == sorted(on_72)


def test_a_branch_only_the_removed_macro_opens_is_not_compiled_on_72() -> None:
    """mamba-ssm 2.3.2's reverse_scan.cuh (its ROCm build): ``#if defined(__AMDGCN_WAVEFRONT_SIZE)
    #define WARP_THREADS __AMDGCN_WAVEFRONT_SIZE #elif defined(__gfx942__) ...``. From ROCm 7.2 no
    pass defines the macro (clang 19 defined it in the host pass too, so that pass left the
    branch "maybe"), so the #define is never compiled; the test itself stays HP210."""
    src = ("#if defined(__AMDGCN_WAVEFRONT_SIZE)\n#define WS __AMDGCN_WAVEFRONT_SIZE\n"
           "#else\n#define WS 64\n#endif\n")
    assert warp_findings(src, ROCM_72) == [("HP210", 1)]
    assert warp_findings(src, ROCM_63) == [("HP211", 1), ("HP211", 2)]


def test_a_wave_size_test_with_an_arch_chain_for_every_target_is_not_removed_macro_hazard() -> None:
    """mamba-ssm 2.3.2's reverse_scan.cuh: ``#if defined(__AMDGCN_WAVEFRONT_SIZE)`` then
    ``#elif defined(__gfx942__) ... 64``: on 7.2 the chain takes the per-arch branch, the fix
    HP210 asks for. A target the chain does not name (gfx950) or a plain #else keeps it."""
    chain = ("#if defined(__AMDGCN_WAVEFRONT_SIZE)\n#define WS __AMDGCN_WAVEFRONT_SIZE\n"
             "#elif defined(__gfx942__) || defined(__gfx90a__)\n#define WS 64\n#endif\n")
    assert warp_findings(chain, ROCM_72) == []
    both = Options(rocm=parse_version("7.2.1"), offload_arch=("gfx942", "gfx950"))
    assert warp_findings(chain, both) == [("HP210", 1)]
    plain = "#ifdef __AMDGCN_WAVEFRONT_SIZE\n#define WS __AMDGCN_WAVEFRONT_SIZE\n#else\n#define WS 32\n#endif\n"
    assert warp_findings(plain, ROCM_72) == [("HP210", 1)]
    assert warp_findings(chain, ROCM_63) == [("HP211", 1), ("HP211", 2)]  # deprecated: still reported


def test_an_arch_chain_must_give_the_host_pass_what_it_gives_each_target() -> None:
    """The host pass names no GPU: from 7.2 it takes the chain's ``#else`` where clang had
    given it the wave size, so ``#elif defined(__gfx942__) 64 #else 32`` sizes host code
    (a launch of ``k<WS><<<1, 4 * WS>>>``) for 32 lanes while gfx942's kernel is built for
    64. mamba-ssm's ``#else`` 64 is gfx942's value (dropped there) but not gfx1100's (32);
    an ``#elif`` hipport cannot decide before the target's may be the one taken."""
    head = "#if defined(__AMDGCN_WAVEFRONT_SIZE)\n#define WS __AMDGCN_WAVEFRONT_SIZE\n"
    arch = "#elif defined(__gfx942__) || defined(__gfx90a__)\n#define WS 64\n"
    rdna = "#elif defined(__gfx1100__)\n#define WS 32\n"
    gfx942 = Options(rocm=parse_version("7.2.1"), offload_arch=("gfx942",))
    gfx1100 = Options(rocm=parse_version("7.2.1"), offload_arch=("gfx1100",))
    assert warp_findings(head + arch + "#else\n#define WS 32\n#endif\n", gfx942) == [("HP210", 1)]
    mamba = head + arch + rdna + "#else\n#define WS 64 // unknown\n#endif\n"
    assert warp_findings(mamba, gfx942) == []
    assert warp_findings(mamba, gfx1100) == [("HP210", 1)]
    platform = head + "#elif defined(__HIP_PLATFORM_AMD__)\n#define WS 32\n" + arch + "#endif\n"
    assert warp_findings(platform, gfx942) == [("HP210", 1)]
    negated = head + "#elif !defined(__gfx942__)\n#define WS 32\n#else\n#define WS 64\n#endif\n"
    assert warp_findings(negated, gfx942) == [("HP210", 1)]  # the host takes the 32
    spaced = head + "# elifndef __gfx90a__\n#define WS 64\n#else\n#define WS 32\n#endif\n"
    assert warp_findings(spaced, gfx942) == []  # "# elifndef": gfx942 and the host take the 64
    elifdef = head + "#elifdef __gfx942__\n#define WS 64\n#else\n#define WS 64\n#endif\n"
    assert warp_findings(elifdef, gfx942) == []


def test_version_messages_differ() -> None:
    old = analyze(AMDGCN.encode(), "t.cu", ROCM_63).findings
    new = analyze(AMDGCN.encode(), "t.cu", ROCM_72).findings
    [old_f] = [f for f in old if f.code == "HP211"]
    [new_f] = [f for f in new if f.code == "HP210"]
    assert old_f.severity < new_f.severity
    assert "deprecated" in old_f.message and "removed" in new_f.message


def test_gated_builtins_reported_once_per_function() -> None:
    [finding] = [f for f in analyze(SYNC_USE.encode(), "t.cu", ROCM_63).findings if f.code == "HP215"]
    assert "`__shfl_down_sync`, `__shfl_sync`" in finding.message


# -- policy is central: one check that guards and suppressions reach these rules -------------

def test_guarded_branch_and_suppression_are_silent() -> None:
    src = (FIXTURES / "hip_guarded.cu").read_bytes()
    assert warp_findings(src) == []
    unguarded = src.replace(b"// hipport: ignore[HP204]", b"//")
    assert ("HP204", 20) in warp_findings(unguarded)


# -- documentation ---------------------------------------------------------------------------

def test_a_kernel_defined_in_a_macro_is_judged_like_any_other() -> None:
    """Function-level checks (mask variables, ballot bit operations) read a function's
    declarations; a kernel in a #define body lives in its own reparsed tree."""
    macro = ("#define DEFINE_K(name) __global__ void name(float* p) { "
             "unsigned m = __ballot_sync(~0ull, p[threadIdx.x] > 0); p[0] = __popc(m); }\n")
    plain = ("__global__ void k(float* p) { "
             "unsigned m = __ballot_sync(~0ull, p[threadIdx.x] > 0); p[0] = __popc(m); }\n")
    assert warp_findings(macro) == [("HP202", 1), ("HP203", 1)]
    assert warp_findings(macro + plain) == [("HP202", 1), ("HP202", 2), ("HP203", 1), ("HP203", 2)]


#: A kernel whose warp index (line 3) sits beside a shuffle of width ``WARP_SIZE``: a logical
#: 32-lane group where WARP_SIZE is 32 and the project names a wave of 64.
WIDTH_WARP_SIZE_KERNEL = ("__global__ void k(float *v) {\n"
                          "  const int warp = threadIdx.x / 32;\n"
                          "  float x = v[threadIdx.x];\n"
                          "  x += __shfl_down_sync(~0ull, x, 1, WARP_SIZE);\n"
                          "  v[warp] = x;\n"
                          "}\n")


@pytest.mark.parametrize("wave", ["#define WAVE_SIZE 64", "#define HW_WARP_SIZE ROCM_WAVEFRONT_SIZE"])
def test_a_crlf_file_names_its_wave_and_logical_warp_as_an_lf_one_does(wave: str) -> None:
    """``logical``'s ``#define`` patterns end at the line's end or a comment; a CRLF file's
    line ends in ``\\r`` before the newline, so ``#define WAVE_SIZE 64\\r\\n`` named no wave and
    ``#define WARP_SIZE 32\\r\\n`` no logical width: the CRLF file had HP204 and HP209 its LF
    twin has not. The same bytes but the line endings get the same findings."""
    src = f"{wave}\n#define WARP_SIZE 32\n" + WIDTH_WARP_SIZE_KERNEL
    assert warp_findings(src) == []
    assert warp_findings(src.replace("\n", "\r\n")) == []


def test_warp_size_reasoning_reads_no_function_like_macro_as_32() -> None:
    """A shuffle's width ``WARP_SIZE`` is a logical 32-lane group only where WARP_SIZE is an
    object macro of 32 (``logical.defined_as_32``, through ``Branches.defines`` in a file
    with a conditional, by pattern in one without); ``#define WARP_SIZE(x) 32`` gives the
    name alone no value: the ``threadIdx.x / 32`` beside it keeps HP204 (found in review:
    ``Branches.defines`` gave "32")."""
    for wave in ("#if defined(__HIP_PLATFORM_AMD__)\n#define WAVE_SIZE 64\n#endif\n",
                 "constexpr int kWaveSize = 64;\n"):
        at = wave.count("\n") + 1
        src = wave + "#define WARP_SIZE 32\n" + WIDTH_WARP_SIZE_KERNEL
        assert [n for c, n in warp_findings(src) if c == "HP204"] == []
        assert [n - at for c, n in warp_findings(src.replace("WARP_SIZE 32", "WARP_SIZE(x) 32"))
                if c == "HP204"] == [2]


def test_a_headers_includer_chain_is_judged_alone_whatever_the_other_headers(tmp_path: Path) -> None:
    """``pipeline._drop_logical_in_wave64_includers`` follows a header's includers up to
    ``MAX_INCLUDER_LEVELS``. An includer's answer is kept per level: one cut off by the bound
    in a deep chain is no answer where the same includer includes another header directly.
    Kept per path alone, the HP209 of ``direct.h`` (three levels below a .cu naming the wave)
    stayed when a header whose name sorts first (``a_deep.h``, five levels below) was judged
    first, and went when it sorted after: the verdict hung on another file's name."""
    from hipport.pipeline import collect, scan_paths

    def constants(deep: str) -> list[str]:
        root = tmp_path / deep
        root.mkdir()
        (root / "utils.h").write_text("#pragma once\n#if defined(__HIP_PLATFORM_AMD__)\n"
                                      "constexpr int hw_warp_size = ROCM_WAVEFRONT_SIZE;\n#endif\n")
        (root / deep).write_text("#pragma once\n#define WARP_SIZE 32\n")
        (root / "direct.h").write_text("#pragma once\n#define WARP_SIZE 32\n")
        (root / "m1.h").write_text(f'#pragma once\n#include "{deep}"\n')
        (root / "m2.h").write_text('#pragma once\n#include "m1.h"\n')
        (root / "m3.h").write_text('#pragma once\n#include "m2.h"\n#include "direct.h"\n')
        (root / "m4.h").write_text('#pragma once\n#include "m3.h"\n')
        (root / "k.cu").write_text('#include "utils.h"\n#include "m4.h"\n')
        opts = Options(jobs=1)
        return sorted(Path(f.path).name for f in collect(scan_paths([root], opts), opts, "scan").findings
                      if f.code == "HP209")

    assert constants("a_deep.h") == ["a_deep.h"]
    assert constants("z_deep.h") == ["z_deep.h"]


def test_a_qualified_mask_constant_is_the_one_its_namespaces_name() -> None:
    """25d8ab5 looked ``a::kFullMask`` up by its last name, so the last ``kFullMask`` the file
    declares answered for every qualifier: with a 64-bit ``b::kFullMask`` after a 32-bit
    ``a::kFullMask`` the true HP202 on ``a::`` was lost, and in the other order ``b::`` got a
    false one. A qualifier two namespaces end with (``detail::`` of x::detail and y::detail)
    tells no type: nothing is said."""
    narrow = "namespace a { constexpr unsigned kFullMask = 0xffffffffu; }\n"
    wide = "namespace b { constexpr unsigned long long kFullMask = ~0ull; }\n"
    calls = ("__device__ unsigned long long f(int p) { return __ballot_sync(a::kFullMask, p); }\n"
             "__device__ unsigned long long g(int p) { return __ballot_sync(::b::kFullMask, p); }\n")

    def masks(src: str) -> list[int]:
        ctx = analyze(src.encode(), "t.cu", Options())
        return [f.line for f in ctx.findings if f.code == "HP202"]

    assert masks(narrow + wide + calls) == [3]
    assert masks(wide + narrow + calls) == [3]
    nested = ("namespace x { namespace detail { constexpr unsigned kFullMask = 0xffffffffu; } }\n"
              "namespace y::detail { constexpr unsigned long long kFullMask = ~0ull; }\n")
    assert masks(nested + "__device__ unsigned long long f(int p) { return __ballot_sync(x::detail::kFullMask, p); }\n"
                 "__device__ unsigned long long h(int p) { return __ballot_sync(detail::kFullMask, p); }\n") == [3]
