"""Project-level conventions: user mappings, .gitignore while walking, -j 0 and the CPUs a
process may use, the progress line's total and ETA."""

from __future__ import annotations

import io
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from hipport.cli import main
from hipport.cpus import cgroup_quota, usable_cpus
from hipport.files import discover
from hipport.options import Options
from hipport.progress import line, track

SRC = b"void f(float** p) { cudaMalloc(p, 4); cudaProjectThing(p); myCudaHelper(); }\n"


def run(*args: str, cwd: Path | None = None):
    if cwd is None:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


# -- user mappings ---------------------------------------------------------------------

MAPPINGS = """[tool.hipport]
rocm = "6.3"

[tool.hipport.mappings]
cudaProjectThing = "hipProjectThing"
myCudaHelper = { hip = "myHipHelper", since = "7.0" }
cudaMalloc = { hip = "hipMallocTracked", until = "7.0" }
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(MAPPINGS)
    (tmp_path / "k.cu").write_bytes(SRC)
    return tmp_path


def test_project_mappings_rewrite_and_report_like_table_rows(project: Path) -> None:
    out = run("convert", str(project / "k.cu"), "-o", "-", "-q").stdout
    # added, overriding a table row within its range, and outside its range left + reported
    assert "hipMallocTracked(p, 4); hipProjectThing(p); myCudaHelper();" in out
    doc = json.loads(run("scan", str(project / "k.cu"), "-f", "json").stdout)
    (finding,) = doc["findings"]
    assert finding["code"] == "HP102" and finding["line"] == 1
    assert f"myHipHelper exists from ROCm 7.0 by the project mapping at {project / 'pyproject.toml'}:6" in finding["message"]
    newer = run("convert", str(project / "k.cu"), "-o", "-", "-q", "--rocm", "7.2.1").stdout
    assert "hipMalloc(p, 4); hipProjectThing(p); myHipHelper();" in newer  # table row again


def test_map_shows_a_project_mapping_with_its_origin(project: Path) -> None:
    r = run("map", "myCudaHelper", cwd=project)
    assert r.exit_code == 0
    assert r.stdout.startswith(
        f"project mapping myCudaHelper → myHipHelper (from 7.0), from {project / 'pyproject.toml'}:6\n"
        "  6.3:    newer — ")
    assert "  7.2.1:  mapped (applied) — myCudaHelper → myHipHelper (project mapping" in r.stdout
    over = run("map", "cudaMalloc", "-f", "json", cwd=project)
    doc = json.loads(over.stdout)
    assert doc["project_mapping"]["range"] == "until 7.0" and doc["entries"][0]["cuda"] == "cudaMalloc"


def test_mappings_from_a_named_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.hipport]\nmappings = "maps/hip.toml"\n')
    (tmp_path / "maps").mkdir()
    (tmp_path / "maps" / "hip.toml").write_text('# ours\ncudaProjectThing = "hipProjectThing"\n')
    (tmp_path / "k.cu").write_bytes(SRC)
    assert "hipProjectThing(p)" in run("convert", str(tmp_path / "k.cu"), "-o", "-", "-q").stdout
    r = run("map", "cudaProjectThing", cwd=tmp_path)
    assert f"from {tmp_path / 'maps' / 'hip.toml'}:2" in r.stdout


@pytest.mark.parametrize("entry, line, message", [
    ('cudaX = "not an identifier"', 5, "hip must be the HIP identifier"),
    ('cudaX = { hip = "hipX", since = "seven" }', 5, "not a version"),
    ('cudaX = { hip = "hipX", since = "7.0", until = "6.3" }', 5, "is not after since"),
    ('cudaX = { hip = "hipX", from = "7.0" }', 5, "unknown key 'from'"),
    ('"bad name" = "hipX"', 5, "the CUDA name must be an identifier"),
])
def test_a_bad_mapping_is_a_usage_error_naming_the_line(tmp_path: Path, entry: str, line: int,
                                                       message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.hipport]\nrocm = "6.3"\n\n[tool.hipport.mappings]\n{entry}\n')
    (tmp_path / "k.cu").write_bytes(SRC)
    r = run("scan", str(tmp_path / "k.cu"))
    assert r.exit_code == 2
    assert f"{tmp_path / 'pyproject.toml'}:{line}: mapping" in r.output and message in r.output


# -- .gitignore --------------------------------------------------------------------------

def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".gitignore").write_text("build/\n*.gen.cu\n!keep.gen.cu\n/top-only.cu\n")
    for rel in ("a.cu", "b.gen.cu", "keep.gen.cu", "top-only.cu", "build/x.cu", "sub/top-only.cu",
                "sub/c.cu", "sub/vendor/v.cu", "sub/local.cu"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("void f() { cudaDeviceSynchronize(); }\n")
    (root / "sub" / ".gitignore").write_text("vendor/\nlocal.cu\n")
    return root


def _walked(root: Path, **options) -> list[str]:
    return sorted(i.rel.as_posix() for i in discover([root], Options(**options))
                  if not i.rel.name.startswith(".") and hasattr(i, "rel"))


def test_walking_honours_gitignore_as_git_does(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    expected = ["a.cu", "keep.gen.cu", "sub/c.cu", "sub/top-only.cu"]
    assert _walked(root) == expected
    git = subprocess.run(["git", "-C", str(root), "init", "-q"], capture_output=True)
    if git.returncode == 0:  # git itself agrees (when it is installed)
        listed = subprocess.run(["git", "-C", str(root), "ls-files", "--others", "--exclude-standard"],
                                capture_output=True, text=True, check=True).stdout.split()
        assert sorted(p for p in listed if not p.endswith(".gitignore")) == expected
    assert "build/x.cu" in _walked(root, gitignore=False)
    # the repository's ignore files apply to a walk that starts inside it
    assert sorted(i.rel.as_posix() for i in discover([root / "sub"], Options())) == [
        ".gitignore", "c.cu", "top-only.cu"]


def test_no_gitignore_flag_and_key_and_named_files(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    scanned = json.loads(run("scan", str(root), "-f", "json").stdout)
    assert not any("build" in f["path"] for f in scanned["files"])
    everything = json.loads(run("scan", str(root), "-f", "json", "--no-gitignore").stdout)
    assert any(f["path"].endswith("build/x.cu") for f in everything["files"])
    named = json.loads(run("scan", str(root / "build" / "x.cu"), "-f", "json").stdout)
    assert [f["path"] for f in named["files"]] == [str(root / "build" / "x.cu")]  # named: kept
    (root / "pyproject.toml").write_text("[tool.hipport]\ngitignore = false\n")
    configured = json.loads(run("scan", str(root), "-f", "json").stdout)
    assert any(f["path"].endswith("build/x.cu") for f in configured["files"])


# -- -j 0 -----------------------------------------------------------------------------------

def test_cgroup_quota_caps_the_default_job_count(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "cpu.max").write_text("150000 100000\n")  # the parent's limit holds too
    (tmp_path / "a" / "b" / "cpu.max").write_text("max 100000\n")
    proc = tmp_path / "cgroup"
    proc.write_text("0::/a/b\n")
    assert cgroup_quota(tmp_path, proc) == 1.5
    assert usable_cpus(tmp_path, proc) == min(2, len(os.sched_getaffinity(0)))
    (tmp_path / "a" / "cpu.max").write_text("50000 100000\n")
    assert usable_cpus(tmp_path, proc) == 1
    v1 = tmp_path / "v1"
    (v1 / "cpu,cpuacct" / "job").mkdir(parents=True)
    (v1 / "cpu,cpuacct" / "job" / "cpu.cfs_quota_us").write_text("300000\n")
    (v1 / "cpu,cpuacct" / "job" / "cpu.cfs_period_us").write_text("100000\n")
    proc.write_text("4:memory:/x\n3:cpu,cpuacct:/job\n")
    assert cgroup_quota(v1, proc) == 3.0
    proc.write_text("0::/\n")
    assert cgroup_quota(tmp_path, proc) is None
    assert usable_cpus(tmp_path, proc) == len(os.sched_getaffinity(0))


# -- progress ----------------------------------------------------------------------------------

class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_with_and_without_a_total() -> None:
    assert line(50, None, 10.0) == "hipport: 50 files, 5/s, 0:10 "
    assert line(50, 200, 10.0) == "hipport: 50/200 files, 5/s, 0:10, ETA 0:30 "
    assert line(3, 4000, 1.0) == "hipport: 3/4000 files, 3/s, 0:01, ETA 22:12 "


def test_progress_names_only_sources_and_shows_the_total() -> None:
    stream = _Terminal()
    items = ["a.cu", "README", "b.cu", "LICENSE"]

    def slow():
        for i in items:
            time.sleep(0.05)  # the listing thread finishes while these pass
            yield i

    out = list(track(slow(), describe=lambda i: i if i.endswith(".cu") else None,
                     total=lambda: items, stream=stream, delay=0, interval=0))
    assert out == items
    drawn = stream.getvalue()
    assert "4/4 files" in drawn and "ETA" in drawn
    assert "README" not in drawn and "LICENSE" not in drawn and drawn.rstrip("\r\x1b[K").endswith("b.cu")
