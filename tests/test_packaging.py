"""The wheel ships every package: pyproject.toml lists packages by hand, so a new package
directory missing from the list installs without its modules (pre-commit's clone then
fails with ModuleNotFoundError)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_directory_is_listed() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "hipport").rglob("__init__.py")}
    assert found - listed == set()
