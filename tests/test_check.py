"""``hipport check``: exit codes, output format, config, baseline matching and the cache."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from hipport import check as check_mod
from hipport import pipeline
from hipport.check import (
    Cache, read_baseline, split_baselined, tree_digest, write_baseline,
)
from hipport.cli import main
from hipport.datafiles import cache_dir as hipport_cache_dir
from hipport.options import DEFAULT_HIP_GUARDS, Options

WARP_BUG = """\
__global__ void k(int *out, int v) {
    unsigned mask = __ballot_sync(0xffffffff, v > 0);
    out[0] = mask;
}
"""

CLEAN = """\
__global__ void add(float *a, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += b[i];
}
"""

GUARDED = """\
#if defined(__HIP_PLATFORM_AMD__)
#define FULL_MASK (~0ull)
#else
#define FULL_MASK 0xffffffffu
#endif
__device__ unsigned long long vote(int v) {
#ifdef __HIP_PLATFORM_AMD__
    return __ballot(v);
#else
    return __ballot_sync(0xffffffff, v);
#endif
}
"""

LINE_RE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>HP\d{3}) "
                     r"(?P<sev>blocker|high|medium|low|info): .+ \[(?P<slug>[a-z0-9-]+)\]$")


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("HIPPORT_CACHE_DIR", str(d))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the cache's key
    monkeypatch.chdir(tmp_path)
    return d


def run(*args: str):
    return CliRunner().invoke(main, ["check", *args], catch_exceptions=False)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- exit codes and output ------------------------------------------------------------

def test_warp_bug_fails_with_compiler_style_lines(tmp_path: Path) -> None:
    write(tmp_path / "k.cu", WARP_BUG)
    result = run("k.cu")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines, result.output
    for line in lines:
        m = LINE_RE.match(line)
        assert m, line
        assert m["path"] == "k.cu"
    assert any(line.startswith("k.cu:2:35: HP201 high: ") and line.endswith("[warp-mask-32bit]")
               for line in lines), lines


def test_clean_and_guarded_files_pass(tmp_path: Path) -> None:
    write(tmp_path / "clean.cu", CLEAN)
    write(tmp_path / "guarded.cuh", GUARDED)
    result = run("clean.cu", "guarded.cuh")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""


def test_project_hip_guard_from_pyproject(tmp_path: Path) -> None:
    write(tmp_path / "k.cu", "#ifdef MY_HIP\n#else\n" + WARP_BUG + "#endif\n")
    assert run("k.cu").exit_code == 1
    write(tmp_path / "pyproject.toml", '[tool.hipport]\nhip-guards = ["MY_HIP"]\n')
    assert run("k.cu").exit_code == 0


def test_suppression_comment(tmp_path: Path) -> None:
    src = WARP_BUG.replace("    unsigned mask", "    // hipport: ignore[HP201,HP202]\n    unsigned mask")
    write(tmp_path / "k.cu", src)
    result = run("k.cu")
    assert "HP201" not in result.stdout and "HP202" not in result.stdout
    assert result.exit_code == 0, result.output


def test_fail_on_flag_and_config(tmp_path: Path) -> None:
    write(tmp_path / "k.cu", WARP_BUG)
    blocker = run("--fail-on", "blocker", "k.cu")
    assert blocker.exit_code == 0
    assert "HP201" in blocker.stdout  # still shown, just not failing
    write(tmp_path / "pyproject.toml", '[tool.hipport]\nfail-on = "blocker"\n')
    assert run("k.cu").exit_code == 0  # the default --fail-on does not hide the config
    assert run("--fail-on", "high", "k.cu").exit_code == 1  # an explicit flag wins


def test_config_exclude_applies_to_named_files(tmp_path: Path) -> None:
    write(tmp_path / "vendor" / "k.cu", WARP_BUG)
    write(tmp_path / "pyproject.toml", '[tool.hipport]\nexclude = ["vendor"]\n')
    assert run("vendor/k.cu").exit_code == 0


def test_missing_and_broken_files_exit_2_naming_them(tmp_path: Path) -> None:
    write(tmp_path / "k.cu", WARP_BUG)
    (tmp_path / "dangling.cu").symlink_to(tmp_path / "gone.cu")
    result = run("k.cu", "missing.cu", "dangling.cu")
    assert result.exit_code == 2
    assert "hipport: error: missing.cu: no such file" in result.stderr
    assert "hipport: error: dangling.cu:" in result.stderr
    assert "HP201" in result.stdout  # the readable file is still reported


def test_non_source_files_are_ignored(tmp_path: Path) -> None:
    write(tmp_path / "notes.txt", WARP_BUG)
    assert run("notes.txt").exit_code == 0


# -- baseline ---------------------------------------------------------------------------

def test_baseline_survives_moved_lines_and_counts_duplicates(tmp_path: Path) -> None:
    body = "    unsigned m1 = __ballot_sync(0xffffffff, v > 0);\n"
    write(tmp_path / "src" / "k.cu", "__global__ void k(int v) {\n" + body * 2 + "}\n")
    written = run("--write-baseline", "base.json", "src/k.cu")
    assert written.exit_code == 0, written.output
    assert run("src/k.cu").exit_code == 1
    assert run("--baseline", "base.json", "src/k.cu").exit_code == 0

    # Lines move down: still the same findings.
    write(tmp_path / "src" / "k.cu", "// header\n\n\n__global__ void k(int v) {\n" + body * 2 + "}\n")
    moved = run("--baseline", "base.json", "src/k.cu")
    assert moved.exit_code == 0, moved.output
    assert "2 baselined" not in moved.stderr  # quiet when nothing is new

    # A third identical line: two let through, the third is new.
    write(tmp_path / "src" / "k.cu", "__global__ void k(int v) {\n" + body * 3 + "}\n")
    third = run("--baseline", "base.json", "src/k.cu")
    assert third.exit_code == 1
    assert [ln.split(":")[3].split()[0] for ln in third.stdout.splitlines()] == ["HP201"]
    assert third.stdout.startswith("src/k.cu:4:")  # the last of the three is the new one


def test_baseline_paths_are_relative_to_the_baseline_file(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "proj" / "src" / "k.cu", WARP_BUG)
    monkeypatch.chdir(tmp_path / "proj")
    assert run("--write-baseline", "base.json", "src").exit_code == 0
    data = json.loads((tmp_path / "proj" / "base.json").read_text())
    assert {e["path"] for e in data["findings"]} == {"src/k.cu"}
    monkeypatch.chdir(tmp_path)  # CI runs from elsewhere
    assert run("--baseline", "proj/base.json", "proj/src/k.cu").exit_code == 0


def test_new_finding_in_other_file_is_not_baselined(tmp_path: Path) -> None:
    write(tmp_path / "a.cu", WARP_BUG)
    assert run("--write-baseline", "base.json", "a.cu").exit_code == 0
    write(tmp_path / "b.cu", WARP_BUG)
    result = run("--baseline", "base.json", "a.cu", "b.cu")
    assert result.exit_code == 1
    assert {ln.split(":")[0] for ln in result.stdout.splitlines()} == {"b.cu"}


@pytest.mark.parametrize("content, message", [
    (None, "no such baseline"),
    ("{not json", "invalid JSON"),
    ('{"findings": []}', "not a hipport baseline"),
    ('{"hipport-baseline": 1, "findings": [{"path": "a.cu"}]}', "malformed baseline entry"),
])
def test_bad_baseline_exits_2_naming_it(tmp_path: Path, content: str | None, message: str) -> None:
    write(tmp_path / "k.cu", CLEAN)
    if content is not None:
        write(tmp_path / "base.json", content)
    result = run("--baseline", "base.json", "k.cu")
    assert result.exit_code == 2
    assert "base.json" in result.stderr and message in result.stderr


def test_baseline_not_written_when_a_file_fails(tmp_path: Path) -> None:
    write(tmp_path / "k.cu", WARP_BUG)
    result = run("--write-baseline", "base.json", "k.cu", "missing.cu")
    assert result.exit_code == 2
    assert not (tmp_path / "base.json").exists()


def test_split_baselined_matches_on_text_not_line(tmp_path: Path) -> None:
    path = write(tmp_path / "k.cu", WARP_BUG)
    findings = list(pipeline.process(_source(path), Options()).findings)
    base = tmp_path / "b.json"
    write_baseline(base, findings)
    moved = [f.__class__(**{**_fields(f), "line": f.line + 40}) for f in findings]
    new, old = split_baselined(moved, read_baseline(base), base)
    assert new == [] and len(old) == len(findings)
    edited = [f.__class__(**{**_fields(f), "source_line": f.source_line + " // changed"})
              for f in findings]
    new, _ = split_baselined(edited, read_baseline(base), base)
    assert len(new) == len(findings)


# -- cache ------------------------------------------------------------------------------

def _source(path: Path):
    from hipport.files import SourceFile

    return SourceFile(path, Path(path.name), path.parent, True)


def _fields(f) -> dict:
    from dataclasses import fields

    return {fl.name: getattr(f, fl.name) for fl in fields(f)}


@pytest.fixture
def count_process(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every file that really goes through the pipeline (a cache miss)."""
    seen: list[str] = []
    real = pipeline.process

    def counting(sf, options):
        seen.append(sf.path.name)
        return real(sf, options)

    monkeypatch.setattr(pipeline, "process", counting)
    return seen


def test_cache_hit_gives_the_same_output(tmp_path: Path, count_process: list[str]) -> None:
    write(tmp_path / "k.cu", WARP_BUG)
    first = run("k.cu")
    assert count_process == ["k.cu"]
    second = run("k.cu")
    assert count_process == ["k.cu"]  # answered from the cache
    assert (second.exit_code, second.stdout) == (first.exit_code, first.stdout)


def test_cache_misses_on_content_options_and_tool_change(
        tmp_path: Path, count_process: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "k.cu", WARP_BUG)
    run("k.cu")
    write(tmp_path / "k.cu", WARP_BUG + "\n")
    run("k.cu")
    assert len(count_process) == 2  # new bytes
    run("--rocm", "6.3", "k.cu")
    assert len(count_process) == 3  # other target
    run("--ignore", "HP202", "k.cu")
    assert len(count_process) == 4  # other options
    monkeypatch.setattr(check_mod, "tool_fingerprint", lambda: "another hipport")
    run("k.cu")
    assert len(count_process) == 5  # other rules or mappings installed


HEADER_KERNEL = """\
#include "common.cuh"
__global__ void k(float *v) {
  const int warp = threadIdx.x / 32;
  float x = v[threadIdx.x];
  x += __shfl_down_sync(~0ull, x, 1, WARP_SIZE);
  v[warp] = x;
}
"""


def _codes(result) -> set[str]:
    return {m["code"] for m in map(LINE_RE.match, result.stdout.splitlines()) if m}


def _rewrite_header(path: Path, text: str) -> None:
    """New bytes and a later mtime, and the process's header cache emptied: a real check
    is a process of its own, this test runs several in one."""
    from hipport.preprocessor import branches

    mtime = path.stat().st_mtime_ns
    write(path, text)
    os.utime(path, ns=(mtime + 10**9, mtime + 10**9))
    branches._project_header.cache_clear()


def test_cache_misses_when_an_included_header_changed_or_vanished(
        tmp_path: Path, count_process: list[str]) -> None:
    header = write(tmp_path / "common.cuh", "#pragma once\n#define WAVE_SIZE 64\n#define WARP_SIZE 32\n")
    write(tmp_path / "k.cu", HEADER_KERNEL)
    assert _codes(run("k.cu")) == set()  # the header names a wave of 64: the warp of 32 is logical
    assert _codes(run("k.cu")) == set() and count_process == ["k.cu"]
    os.utime(header, ns=(header.stat().st_mtime_ns + 10**9,) * 2)  # touched, same bytes: a hit
    assert _codes(run("k.cu")) == set() and count_process == ["k.cu"]
    _rewrite_header(header, "#pragma once\n#define WAVE_SIZE 32\n#define WARP_SIZE 32\n")  # same size
    assert _codes(run("k.cu")) == {"HP204"} == _codes(run("--no-cache", "k.cu"))  # as a fresh cache says
    assert count_process == ["k.cu"] * 3
    _rewrite_header(header, "#pragma once\n#define WAVE_SIZE 64\n#define WARP_SIZE 32\n")
    assert _codes(run("k.cu")) == set()
    assert count_process == ["k.cu"] * 4  # the entry (one per file's bytes) recorded the 32
    header.unlink()
    from hipport.preprocessor import branches

    branches._project_header.cache_clear()
    assert _codes(run("k.cu")) == {"HP204"}  # no header, no wave of 64
    assert count_process == ["k.cu"] * 5  # vanished: analysed again, not answered as before


def test_cache_misses_when_a_project_header_in_a_cuda_folder_vanishes_or_appears(
        tmp_path: Path, count_process: list[str]) -> None:
    """HP333 leaves ``#include "cuda/q_matrix.cuh"`` alone while the build finds that file (the
    project's own header): a cached check must see it vanish (then libcu++ as far as hipport
    knows: HP333, high) and appear again, as a fresh scan does. ext.cpp has no conditional,
    so only HP333's own lookup notes those places for the cache."""
    from hipport.preprocessor import branches

    header = write(tmp_path / "cuda" / "q_matrix.cuh", "#pragma once\n")
    write(tmp_path / "ext.cpp", '#include "cuda/q_matrix.cuh"\nint f();\n')
    assert _codes(run("ext.cpp")) == set()
    assert _codes(run("ext.cpp")) == set() and count_process == ["ext.cpp"]
    header.unlink()
    branches._project_header.cache_clear()
    assert _codes(run("ext.cpp")) == {"HP333"} == _codes(run("--no-cache", "ext.cpp"))
    write(header, "#pragma once\n")
    branches._project_header.cache_clear()
    assert _codes(run("ext.cpp")) == set() and count_process == ["ext.cpp"] * 4


def test_cache_misses_when_a_header_appears_earlier_in_the_include_search(
        tmp_path: Path, count_process: list[str]) -> None:
    """k.cu's ``#include "common.cuh"`` finds inc/common.cuh through -I (a wave of 64 named:
    no finding); then a src/common.cuh beside k.cu appears, which the search tries first and
    which names none: scan reports HP204, and a cached check must too, not answer from the
    entry that read inc/common.cuh (the entry records the places tried before it, and misses
    when one holds a header now)."""
    from hipport.preprocessor import branches

    write(tmp_path / "inc" / "common.cuh", "#pragma once\n#define WAVE_SIZE 64\n#define WARP_SIZE 32\n")
    write(tmp_path / "src" / "k.cu", HEADER_KERNEL)
    assert _codes(run("-I", "inc", "src/k.cu")) == set()
    assert _codes(run("-I", "inc", "src/k.cu")) == set() and count_process == ["k.cu"]
    write(tmp_path / "src" / "common.cuh", "#pragma once\n#define WAVE_SIZE 32\n#define WARP_SIZE 32\n")
    branches._project_header.cache_clear()
    assert _codes(run("-I", "inc", "src/k.cu")) == {"HP204"} == _codes(run("--no-cache", "-I", "inc", "src/k.cu"))
    assert count_process == ["k.cu"] * 3
    assert _codes(run("-I", "inc", "src/k.cu")) == {"HP204"} and count_process == ["k.cu"] * 3  # a hit again


def test_tree_digest_changes_with_any_data_file(tmp_path: Path) -> None:
    data = write(tmp_path / "pkg" / "mappings" / "api.json", "{}")
    before = tree_digest([str(tmp_path / "pkg")])
    assert tree_digest([str(tmp_path / "pkg")]) == before
    data.write_text('{"cudaFoo": "hipFoo"}')
    assert tree_digest([str(tmp_path / "pkg")]) != before
    write(tmp_path / "pkg" / "rules" / "new.py", "")
    assert tree_digest([str(tmp_path / "pkg")]) != before


def test_corrupt_entries_are_ignored_and_replaced(tmp_path: Path, cache_dir: Path,
                                                  count_process: list[str]) -> None:
    write(tmp_path / "k.cu", WARP_BUG)
    good = run("k.cu")
    entries = list(cache_dir.rglob("*.json"))
    assert len(entries) == 1
    for garbage in (b"", b"{trunc", b'{"key": "x"}', b"[1, 2]"):
        entries[0].write_bytes(garbage)
        again = run("k.cu")
        assert (again.exit_code, again.stdout) == (good.exit_code, good.stdout)
    assert len(count_process) == 5
    from hipport.cachefile import load, secret_key

    secret = secret_key(cache_dir)
    assert secret is not None
    assert load(entries[0], cache_dir, check_mod.CACHE_FORMAT, secret, 1 << 20)["findings"]  # rewritten whole


def test_no_cache_neither_reads_nor_writes(tmp_path: Path, cache_dir: Path,
                                           count_process: list[str]) -> None:
    write(tmp_path / "k.cu", WARP_BUG)
    run("--no-cache", "k.cu")
    assert not cache_dir.exists()
    run("k.cu")
    run("--no-cache", "k.cu")
    assert len(count_process) == 3


def test_unwritable_cache_does_not_fail_the_gate(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = write(tmp_path / "not-a-dir", "")
    monkeypatch.setenv("HIPPORT_CACHE_DIR", str(blocker))
    write(tmp_path / "k.cu", WARP_BUG)
    assert run("k.cu").exit_code == 1


def test_cache_directory_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HIPPORT_CACHE_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hipport_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("HIPPORT_CACHE_DIR")
    assert hipport_cache_dir() == tmp_path / "xdg" / "hipport"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert hipport_cache_dir() == tmp_path / "home" / ".cache" / "hipport"


def test_cache_key_covers_path_and_bytes(tmp_path: Path) -> None:
    cache = Cache(tmp_path, Options())
    keys = {cache.key("a.cu", b"x"), cache.key("b.cu", b"x"), cache.key("a.cu", b"y")}
    assert len(keys) == 3
    assert Cache(tmp_path, Options()).key("a.cu", b"x") == cache.key("a.cu", b"x")
    assert os.listdir(tmp_path) == []  # keys cost no disk access


def _header_project(root: Path) -> Path:
    """A repository whose CUDA unit reaches a CUDA-free header holding ``register`` only
    through a plain header (k.cu -> mid.h -> inner.h), beside one no unit includes."""
    src = root / "src"
    src.mkdir(parents=True)
    (src / "k.cu").write_text('#include "mid.h"\n__global__ void k(int *p) { p[0] = twice(1); }\n')
    (src / "mid.h").write_text('#pragma once\n#include "inner.h"\n')
    (src / "inner.h").write_text("inline int twice(int v) {\n  register int r = 2 * v;\n  return r;\n}\n")
    (src / "alone.h").write_text("inline int alone(int v) { register int r = v; return r; }\n")
    return src


def test_check_of_a_header_alone_finds_its_includers_in_the_repository(tmp_path: Path) -> None:
    """pre-commit names only the staged files: a commit that changes inner.h alone gives check
    inner.h alone, yet convert of the repository removes its 'register' (HP339), because k.cu
    compiles it through mid.h. check looks for its includers in the repository (the nearest
    folder holding .git) and reports what convert fixes, from its cache too; a header no unit
    includes stays without a finding, and the includers found are not reported themselves."""
    from hipport.convert import convert, plan

    repo = tmp_path / "repo"
    src = _header_project(repo)
    (repo / ".git").mkdir()
    the_plan = plan([src], str(tmp_path / "out"), in_place=False, diff=False)
    converted = {Path(r.path).name: [(f.line, f.code) for f in r.findings]
                 for r in convert(the_plan, Options(apply_fixes=True), emit=lambda _: None)}
    assert converted["inner.h"] == [(2, "HP339")] and converted["alone.h"] == []
    for _ in range(2):  # the second run answers the headers from the cache
        run = check_mod.run_check([src / "inner.h", src / "alone.h"], Options())
        assert [(Path(f.path).name, f.line, f.code) for f in run.report.findings] == [("inner.h", 2, "HP339")]
        assert sorted(Path(f.path).name for f in run.report.files) == ["alone.h", "inner.h"]
    given_all = check_mod.run_check([src / "inner.h", src / "k.cu", src / "mid.h"], Options())
    assert [(Path(f.path).name, f.line, f.code) for f in given_all.report.findings] == [("inner.h", 2, "HP339")]
    # the plain header on the way given too: the search goes on through it to k.cu
    with_mid = check_mod.run_check([src / "inner.h", src / "mid.h"], Options())
    assert [(Path(f.path).name, f.line, f.code) for f in with_mid.report.findings] == [("inner.h", 2, "HP339")]


def test_check_outside_a_repository_judges_a_header_by_the_given_files(tmp_path: Path) -> None:
    """With no .git above, there is no project to search: the given files are all check
    sees, so inner.h alone has no finding, and with its includers given (the second run
    answering them from the cache: a cached result keeps whether the file was parsed) it has
    convert's."""
    src = _header_project(tmp_path / "repo")
    assert check_mod.run_check([src / "inner.h"], Options()).report.findings == []
    for _ in range(2):
        run = check_mod.run_check([src / "k.cu", src / "mid.h", src / "inner.h"], Options())
        assert [(Path(f.path).name, f.line, f.code) for f in run.report.findings] == [("inner.h", 2, "HP339")]


def _cub_copy_project(root: Path) -> Path:
    """A tree carrying its own CUB (cub/util_arch.cuh #defines CUB_PTX_ARCH), whose
    block.cuh has a 32-lane mask scan and convert leave as it is (the copy is left whole)."""
    write(root / "cub" / "util_arch.cuh", "#pragma once\n#ifndef CUB_PTX_ARCH\n#define CUB_PTX_ARCH 0\n#endif\n")
    write(root / "cub" / "block.cuh", '#pragma once\n#include "util_arch.cuh"\nnamespace cub {\n'
          "__device__ int lanes(int v) { return __shfl_down_sync(0xffffffff, v, 1) + CUB_PTX_ARCH; }\n}\n")
    write(root / "k.cu", '#include "cub/block.cuh"\n__global__ void k(int *p) { p[0] = cub::lanes(p[1]); }\n')
    return root


def _found(results) -> list[tuple[str, int, str, str]]:
    return sorted((os.path.relpath(f.path), f.line, f.code, f.message) for r in results for f in r.findings)


def test_check_of_a_tree_leaves_its_bundled_cub_copy_as_scan_does(tmp_path: Path) -> None:
    """check goes through scan's tree pass: the copy's HP201 is not reported, k.cu's include is
    routed to hipCUB with the copy's HP409, the same findings as scan of the same path, from
    the cache too (an entry of a run that did not know the copy serves no run that does)."""
    proj = _cub_copy_project(tmp_path / "proj")
    scanned = _found(pipeline.scan_paths([proj], Options()))
    assert {(p, c) for p, _, c, _ in scanned} == {(os.path.join("proj", "k.cu"), "HP409")}
    check_mod.run_check([proj / "cub" / "block.cuh"], Options())  # caches block.cuh's HP201, copy unknown
    for _ in range(2):
        run = check_mod.run_check([proj], Options())
        assert _found([run.report]) == scanned and run.status == 0


def test_check_of_a_staged_file_of_a_bundled_copy_judges_the_copy_in_its_repository(tmp_path: Path) -> None:
    """pre-commit names the staged cub/block.cuh alone: in a repository, the rest of its cub/
    directory tells whether it is a copy (util_arch.cuh defines CUB_PTX_ARCH), so it is left
    whole as scan of the repository leaves it; outside one, the given file is all check sees."""
    proj = _cub_copy_project(tmp_path / "proj")
    alone = check_mod.run_check([proj / "cub" / "block.cuh"], Options())
    assert "HP201" in {f.code for f in alone.report.findings} and alone.status == 1
    (proj / ".git").mkdir()
    for given in (proj / "cub" / "block.cuh", Path("proj/cub/block.cuh")):
        run = check_mod.run_check([given], Options())
        assert run.report.findings == [] and run.status == 0
        assert [f.status for f in run.report.files] == ["unchanged"]


def _includer_project(root: Path) -> Path:
    """A git repository whose headers' findings hang on their includers: w.cuh (HP204) is
    included by cuda.cu only under ``#ifndef USE_ROCM`` and by hip.cu as it is; lanes.cuh,
    naming no wave, is included by a.cu, which names a wave of 64, and by b.cu, which
    does not (its HP204 is left to the includers: ``warp.logical.for_wave64_includers``)."""
    import subprocess

    src = root / "src"
    write(src / "w.cuh", "#pragma once\n__device__ int lane_of() { return threadIdx.x & 31; }\n")
    write(src / "cuda.cu", '#ifndef USE_ROCM\n#include "w.cuh"\n#endif\n__global__ void c(int *p) { p[0] = 1; }\n')
    write(src / "hip.cu", '#include "w.cuh"\n__global__ void h(int *p) { p[0] = lane_of(); }\n')
    write(src / "lanes.cuh", "#pragma once\n__device__ int warp_of() { return threadIdx.x / 32; }\n")
    write(src / "a.cu", '#define WAVE_SIZE 64\n#include "lanes.cuh"\n__global__ void a(int *p) { p[0] = warp_of(); }\n')
    write(src / "b.cu", '#include "lanes.cuh"\n__global__ void b(int *p) { p[0] = warp_of(); }\n')
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return src


def test_check_judges_a_header_by_every_includer_in_its_repository(tmp_path: Path) -> None:
    """pre-commit names the staged files: a commit of w.cuh with cuda.cu, or of lanes.cuh
    with a.cu, showed check only includers that drop the header's HP204 (a CUDA-build
    include, a file naming the 64-lane wave), while hip.cu and b.cu, not staged, compile it
    as it is: scan of the repository reports both. check reads the includers of a given
    header with findings in its repository, so it agrees with scan, both ways: with hip.cu
    and b.cu gone, the headers staged alone lose the findings scan drops too."""
    from hipport.pipeline import collect, run_paths

    src = _includer_project(tmp_path / "repo")
    options = Options(hip_guards=DEFAULT_HIP_GUARDS + ("USE_ROCM",))

    def scanned() -> list[tuple[str, int, str]]:
        report = collect(run_paths([src], options), options, "scan")
        return sorted((Path(f.path).name, f.line, f.code) for f in report.findings)

    def checked(*names: str) -> list[tuple[str, int, str]]:
        found = check_mod.run_check([src / n for n in names], options).report.findings
        return sorted((Path(f.path).name, f.line, f.code) for f in found)

    both = [("lanes.cuh", 2, "HP204"), ("w.cuh", 2, "HP204")]
    assert scanned() == both
    for _ in range(2):  # the second run answers the given files from the cache
        assert checked("w.cuh", "cuda.cu") == [("w.cuh", 2, "HP204")]
        assert checked("lanes.cuh", "a.cu") == [("lanes.cuh", 2, "HP204")]
        assert checked("w.cuh", "lanes.cuh") == both
    (src / "hip.cu").unlink()
    (src / "b.cu").unlink()
    assert scanned() == []
    assert checked("w.cuh") == checked("lanes.cuh") == checked("w.cuh", "cuda.cu") == []


def test_check_judges_a_sources_uninstantiated_template_by_its_includers_in_the_repository(
        tmp_path: Path) -> None:
    """kern.cu defines a template kernel it never names (HP204, left to the files that
    include kern.cu: ``instances.never_instantiated``); main.cu includes it and launches
    red<4>. A commit of kern.cu alone showed check no includer, so the true HP204 that scan
    of the repository reports was dropped: check asked the repository only for headers."""
    import subprocess

    repo = tmp_path / "repo"
    write(repo / "kern.cu", "template <int N>\n__global__ void red(float *v) {\n"
          "  int lane = threadIdx.x & 0x1f;\n  v[lane] = __shfl_down_sync(~0ull, v[threadIdx.x], 1);\n}\n")
    write(repo / "main.cu", '#include "kern.cu"\nvoid go(float *v) { red<4><<<1, 64>>>(v); }\n')
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    options = Options()

    def checked() -> list[tuple[str, int, str]]:
        found = check_mod.run_check([repo / "kern.cu"], options).report.findings
        return sorted((Path(f.path).name, f.line, f.code) for f in found)

    assert checked() == checked() == [("kern.cu", 3, "HP204")]  # cold, then from the cache
    (repo / "main.cu").unlink()
    assert checked() == []  # no unit instantiates it, as scan says


def test_a_header_on_standard_input_is_judged_alone(tmp_path: Path) -> None:
    """Standard input is an editor's buffer, not the file on disk: check reads no
    repository for it and keeps every finding (the header's includers in the repository
    would drop this one: cuda.cu includes w.cuh only for CUDA)."""
    src = _includer_project(tmp_path / "repo")
    (src / "hip.cu").unlink()
    header = (src / "w.cuh").read_text()
    result = CliRunner().invoke(main, ["check", "-", "--stdin-filename", str(src / "w.cuh"),
                                       "--hip-guard", "USE_ROCM"], input=header, catch_exceptions=False)
    assert result.exit_code == 1 and "HP204" in result.output
    assert check_mod.run_check([src / "w.cuh"], Options(hip_guards=DEFAULT_HIP_GUARDS + ("USE_ROCM",))
                               ).report.findings == []
