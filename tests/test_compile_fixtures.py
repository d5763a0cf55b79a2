"""The compile tier: convert every fixture and example and syntax-check the output with
AMD's hipcc (ROCm 5.2 from Debian in CI: .ci/run installs it).

Skips on a machine without hipcc; fails in CI (CI=true), where a missing compiler means the
tier silently stopped proving anything. Runtime: ~1-2 s a translation unit, two at a time.

Every file that fails to compile must be listed below with the reason, and every listed
file must still fail (a fixed one should leave the list). No error may be "unpredicted"
(no hipport finding on or near it) unless it is a known gap listed in KNOWN_GAPS.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hipport import verify as V
from hipport.convert import convert, plan
from hipport.options import Options
from hipport.versions import parse_version

ROOT = Path(__file__).resolve().parents[1]
INPUTS = [ROOT / "fixtures", ROOT / "examples"]
#: Golden HIP outputs are checked by the converter's golden tests, not converted again here.
EXCLUDE = ("expected",)

OLD_HEADERS = "ROCm 5.2 headers predate the target"
NO_LIBRARY = "a ROCm library Debian does not package (hipBLAS, hipCUB, hipFFT, rocWMMA...)"
NO_TORCH = "PyTorch extension: torch/extension.h is not installed"
FIXTURE = "rule fixture written to trigger findings, not to compile"

#: rel path in the output tree → why it does not compile with Debian's ROCm 5.2 hipcc, for
#: both targets. A key ending in "/" covers a directory whose files MAY fail (rule fixtures
#: are written to trigger findings, not to build); an exact key MUST still fail.
EXPECTED_FAILURES: dict[str, str] = {
    "fixtures/rules/": FIXTURE,
    "fixtures/deep/": FIXTURE + " (libclang-engine fixtures; warp_types.h is not shipped)",
    "fixtures/convert/blas_rand.cu": NO_LIBRARY,
    "fixtures/convert/cub_coop_half.cu": NO_LIBRARY,
    "fixtures/convert/fft_sparse_solver.cpp": NO_LIBRARY,
    "fixtures/convert/newer_apis.cu": NO_LIBRARY,
    "fixtures/convert/runtime_api.cu": (
        OLD_HEADERS + " (hipLaunchAttributeValue 6.2, hipStreamCopyAttributes 7.2)"),
    "fixtures/deps/gaussian-splatting/csrc/forward.cu": OLD_HEADERS + ": *_sync warp builtins (6.2)",
    "fixtures/deps/gaussian-splatting/csrc/rasterize_points.cu": NO_TORCH,
    "fixtures/deps/gaussian-splatting/ext.cpp": NO_TORCH,
    "examples/cuda-project/src/main.cu": NO_LIBRARY,
    "examples/cuda-project/src/reduce.cu": OLD_HEADERS + ": __shfl_down_sync (6.2) in common.cuh",
    "examples/mixed-codebase/src/cuda/legacy_count.cu": OLD_HEADERS + ": __ballot_sync (6.2)",
    "examples/mixed-codebase/src/cuda/reduce.cu": OLD_HEADERS + ": __shfl_down_sync (6.2)",
    "examples/research-repo/pointnet_ops/csrc/ball_query.cu": OLD_HEADERS + ": __ballot_sync (6.2)",
}

#: Unpredicted errors hipport knows about: (rel path, text in the message; "" = any[, the
#: only target or engine it occurs with]) → why.
#: Each is work for the converter or the rules; the goal is an empty dict.
KNOWN_GAPS: dict[tuple[str, str] | tuple[str, str, str], str] = {
    ("fixtures/deep/token_paste.cu", "", "tree-sitter"):
        "token-pasted CUDA names are only seen by the libclang engine (--engine clang)",
    ("fixtures/rules/device/hopper_lookalikes.cu", "'sync'"):
        "5.2's free function cooperative_groups::sync(group) is host-only; whether 6.3/7.2.1 "
        "headers declare it for device code could not be checked here",
    ("fixtures/rules/device/misc_device_ok.cu", "hipPointerAttribute_t"):
        "5.2 names the member memoryType (type from HIP 6.0); the tables do not date struct members",
    ("fixtures/rules/device/shared_memory_ok.cu", "hipFuncSetAttribute"):
        "a kernel passed where the 5.2 header takes const void*; needs a cast or a newer header",
    ("fixtures/rules/api/behaviour.cu", "narrowed", "7.2.1"):
        "HP114 (positional cudaMemsetParams) applies to ROCm < 7.0 targets; the 7.2.1 "
        "conversion trips it only because hipcc 5.2 has the pre-7.0 field order",
}


def _expected_to_fail(rel: str) -> bool:
    return any(rel == key or (key.endswith("/") and rel.startswith(key)) for key in EXPECTED_FAILURES)


def _hipcc_or_skip() -> V.Compiler:
    try:
        return V.probe()
    except V.NoCompiler as e:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {e}: the compile tier must run in CI")
        pytest.skip(f"no hipcc on this machine ({V.INSTALL_HINT})")


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


@pytest.fixture(scope="module")
def compiler() -> V.Compiler:
    return _hipcc_or_skip()


@pytest.mark.parametrize("rocm", ["7.2.1", "6.3"])
def test_every_fixture_and_example_compiles_or_is_expected_to_fail(rocm, compiler, tmp_path):
    out = tmp_path / "out"
    the_plan = plan(INPUTS, str(out), in_place=False, diff=False)
    options = Options(apply_fixes=True, rocm=parse_version(rocm), exclude=EXCLUDE, jobs=1,
                      engine=ENGINE)
    units: list[V.Unit] = []
    for _ in V.units_from_convert(the_plan, convert(the_plan, options, emit=lambda _: None), units):
        pass
    assert units, "no translation units found under fixtures/ and examples/"
    result = V.verify(units, compiler=compiler, target=options.rocm,
                      includes=V.include_roots(the_plan), jobs=2)
    report = V.render(result)

    failing = {_rel(r.path, out) for r in result.failed()}
    must_fail = {rel for rel in EXPECTED_FAILURES if not rel.endswith("/") and (out / rel).exists()}
    new = sorted(rel for rel in failing if not _expected_to_fail(rel))
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
    assert not [r for r in result.runs if r.failure], f"units hipcc could not run:\n{report}"
