"""Hostile file systems: links out of the tree and in loops, FIFOs, unwritable reports,
killed runs' temporaries, file modes. Every input is made here, at test time."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from hipport.cli import main
from hipport.files import TEMP_SUFFIX, read_bytes, remove_stale_temporaries
from hipport.options import Options
from hipport.pipeline import transform

KERNEL = b"#include <cuda_runtime.h>\n__global__ void k(float* p) { cudaMalloc(&p, 4); }\n"
HIP_INCLUDE = b"#include <hip/hip_runtime.h>"

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


def run(*args: str, cwd: Path | None = None):
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def linked(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose ``src/third_party`` links to a folder outside it."""
    outside = tmp_path / "toolkit"
    outside.mkdir()
    (outside / "t.cuh").write_bytes(KERNEL)
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.cu").write_bytes(KERNEL)
    (repo / "src" / "third_party").symlink_to(outside, target_is_directory=True)
    return repo, outside


def test_in_place_does_not_follow_a_link_out_of_the_tree(linked) -> None:
    repo, outside = linked
    r = run("convert", str(repo), "--in-place", "-q")
    assert r.exit_code == 0, r.output
    assert (outside / "t.cuh").read_bytes() == KERNEL
    assert sorted(p.name for p in outside.iterdir()) == ["t.cuh"]  # no backup, no temporary
    assert b"hipMalloc" in (repo / "src" / "a.cu").read_bytes()
    assert "third_party: skipped: symbolic link to" in r.stderr and "--follow-symlinks" in r.stderr


def test_follow_symlinks_reads_but_never_writes_outside(linked) -> None:
    repo, outside = linked
    r = run("convert", str(repo), "--in-place", "-q", "--follow-symlinks")
    assert r.exit_code == 2
    assert (outside / "t.cuh").read_bytes() == KERNEL
    assert sorted(p.name for p in outside.iterdir()) == ["t.cuh"]
    assert "third_party/t.cuh: cannot write output:" in r.stderr and "not written" in r.stderr
    assert b"hipMalloc" in (repo / "src" / "a.cu").read_bytes()  # the rest of the run went on


def test_follow_symlinks_with_an_output_tree_mirrors_the_linked_files(linked, tmp_path) -> None:
    repo, outside = linked
    out = tmp_path / "out"
    r = run("convert", str(repo), "-o", str(out), "-q", "--follow-symlinks")
    assert r.exit_code == 0, r.output
    assert b"hipMalloc" in (out / "src" / "third_party" / "t.cuh").read_bytes()
    assert (outside / "t.cuh").read_bytes() == KERNEL


def test_an_output_tree_with_a_link_out_is_not_written_through(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "k.cu").write_bytes(KERNEL)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "sub").symlink_to(elsewhere, target_is_directory=True)
    r = run("convert", str(src), "-o", str(out), "-q")
    assert r.exit_code == 2
    assert "escapes the output directory" in r.stderr
    assert list(elsewhere.iterdir()) == []


def test_a_link_to_a_folder_inside_the_tree_is_no_error(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "real").mkdir(parents=True)
    (src / "real" / "k.cu").write_bytes(KERNEL)
    (src / "alias").symlink_to(src / "real", target_is_directory=True)
    r = run("scan", str(src), "-q")
    assert r.exit_code == 0, r.output
    assert "already walked" in r.stderr  # named, not an error


@pytest.mark.parametrize("command", [["convert"], ["scan"], ["check"], ["convert", "--in-place"]])
def test_a_looping_link_argument_is_one_error_exit_2(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "loop.cu").symlink_to(tmp_path / "loop.cu")
    (tmp_path / "good.cu").write_bytes(KERNEL)
    r = run(command[0], "loop.cu", "good.cu", *command[1:], cwd=tmp_path)
    assert r.exit_code == 2, r.output
    assert "hipport: error: loop.cu: symbolic link loop" in r.stderr
    assert "Traceback" not in r.output


def test_a_looping_link_as_the_only_argument(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    for command in ("convert", "scan", "check"):
        r = run(command, "a", cwd=tmp_path)
        assert r.exit_code == 2 and "a: symbolic link loop" in r.stderr, (command, r.output)


@needs_fifo
def test_a_fifo_in_a_converted_tree_is_named_and_skipped(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_bytes(KERNEL)
    os.mkfifo(src / "pipe.cu")
    os.mkfifo(src / "notes.txt")
    r = run("convert", str(src), "-o", str(tmp_path / "out"), "-q")
    assert r.exit_code == 0, r.output
    assert "pipe.cu: skipped: a named pipe (FIFO)" in r.stderr
    assert "notes.txt: skipped: a named pipe (FIFO)" in r.stderr
    assert not (tmp_path / "out" / "pipe.cu").exists()
    assert b"hipMalloc" in (tmp_path / "out" / "k.cu").read_bytes()


@needs_fifo
def test_a_fifo_argument_is_an_error_not_a_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "p.cu")
    for command in ("scan", "check"):
        r = run(command, str(tmp_path / "p.cu"))
        assert r.exit_code == 2 and "named pipe (FIFO)" in r.stderr, (command, r.output)


@needs_fifo
def test_reading_a_fifo_that_replaced_a_file_fails_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "p.cu")
    with pytest.raises(OSError, match="not a regular file"):
        read_bytes(tmp_path / "p.cu")


def test_per_file_errors_are_printed_when_the_report_cannot_be_written(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_bytes(KERNEL)
    (tmp_path / "file").write_bytes(b"")
    for args in (["convert", "k.cu", "missing.cu", "-o", "out", "--report", "file/r.md"],
                 ["scan", "k.cu", "missing.cu", "-o", "file/r.md"]):
        r = run(*args, cwd=tmp_path)
        assert r.exit_code == 2
        assert "cannot write report" in r.stderr
        assert "hipport: error: missing.cu: no such file or directory" in r.stderr, args


def test_a_broken_link_with_an_output_file_makes_no_folder(tmp_path: Path) -> None:
    (tmp_path / "broken-link.cu").symlink_to(tmp_path / "gone.cu")
    r = run("convert", "broken-link.cu", "-o", "b.hip", cwd=tmp_path)
    assert r.exit_code == 2
    assert "broken-link.cu: broken symbolic link" in r.stderr
    assert not (tmp_path / "b.hip").exists()


def test_reports_and_outputs_get_the_users_umask(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_bytes(KERNEL)
    (tmp_path / "k.cu").chmod(0o640)
    old = os.umask(0o022)
    try:
        from hipport.files import _new_file_mode

        _new_file_mode.cache_clear()
        r = run("convert", "k.cu", "-o", "out/k.cu", "-q", cwd=tmp_path)
        r2 = run("scan", "k.cu", "-o", "scan.json", "-f", "json", "-q", cwd=tmp_path)
    finally:
        os.umask(old)
        _new_file_mode.cache_clear()
    assert r.exit_code == 0 and r2.exit_code == 0
    assert (tmp_path / "out" / "hipport-report.md").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "scan.json").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "out" / "k.cu").stat().st_mode & 0o777 == 0o640  # the input's mode


def test_a_killed_runs_temporaries_are_removed_by_the_next_run(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_bytes(KERNEL)
    out = tmp_path / "out"
    out.mkdir()
    dead = 2**31 - 7  # above any pid_max: no such process
    stale = out / f".k.cu.{dead}.0{TEMP_SUFFIX}"
    fresh = out / f".k.cu.{dead}.1{TEMP_SUFFIX}"  # too young: maybe another machine's
    other = out / f".k.cu.{os.getpid()}.9{TEMP_SUFFIX}"  # a live process's
    for p in (stale, fresh, other):
        p.write_bytes(b"partial")
    hour_ago = time.time() - 3600
    os.utime(stale, (hour_ago, hour_ago))
    os.utime(other, (hour_ago, hour_ago))
    r = run("convert", str(src), "-o", str(out), "-q")
    assert r.exit_code == 0
    assert not stale.exists() and fresh.exists() and other.exists()
    assert remove_stale_temporaries(tmp_path / "missing") == 0


# -- where the added hip_runtime.h include goes (malformed inputs) ---------------------

CONVERT = Options(apply_fixes=True)


@pytest.mark.parametrize("src, expected", [
    (b"// header comment\n<<<\n__global__ void k(){}\n",
     b"// header comment\n#include <hip/hip_runtime.h>\n<<<\n__global__ void k(){}\n"),
    (b"// header comment\r\n<<<\r\n__global__ void k(){}\r\n",
     b"// header comment\r\n#include <hip/hip_runtime.h>\r\n<<<\r\n__global__ void k(){}\r\n"),
    (b"  CHECK(cudaFree(p));\n  k<<<1, 2>>>();\n",
     b"#include <hip/hip_runtime.h>\n  CHECK(hipFree(p));\n  k<<<1, 2>>>();\n"),
    (b"/* a\n b */ __global__ void k(){}\n",
     b"/* a\n b */ \n#include <hip/hip_runtime.h>\n__global__ void k(){}\n"),
    (b"// header comment\n <<< ", b"// header comment\n#include <hip/hip_runtime.h>\n <<< "),
])
def test_the_added_include_stands_on_its_own_line_and_is_added_once(src: bytes, expected: bytes) -> None:
    once = transform(src, "k.cu", CONVERT)[0]
    assert once == expected
    assert transform(once, "k.cu", CONVERT)[0] == once


# -- pool workers do not outlive a killed parent -----------------------------------------

PARENT = r"""
import os, sys, time
from hipport.workers import ordered_map

def slow(item):
    time.sleep(0.05)
    return os.getpid()

def lost(item, why):
    return None

results = ordered_map(slow, iter(range(10_000)), 2, lost)
pids = {next(results) for _ in range(40)}
print(" ".join(map(str, sorted(pids))), flush=True)
os.kill(os.getpid(), 9)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="workers are forked on POSIX only")
def test_workers_exit_when_their_parent_is_killed(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    log = tmp_path / "pids"
    with log.open("w") as f:  # a file, not a pipe: orphaned workers would hold a pipe open
        subprocess.run([sys.executable, str(script)], stdout=f, stderr=subprocess.DEVNULL,
                       timeout=120)
    out = log.read_text()
    pids = [int(p) for p in out.split()]
    assert len(pids) == 2, out
    deadline = time.monotonic() + 20
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [p for p in pids if _running(p)]
        time.sleep(0.1)
    for p in alive:  # clean up before failing
        os.kill(p, 9)
    assert not alive, "workers outlived their parent"


BUSY_PARENT = r"""
import os, sys, threading, time
from hipport.workers import ordered_map

def busy(item):
    open(os.path.join(sys.argv[1], str(os.getpid())), "w").close()
    time.sleep(120)  # one long file: the closed pipe is not read until it is done
    return item

results = ordered_map(busy, iter(range(100)), 2, lambda item, why: None)
threading.Thread(target=next, args=(results,), daemon=True).start()
while len(os.listdir(sys.argv[1])) < 2:
    time.sleep(0.05)
os.kill(os.getpid(), 9)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_worker_busy_with_a_long_file_ends_with_its_killed_parent(tmp_path: Path) -> None:
    import subprocess

    script = tmp_path / "parent.py"
    script.write_text(BUSY_PARENT)
    busy = tmp_path / "busy"
    busy.mkdir()
    subprocess.run([sys.executable, str(script), str(busy)], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=60)
    pids = [int(p.name) for p in busy.iterdir()]
    assert len(pids) == 2
    deadline = time.monotonic() + 10
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [p for p in pids if _running(p)]
        time.sleep(0.1)
    for p in alive:
        os.kill(p, 9)
    assert not alive, "a busy worker outlived its parent"


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


# -- idempotence on malformed input (cases the fuzzer found) -----------------------------

@pytest.mark.parametrize("src, options", [
    # the launch had no kernel name (a continuation line): was an edit conflict
    (b"// header comment\n \\\n   <<<g, b>>>(x);if (threadId(x.x % 32",
     Options(apply_fixes=True, launch_syntax="hip", roc=True)),
    # an include the parser only sees on one of the two passes: was added on the second
    (b"  cublasDestroy x & 3#include <cuda.h>\n1nc(0xfffffff\\\r\nf, v, '16)Des(", CONVERT),
])
def test_malformed_inputs_convert_once_and_stay(src: bytes, options: Options) -> None:
    once = transform(src, "b.cuh", options)[0]
    assert transform(once, "b.cuh", options)[0] == once
    assert once.count(HIP_INCLUDE) == 1


# -- bounds ---------------------------------------------------------------------------

def test_a_long_line_is_not_quoted_by_each_of_its_findings() -> None:
    line = b"__global__ void k(unsigned* m, int v){ m[0] = __ballot_sync(0xffffffff, v); } " * 200
    _, findings, _ = transform(line + b"\n", "k.cu", Options())
    assert len(findings) >= 200 and all(f.source_line == "" for f in findings)
    _, short, _ = transform(line[:80] + b"\n", "k.cu", Options())
    assert short and short[0].source_line.startswith("__global__")


def test_a_source_over_the_size_bound_is_one_error(tmp_path: Path, monkeypatch) -> None:
    from hipport import pipeline

    monkeypatch.setattr(pipeline, "MAX_SOURCE_BYTES", 1 << 10)
    (tmp_path / "big.cu").write_bytes(KERNEL * 40)
    (tmp_path / "k.cu").write_bytes(KERNEL)
    r = run("scan", "big.cu", "k.cu", "-q", cwd=tmp_path)
    assert r.exit_code == 2
    size = len(KERNEL * 40)
    assert f"hipport: error: big.cu: {size:,} bytes, over the bound of 1,024 bytes" in r.stderr
    assert "k.cu" not in r.stderr  # the other file went through


#: Inputs that cost tree-sitter itself far more than code does (measured unbounded: about
#: 3.6 GB per MB, and 30 s per MB), over parse.BUDGET_FROM so that they are bounded.
COSTLY_MEMORY = b"cudaMalloc(p);\n" + b"a<" * 40_000
COSTLY_TIME = b"cudaMalloc(p);\n" + b'"\\"' * 40_000


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="memory is read from /proc")
def test_a_source_costing_the_parser_too_much_memory_is_one_error(tmp_path: Path, monkeypatch) -> None:
    from hipport import parse

    monkeypatch.setattr(parse, "MEMORY_BYTES", 16 << 20)
    monkeypatch.setattr(parse, "MEMORY_PER_BYTE", 0)
    (tmp_path / "nested.cu").write_bytes(COSTLY_MEMORY)
    (tmp_path / "k.cu").write_bytes(KERNEL)
    r = run("convert", ".", "-o", "out", "-q", cwd=tmp_path)
    assert r.exit_code == 2
    assert ("hipport: error: nested.cu: the parser needed more than 16 MiB of memory "
            "(the bound for a source of this size)") in r.stderr
    assert (tmp_path / "out" / "k.cu").is_file() and not (tmp_path / "out" / "nested.cu").exists()


def test_a_source_costing_the_parser_too_much_time_is_one_error_and_the_next_parses(monkeypatch) -> None:
    from hipport import parse
    from hipport.files import SourceFile
    from hipport.pipeline import process

    monkeypatch.setattr(parse, "CPU_SECONDS", 0.2)
    monkeypatch.setattr(parse, "CPU_PER_MIB", 0.0)
    big = KERNEL * (parse.BUDGET_FROM // len(KERNEL) + 1)
    expected = transform(big, "k.cu", Options(apply_fixes=True))
    started = time.process_time()
    with pytest.raises(parse.ParseBudgetExceeded, match=r"more than 0.2 s of CPU time"):
        transform(COSTLY_TIME, "s.cu", Options(apply_fixes=True))
    assert time.process_time() - started < 2  # unbounded: about 3.5 s
    # the parser is reset: the next file parses from its own first byte
    assert transform(big, "k.cu", Options(apply_fixes=True)) == expected
    monkeypatch.setattr(parse, "BUDGET_FROM", 1 << 30)  # no budget: the same tree, the same output
    assert transform(big, "k.cu", Options(apply_fixes=True)) == expected


@pytest.mark.parametrize("command", ["convert", "scan", "check"])
def test_a_deeply_nested_pyproject_near_the_input_is_no_traceback(tmp_path: Path, command: str) -> None:
    """Found re-checking the breaks: the [tool.hipport] lookup parsed every pyproject.toml
    above the inputs with no guard, so 100,000 nested ``[`` there was a RecursionError
    traceback (exit 1) for convert, scan and check; it is now invalid TOML like any other."""
    (tmp_path / "pyproject.toml").write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    (tmp_path / "k.cu").write_bytes(KERNEL)
    args = [command, str(tmp_path / "k.cu")] + (["-o", str(tmp_path / "out")] if command == "convert" else [])
    r = run(*args)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code in (0, 1) and "Traceback" not in r.output


def test_a_deeply_nested_hipport_config_given_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.hipport]\nrocm = " + "[" * 100_000 + "]" * 100_000 + "\n")
    (tmp_path / "k.cu").write_bytes(KERNEL)
    r = run("scan", "--config", str(tmp_path / "pyproject.toml"), str(tmp_path / "k.cu"))
    assert r.exit_code == 2 and "nested too deeply" in r.output, r.output


def test_a_broken_hex_literal_prints_no_python_warning() -> None:
    """Found re-running the fuzzer: folding ``0xfor`` as a constant made Python's parser print
    ``<unknown>:1: SyntaxWarning: invalid hexadecimal literal`` on the user's terminal."""
    import warnings

    from hipport.rules.device.constants import const_ast

    const_ast.cache_clear()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        transform(b"#define N 0x1and\n__device__ const int M = 0xfor;\n__global__ void k(){ int a[N]; }\n",
                  "a.cu", CONVERT)
    assert not [w for w in seen if issubclass(w.category, SyntaxWarning)]
