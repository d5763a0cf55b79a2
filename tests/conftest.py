"""Shared test configuration: the rules harness's markers, the test tiers, Hypothesis profiles.

Rules fixtures (fixtures/rules/<family>/) carry one marker style:

- ``// expect: HP201 HP204`` on a line that must produce those findings for every target,
  ``// expect@6.3: HP215`` for one target only (codes separated by blanks or commas);
- ``// negatives: HP201 HP217`` (anywhere, usually the header) in a look-alike file: the
  rules it shows must *not* fire on code that merely resembles their hazard.

Every other line must produce no finding of the directory's family. Tiers: tests that
compile against the HIP headers are marked ``compile``, the pre-commit hook's ``precommit``; the quick
run is ``pytest -m "not compile"``. Hypothesis runs the ``ci`` profile (seeded, bounded)
unless HYPOTHESIS_PROFILE names another (``dev`` for long local runs).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from hypothesis import HealthCheck, settings

from hipport.analyze import analyze
from hipport.options import Options
from hipport.versions import parse_version

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "rules"
#: Fixture directory -> the family (code prefix) its markers speak for.
FAMILIES = {"api": "HP1", "warp": "HP2", "device": "HP3", "libraries": "HP4"}
TARGETS = ("6.3", "7.2.1")
EXPECT_RE = re.compile(r"expect(?:@([\d.]+))?:\s*((?:HP\d{3}\b[,\s]*)+)")
NEGATIVES_RE = re.compile(r"negatives:\s*((?:HP\d{3}\b[,\s]*)+)")
_CODE_RE = re.compile(r"HP\d{3}")

settings.register_profile("ci", max_examples=200, derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.register_profile("dev", max_examples=5000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: Test files of a tier, marked here (the compile tier marks itself: pyproject.toml).
_TIERS = {"test_precommit.py": "precommit"}


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "precommit: runs the pre-commit hook end to end")


def pytest_collection_modifyitems(config, items) -> None:
    import pytest

    for item in items:
        tier = _TIERS.get(item.path.name)
        if tier is not None:
            item.add_marker(getattr(pytest.mark, tier))


def run(src: bytes | str, rocm: str = "7.2.1", path: str = "t.cu"):
    """Findings of one buffer analysed for ``rocm``."""
    data = src.encode() if isinstance(src, str) else src
    return analyze(data, path, Options(rocm=parse_version(rocm))).findings


def expected(path: Path, rocm: str) -> set[tuple[int, str]]:
    """(line, code) the markers of ``path`` expect for target ``rocm``."""
    out = set()
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for m in EXPECT_RE.finditer(line):
            if m.group(1) is None or parse_version(m.group(1)) == parse_version(rocm):
                out.update((line_no, code) for code in _CODE_RE.findall(m.group(2)))
    return out


def found(path: Path, rocm: str, family: str) -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in run(path.read_bytes(), rocm, str(path)) if f.code.startswith(family)}


def fixture_codes(directory: Path, regex: re.Pattern[str]) -> set[str]:
    """Every code a marker of ``regex``'s kind names in ``directory``."""
    codes: set[str] = set()
    for p in directory.iterdir():
        if p.suffix != ".md":
            for m in regex.finditer(p.read_text(encoding="utf-8")):
                codes.update(_CODE_RE.findall(m.group(m.lastindex)))
    return codes


def fixture_files(family_dir: str) -> list[Path]:
    return sorted(p for p in (FIXTURES / family_dir).iterdir() if p.suffix != ".md")
