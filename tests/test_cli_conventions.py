"""Conventions users bring from ruff, black and hipify: stdin, --check, strict options,
--select/--statistics, --color, exit 130, check --output-format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hipport.cli import main

KERNEL = (b"__global__ void k(unsigned m) { __shfl_sync(0xffffffff, m, 0); }\n"
          b"void f(float** p) { cudaMalloc(p, 4); cudaNotAnApiAtAll(p); }\n")


def run(*args: str, stdin: bytes | None = None, env: dict | None = None):
    return CliRunner().invoke(main, list(args), input=stdin, env=env, catch_exceptions=False)


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    f = tmp_path / "k.cu"
    f.write_bytes(KERNEL)
    return f


# -- standard input -----------------------------------------------------------------

def test_convert_stdin_to_stdout_is_the_file_conversion(kernel: Path) -> None:
    from_file = run("convert", str(kernel), "-o", "-", "-q")
    from_stdin = run("convert", "-", "-o", "-", "-q", stdin=KERNEL)
    assert from_stdin.exit_code == 0 and from_stdin.stdout_bytes == from_file.stdout_bytes
    assert b"hipMalloc(p, 4)" in from_stdin.stdout_bytes
    assert b"#include <hip/hip_runtime.h>" in from_stdin.stdout_bytes  # read as stdin.cu
    assert run("convert", "-", "-q", stdin=KERNEL).stdout_bytes == from_file.stdout_bytes


def test_stdin_filename_decides_the_language_and_names_findings() -> None:
    other = run("convert", "-", "--stdin-filename", "notes.txt", "-q", stdin=KERNEL)
    assert other.exit_code == 0 and other.stdout_bytes == KERNEL  # not a source: as it is
    chosen = run("convert", "-", "--stdin-filename", "notes.txt", "--extensions", "txt", "-q", stdin=KERNEL)
    assert b"hipMalloc(p, 4)" in chosen.stdout_bytes  # a source once its extension is one
    r = run("scan", "-", "--stdin-filename", "src/k.cu", "-f", "json", stdin=KERNEL)
    assert {f["path"] for f in json.loads(r.stdout)["findings"]} == {"src/k.cu"}
    r = run("check", "-", "--stdin-filename", "src/k.cu", stdin=KERNEL)
    assert r.exit_code == 1 and r.stdout.startswith("src/k.cu:1:")


def test_stdin_cannot_be_mixed_with_paths(kernel: Path) -> None:
    r = run("scan", "-", str(kernel), stdin=KERNEL)
    assert r.exit_code == 2 and "cannot be combined" in r.output


# -- convert --check -------------------------------------------------------------------

def test_convert_check_lists_what_would_change_and_writes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.cu").write_bytes(KERNEL)
    (src / "done.hip").write_bytes(b"#include <hip/hip_runtime.h>\nvoid f() { hipDeviceSynchronize(); }\n")
    (src / "plain.cpp").write_bytes(b"int main() { return 0; }\n")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    r = run("convert", str(src), "--check")
    assert r.exit_code == 1
    assert f"hipport: would convert {src / 'a.cu'}" in r.stderr
    assert "plain.cpp" not in r.stderr and r.stdout == ""
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # no output tree, no report
    r = run("convert", str(src), "--check", "--diff")
    assert r.exit_code == 1 and r.stdout.startswith(f"--- a/{(src / 'a.cu').as_posix()}")
    (src / "a.cu").unlink()
    assert run("convert", str(src), "--check").exit_code == 0
    assert run("convert", str(src), "--check", "-o", str(tmp_path / "o")).exit_code == 2


def test_convert_check_on_stdin() -> None:
    r = run("convert", "-", "--check", stdin=KERNEL)
    assert r.exit_code == 1 and r.stdout == "" and "would convert stdin.cu" in r.stderr
    assert run("convert", "-", "--check", stdin=b"int x;\n").exit_code == 0


# -- strict options ----------------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--ignore", "HP999"], "--ignore: unknown rule code 'HP999'"),
    (["--ignore", "HP2O1"], "did you mean HP201?"),
    (["--select", "HP2,HP8"], "--select: unknown rule code 'HP8'"),
    (["--rocm", "99.0"], "ROCm 99.0 is past the newest release the mapping tables describe (7.14); did you mean 7.14?"),
    (["--rocm", "1.0"], "before the oldest release"),
])
def test_unknown_values_are_usage_errors_naming_the_closest(kernel: Path, args: list, message: str) -> None:
    r = run("check", str(kernel), "--no-cache", *args)
    assert r.exit_code == 2 and message in r.output


def test_known_prefixes_and_releases_the_tables_describe_are_accepted(kernel: Path) -> None:
    for args in (["--select", "HP2"], ["--ignore", "hp1xx"], ["--rocm", "7.3"], ["--rocm", "6.3"]):
        assert run("check", str(kernel), "--no-cache", *args).exit_code == 1, args


def test_unknown_codes_in_config_name_the_file(tmp_path: Path, kernel: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.hipport]\nseverity = { HP2011 = "low" }\n')
    r = run("scan", str(kernel))
    assert r.exit_code == 2 and "pyproject.toml: [tool.hipport]: severity: unknown rule code 'HP2011'" in r.output


def test_the_cached_code_list_agrees_with_the_registry(tmp_path: Path) -> None:
    from hipport.rules import load
    from hipport.strict import rule_codes

    first = rule_codes(tmp_path)
    assert first == sorted(load().rules) and list(tmp_path.rglob("rule-codes-*.json"))
    assert rule_codes(tmp_path) == first


# -- --select, --statistics, --color, Ctrl-C -----------------------------------------------

def test_statistics_per_rule_and_per_family(kernel: Path) -> None:
    r = run("scan", str(kernel), "--statistics")
    assert r.exit_code == 0
    assert r.stdout == (
        "Findings per rule:\n"
        "        1  HP201  warp-mask-32bit\n"
        "\n"
        "CUDA names per API family:\n"
        "  family        converted   same   left  unknown\n"
        "  runtime               1      0      0        1\n"
        "  device                0      1      0        0\n"
        "  total                 1      1      0        1\n")
    only = run("check", str(kernel), "--no-cache", "--statistics", "--select", "HP1")
    assert "HP201" not in only.stdout and "Findings per rule:\n  none\n" in only.stdout
    convert = run("convert", str(kernel), "-o", "-", "--statistics", "-q")
    assert "Findings per rule:" in convert.stderr and b"hipMalloc" in convert.stdout_bytes


def test_statistics_count_the_original_of_an_in_place_conversion(kernel: Path) -> None:
    r = run("convert", str(kernel), "--in-place", "--no-backup", "--statistics", "-q")
    assert "  runtime               1      0      0        1\n" in r.stderr
    assert b"hipMalloc" in kernel.read_bytes()


def test_color_follows_the_flag_then_no_color_then_force_color(kernel: Path) -> None:
    def colored(*args: str, **env: str) -> bool:
        return "\x1b[" in run("scan", str(kernel), *args, env=env).stdout

    assert not colored()  # not a terminal
    assert colored("--color", "always") and colored("--color", "always", NO_COLOR="1")
    assert colored(FORCE_COLOR="1") and not colored(FORCE_COLOR="1", NO_COLOR="1")
    assert not colored("--color", "never", FORCE_COLOR="1")
    line = run("check", str(kernel), "--no-cache", "--color", "always").stdout
    assert "\x1b[" in line and "HP201" in line


def test_ctrl_c_exits_130_without_a_traceback(kernel: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hipport.pipeline

    def interrupted(*_a, **_k):
        raise KeyboardInterrupt
        yield  # pragma: no cover - makes this a generator like the real one

    monkeypatch.setattr(hipport.pipeline, "scan_paths", interrupted)
    r = CliRunner().invoke(main, ["scan", str(kernel)])
    assert r.exit_code == 130 and "hipport: interrupted" in r.stderr
    assert "Traceback" not in r.output and "Aborted" not in r.output


# -- check --output-format -------------------------------------------------------------------

def test_check_output_formats(kernel: Path) -> None:
    github = run("check", str(kernel), "--no-cache", "--output-format", "github")
    assert github.exit_code == 1
    assert github.stdout == (
        f"::error file={kernel},line=1,col=45,endLine=1,endColumn=55,title=HP201 warp-mask-32bit"
        "::HP201 high: mask `0xffffffff` of `__shfl_sync` covers 32 lanes; a wave on CDNA has "
        "64 and HIP masks are 64-bit\n")
    doc = json.loads(run("check", str(kernel), "--no-cache", "--output-format", "json").stdout)
    assert [f["code"] for f in doc["findings"]] == ["HP201"] and doc["rules"][0]["code"] == "HP201"
    sarif = json.loads(run("check", str(kernel), "--no-cache", "--output-format", "sarif").stdout)
    run_ = sarif["runs"][0]
    assert run_["results"][0]["ruleId"] == "HP201"
    assert [r["id"] for r in run_["tool"]["driver"]["rules"]] == ["HP201"]


def test_github_annotations_escape_what_would_end_the_command() -> None:
    from hipport.check import format_github
    from hipport.findings import Effort, Finding, Severity

    f = Finding(code="HP101", slug="s", severity=Severity.MEDIUM, path="a,b:c.cu", line=3, col=1,
                end_line=3, end_col=2, message="50% of it\nnext", suggestion="", effort=Effort.NONE)
    assert format_github(f) == ("::warning file=a%2Cb%3Ac.cu,line=3,col=1,endLine=3,endColumn=2,"
                                "title=HP101 s::HP101 medium: 50%25 of it%0Anext")


def test_statistics_leave_out_project_aliases_and_snake_case_helpers() -> None:
    src = (b"#define cudaStream_t hipStream_t\n"  # the project's own alias: never rewritten
           b"void f(cudaStream_t s, cuda_device_info* i) { CU_CHECK(cuInit(0)); CUBLAS_NEW_THING_X; }\n")
    r = run("scan", "-", "--statistics", stdin=src)
    assert r.stdout.endswith(
        "  family        converted   same   left  unknown\n"
        "  blas                  0      0      0        1\n"
        "  driver                1      0      0        0\n"
        "  runtime               1      0      0        0\n"
        "  total                 2      0      0        1\n")
