"""Golden tests: every converter fixture, for each target and launch syntax, byte for byte.

The expected files were read by hand once; ``python tools/update_goldens.py`` regenerates
them after a deliberate change (then read ``git diff fixtures/``).
"""

from __future__ import annotations

import difflib
import importlib.util
import re
from pathlib import Path

import pytest

from hipport.mapping import load_table
from hipport.pipeline import transform
from hipport.versions import parse_version

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("update_goldens", ROOT / "tools" / "update_goldens.py")
goldens = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(goldens)

CASES = [(v, p) for v in goldens.VARIANTS for p in goldens.inputs()]


def _id(case) -> str:
    return f"{case[0]}/{case[1].name}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_output_matches_golden(case) -> None:
    variant, path = case
    expected_dir = goldens.FIXTURES / "expected" / variant
    out, found = goldens.render(path, goldens.VARIANTS[variant])
    assert out == (expected_dir / path.name).read_bytes()
    assert found == (expected_dir / (path.name + ".findings")).read_text(encoding="utf-8")


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_converting_the_output_again_changes_nothing(case) -> None:
    variant, path = case
    options = goldens.VARIANTS[variant]
    once, _, _ = transform(path.read_bytes(), path.name, options)
    twice, _, _ = transform(once, path.name, options)
    assert twice == once


def test_fixtures_cover_what_the_issue_names() -> None:
    text = b"".join(p.read_bytes() for p in goldens.inputs())
    for needle in (b"cudaMalloc", b"cuModuleLoad", b"cublasSgemm", b"curandGenerate",
                   b"curand_init", b"cufftExecC2C", b"cusparseSpMV", b"cusolverDnDpotrf",
                   b"cub::", b"cooperative_groups", b"__half", b"__nv_bfloat16",
                   b"template <", b"#define LAUNCH", b"#else", b"\r\n", b"\t"):
        assert needle in text, needle


def test_hip_code_passes_through_unchanged() -> None:
    path = goldens.FIXTURES / "hip_already.cpp"
    for options in goldens.VARIANTS.values():
        out, findings, rewrites = transform(path.read_bytes(), path.name, options)
        assert out == path.read_bytes() and rewrites == 0 and findings == []


def test_crlf_and_tabs_survive() -> None:
    out = (goldens.FIXTURES / "expected" / "rocm-7.2.1" / "crlf_tabs.cu").read_bytes()
    assert b"\n" not in out.replace(b"\r\n", b"")
    assert b"\thipStreamSynchronize(s);\r\n" in out


def test_comments_and_strings_are_not_rewritten() -> None:
    out = (goldens.FIXTURES / "expected" / "rocm-7.2.1" / "macros_branches.cuh").read_bytes()
    assert b"// A comment mentioning cudaMalloc and <<<grid, block>>> stays" in out
    assert b"cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice); */" in out
    assert b'"cudaMalloc failed: see cudaGetLastError()"' in out


def _spelled_by_release(line: bytes) -> bool:
    """Whether the input line names a CUDA API whose HIP spelling differs between 6.3 and
    7.2.1 (the timeline of ``mappings/api``), both applied: a difference with no finding."""
    table = load_table()
    v63, v721 = table.view(parse_version("6.3")), table.view(parse_version("7.2.1"))
    for name in re.findall(rb"[A-Za-z_]\w*", line):
        a, b = v63.resolve(name.decode()), v721.resolve(name.decode())
        if a is not None and b is not None and a.apply and b.apply and a.target != b.target:
            return True
    return False


def test_targets_differ_exactly_where_the_tables_say() -> None:
    """Every line that 6.3 and 7.2.1 convert differently carries a 6.3 finding saying why,
    or names an API whose HIP spelling is release-dependent."""
    for path in goldens.inputs():
        old = (goldens.FIXTURES / "expected" / "rocm-6.3" / path.name).read_bytes().splitlines()
        new = (goldens.FIXTURES / "expected" / "rocm-7.2.1" / path.name).read_bytes().splitlines()
        assert len(old) == len(new), path.name
        to_input = _output_to_input_lines(path.read_bytes().splitlines(), old)
        src = path.read_bytes().splitlines()
        differing = {to_input[i] for i, (a, b) in enumerate(zip(old, new))
                     if a != b and not _spelled_by_release(src[to_input[i] - 1])}
        findings = (goldens.FIXTURES / "expected" / "rocm-6.3" / (path.name + ".findings")).read_text()
        version_lines = {int(m.group(1)) for m in re.finditer(r"^(\d+):\d+ HP10[235] ", findings, re.M)}
        assert differing <= version_lines, (path.name, differing - version_lines)
    newer = (goldens.FIXTURES / "expected" / "rocm-6.3" / "newer_apis.cu.findings").read_text()
    assert newer.count("HP102") == 5


def _output_to_input_lines(src: list[bytes], out: list[bytes]) -> dict[int, int]:
    """0-based output line → 1-based input line (includes added or merged shift lines)."""
    mapping: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, src, out, autojunk=False).get_opcodes():
        if tag in ("equal", "replace") and i2 - i1 == j2 - j1:
            mapping.update({j1 + k: i1 + k + 1 for k in range(j2 - j1)})
    return mapping
