"""The compile tier: convert every fixture and example for each target and syntax-check the
output against that target's HIP headers (clang + the cached HIP 6.2 / 7.1 header sets, or
a ROCm of the target's release; hipport.compilers picks). .ci/run builds the header sets.

Skips on a machine without clang or header sets (`hipport verify --fetch-headers` builds
them); fails in CI (CI=true), where a missing compiler means the tier silently stopped
proving anything. Marked ``compile``: ``-m "not compile"`` leaves it out of a quick run.
Runtime: ~0.9 s a translation unit, two at a time, per target.

Every file that fails to compile must be listed below with the reason, and every listed
file must still fail (a fixed one should leave the list). No error may be "unpredicted"
(no hipport finding at its line) unless it is a known gap listed in KNOWN_GAPS.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hipport import verify as V
from hipport import verify_units as U
from hipport.convert import convert, plan
from hipport.options import Options
from hipport.report.verify import render
from hipport.versions import parse_version

pytestmark = pytest.mark.compile

ROOT = Path(__file__).resolve().parents[1]
INPUTS = [ROOT / "fixtures", ROOT / "examples"]
#: Golden HIP outputs are checked by the converter's golden tests, not converted again here.
EXCLUDE = ("expected",)
#: target → the header set it must be checked against (the nearest the registries have).
HEADER_SETS = {"7.2.1": (7, 1, 25424), "6.3": (6, 2, 41134)}

NO_LIBRARY = "a ROCm library the header sets do not carry (hipBLAS, hipCUB, hipFFT, rocWMMA...)"
NO_TORCH = "PyTorch extension: torch/extension.h is not installed"
FIXTURE = "rule fixture written to trigger findings, not to compile"

#: rel path in the output tree → why it does not compile, for both targets (a dict value
#: {target: reason} for one target only). A key ending in "/" covers a directory whose
#: files MAY fail (rule fixtures are written to trigger findings, not to build); an exact
#: key MUST still fail.
EXPECTED_FAILURES: dict[str, str | dict[str, str]] = {
    "fixtures/rules/": FIXTURE,
    "fixtures/deep/": FIXTURE + " (libclang-engine fixtures; warp_types.h is not shipped)",
    "fixtures/convert/blas_rand.cu": NO_LIBRARY,
    "fixtures/convert/cub_coop_half.cu": NO_LIBRARY,
    "fixtures/convert/fft_sparse_solver.cpp": NO_LIBRARY,
    "fixtures/convert/newer_apis.cu": NO_LIBRARY,
    "fixtures/convert/release_true.cu": NO_LIBRARY,
    "fixtures/convert/runtime_api.cu": {
        "7.2.1": "hipStreamCopyAttributes is HIP 7.2, the 7.1 headers predate it",
        "6.3": "cudaStreamCopyAttributes has no HIP counterpart before 7.2 (HP102)"},
    "fixtures/deps/gaussian-splatting/csrc/rasterize_points.cu": NO_TORCH,
    "fixtures/deps/gaussian-splatting/ext.cpp": NO_TORCH,
    "examples/cuda-project/src/main.cu": NO_LIBRARY,
}

#: Include directories a project's build file adds (the tier reads no CMake):
#: the CUDA-samples layout's include_directories(../../../Common).
INCLUDE_DIRS = ("examples/cuda-samples/Common",)

#: Unpredicted errors hipport knows about: (rel path, text in the message; "" = any[, the
#: only target or engine it occurs with]) → why.
#: Each is work for the converter or the rules; the goal is an empty dict.
KNOWN_GAPS: dict[tuple[str, str] | tuple[str, str, str], str] = {
}


def _rel_target(value: str | dict[str, str], rocm: str) -> str | None:
    return value if isinstance(value, str) else value.get(rocm)


def _expected_to_fail(rel: str, rocm: str) -> bool:
    return any((rel == key or (key.endswith("/") and rel.startswith(key)))
               and _rel_target(value, rocm) for key, value in EXPECTED_FAILURES.items())


def _compiler_or_skip(target) -> V.Compiler:
    try:
        return V.select(target)
    except V.NoCompiler as e:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {e}: the compile tier must run in CI")
        pytest.skip(str(e))


def _rel(path: Path, out: Path) -> str:
    return path.resolve().relative_to(out.resolve()).as_posix()


def _shown_rel(path: Path, out: Path) -> str:
    """Relative to the output tree; a system header's path as it is."""
    try:
        return _rel(path, out)
    except ValueError:
        return str(path)


def _engine() -> str:
    """libclang's engine where it is installed (CI installs the extra): it predicts the
    errors of CUDA names built by token pasting, which tree-sitter cannot see."""
    try:
        import clang.cindex  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            raise
        return "tree-sitter"
    return "clang"


ENGINE = _engine()


@pytest.mark.parametrize("rocm", ["7.2.1", "6.3"])
def test_every_fixture_and_example_compiles_or_is_expected_to_fail(rocm, tmp_path):
    compiler = _compiler_or_skip(parse_version(rocm))
    if compiler.headers is not None:
        assert compiler.headers.version == HEADER_SETS[rocm], compiler.describe(parse_version(rocm), "")
    out = tmp_path / "out"
    the_plan = plan(INPUTS, str(out), in_place=False, diff=False)
    options = Options(apply_fixes=True, rocm=parse_version(rocm), exclude=EXCLUDE, jobs=1,
                      engine=ENGINE)
    units: list[U.Unit] = []
    for _ in U.units_from_convert(the_plan, convert(the_plan, options, emit=lambda _: None), units):
        pass
    assert units, "no translation units found under fixtures/ and examples/"
    result = V.verify(units, compiler=compiler, target=options.rocm,
                      includes=U.include_roots(the_plan) + [out / d for d in INCLUDE_DIRS], jobs=2)
    report = render(result)

    failing = {_rel(r.path, out) for r in result.failed()}
    must_fail = {rel for rel, value in EXPECTED_FAILURES.items()
                 if not rel.endswith("/") and _rel_target(value, rocm) and (out / rel).exists()}
    new = sorted(rel for rel in failing if not _expected_to_fail(rel, rocm))
    assert new == [], f"new compile failures (list them with a reason): {new}\n{report}"
    fixed = sorted(must_fail - failing)
    assert fixed == [], f"now compile (drop them from EXPECTED_FAILURES): {fixed}\n{report}"

    gaps_here = [key for key in KNOWN_GAPS if len(key) == 2 or key[2] in (rocm, ENGINE)]
    unpredicted = [v for v in result.verdicts if v.kind == V.UNPREDICTED and v.path is not None]
    gaps = [v for v in unpredicted if not any(
        _shown_rel(v.path, out) == key[0] and key[1] in v.diagnostic.message for key in gaps_here)]
    assert gaps == [], f"compile errors no finding predicts:\n{report}"
    stale = [key for key in gaps_here if not any(
        _shown_rel(v.path, out) == key[0] and key[1] in v.diagnostic.message for v in unpredicted)]
    assert stale == [], f"known gaps that no longer occur (drop them from KNOWN_GAPS): {stale}"
    assert not [r for r in result.runs if r.failure], f"units the compiler could not run:\n{report}"
