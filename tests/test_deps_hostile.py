"""Issue #17's deps inputs: each built at test time, each bounded, none crashing or hanging.

The builders are tools/deps_hostile.py's (the same script measures worst-case time and
memory for the note). Quadratic readers are caught by their scaling, not by a wall-clock
limit that a loaded machine would break: 10x the input must cost well under 100x the time.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import hipport.deps
from hipport.cli import main
from hipport.deps import assess
from hipport.deps.requirements import read_requirements
from hipport.deps.walk import MAX_DEPTH, MAX_ENTRIES
from hipport.options import Options

_spec = importlib.util.spec_from_file_location(
    "deps_hostile", Path(__file__).resolve().parent.parent / "tools" / "deps_hostile.py")
hostile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hostile)


def _repo(tmp_path: Path, name: str) -> Path:
    repo = tmp_path / name
    repo.mkdir()
    return repo


def _timed(repo: Path, runs: int) -> tuple[float, object]:
    """The best of ``runs`` timings: other work on a shared machine only ever adds time."""
    best, a = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        a = assess(repo, Options(), scan_own_sources=False)
        best = min(best, time.perf_counter() - start)
    return best, a


@pytest.mark.parametrize("build", ["gitmodules", "poetry", "environment"])
def test_large_manifests_take_linear_time(tmp_path, build):
    small, large = _repo(tmp_path, "small"), _repo(tmp_path, "large")
    getattr(hostile, build)(small, 25_000)
    getattr(hostile, build)(large, 250_000)
    t_small, _ = _timed(small, 3)
    t_large, a = _timed(large, 2)
    # 10x the input: ~10x the time when linear, ~100x when quadratic (before: 34x-45x here).
    # The floor keeps a lucky 20 ms small run from turning load noise into a failure.
    assert t_large < 25 * max(t_small, 0.05), (t_small, t_large)
    assert not a.issues  # below every bound: read whole


def test_requirements_share_one_index_tuple(tmp_path):
    """A copy of the file's index URLs per requirement made 1.9 MB cost 615 MB (#17)."""
    hostile.requirements(tmp_path, 100_000)
    reqs, _, _ = read_requirements(tmp_path / "requirements.txt", tmp_path)
    assert len(reqs) > 1000 and len({id(r.index_urls) for r in reqs}) == 1


def test_more_entries_than_the_bound_are_named(tmp_path):
    (tmp_path / "requirements.txt").write_text("".join(f"p{n}\n" for n in range(MAX_ENTRIES + 5)))
    reqs, issues, _ = read_requirements(tmp_path / "requirements.txt", tmp_path)
    assert len(reqs) == MAX_ENTRIES
    assert [(i.path, i.line) for i in issues] == [("requirements.txt", MAX_ENTRIES + 1)]
    assert f"more than {MAX_ENTRIES}" in issues[0].message


@pytest.mark.parametrize("build, path, words", [
    ("unary_minus", "evil.py", "nested too deeply"),
    ("deep_toml", "pyproject.toml", f"limit of {MAX_DEPTH}"),
    ("deep_yaml", "environment.yml", f"limit of {MAX_DEPTH}"),
    ("deep_yaml_block", "environment.yml", "nested too deeply for the YAML parser"),
])
def test_deep_nesting_is_one_named_error(tmp_path, build, path, words):
    getattr(hostile, build)(tmp_path)
    (tmp_path / "requirements.txt").write_text("tensorrt\n")
    a = assess(tmp_path, Options(), scan_own_sources=False)
    assert [i.path for i in a.issues] == [path] and words in a.issues[0].message
    assert any(v.key == "tensorrt" for v in a.verdicts)  # the rest is still read


def test_nesting_just_inside_the_bound_is_parsed(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[project]\ndependencies = ['torch']\n[tool.x]\ny = " + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n")
    a = assess(tmp_path, Options(), scan_own_sources=False)
    assert not a.issues and any(v.key == "torch" for v in a.verdicts)


def test_fifo_named_requirements_does_not_block(tmp_path):
    hostile.fifo(tmp_path)
    done: list = []
    worker = threading.Thread(target=lambda: done.append(assess(tmp_path, Options())), daemon=True)
    worker.start()
    worker.join(timeout=30)
    if worker.is_alive():  # unblock the reader before failing
        with open(tmp_path / "requirements.txt", "w"):
            pass
        pytest.fail("deps blocked on a FIFO")
    assert [(i.path, "FIFO" in i.message) for i in done[0].issues] == [("requirements.txt", True)]


def test_symlink_loops_anywhere_are_named_and_skipped(tmp_path):
    hostile.symlink_loop(tmp_path)
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(install_requires=['numpy'])\n")
    os.symlink("loop.txt", tmp_path / "requirements-loop.txt")
    os.symlink("requirements-loop.txt", tmp_path / "loop.txt")
    (tmp_path / "requirements-dev.txt").write_text("-r loop.txt\npytest\n")
    a = assess(tmp_path, Options())
    named = {i.path: i.message for i in a.issues}
    assert "symlink loop" in named["requirements.txt"] and "symlink loop" in named["src/a.py"]
    assert "symlink loop" in named["requirements-loop.txt"]
    assert {"torch", "numpy", "pytest"} <= {v.key for v in a.verdicts}


def test_one_broken_repository_does_not_lose_the_batch(tmp_path, monkeypatch):
    good, broken, fifo = _repo(tmp_path, "good"), _repo(tmp_path, "broken"), _repo(tmp_path, "fifo")
    for repo in (good, broken):
        (repo / "requirements.txt").write_text("torch\n")
    hostile.fifo(fifo)
    real = hipport.deps.read_repo

    def read_repo(root, *args):
        if Path(root).name == "broken":
            raise RuntimeError("simulated bug")
        return real(root, *args)

    monkeypatch.setattr(hipport.deps, "read_repo", read_repo)
    repos = [str(good), str(broken), str(tmp_path / "missing"), str(fifo)]
    result = CliRunner().invoke(main, ["deps", *repos, "-f", "jsonl", "--no-kernels"])
    lines = [json.loads(x) for x in result.stdout.splitlines()]
    assert [d["repository"] for d in lines] == repos
    assert lines[0]["grade"] and lines[3]["grade"]
    assert "simulated bug" in lines[1]["error"] and "not a directory" in lines[2]["error"]
    assert result.exit_code == 2
    assert "broken: internal error" in result.stderr and "missing: not a directory" in result.stderr
