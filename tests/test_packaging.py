"""The wheel ships every package: pyproject.toml lists packages by hand, so a new package
directory missing from the list installs without its modules (pre-commit's clone then
fails with ModuleNotFoundError); and no module outgrows the charter's 600 lines."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_directory_is_listed() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "hipport").rglob("__init__.py")}
    assert found - listed == set()


def test_no_module_is_over_600_lines() -> None:
    """The charter's limit (../shared/DESIGN.md: split a room that grows past ~600 lines
    along its job): checked here, so a module that crosses it fails the landing."""
    sizes = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
             for p in (ROOT / "hipport").rglob("*.py")}
    assert sizes and {p: n for p, n in sizes.items() if n > 600} == {}
