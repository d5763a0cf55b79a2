"""The fixture repositories under fixtures/deps/: verdicts, blockers, ordering, attribution."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hipport.deps import assess
from hipport.options import Options
from hipport.versions import parse_version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "deps"
EXPECTED = tomllib.loads((FIXTURES / "expected.toml").read_text(encoding="utf-8"))
GRADES = "ABCDF"


@pytest.fixture(scope="module")
def assessed() -> dict:
    return {name: assess(FIXTURES / name, Options()) for name in EXPECTED["repos"]}


@pytest.mark.parametrize("name", sorted(EXPECTED["repos"]))
def test_verdicts_blockers_and_findings(assessed, name):
    want = EXPECTED["repos"][name]
    a = assessed[name]
    levels = {v.key: v.level for v in a.verdicts}
    for key, level in want["levels"].items():
        assert levels.get(key) == level, f"{name}: {key} is {levels.get(key)}, expected {level}"
    said = {v.key: v.verdict for v in a.verdicts}
    for key, verdict in want.get("verdicts", {}).items():
        assert said.get(key) == verdict, f"{name}: {key} is {said.get(key)}, expected {verdict}"
    pins = {v.key: v.pin for v in a.verdicts}
    for key, pin in want.get("pins", {}).items():
        assert pins.get(key) == pin, f"{name}: {key} pin {pins.get(key)!r}, expected {pin!r}"
    assert sorted(v.key for v in a.verdicts if v.blocker) == sorted(want["blockers"])
    codes = {f.code for f in a.findings if f.code.startswith("HP5")}
    assert set(want["findings"]) <= codes
    if not want["findings"]:
        assert not codes
    if "grade_at_least" in want:
        assert GRADES.index(a.grade) <= GRADES.index(want["grade_at_least"])
    if "grade_at_most" in want:
        assert GRADES.index(a.grade) >= GRADES.index(want["grade_at_most"])
    assert not a.issues, a.issues


def test_scores_follow_the_expected_order(assessed):
    tiers = EXPECTED["order"]
    for better, worse in zip(tiers, tiers[1:]):
        assert min(assessed[n].score for n in better) > max(assessed[n].score for n in worse), (better, worse)


@pytest.mark.parametrize("name", sorted(EXPECTED["repos"]))
def test_every_lost_point_is_attributed(assessed, name):
    a = assessed[name]
    assert round(sum(d.points for d in a.deductions), 1) == round(100 - a.score, 1)
    assert all(d.points >= 0 for d in a.deductions)
    keys = {v.key for v in a.verdicts}
    for d in a.deductions:
        kind, _, rest = d.target.partition(":")
        assert kind in ("dependency", "finding", "kernels")
        if kind == "dependency":
            assert rest in keys
    blockers = [v.key for v in a.verdicts if v.blocker]
    for key in blockers:  # a blocker always costs points
        assert any(d.target == f"dependency:{key}" and d.points > 0 for d in a.deductions)


def test_own_cuda_kernels_are_scanned_and_summarized(assessed):
    a = assessed["gaussian-splatting"]
    want = EXPECTED["repos"]["gaussian-splatting"]["kernel_families"]
    assert a.kernel_summary["status"] == "scanned"
    assert set(want) <= set(a.kernel_summary["by_family"])
    assert a.kernel_summary["worst_files"][0]["path"].startswith("csrc/")
    assert any(d.target.startswith("kernels:csrc/") for d in a.deductions)
    assert "diff-gaussian-rasterization" not in {v.key for v in a.verdicts}  # its own extension


def test_plan_is_ordered_by_effort_then_points(assessed):
    order = ["none", "small", "medium", "large"]
    for a in assessed.values():
        keys = [(order.index(s["effort"]), -s["points"]) for s in a.plan]
        assert keys == sorted(keys)


def test_rocm_target_changes_verdicts_where_the_knowledge_says_so():
    old = assess(FIXTURES / "conda-gnn", Options(rocm=parse_version("6.3")))
    new = assess(FIXTURES / "conda-gnn", Options(rocm=parse_version("7.2.1")))
    cupy_old = next(v for v in old.verdicts if v.key == "cupy")
    cupy_new = next(v for v in new.verdicts if v.key == "cupy")
    assert cupy_old.level == "native_source_build" and cupy_new.level == "native"
    assert "cupy-rocm-7-0" in cupy_new.install and "source" in cupy_old.install
    assert old.score < new.score


def test_hostile_setup_py_is_parsed_never_run(tmp_path):
    canary = Path("/tmp/hipport-fixture-canary")
    canary.mkdir(exist_ok=True)
    (canary / "keep").write_text("x")
    try:
        a = assess(FIXTURES / "gaussian-splatting", Options(), scan_own_sources=False)
        assert (canary / "keep").exists()
        assert any(f.code == "HP511" and f.path == "setup.py" for f in a.findings)
    finally:
        (canary / "keep").unlink()
        canary.rmdir()
