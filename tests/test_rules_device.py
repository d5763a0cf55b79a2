"""HP3xx device-feature rules, over the fixtures in fixtures/rules/device/.

The fixtures themselves are checked against their markers by the one rules harness
(tests/test_rules_fixtures.py, markers in conftest.py); these are the device rules' own
cases: messages, versions, constant evaluation.
"""

from __future__ import annotations

import ast

from conftest import FIXTURES, run
from hypothesis import given
from hypothesis import strategies as st

from hipport.rules.device.constants import CONST_CHARS as _CONST_CHARS, const_ast as _const_ast


def test_ptx_message_names_instructions_and_registers() -> None:
    findings = run((FIXTURES / "device" / "ptx_asm.cu").read_bytes())
    messages = {f.line: f.message for f in findings if f.code == "HP301"}
    assert "`%laneid`" in messages[8] and "`mov`" in messages[8]
    assert "`mma.sync`" in messages[21]
    assert "`cp.async`" in messages[4]
    assert "`ld.global.nc`" in messages[14]
    assert "Hopper-only" in messages[31]


def test_ptx_message_names_sm90_registers_and_barriers_hopper_only() -> None:
    """The blind recall corpus's h05: %cluster_ctarank and mbarrier.try_wait (sm_90) were
    called plain PTX, beside wgmma and mapa named Hopper-only."""
    src = (b'__device__ unsigned r() { unsigned v; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(v)); return v; }\n'
           b'__device__ void w(unsigned a) { asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0; }" :: "r"(a)); }\n')
    messages = {f.line: f.message for f in run(src) if f.code == "HP301"}
    assert "`%cluster_ctarank` is Hopper-only" in messages[1]
    assert "`mbarrier.try_wait` is Hopper-only" in messages[2]


def test_shared_memory_message_depends_on_target() -> None:
    src = (FIXTURES / "device" / "shared_memory.cu").read_bytes()
    old = next(f for f in run(src, "6.3") if f.code == "HP306" and f.line == 8)
    new = next(f for f in run(src, "7.2.1") if f.code == "HP306" and f.line == 8)
    assert "81920 bytes" in old.message and "every GPU supported by ROCm 6.3" in old.message
    assert "gfx950" in new.message and "160 KiB" in new.message


def test_grid_sync_notes_validation_before_7_0() -> None:
    src = (FIXTURES / "device" / "coop_groups.cu").read_bytes()
    old = [f.message for f in run(src, "6.3") if f.code == "HP313"]
    new = [f.message for f in run(src, "7.2.1") if f.code == "HP313"]
    assert old and all("validated from ROCm 7.0" in m for m in old)
    assert new and not any("validated" in m for m in new)


def test_graph_beta_applies_only_before_7_0() -> None:
    src = "void f() { cudaGraph_t g; cudaGraphCreate(&g, 0); }"
    assert [(f.line, f.code) for f in run(src, "6.3") if f.code == "HP315"] == [(1, "HP315")]
    assert not [f for f in run(src, "7.2.1") if f.code == "HP315"]


def test_fp8_mentions_ocp_api_on_6_3_only() -> None:
    src = "__global__ void k(__nv_fp8_e5m2* p) {}"
    (old,) = [f.message for f in run(src, "6.3") if f.code == "HP310"]
    (new,) = [f.message for f in run(src, "7.2.1") if f.code == "HP310"]
    assert "FNUZ" in old and "arrives in ROCm 7.0" in old and "arrives" not in new


def test_name_notes_are_reported_once_per_file() -> None:
    src = "__global__ void k(const float* p, float* q) { q[0] = __ldg(p); q[1] = __ldg(p + 1); }\n"
    assert [(f.line, f.code) for f in run(src) if f.code == "HP320"] == [(1, "HP320")]


def test_ignore_comment_suppresses_a_device_finding() -> None:
    src = ("__device__ unsigned lane() {\n"
           "  unsigned l; asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(l));  // hipport: ignore[HP301]\n"
           "  return l;\n}\n")
    assert not [f for f in run(src) if f.code == "HP301"]


def test_constants_from_defines_and_constexpr_feed_shared_sizes() -> None:
    src = ("#define ROWS (2 * 64)\nconstexpr int COLS = ROWS + 32;\n"
           "__global__ void k() { __shared__ double t[ROWS][COLS]; }\n")
    assert [(f.line, f.code) for f in run(src) if f.code == "HP306"] == [(3, "HP306")]


def test_an_arch_condition_is_one_finding_not_one_per_token() -> None:
    """HP309 reports the whole #if condition; the bare HP106 for each __CUDA_ARCH__ in it
    would repeat it. __CUDACC__ in the same condition is rewritten (HP118), not HP106."""
    src = ("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\nint a;\n#endif\n"
           "#if defined(__CUDACC__) && __CUDA_ARCH__ < 700\nint b;\n#endif\n"
           "#ifdef __CUDACC__\nint c;\n#endif\n")
    codes = sorted((f.line, f.code) for f in run(src) if f.code in ("HP106", "HP118", "HP309"))
    assert codes == [(1, "HP309"), (4, "HP118"), (4, "HP309"), (7, "HP118")]


def test_a_version_test_names_and_spans_the_branch_the_hip_build_compiles() -> None:
    """HIP defines no CUDART_VERSION (0 in #if): the finding at the test says which lines
    the HIP build compiles instead and spans them, so their compile errors are its own."""
    src = ("#if CUDART_VERSION >= 2020\nint modern;\n#else\nint old;\nint older;\n#endif\n"
           "#if CUDART_VERSION < 4000\nint fallback;\n#endif\n"
           "#if CUDA_VERSION >= 12000\nint twelve;\n#endif\n"
           "#define CUDART_VERSION_SEEN 1\n#if defined(X)\n#elif CUDART_VERSION >= 2020\nint e;\n#else\nint f;\n#endif\n")
    found = [(f.line, f.end_line, f.message[f.message.find("a HIP build"):] if "a HIP build" in f.message
              else "") for f in run(src) if f.code == "HP106"]
    assert found == [
        (1, 5, "a HIP build, where CUDART_VERSION is undefined (0 in #if), compiles lines 4-5 "
               "(the #else branch), which every CUDA since 2.2 skips"),
        (7, 8, "a HIP build, where CUDART_VERSION is undefined (0 in #if), compiles lines 8-8 "
               "(the #if branch), which every CUDA since 4.0 skips"),
        (10, 10, ""),  # no #else: nothing compiled instead
        (15, 15, ""),  # an #elif: what HIP takes depends on the tests before it
    ]
    # a project that defines CUDART_VERSION itself: its tests are moot (AboutAName), no claim
    assert [(f.line, f.end_line) for f in run("#define CUDART_VERSION 12000\n" + src) if f.code == "HP106"] \
        == [(11, 11)]


def test_no_branch_claim_for_a_macro_hip_defines_or_another_rule_reports() -> None:
    """__AMDGCN_WAVEFRONT_SIZE is defined in HIP's device passes; ``#if __CUDA_ARCH__ >=
    800`` is HP309's, which takes the HP106 inside its condition (a span grown to the
    #else would escape it: DeepSpeed's reduction_utils.h had 16 such HP106)."""
    src = ("#if __AMDGCN_WAVEFRONT_SIZE == 64\nint a;\n#else\nint b;\n#endif\n"
           "#if __CUDA_ARCH__ >= 800\nint c;\n#else\nint d;\n#endif\n")
    found = [(f.line, f.end_line, f.code) for f in run(src) if f.code in ("HP106", "HP309")]
    assert not any("a HIP build" in f.message for f in run(src))
    assert all(end == line for line, end, _ in found) and (6, 6, "HP309") in found
    assert not any(code == "HP106" and line == 6 for line, _, code in found)


def test_a_version_test_names_what_the_header_it_skips_declares(tmp_path) -> None:
    """The HIP build skips the #include in the CUDA branch: the functions that header
    declares (file scope, extern "C" too; not members, locals or parameters) are named,
    so "use of undeclared identifier" on them further down is the finding's."""
    (tmp_path / "k.cuh").write_text(
        "#ifndef K_H\n#define K_H\nstruct S { void member(); };\n"
        "cudaError_t setRetirementCount(int n) { void local(); return cudaSuccess; }\n"
        'extern "C" void reduce(int n, void (*callback)(int));\n#endif\n')
    src = '#if CUDART_VERSION >= 2020\n#include "k.cuh"\n#include "absent.cuh"\n#else\nint old;\n#endif\n'
    [f] = [f for f in run(src, path=str(tmp_path / "t.cu")) if f.code == "HP106"]
    assert f.message.endswith('skips; it skips the #include of "k.cuh" (line 2), which declares '
                              'setRetirementCount, reduce; it skips the #include of "absent.cuh" (line 3)')


_EVALUABLE = (ast.Expression, ast.Name, ast.Load, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div,
              ast.FloorDiv, ast.Mod, ast.LShift, ast.RShift)


@given(st.text(alphabet="abN_019x +-*/%<>()[].,'\"&|^~!=?:;{}\\\n\t", max_size=14))
def test_the_constant_pre_check_rejects_only_what_could_not_be_a_constant(expr: str) -> None:
    """``_CONST_CHARS`` spares the Python parse of most initialisers; whatever it rejects
    must be something ``_const_value`` would give no value for anyway. (``#`` is left out
    of the alphabet: to Python it starts a comment, so ``256 # x`` parsed as 256 before;
    C has no such comment, and the pre-check rightly gives no value.)"""
    if _CONST_CHARS.match(expr) is not None:
        return
    tree = _const_ast(expr)
    assert tree is None or any(
        not isinstance(n, _EVALUABLE) and not (isinstance(n, ast.Constant) and type(n.value) is int)
        for n in ast.walk(tree))


def test_cudacc_is_kept_in_a_file_that_tests_the_hip_compiler_itself() -> None:
    """Eigen 3.4's Macros.h: `__CUDACC__` → EIGEN_CUDACC and, apart, `__HIPCC__` →
    EIGEN_HIPCC. Rewritten, a HIP build defined both and took the CUDA branches; kept, with
    an HP118 saying so. A file that never tests __HIPCC__ or __HIP__ is rewritten as before,
    and a test of __HIPCC__ in a comment or outside a condition does not count."""
    from test_rules_released_headers import converted

    apart = ("#if defined(__CUDACC__) && !defined(NO_CUDA)\n#define MY_CUDACC __CUDACC__\n#endif\n"
             "#if defined(__HIPCC__) \\\n  && !defined(NO_HIP)\n#define MY_HIPCC 1\n#endif\n")
    out = converted(apart)
    assert out.count("__CUDACC__") == 2 and out.count("__HIPCC__") == 1, out
    kept = [f for f in run(apart) if f.code == "HP118"]
    assert [f.line for f in kept] == [1, 2] and all("kept" in f.message for f in kept)
    for hip in ("#elif defined(__HIP__)\n", "#elifdef __HIP__\n"):
        assert "__CUDACC__" in converted("#ifdef __CUDACC__\nint a;\n" + hip + "int b;\n#endif\n")
    alone = ("#ifndef __CUDACC__\nint a;\n#endif\n// not __HIPCC__\n#if X // __HIPCC__\n#endif\n"
             "const char *s = \"__HIPCC__\";\n")
    assert "__CUDACC__" not in converted(alone)
    assert all("kept" not in f.message for f in run(alone) if f.code == "HP118")


PICKER = "#ifdef __HIPCC__\n#include <hip/hip_runtime.h>\n#else\n#include <cuda_runtime.h>\n#endif\n"


def test_cudacc_is_kept_only_where_the_hip_build_has_its_own_branch() -> None:
    """A file that tests __HIPCC__ only to pick its header, or whose __CUDACC__ branch
    defines __host__ __device__ that no __HIPCC__ branch defines, needs the rewrite (kept,
    the HIP build lost HD: "reference to __host__ function"); an #elif chain, an enclosing
    or nested test, or a macro defined under both (or its HIP twin) keep it, and HP118 says
    why; anything else keeps it and is HP127 (medium), not HP118."""
    from test_rules_released_headers import converted

    def codes(src: str) -> list[tuple[int, str, str]]:
        return [(f.line, f.code, f.message) for f in run(src) if f.code in ("HP118", "HP127")]

    for body in ("#ifdef __CUDACC__\n#define HAS_GPU 1\n#endif\n",
                 "#if defined(__HIPCC__)\n#define WAVE 64\n#endif\n"
                 "#ifndef __CUDACC__\n#define HD\n#else\n#define HD __host__ __device__\n#endif\n"):
        src = PICKER + body
        assert "__CUDACC__" not in converted(src), src
        assert [(c, "→ __HIPCC__" in m) for _, c, m in codes(src)] == [("HP118", True)], codes(src)
    assert "only to pick headers" in codes(PICKER + "#ifdef __CUDACC__\n#define HAS_GPU 1\n#endif\n")[0][2]
    kept = {
        "#if defined(__CUDACC__)\n#define L 32\n#elif defined(__HIPCC__)\n#define L 64\n#endif\n": "chain",
        "#if !defined(__HIPCC__) || X\n#ifdef __CUDACC__\n#define L 32\n#endif\n#endif\n": "lies in a branch",
        "#ifdef __CUDACC__\n#ifdef __HIP__\n#define L 64\n#endif\n#endif\n": "inside its branches",
        "#ifdef __HIPCC__\n#define HD __host__ __device__\n#endif\n"
        "#ifdef __CUDACC__\n#define HD __host__ __device__\n#endif\n": "HD is defined",
        "#ifdef __CUDACC__\n#define LIB_CUDA_ON 1\n#endif\n#ifdef __HIPCC__\n#define LIB_HIP_ON 1\n#endif\n":
            "LIB_HIP_ON is defined",
    }
    for src, why in kept.items():
        found = codes(src)
        assert "__CUDACC__" in converted(src), src
        assert found and all(c == "HP118" and "kept" in m and why in m for _, c, m in found), (src, found)
    unsure = "#if defined(__HIPCC__)\n#define WAVE 64\n#endif\n#if defined(__CUDACC__)\n#define HAS_GPU 1\n#endif\n"
    assert "__CUDACC__" in converted(unsure)
    assert [(line, c) for line, c, _ in codes(unsure)] == [(4, "HP127")]
    assert "defined(__CUDACC__) || defined(__HIPCC__)" in codes(unsure)[0][2]
