"""HP3xx device-feature rules, over the fixtures in fixtures/rules/device/.

Each fixture line that must produce a finding carries ``// expect: HP3xx`` (or
``// expect@6.3: …`` / ``// expect@7.2.1: …`` when only one target reports it); every
other line must produce none of this family. Look-alike fixtures name the rules they
guard against in a ``// negatives: …`` header, so coverage of both sides is checked too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hipport.analyze import analyze
from hipport.options import Options
from hipport.rules import load
from hipport.rules.device import _CONST_CHARS, _const_ast
from hipport.versions import parse_version

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rules"
TARGETS = ("6.3", "7.2.1")
_EXPECT_RE = re.compile(r"expect(?:@([\d.]+))?:\s*((?:HP\d{3}\b\s*)+)")
_NEGATIVES_RE = re.compile(r"negatives:\s*((?:HP\d{3}\b\s*)+)")


def run(src: bytes | str, rocm: str = "7.2.1", path: str = "t.cu"):
    """Findings of one buffer analysed for ``rocm``."""
    data = src.encode() if isinstance(src, str) else src
    return analyze(data, path, Options(rocm=parse_version(rocm))).findings


def expected(path: Path, rocm: str) -> set[tuple[int, str]]:
    out = set()
    for line_no, line in enumerate(path.read_text().splitlines(), 1):
        for m in _EXPECT_RE.finditer(line):
            if m.group(1) is None or parse_version(m.group(1)) == parse_version(rocm):
                out.update((line_no, code) for code in m.group(2).split())
    return out


def found(path: Path, rocm: str, family: str) -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in run(path.read_bytes(), rocm, str(path)) if f.code.startswith(family)}


def fixture_codes(directory: Path, regex: re.Pattern[str]) -> set[str]:
    codes: set[str] = set()
    for p in directory.iterdir():
        for m in regex.finditer(p.read_text()):
            codes.update(m.group(m.lastindex).split())
    return codes


DEVICE = sorted((FIXTURES / "device").iterdir())


@pytest.mark.parametrize("rocm", TARGETS)
@pytest.mark.parametrize("path", DEVICE, ids=lambda p: p.name)
def test_fixture_findings_match_markers(path: Path, rocm: str) -> None:
    assert found(path, rocm, "HP3") == expected(path, rocm)


def test_every_device_rule_has_positive_and_negative_fixtures() -> None:
    codes = {c for c in load().rules if c.startswith("HP3")}
    assert codes <= fixture_codes(FIXTURES / "device", _EXPECT_RE)
    assert codes <= fixture_codes(FIXTURES / "device", _NEGATIVES_RE)


def test_rule_pages_have_before_after_examples() -> None:
    for code, rule in load().rules.items():
        if code.startswith("HP3"):
            assert "```cuda" in rule.doc and rule.title, code


def test_ptx_message_names_instructions_and_registers() -> None:
    findings = run((FIXTURES / "device" / "ptx_asm.cu").read_bytes())
    messages = {f.line: f.message for f in findings if f.code == "HP301"}
    assert "`%laneid`" in messages[8] and "`mov`" in messages[8]
    assert "`mma.sync`" in messages[21]
    assert "`cp.async`" in messages[4]
    assert "`ld.global.nc`" in messages[14]
    assert "Hopper-only" in messages[31]


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
