"""Whole projects: build files in a converted tree are rewritten, reported, and build.

The build tier configures and builds the converted example projects with Debian's cmake
and HIP toolchain (tools/cmake-hip-debian.sh; .ci/run installs the packages). It skips on
a machine without them and fails in CI (CI=true), where a missing tool would mean the
tier silently stopped proving anything. About 10 s a project on 2 cores.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = ROOT / "fixtures" / "buildfiles" / "expected"
#: project → (the files whose converted form is a golden in fixtures/buildfiles/expected/<project>/,
#: extra convert arguments, how it is built). Debian's clang 15 predates gfx942: CMake
#: projects are configured for gfx90a, Make projects converted for it.
_SAMPLES_FILES = ["CMakeLists.txt", "Samples/0_Introduction/vectorAdd/CMakeLists.txt",
                  "Samples/1_Utilities/deviceQuery/CMakeLists.txt"]
#: A key with a second word is the project converted with that flag (--rename: .hip names;
#: its goldens are in <project>-rename/).
PROJECTS = {
    "examples/cmake-project": (["CMakeLists.txt"], [], "cmake"),
    "examples/cmake-project --rename": (["CMakeLists.txt"], ["--rename"], "cmake"),
    "fixtures/buildfiles/legacy-findcuda": (["CMakeLists.txt"], [], "cmake"),
    "examples/make-project": (["Makefile"], ["--offload-arch", "gfx90a"], "make"),
    "examples/make-project --rename": (["Makefile"], ["--offload-arch", "gfx90a", "--rename"], "make"),
    # CUDA-samples layout: each sample sets its architectures itself, so they come from convert.
    "examples/cuda-samples": (_SAMPLES_FILES, ["--offload-arch", "gfx90a"], "cmake"),
    "examples/cuda-samples --rename": (_SAMPLES_FILES, ["--offload-arch", "gfx90a", "--rename"], "cmake"),
}


def _source(project: str) -> str:
    return project.split()[0]


def _golden_dir(project: str) -> Path:
    path, _, flag = project.partition(" ")
    return EXPECTED / (Path(path).name + flag.replace("--", "-"))


def hipport(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hipport", *args], cwd=cwd, capture_output=True,
                          text=True, check=False)


@pytest.fixture(scope="module")
def converted(tmp_path_factory) -> dict[str, Path]:
    out = {}
    for project, (_, args, _) in PROJECTS.items():
        dest = tmp_path_factory.mktemp(Path(_source(project)).name) / "hip"
        r = hipport("convert", _source(project), "-o", str(dest), "-q", *args)
        assert r.returncode == 0, r.stderr
        out[project] = dest
    return out


@pytest.mark.parametrize("project", PROJECTS)
def test_build_files_match_their_goldens(converted: dict[str, Path], project: str) -> None:
    for name in PROJECTS[project][0]:
        golden = _golden_dir(project) / name
        assert (converted[project] / name).read_bytes() == golden.read_bytes(), (
            f"{project}/{name} differs from {golden} (tools/update_goldens.py does not cover "
            "build files: read the new output by hand, then copy it there)")


@pytest.mark.parametrize("project", PROJECTS)
def test_converting_the_output_again_changes_nothing(converted: dict[str, Path], project: str,
                                                     tmp_path: Path) -> None:
    again = tmp_path / "again"
    r = hipport("convert", str(converted[project]), "-o", str(again), "-q", "--no-report",
                *PROJECTS[project][1])
    assert r.returncode == 0, r.stderr
    for name in PROJECTS[project][0]:
        assert (again / name).read_bytes() == (converted[project] / name).read_bytes()


def test_report_lists_the_build_findings(converted: dict[str, Path]) -> None:
    report = (converted["examples/cmake-project"] / "hipport-report.md").read_text()
    assert "examples/cmake-project`" in report  # the input root, which paths are relative to
    assert "| `CMakeLists.txt` |" in report
    assert "HP601" in report and "HP608" in report


def test_scan_reports_build_files_without_writing(tmp_path: Path) -> None:
    r = hipport("scan", "fixtures/buildfiles/legacy-findcuda", "-f", "json")
    assert r.returncode == 0, r.stderr
    assert '"would convert"' in r.stdout or "would convert" in r.stdout


def _build_tools(how: str) -> str | None:
    """Why the build tier cannot run here, or None when it can."""
    for tool in ("cmake", "clang++-15") if how == "cmake" else ("make", "hipcc"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if not Path("/usr/lib/x86_64-linux-gnu/cmake/hip-lang").is_dir():
        return "libamdhip64-dev (CMake's hip-lang package) is not installed"
    return None


@pytest.mark.parametrize("project", PROJECTS)
def test_converted_project_configures_and_builds(converted: dict[str, Path], project: str,
                                                 tmp_path: Path) -> None:
    how = PROJECTS[project][2]
    missing = _build_tools(how)
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the build tier must run in CI: {missing}")
        pytest.skip(missing)
    env = {**os.environ, "HIP_PLATFORM": "amd"}
    if how == "cmake":
        build = tmp_path / "build"
        cmd = ["bash", str(ROOT / "tools" / "cmake-hip-debian.sh"), str(converted[project]), str(build),
               "-DCMAKE_HIP_ARCHITECTURES=gfx90a"]
        built = "Building HIP object"
    else:  # Debian's hipcc is /usr/bin/hipcc, not $(ROCM_PATH)/bin/hipcc
        build = converted[project]
        cmd = ["make", "-C", str(build), "NVCC=hipcc"]
        built = "--offload-arch=gfx90a"
    r = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert built in r.stdout
    executables = [p for p in build.rglob("*") if p.is_file() and os.access(p, os.X_OK)
                   and "CMakeFiles" not in p.parts and p.suffix in ("", ".out")]
    assert executables, "no executable was linked"
    if _source(project) == "examples/cuda-samples":  # every sample, not only the first
        assert sorted(p.name for p in executables) == ["asyncAPI", "deviceQuery", "matrixMul", "vectorAdd"]


@pytest.mark.parametrize("project", [p for p in PROJECTS if "--rename" in p])
def test_renamed_tree_has_no_cu_files_and_builds_them_as_hip(converted: dict[str, Path], project: str) -> None:
    files = {p.relative_to(converted[project]).as_posix() for p in converted[project].rglob("*")}
    assert not [f for f in files if f.endswith(".cu")]
    text = b"".join((converted[project] / name).read_bytes() for name in PROJECTS[project][0])
    assert b".cu " not in text and b".cu)" not in text and b"LANGUAGE HIP" not in text
