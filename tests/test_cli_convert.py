"""``hipport convert`` and ``scan`` end to end through click: destinations, safety, exit codes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from hipport.cli import main

KERNEL = b"#include <cuda_runtime.h>\n__global__ void k(float* p) { p[0] = 1; }\nvoid f(float** p) { cudaMalloc(p, 4); }\n"


def run(*args: str, cwd: Path | None = None):
    runner = CliRunner()
    if cwd is None:
        return runner.invoke(main, list(args), catch_exceptions=False)
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a.cu").write_bytes(KERNEL)
    (src / "sub" / "b.cuh").write_bytes(b"#pragma once\ncudaStream_t stream_of();\n")
    (src / "plain.cpp").write_bytes(b"int main() { return 0; }\n")
    (src / "CMakeLists.txt").write_bytes(b"project(x CUDA)\n")
    return src


def test_directory_is_mirrored_and_other_files_copied(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = run("convert", str(tree), "-o", str(out))
    assert r.exit_code == 0, r.output
    assert b"hipMalloc(p, 4)" in (out / "a.cu").read_bytes()
    assert (out / "sub" / "b.cuh").read_bytes() == (
        b"#pragma once\n#include <hip/hip_runtime.h>\nhipStream_t stream_of();\n")
    assert (out / "plain.cpp").read_bytes() == b"int main() { return 0; }\n"
    assert (out / "CMakeLists.txt").read_bytes() == b"project(x HIP)\n"  # build files are ported
    assert (out / "hipport-report.md").is_file()
    assert (tree / "a.cu").read_bytes() == KERNEL  # the input is untouched


def test_second_conversion_into_the_same_tree_writes_the_same_bytes(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run("convert", str(tree), "-o", str(out))
    first = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    stamp = (out / "a.cu").stat().st_mtime_ns
    run("convert", str(tree), "-o", str(out))
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == first
    assert (out / "a.cu").stat().st_mtime_ns == stamp  # identical output is not rewritten


def test_single_file_to_file_and_stdout(tree: Path, tmp_path: Path) -> None:
    r = run("convert", str(tree / "a.cu"), "-o", str(tmp_path / "a.hip"), "--no-report")
    assert r.exit_code == 0
    assert b"hipMalloc" in (tmp_path / "a.hip").read_bytes()
    r = run("convert", str(tree / "a.cu"), "-o", "-", "-q")
    assert r.exit_code == 0 and "hipMalloc(p, 4)" in r.stdout


def test_default_destination_never_overwrites_the_input(tree: Path) -> None:
    r = run("convert", str(tree))
    assert r.exit_code == 0, r.output
    assert (tree.parent / "src-hip" / "a.cu").is_file()
    r = run("convert", str(tree / "a.cu"), "--no-report")
    assert (tree / "a.cu.hip").is_file() and (tree / "a.cu").read_bytes() == KERNEL


def test_in_place_keeps_a_backup_and_never_overwrites_it(tree: Path) -> None:
    r = run("convert", str(tree / "a.cu"), "--in-place", "--no-report")
    assert r.exit_code == 0
    assert (tree / "a.cu.prehip").read_bytes() == KERNEL
    assert b"hipMalloc" in (tree / "a.cu").read_bytes()
    (tree / "a.cu").write_bytes(KERNEL.replace(b"cudaMalloc", b"cudaFree"))
    run("convert", str(tree / "a.cu"), "--in-place", "--no-report")
    assert (tree / "a.cu.prehip").read_bytes() == KERNEL  # the oldest original wins


def test_in_place_without_backup(tree: Path) -> None:
    run("convert", str(tree / "a.cu"), "--in-place", "--no-backup", "--no-report")
    assert not (tree / "a.cu.prehip").exists()


def test_diff_writes_nothing(tree: Path) -> None:
    before = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    r = run("convert", str(tree), "--diff", "-q")
    assert r.exit_code == 0
    assert "-void f(float** p) { cudaMalloc(p, 4); }" in r.stdout
    assert "+void f(float** p) { hipMalloc(p, 4); }" in r.stdout
    assert {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()} == before
    assert not (tree.parent / "src-hip").exists()


def test_bad_inputs_are_reported_and_the_run_goes_on(tree: Path, tmp_path: Path) -> None:
    (tree / "bin.cu").write_bytes(b"\x00\x01cudaMalloc")
    (tree / "loop").symlink_to(tree)
    unreadable = tree / "secret.cu"
    unreadable.write_bytes(KERNEL)
    unreadable.chmod(0)
    out = tmp_path / "out"
    r = run("convert", str(tree), str(tmp_path / "missing.cu"), "-o", str(out))
    unreadable.chmod(0o644)
    assert r.exit_code == 2
    assert "missing.cu: no such file or directory" in r.stderr
    assert "symlink loop" in r.stderr
    if os.geteuid() != 0:  # root reads anything
        assert "secret.cu: cannot read" in r.stderr
    assert b"hipMalloc" in (out / "src" / "a.cu").read_bytes()  # the good files converted
    assert (out / "src" / "bin.cu").read_bytes() == b"\x00\x01cudaMalloc"  # binary: copied as is


def test_usage_errors_exit_2(tree: Path) -> None:
    r = run("convert", str(tree), "--in-place", "--diff")
    assert r.exit_code == 2 and "choose one of" in r.output
    r = run("convert", str(tree), "-o", "-")
    assert r.exit_code == 2 and "exactly one input file" in r.output
    r = run("convert", str(tree / "a.cu"), "--rocm", "seven")
    assert r.exit_code == 2 and "not a version" in r.output


def test_fail_on_gives_exit_1_only_when_asked(tmp_path: Path) -> None:
    f = tmp_path / "w.cu"
    f.write_bytes(b"__global__ void k(int* p) { p[threadIdx.x % 32] = 0; }\n")
    assert run("convert", str(f), "-o", str(tmp_path / "o.cu"), "--no-report").exit_code == 0
    r = run("convert", str(f), "-o", str(tmp_path / "o.cu"), "--no-report", "--fail-on", "high")
    assert r.exit_code == 1


def test_output_inside_input_is_not_reconverted(tree: Path) -> None:
    out = tree / "hip"
    assert run("convert", str(tree), "-o", str(out)).exit_code == 0
    assert run("convert", str(tree), "-o", str(out)).exit_code == 0
    assert not (out / "hip").exists()


def test_report_location_and_format(tree: Path, tmp_path: Path) -> None:
    rep = tmp_path / "r.json"
    r = run("convert", str(tree), "-o", str(tmp_path / "o"), "--report", str(rep))
    assert r.exit_code == 0
    assert rep.read_text().lstrip().startswith("{")


def test_project_config_is_read(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.hipport]\nrocm = "6.3"\nignore = ["HP102"]\n')
    f = tmp_path / "k.cu"
    f.write_bytes(b"void f(cudaStream_t a) { cudaStreamCopyAttributes(a, a); }\n")
    r = run("scan", str(f), "-f", "json")
    assert '"target": "6.3"' in r.stdout and "HP102" not in r.stdout
    r = run("scan", str(f), "-f", "json", "--rocm", "6.3", "--config", str(tmp_path / "none.toml"))
    assert r.exit_code == 2


def test_bad_project_config_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.hipport]\nrocm = "x"\n')
    f = tmp_path / "k.cu"
    f.write_bytes(KERNEL)
    r = run("scan", str(f))
    assert r.exit_code == 2 and "pyproject.toml" in r.output


def test_version_and_help() -> None:
    from hipport import __version__

    assert __version__ in run("--version").output
    for cmd in ("convert", "scan"):
        assert "--rocm" in run(cmd, "--help").output


def test_output_equal_to_the_input_is_a_usage_error(tree: Path) -> None:
    r = run("convert", str(tree), "-o", str(tree))
    assert r.exit_code == 2 and "would overwrite the input" in r.output
    r = run("convert", str(tree / "a.cu"), "-o", str(tree / "a.cu"))
    assert r.exit_code == 2 and "would overwrite the input" in r.output
    assert (tree / "a.cu").read_bytes() == KERNEL


def test_an_output_tree_removed_between_runs_is_made_again(tree: Path, tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "out"
    assert run("convert", str(tree), "-o", str(out)).exit_code == 0
    shutil.rmtree(out)
    assert run("convert", str(tree), "-o", str(out)).exit_code == 0
    assert (out / "sub" / "b.cuh").is_file()
