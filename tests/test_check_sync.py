"""``hipport sync``: HIP twins declared in [tool.hipport.sync] are regenerated formatter-style."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from hipport.cli import main

KERNEL = """\
#include <cuda_runtime.h>
__global__ void k(float *a) { a[threadIdx.x] = 0; }
void go(float *a) { cudaDeviceSynchronize(); }
"""


def sync(*args: str):
    return CliRunner().invoke(main, ["sync", *args], catch_exceptions=False)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "src" / "cuda" / "sub").mkdir(parents=True)
    (tmp_path / "src" / "cuda" / "a.cu").write_text(KERNEL)
    (tmp_path / "src" / "cuda" / "sub" / "b.cuh").write_text("#pragma once\n")
    (tmp_path / "src" / "cuda" / "CMakeLists.txt").write_text("# not a source\n")
    (tmp_path / "one.cu").write_text(KERNEL)
    (tmp_path / "pyproject.toml").write_text(
        "[tool.hipport]\n"
        "[tool.hipport.sync]\n"
        'pairs = [["one.cu", "hip/one.hip"]]\n'
        'dirs = [["src/cuda", "src/hip"]]\n'
        'rename = { ".cu" = ".hip" }\n'
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_generates_then_is_quiet(project: Path) -> None:
    first = sync()
    assert first.exit_code == 1
    assert "regenerated hip/one.hip from one.cu" in first.stdout
    twin = (project / "src" / "hip" / "a.hip").read_text()
    assert "hipDeviceSynchronize" in twin and "cudaDeviceSynchronize" not in twin
    assert (project / "src" / "hip" / "sub" / "b.cuh").read_text() == "#pragma once\n"
    assert not (project / "src" / "hip" / "CMakeLists.txt").exists()
    second = sync()
    assert (second.exit_code, second.stdout) == (0, "")


def test_stale_twin_fails_and_is_rewritten(project: Path) -> None:
    sync()
    (project / "src" / "cuda" / "a.cu").write_text(KERNEL + "void more() { cudaFree(0); }\n")
    stale = sync("src/cuda/a.cu")
    assert stale.exit_code == 1
    assert stale.stdout == "hipport sync: regenerated src/hip/a.hip from src/cuda/a.cu\n"
    assert "hipFree" in (project / "src" / "hip" / "a.hip").read_text()
    assert sync("src/cuda/a.cu").exit_code == 0


def test_hand_edited_twin_is_restored(project: Path) -> None:
    sync()
    twin = project / "hip" / "one.hip"
    good = twin.read_text()
    twin.write_text(good + "// local hack\n")
    assert sync("hip/one.hip").exit_code == 1
    assert twin.read_text() == good


def test_only_named_files_are_considered(project: Path) -> None:
    result = sync("one.cu", "unrelated.py")
    assert result.exit_code == 1
    assert (project / "hip" / "one.hip").exists()
    assert not (project / "src" / "hip").exists()


def test_missing_source_exits_2(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.hipport.sync]\npairs = [["gone.cu", "hip/gone.hip"]]\n')
    result = sync()
    assert result.exit_code == 2
    assert "gone.cu" in result.stderr


@pytest.mark.parametrize("table, message", [
    ("[tool.hipport]\n", "no [tool.hipport.sync]"),
    ('[tool.hipport.sync]\npairs = ["a.cu"]\n', "pairs must be a list"),
    ('[tool.hipport.sync]\ndirs = [["nope", "hip"]]\n', "nope is not a directory"),
    ('[tool.hipport.sync]\nrename = [".cu"]\n', "rename must be a table"),
])
def test_bad_config_exits_2_naming_the_file(project: Path, table: str, message: str) -> None:
    (project / "pyproject.toml").write_text(table)
    result = sync()
    assert result.exit_code == 2
    assert "pyproject.toml" in result.output and message in result.output
