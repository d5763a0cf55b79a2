"""hipport.verify without a real compiler: canned clang output, classification, and the CLI
driven through a fake hipcc script. These always run; tests/test_compile_fixtures.py is
the tier that needs clang and the HIP header sets (tests/test_headers.py: choosing them)."""

from __future__ import annotations

import stat
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from hipport import compilers as C
from hipport import verify as V
from hipport import verify_units as U
from hipport.cli import main
from hipport.findings import Finding, Severity

CANNED = """\
In file included from a.hip:3:
./inc.h:2:25: error: use of undeclared identifier 'undefined_thing'
inline int f() { return undefined_thing; }
                        ^
a.hip:7:13: error: use of undeclared identifier '__shfl_xor_sync'; did you mean '__shfl_xor'?
  float w = __shfl_xor_sync(0xffffffffffffffffULL, x[i], 1);
            ^~~~~~~~~~~~~~~
/usr/include/hip/amd_detail/amd_warp_functions.h:432:20: note: '__shfl_xor' declared here
a.hip:9:1: warning: expression result unused [-Wunused-value]
. /usr/include/hip/hip_runtime.h
.. ./inc.h
2 errors generated when compiling for host.
In file included from a.hip:3:
./inc.h:2:25: error: use of undeclared identifier 'undefined_thing'
clang: error: unsupported option '--bogus'
"""


def finding(path: Path, line: int, code: str = "HP201", fixed: bool = False,
            end: int | None = None) -> Finding:
    return Finding(code, "slug", Severity.HIGH, str(path), line, 1, end or line, 2, "msg", fixed=fixed)


def test_parse_output_diagnostics_notes_chains_headers(tmp_path):
    diags, headers = V.parse_output(CANNED, cwd=tmp_path)
    assert [(d.path and d.path.name, d.line, d.col, d.severity) for d in diags] == [
        ("inc.h", 2, 25, "error"), ("a.hip", 7, 13, "error"), ("a.hip", 9, 1, "warning"),
        (None, 0, 0, "error")]
    assert diags[0].included_from == (f"{tmp_path / 'a.hip'}:3",)
    assert diags[1].notes and "'__shfl_xor' declared here" in diags[1].notes[0]
    assert diags[3].message == "unsupported option '--bogus'"
    assert headers == {Path("/usr/include/hip/hip_runtime.h"), tmp_path / "inc.h"}


def test_chain_is_inherited_by_later_errors_in_the_same_header(tmp_path):
    text = ("In file included from a.hip:1:\n/sys/h.h:1:1: error: one\n/sys/h.h:2:1: error: two\n")
    diags, _ = V.parse_output(text, cwd=tmp_path)
    assert [d.included_from for d in diags] == [(f"{tmp_path / 'a.hip'}:1",)] * 2


@pytest.mark.parametrize("text, version", [
    ("HIP version: 5.2.21153-0\nclang version 15", (5, 2, 0)),
    ("6.3.42131-fa1d09cbd\n", (6, 3, 0)),
    ("nothing here", None),
])
def test_parse_hip_version(text, version):
    assert C.parse_hip_version(text) == version


def test_find_hipcc_order(tmp_path):
    exe = tmp_path / "rocm" / "bin" / "hipcc"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert C.find_hipcc({"ROCM_PATH": str(tmp_path / "rocm"), "PATH": ""}) == exe
    assert C.find_hipcc({"HIPCC": str(exe), "PATH": ""}) == exe
    assert C.find_hipcc({"HIPCC": str(tmp_path / "nope"), "PATH": ""}) is None


def _classify(tmp_path, diags, findings, lookup=lambda name: [], headers=frozenset()):
    unit = tmp_path / "a.hip"
    return V.classify([(unit, d) for d in diags], findings, compiler_version=(5, 2, 0),
                      target=(7, 2, 1), lookup=lookup, library_headers=headers)


class Entry:
    def __init__(self, added, changed=()):
        self.hip_added, self.hip_changed = added, changed


def test_classification_kinds(tmp_path):
    a = (tmp_path / "a.hip").resolve()
    d = lambda line, msg: V.Diagnostic(a, line, 1, "error", msg)  # noqa: E731
    diags = [
        d(3, "'hipblas/hipblas.h' file not found"),
        d(10, "use of undeclared identifier 'hipStreamCopyAttributes'"),
        d(11, "expected ';' after expression"),
        d(20, "no matching function for call to 'hipGraphInstantiate'"),
        d(30, "use of undeclared identifier 'foo'"),
        d(40, "use of undeclared identifier 'bar'"),
        d(50, "'local.h' file not found"),
    ]
    findings = {a: [finding(a, 19, end=21), finding(a, 40, fixed=True)]}
    lookup = {"hipStreamCopyAttributes": [Entry((7, 2, 0))], "hipGraphInstantiate": [Entry((4, 3, 0))]}
    verdicts = _classify(tmp_path, diags, findings, lambda n: lookup.get(n, []),
                         frozenset({"hipblas/hipblas.h"}))
    assert [(v.line, v.kind) for v in verdicts] == [
        (3, V.NOT_INSTALLED), (10, V.OLDER), (11, V.OLDER), (20, V.PREDICTED),
        (30, V.UNPREDICTED), (40, V.UNPREDICTED), (50, V.MISSING)]
    assert "exists from HIP 7.2; the headers are HIP 5.2" in verdicts[1].reason
    assert "follows the error at line 10" in verdicts[2].reason
    assert [f.line for f in verdicts[3].findings] == [19]  # within its span


def test_changed_after_the_compiler_counts_as_older():
    lookup = {"hipX": [Entry((1, 0, 0), ((6, 0, 0),))]}.get
    assert "changed in HIP 6.0" in V.dated_after("no member 'hipX'", (5, 2, 0), (7, 2, 1),
                                                 lambda n: lookup(n, []))
    assert V.dated_after("no member 'hipX'", (6, 3, 0), (7, 2, 1), lambda n: lookup(n, [])) == ""


def test_a_name_only_the_filled_files_would_hold_is_judged_by_the_older_set():
    lookup = {"HIPRT_INF_FP16": [Entry((7, 0, 0))], "hipStreamGetId": [Entry((7, 1, 0))]}.get
    words = frozenset({"hipStreamGetId"})
    msg = "use of undeclared identifier 'HIPRT_INF_FP16'"
    assert V.dated_after(msg, (7, 1, 25424), (7, 2, 1), lambda n: lookup(n, [])) == ""
    assert V.dated_after(msg, (7, 1, 25424), (7, 2, 1), lambda n: lookup(n, []),
                         ((6, 2, 41134), words)) == "HIPRT_INF_FP16 exists from HIP 7.0; the headers are HIP 6.2.41134"
    assert V.dated_after("no 'hipStreamGetId'", (7, 1, 25424), (7, 2, 1), lambda n: lookup(n, []),
                         ((6, 2, 41134), words)) == ""


def test_system_header_errors_are_judged_at_the_include_once(tmp_path):
    a = (tmp_path / "a.hip").resolve()
    chain = (f"{a}:1", "/usr/include/hip/x.h:38")
    diags = [V.Diagnostic(Path("/usr/include/hip/y.h"), n, 1, "error", f"e{n}", included_from=chain)
             for n in (5, 6, 7)]
    verdicts = _classify(tmp_path, diags, {a: [finding(a, 1)]})
    assert len(verdicts) == 1
    assert (verdicts[0].path, verdicts[0].line, verdicts[0].kind, verdicts[0].more) == (a, 1, V.PREDICTED, 2)


def test_findings_move_to_their_output_lines(tmp_path):
    dest = tmp_path / "a.hip"
    moved = U.at_output(replace(finding(dest, 4, end=6), output_line=5), dest)
    assert (moved.line, moved.end_line, moved.path) == (5, 7, str(dest))
    assert U.at_output(finding(dest, 4), dest).line == 4  # convert changed nothing


def test_a_finding_predicts_errors_on_its_own_lines_and_in_macros_it_is_in(tmp_path):
    a = (tmp_path / "a.hip").resolve()
    expanded = f"{a}:2:30: note: expanded from macro 'CHECK'"
    diags = [V.Diagnostic(a, 8, 1, "error", "use of undeclared identifier 'x'"),
             V.Diagnostic(a, 9, 1, "error", "use of undeclared identifier 'y'"),
             V.Diagnostic(a, 20, 5, "error", "use of undeclared identifier 'z'", notes=(expanded,))]
    verdicts = _classify(tmp_path, diags, {a: [finding(a, 2), finding(a, 7, end=8)]})
    assert [(v.line, v.kind) for v in verdicts] == [(8, V.PREDICTED), (9, V.UNPREDICTED), (20, V.PREDICTED)]


def test_exit_status_ignores_machine_explained_errors(tmp_path):
    a = tmp_path / "a.hip"
    run = V.Compiled(a, 1, 0.1)
    comp = C.Compiler(Path("hipcc"), (5, 2, 0))
    older = V.Verdict(V.Diagnostic(a, 1, 1, "error", "x"), a, a, 1, V.OLDER)
    assert V.Verification(comp, "gfx90a", [run], [older]).exit_status() == 0
    other = V.Verdict(V.Diagnostic(a, 2, 1, "error", "y"), a, a, 2, V.UNPREDICTED)
    assert V.Verification(comp, "gfx90a", [run], [older, other]).exit_status() == 1


FAKE_HIPCC = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "HIP version: 7.2.53211-0"; exit 0; fi
for last; do :; done
case "$last" in
  *bad.cu) echo "$last:2:3: error: use of undeclared identifier 'hipNotAThing'" >&2; exit 1;;
esac
exit 0
"""


@pytest.fixture
def fake_hipcc(tmp_path, monkeypatch):
    exe = tmp_path / "bin" / "hipcc"
    exe.parent.mkdir()
    exe.write_text(FAKE_HIPCC)
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("HIPCC", str(exe))
    return exe


def test_convert_verify_with_a_fake_hipcc(tmp_path, fake_hipcc, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.cu").write_text("#include <cuda_runtime.h>\nvoid f() { cudaDeviceSynchronize(); }\n")
    (src / "bad.cu").write_text("#include <cuda_runtime.h>\nvoid g() {\n  notAThing();\n}\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["convert", "src", "-o", "out", "--verify", "--no-report", "-j", "1"])
    assert result.exit_code == 1, result.output
    assert "out/bad.cu:2:3: error: use of undeclared identifier 'hipNotAThing' [unpredicted" in result.output
    assert "2 files checked, 1 compile, 1 fail" in result.output


@pytest.fixture
def hipcc_log(tmp_path, monkeypatch):
    """A fake hipcc that also writes each command line it gets to the returned file."""
    log = tmp_path / "args"
    exe = tmp_path / "bin" / "hipcc"
    exe.parent.mkdir()
    exe.write_text(FAKE_HIPCC.replace("for last;", f'echo "$@" >> {log}\nfor last;'))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("HIPCC", str(exe))
    return log


def test_convert_verify_checks_against_the_converted_copy_of_an_include_dir(tmp_path, hipcc_log, monkeypatch):
    # convert samples -o out --verify -I samples/Common: the compiler must see out/Common
    # (converted), not the CUDA original, which would bring CUDA headers back
    (tmp_path / "samples" / "Common").mkdir(parents=True)
    (tmp_path / "samples" / "Common" / "helper.h").write_text("#include <cuda_runtime.h>\n")
    (tmp_path / "samples" / "a.cu").write_text('#include "helper.h"\n__global__ void k() {}\n')
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["convert", "samples", "-o", "out", "--verify", "--no-report",
                                       "-j", "1", "-I", "samples/Common", "-I", "elsewhere"])
    assert result.exit_code == 0, result.output
    compiled = [line.split() for line in hipcc_log.read_text().splitlines() if "a.cu" in line]
    assert compiled and all("-Iout/Common" in args and "-Ielsewhere" in args
                            and not any("samples" in a for a in args[:-1]) for args in compiled), compiled


def test_the_builds_defines_reach_the_compile(tmp_path, hipcc_log, monkeypatch):
    # convert -D/-U decide the #if branches as the HIP build; verify compiled without them,
    # so a project whose HIP path needs its build's macro (relion's -DCUDA, Eigen's
    # -DEIGEN_USE_HIP) was checked on the other branch
    (tmp_path / "a.cu").write_text("#ifdef CUDA\n#include <cuda_runtime.h>\n#endif\n__global__ void k() {}\n")
    monkeypatch.chdir(tmp_path)
    for command in (["convert", "a.cu", "-o", "out", "--verify", "--no-report"], ["verify", "a.cu"]):
        hipcc_log.write_text("")
        result = CliRunner().invoke(main, [*command, "-j", "1", "-D", "CUDA", "-D", "N=2", "-U", "X"])
        assert result.exit_code == 0, result.output
        compiled = [line.split() for line in hipcc_log.read_text().splitlines()]
        assert compiled and all(a[-3:-1] == ["-x", "hip"] and {"-DCUDA", "-DN=2", "-UX"} <= set(a)
                                for a in compiled), compiled
    assert C.Compiler(Path("hipcc"), (6, 3, 0)).command(Path("a.hip"), arch="gfx942", includes=[]).count("-DCUDA") == 0


def test_verify_command_with_a_fake_hipcc(tmp_path, fake_hipcc, monkeypatch):
    (tmp_path / "ok.cu").write_text("#include <hip/hip_runtime.h>\n__global__ void k() {}\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["verify", "ok.cu"])
    assert result.exit_code == 0, result.output
    assert "1 files checked, 1 compile, 0 fail" in result.output


def test_no_header_set_exits_2_naming_the_fetch(tmp_path, monkeypatch):
    clang = tmp_path / "bin" / "clang++-19"
    clang.parent.mkdir()
    clang.write_text("#!/bin/sh\necho 'clang version 19.1.7'\n")
    clang.chmod(0o755)
    monkeypatch.setenv("HIPCC", str(tmp_path / "missing-hipcc"))
    monkeypatch.setenv("HIPPORT_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("PATH", str(clang.parent))
    (tmp_path / "ok.cu").write_text("__global__ void k() {}\n")
    result = CliRunner().invoke(main, ["verify", str(tmp_path / "ok.cu")])
    assert result.exit_code == 2
    assert "no HIP header set under" in result.output and "--fetch-headers" in result.output


def test_no_compiler_exits_2(tmp_path, monkeypatch):
    monkeypatch.setenv("HIPCC", str(tmp_path / "missing-hipcc"))
    monkeypatch.setenv("PATH", str(tmp_path))
    (tmp_path / "ok.cu").write_text("__global__ void k() {}\n")
    result = CliRunner().invoke(main, ["verify", str(tmp_path / "ok.cu")])
    assert result.exit_code == 2
    assert "apt-get install clang-19" in result.output
    result = CliRunner().invoke(main, ["verify", "--compiler", "no-such-clang", str(tmp_path / "ok.cu")])
    assert result.exit_code == 2 and "--compiler no-such-clang: not found" in result.output


def test_verify_needs_paths_unless_fetching():
    result = CliRunner().invoke(main, ["verify"])
    assert result.exit_code == 2 and "or --fetch-headers" in result.output


@pytest.mark.parametrize("flag", [["-o", "-"], ["--diff"]])
def test_verify_needs_written_files(tmp_path, flag):
    (tmp_path / "a.cu").write_text("__global__ void k() {}\n")
    result = CliRunner().invoke(main, ["convert", str(tmp_path / "a.cu"), *flag, "--verify"])
    assert result.exit_code == 2
    assert "--verify checks written files" in result.output


def test_command_line_shape(tmp_path):
    cmd = C.Compiler(Path("/usr/bin/hipcc"), (6, 3, 0)).command(
        tmp_path / "a.hip", arch="gfx942", includes=[tmp_path / "inc"])
    assert cmd[:4] == ["/usr/bin/hipcc", "--offload-arch=gfx942", "-fsyntax-only", "-std=c++17"]
    assert "-DHIP_ENABLE_WARP_SYNC_BUILTINS" in cmd
    assert cmd[cmd.index("-iquote") + 1] == str(tmp_path) and f"-I{tmp_path / 'inc'}" in cmd
    assert f"-I{tmp_path}" not in cmd
    assert "-iquote" not in C.Compiler(Path("/usr/bin/hipcc"), (6, 3, 0)).command(
        tmp_path / "a.hip", arch="gfx942", includes=[tmp_path])  # a root named with -I stays -I
    assert cmd[-3:] == ["-x", "hip", str(tmp_path / "a.hip")]
    assert C.compile_env({})["HIP_PLATFORM"] == "amd"


def test_clang_command_points_at_the_header_set(tmp_path):
    hs = C.H.HeaderSet(tmp_path / "7.1.25424", (7, 1, 25424))
    cmd = C.Compiler(Path("/usr/bin/clang++-19"), hs.version, hs, "19.1.7").command(
        tmp_path / "a.hip", arch="gfx1100", includes=[])
    assert cmd[:5] == ["/usr/bin/clang++-19", "-x", "hip", "--offload-arch=gfx1100", "-nogpulib"]
    assert f"--rocm-path={hs.root}" in cmd
    assert cmd[cmd.index("-isystem") + 1] == str(hs.include)
    assert not [a for a in cmd if a.startswith("-D")]  # 7.x: *_sync builtins are on by default
    six = C.H.HeaderSet(tmp_path / "6.2.41134", (6, 2, 41134))
    cmd = C.Compiler(Path("clang++-22"), six.version, six, "22.1.0").command(
        tmp_path / "a.hip", arch="gfx1100", includes=[])
    assert "-DHIP_ENABLE_WARP_SYNC_BUILTINS" in cmd and "-D__AMDGCN_WAVEFRONT_SIZE=32" in cmd


def test_an_error_inside_a_system_template_is_judged_at_the_call(tmp_path):
    a = (tmp_path / "a.hip").resolve()
    header = Path("/opt/h/include/hip/amd_detail/amd_warp_sync_functions.h")
    d = V.Diagnostic(header, 188, 62, "error", "static assertion failed: The mask must be a 64-bit integer",
                     notes=(f"{a}:6:10: note: in instantiation of function template specialization "
                            "'__shfl_down_sync<unsigned int, float>' requested here",),
                     included_from=(f"{a}:1",))
    verdicts = _classify(tmp_path, [d], {a: [finding(a, 6, "HP217")]})
    assert [(v.path, v.line, v.kind) for v in verdicts] == [(a, 6, V.PREDICTED)]
    verdicts = _classify(tmp_path, [d], {a: [finding(a, 12, "HP202")]})
    assert [(v.line, v.kind) for v in verdicts] == [(6, V.UNPREDICTED)]  # not the include


def test_an_error_clang_printed_without_its_repeated_instantiation_backtrace_is_judged_at_the_call(tmp_path):
    a = (tmp_path / "a.hip").resolve()
    cg = "/opt/h/include/hip/amd_detail/amd_hip_cooperative_groups.h"
    text = (f"In file included from {a}:2:\n"
            f"{cg}:649:19: error: static assertion failed: Neither an integer or float type.\n"
            f"{a}:15:19: note: in instantiation of function template specialization "
            "'cooperative_groups::thread_block_tile_base<32>::shfl_xor<uint4>' requested here\n"
            f"{cg}:650:13: error: no matching function for call to '__shfl_xor'\n"
            "/opt/h/include/hip/amd_detail/amd_warp_functions.h:491:23: note: candidate function not viable\n"
            f"{a}:30:1: error: use of undeclared identifier 'x'\n"
            f"{cg}:700:1: error: an error after one outside the instantiation\n")
    diags, _ = V.parse_output(text, cwd=tmp_path)
    verdicts = _classify(tmp_path, diags, {a: [finding(a, 15, "HP338")]})
    assert [(v.line, v.kind, v.more) for v in verdicts] == [
        (15, V.PREDICTED, 1), (2, V.UNPREDICTED, 0), (30, V.UNPREDICTED, 0)]
    assert verdicts[0].diagnostic.line == 649  # line 650 counted with it, at the call
    assert verdicts[1].diagnostic.line == 700  # after an error outside it: at the include


def test_an_error_naming_what_a_finding_names_is_predicted(tmp_path):
    a = (tmp_path / "a.hip").resolve()
    lib = Finding("HP401", "cutlass-cute", Severity.BLOCKER, str(a), 3, 1, 3, 2,
                  "`cute::` (CuTe) is CUDA-only")
    diags = [V.Diagnostic(a, 30, 5, "error", "use of undeclared identifier 'cute'"),
             V.Diagnostic(a, 31, 5, "error", "use of undeclared identifier 'cutlass'"),
             V.Diagnostic(a, 40, 5, "error", "reference to __host__ function 'sync'")]
    verdicts = _classify(tmp_path, diags, {a: [lib]})
    assert [(v.line, v.kind) for v in verdicts] == [
        (30, V.PREDICTED), (31, V.UNPREDICTED), (40, V.UNPREDICTED)]
    assert verdicts[0].reason == "HP401 (names it)"


def test_errors_that_follow_a_predicted_one_are_its_cascade(tmp_path):
    a = (tmp_path / "a.hip").resolve()
    a.write_text("x\n  fragment<half> fa;  // HP304\n  load(fa);\n  use(gb);\n")
    diags = [V.Diagnostic(a, 2, 3, "error", "no template named 'fragment'"),
             V.Diagnostic(a, 2, 20, "error", "expected ';'"),
             V.Diagnostic(a, 3, 8, "error", "use of undeclared identifier 'fa'"),
             V.Diagnostic(a, 4, 7, "error", "use of undeclared identifier 'gb'")]
    verdicts = _classify(tmp_path, diags, {a: [finding(a, 2, "HP304")]})
    assert [(v.line, v.kind) for v in verdicts] == [
        (2, V.PREDICTED), (2, V.PREDICTED), (3, V.PREDICTED), (4, V.UNPREDICTED)]
    assert verdicts[2].reason == "follows the predicted error at line 2, where what it names is declared"


FAKE_H = """#!{python}
import pathlib, re, sys
if sys.argv[1] == "--version":
    print("HIP version: 7.2.53211-0")
    sys.exit(0)
unit = pathlib.Path(sys.argv[-1])
with open({log!r}, "a") as log:
    log.write(unit.name + "\\n")
for m in re.finditer(r'#include "([^"]+)"', unit.read_text()):  # -H, up to a missing header
    if not (unit.parent / m[1]).exists():
        print(f"{{unit}}:1:10: fatal error: '{{m[1]}}' file not found", file=sys.stderr)
        sys.exit(1)
    print(f". {{unit.parent / m[1]}}", file=sys.stderr)
"""


def test_a_file_another_includes_is_checked_through_it_not_alone(tmp_path, monkeypatch):
    # simpleGLES's graphics_interface.c (#included by its .cu) and smokeParticles'
    # framebufferObject.h (included by plain GL C++) gave errors checked alone that said
    # nothing about the translation: each is compiled only through its outermost includer
    log = _logging_hipcc(tmp_path, monkeypatch)
    src = tmp_path / "src"
    src.mkdir()
    cuda = "#include <cuda_runtime.h>\ninline void f() { cudaDeviceSynchronize(); }\n"
    (src / "main.cu").write_text('#include "impl.c"\n__global__ void k() {}\n')
    (src / "impl.c").write_text(cuda)
    (src / "plain.cpp").write_text('#include "helper.h"\nint main() { return 0; }\n')
    (src / "helper.h").write_text(cuda)
    (src / "stops.cu").write_text('#include "missing.h"\n#include "after.h"\n__global__ void g() {}\n')
    (src / "after.h").write_text(cuda)
    (src / "alone.h").write_text(cuda)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["convert", "src", "-o", "out", "--verify", "--no-report", "-j", "1"])
    assert result.exit_code == 1, result.output  # missing.h (line 2 once hip_runtime.h is added)
    assert sorted(log.read_text().split()) == ["alone.h", "main.cu", "plain.cpp", "stops.cu"]
    assert "out/after.h: not checked: included by out/stops.cu:3, whose compile did not reach it" \
        in result.output
    assert "4 files checked, 3 compile, 1 fail, 1 included files not reached, 1 headers no file includes "\
        "compiled alone;" in result.output


def test_includers_and_outermost(tmp_path):
    from hipport.verify_units import includers, outermost

    (tmp_path / "inc").mkdir()
    a, b, c, d = (tmp_path / n for n in ("a.cu", "b.h", "inc/c.h", "d.h"))
    a.write_text('#include "b.h"\n  #  include <c.h>\n')
    b.write_text('#include "d.h"\n')
    c.write_text('#include "../d.h"\n')
    d.write_text('#include "b.h"\n')  # a cycle b -> d -> b
    (tmp_path / "inc" / "d.h").write_text("")  # beside c.h, not a checked file: it wins there
    found = includers([a, b, c, d], [tmp_path / "inc"])
    assert found == {b: (a, 1), c: (a, 2), d: (b, 1)}
    assert outermost(d, found) == a and outermost(a, found) == a
    assert outermost(b, {b: (d, 1), d: (b, 1)}) == b  # a cycle: the file itself


def test_an_error_inside_this_machines_older_rocm_library_is_not_installed(tmp_path):
    # Debian's rocRAND 5.3.3 in /usr/include against HIP 7.1's headers: "no member named
    # 'data' in 'HIP_vector_type<unsigned int, 4>'" inside rocrand_philox4x32_10.h, reached
    # from the program's #include <hiprand/hiprand_kernel.h> (cuda-samples MonteCarloMultiGPU)
    from hipport.headers import HeaderSet

    unit = (tmp_path / "mc.cpp").resolve()
    lib = Path("/usr/include/rocrand/rocrand_philox4x32_10.h")
    chain = (f"{unit}:31", "/usr/include/hiprand/hiprand_kernel.h:54")
    inside = V.Diagnostic(lib, 193, 47, "error", "no member named 'data' in 'HIP_vector_type<unsigned int, 4>'",
                          included_from=chain)
    with_note = replace(inside, notes=(f"{unit}:40:3: note: in instantiation of function template "
                                       "specialization requested here",))
    checked = {unit: []}
    libraries = {"rocrand": "hipRAND", "hiprand": "hipRAND"}
    clang = C.Compiler(Path("/usr/bin/clang++-19"), (7, 1, 0), HeaderSet(tmp_path / "set", (7, 1, 25424)))
    reason = V.foreign_library(inside, checked, clang, libraries, [])
    assert "inside /usr/include/rocrand/, this machine's hipRAND, not the target release's" in reason
    verdicts = V.classify([(unit, inside)], checked, compiler_version=(7, 1, 0), target=(7, 2, 1),
                          lookup=lambda n: [], library_headers=frozenset(),
                          foreign=lambda d: V.foreign_library(d, checked, clang, libraries, []))
    assert [(v.kind, v.line) for v in verdicts] == [(V.NOT_INSTALLED, 31)]
    # an instantiation from the project's code is judged there; the user's own ROCm, a
    # project folder of that name and a folder no mapped header lives in are not this case
    assert V.foreign_library(with_note, checked, clang, libraries, []) == ""
    assert V.foreign_library(inside, checked, replace(clang, headers=None), libraries, []) == ""
    assert V.foreign_library(inside, checked, clang, libraries, [Path("/usr/include")]) == ""
    assert V.foreign_library(inside, checked, clang, {"hipcub": "hipCUB"}, []) == ""


def _logging_hipcc(tmp_path: Path, monkeypatch) -> Path:
    """FAKE_H as $HIPCC; returns the file it logs each compiled file's name to."""
    import sys

    log = tmp_path / "compiled"
    exe = tmp_path / "bin" / "hipcc"
    exe.parent.mkdir()
    exe.write_text(FAKE_H.format(python=sys.executable, log=str(log)))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("HIPCC", str(exe))
    return log


CUDA_HEADER = "#include <cuda_runtime.h>\ninline void f() { cudaDeviceSynchronize(); }\n"


@pytest.mark.parametrize("command", [
    ["convert", "src", "-o", "out", "--verify", "--no-report", "-j", "1"],
    ["verify", "out", "-j", "1"],
])
def test_a_header_only_librarys_header_is_checked_through_its_umbrella_not_alone(tmp_path, monkeypatch,
                                                                               command):
    # Eigen 3.4's arch/GPU/PacketMath.h is included only by Eigen/Core, a file with no
    # suffix that convert copies unread: compiled alone it failed (589 errors on Eigen's
    # arch headers) for reasons no rewrite caused
    log = _logging_hipcc(tmp_path, monkeypatch)
    lib = tmp_path / "src" / "Lib"
    (lib / "src" / "arch").mkdir(parents=True)
    (lib / "Core").write_text('#pragma once\n#include "src/arch/gpu.h"\n')
    (lib / "src" / "arch" / "gpu.h").write_text(CUDA_HEADER)
    monkeypatch.chdir(tmp_path)
    if command[0] == "verify":
        assert CliRunner().invoke(main, ["convert", "src", "-o", "out", "--no-report"]).exit_code == 0
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 0, result.output
    assert log.read_text().split() == ["Core"]
    assert "compiled alone" not in result.output
    assert "1 files checked, 1 compile, 0 fail;" in result.output


def test_an_umbrella_whose_compile_does_not_reach_the_header_leaves_it_not_checked(tmp_path, monkeypatch):
    log = _logging_hipcc(tmp_path, monkeypatch)
    (tmp_path / "src" / "arch").mkdir(parents=True)
    (tmp_path / "src" / "Core").write_text('#include "missing.h"\n#include "arch/gpu.h"\n')
    (tmp_path / "src" / "arch" / "gpu.h").write_text(CUDA_HEADER)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["convert", "src", "-o", "out", "--verify", "--no-report", "-j", "1"])
    assert result.exit_code == 1, result.output  # the umbrella's missing.h
    assert log.read_text().split() == ["Core"]
    assert "out/arch/gpu.h: not checked: included by out/Core:2, whose compile did not reach it" \
        in result.output
    assert "1 files checked, 0 compile, 1 fail, 1 included files not reached;" in result.output


def test_a_header_no_file_includes_is_compiled_alone_and_counted_so(tmp_path, monkeypatch):
    log = _logging_hipcc(tmp_path, monkeypatch)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "alone.cuh").write_text(CUDA_HEADER)
    (tmp_path / "src" / "NOTES").write_text("alone.cuh: #include it first\n")  # no directive
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["convert", "src", "-o", "out", "--verify", "--no-report", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert log.read_text().split() == ["alone.cuh"]
    assert "out/alone.cuh: compiled alone: no file of the tree includes it" in result.output
    assert "1 files checked, 1 compile, 0 fail, 1 headers no file includes compiled alone;" in result.output


def test_project_files_reads_sources_and_suffixless_files_only(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text('#include "a.h"\n')
    for name in ("Core", "a.h", "b.cu", "notes.txt", "big.h", ".hidden.h"):
        (tmp_path / name).write_text('#include "a.h"\n')
    (tmp_path / "big.h").write_bytes(b"/" * (U.INCLUDER_BYTES + 1))
    (tmp_path / "link.h").symlink_to(tmp_path / "a.h")
    assert [p.name for p in U.project_files([tmp_path], [tmp_path / "b.cu"])] == ["Core", "a.h"]


def test_plain_cxx_that_only_the_convert_prefilter_matched_is_not_compiled(tmp_path, monkeypatch):
    # colmap 3.8's lib/PBA/SparseBundleCPU.cpp: unchanged by convert, no CUDA in it, yet its
    # `clock` and `_cuCameraData` matched the pre-filter's words and verify compiled it as HIP
    # (13 narrowing errors that clang gives in any language mode); a file that spells CUDA is
    # still compiled
    log = _logging_hipcc(tmp_path, monkeypatch)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "cpu.cpp").write_text("#include <ctime>\nstatic int _cuCameraData[2];\n"
                                              "long t() { return clock() + _cuCameraData[0]; }\n")
    (tmp_path / "src" / "gpu.cpp").write_text("#ifdef CUDA\nint on_gpu = 1;\n#endif\nint f() { return 0; }\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["convert", "src", "-o", "out", "--verify", "--no-report", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert log.read_text().split() == ["gpu.cpp"]
