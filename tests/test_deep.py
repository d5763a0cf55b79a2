"""Deep mode (``--engine clang``): fixtures in fixtures/deep/, merge rules, and the no-libclang path.

Tests that parse need libclang (the ``hipport[clang]`` extra, installed in CI) and are
skipped without it; the ones about flags, the install message and laziness run everywhere.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hipport.cli import main
from hipport.findings import Finding
from hipport.options import Options
from hipport.pipeline import transform

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "deep"

try:
    from hipport.deep import ensure_available

    ensure_available()
    HAVE_LIBCLANG = True
except Exception:  # noqa: BLE001 - any failure to load means "skip the parsing tests"
    HAVE_LIBCLANG = False

needs_libclang = pytest.mark.skipif(not HAVE_LIBCLANG, reason="libclang (hipport[clang]) not installed")


def deep(path: Path, **options) -> list[Finding]:
    opts = Options(engine="clang", compile_commands=FIXTURES, jobs=1, **options)
    return transform(path.read_bytes(), str(path), opts)[1]


def by_engine(findings: list[Finding], engine: str = "clang") -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in findings if f.engine == engine}


# -- without libclang ------------------------------------------------------------------

def test_findings_default_to_the_tree_sitter_engine() -> None:
    findings = transform(b"__global__ void k(unsigned m){ __shfl_sync(m, 1, 0); }", "k.cu", Options())[1]
    assert findings and {f.engine for f in findings} == {"tree-sitter"}


def test_default_engine_never_imports_libclang() -> None:
    code = (
        "import sys; from hipport.options import Options; from hipport.pipeline import transform;"
        "transform(b'__global__ void k(){ cudaMalloc(0, 4); }', 'k.cu', Options());"
        "print('clang' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_libclang_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "clang", None)  # import clang → ImportError
    result = CliRunner().invoke(main, ["scan", "--engine", "clang", str(FIXTURES / "token_paste.cu")])
    assert result.exit_code == 2
    assert "pip install 'hipport[clang]'" in result.output


def test_clang_flags_without_the_clang_engine_are_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["scan", "--clang-arg=-DX", str(FIXTURES / "token_paste.cu")])
    assert result.exit_code == 2
    assert "--engine clang" in result.output


def test_compile_command_flags_are_whitelisted_for_clang() -> None:
    from hipport.deep import usable_flags

    argv = ["-x", "cu", "-Iinc", "-isystem", "/opt/x", "-DA=1", "-U", "B", "--generate-code=arch=compute_80",
            "-Xcompiler=-fPIC", "-std=c++17", "-c", "a.cu", "-o", "a.o"]
    assert usable_flags(argv, Path("/build")) == [
        "-I", "/build/inc", "-isystem", "/opt/x", "-DA=1", "-UB", "-std=c++17"]


# -- with libclang ---------------------------------------------------------------------

@needs_libclang
def test_api_names_built_by_token_pasting() -> None:
    findings = deep(FIXTURES / "token_paste.cu")
    assert by_engine(findings) == {
        (10, "HP190"),  # RT(Malloc): mapped, but the converter cannot rewrite a pasted name
        (11, "HP190"),  # RT(MallocManaged): not declared in the stubs, found from the diagnostic
        (14, "HP190"),  # STREAM_OP(Create, ...): pasted twice over, nested macros
        (15, "HP190"), (15, "HP101"),  # no HIP counterpart: the ordinary HP101 too
    }
    line10 = next(f for f in findings if f.line == 10)
    assert "cudaMalloc" in line10.message and "`RT`" in line10.message and line10.col == 3
    assert not any(f.line == 12 for f in findings if f.engine == "clang")  # written: not deep's


@needs_libclang
def test_api_name_from_a_macro_body_is_left_to_tree_sitter(tmp_path: Path) -> None:
    src = tmp_path / "body.cu"
    src.write_text("#define ALLOC(p, n) cudaMalloc(p, n)\nvoid f(void **p) { ALLOC(p, 4); }\n")
    assert by_engine(deep(src)) == set()


@needs_libclang
def test_mask_typedef_in_a_header() -> None:
    findings = deep(FIXTURES / "reduce_typedef.cu")
    assert by_engine(findings) == {(6, "HP202"), (13, "HP201")}
    assert by_engine(findings, "tree-sitter") & {(6, "HP202"), (13, "HP201")} == set()
    line6 = next(f for f in findings if f.line == 6)
    assert "lane_mask_t" in line6.message and "warp_types.h:4" in line6.message


@needs_libclang
def test_mask_typedef_needs_the_include_path(tmp_path: Path) -> None:
    """Without -p the header is stubbed empty: no guess, and --clang-arg gives it back."""
    path = FIXTURES / "reduce_typedef.cu"
    bare = Options(engine="clang", jobs=1)
    assert (6, "HP202") not in by_engine(transform(path.read_bytes(), str(path), bare)[1])
    with_arg = bare.with_(clang_args=(f"-I{FIXTURES / 'include'}",))
    assert (6, "HP202") in by_engine(transform(path.read_bytes(), str(path), with_arg)[1])


@needs_libclang
def test_template_mask_decided_by_instantiation() -> None:
    findings = deep(FIXTURES / "template_mask.cu")
    assert by_engine(findings) == {(6, "HP202"), (12, "HP202")}
    assert any("vote<unsigned int>" in f.message for f in findings)
    assert any("Warp<unsigned int>" in f.message for f in findings)


@needs_libclang
def test_no_duplicate_of_a_tree_sitter_finding(tmp_path: Path) -> None:
    """tree-sitter reports the 32-bit variable at its declaration; clang adds nothing."""
    src = tmp_path / "dup.cu"
    src.write_text(
        "__global__ void k(float *x) {\n"
        "  unsigned m = __activemask();\n"
        "  x[0] = __shfl_sync(m, x[0], 0);\n"
        "}\n"
    )
    hp202 = [f for f in deep(src) if f.code == "HP202"]
    assert [(f.line, f.engine) for f in hp202] == [(2, "tree-sitter")]


@needs_libclang
def test_policy_applies_to_deep_findings(tmp_path: Path) -> None:
    src = tmp_path / "policy.cu"
    src.write_text(
        "#define RT(n) cuda##n\n"
        "void f(void **p) {\n"
        "  RT(Malloc)(p, 4);  // hipport: ignore[HP190]\n"
        "#if defined(__HIP_PLATFORM_AMD__)\n"
        "  hipFree(*p);\n"
        "#else\n"
        "  RT(Free)(*p);\n"
        "#endif\n"
        "  RT(Memset)(*p, 0, 4);\n"
        "}\n"
    )
    assert by_engine(deep(src)) == {(9, "HP190")}
    assert by_engine(deep(src, ignore=frozenset({"HP190"}))) == set()


@needs_libclang
def test_cli_scan_engine_clang_json_names_the_engine() -> None:
    import json

    result = CliRunner().invoke(main, ["scan", "--engine", "clang", "-p", str(FIXTURES), "-f", "json",
                                       "-q", "-j", "1", str(FIXTURES / "template_mask.cu")])
    assert result.exit_code == 0, result.output
    findings = json.loads(result.output)["findings"]
    assert {(f["line"], f["code"], f["engine"]) for f in findings} >= {(6, "HP202", "clang")}


# -- clang visitors are registered like every other visitor --------------------------------

@needs_libclang
def test_every_clang_visitor_declares_what_it_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    """The deep engine leaves out a clang visitor whose declared rules are all disabled, so
    one reporting an undeclared rule would lose findings silently."""
    from dataclasses import replace

    from hipport import deep as engine
    from hipport.context import Context
    from hipport.rules import load

    current: list = []
    reported: dict = {}

    def wrap(v):
        def wrapped(*args):
            current.append(v)
            try:
                v.fn(*args)
            finally:
                current.pop()
        return replace(v, fn=wrapped)

    registry = load()
    originals = list(registry.clang_visitors)
    monkeypatch.setattr(registry, "clang_visitors", [wrap(v) for v in originals])
    engine._visitors.cache_clear()
    original_report = Context.report

    def report(self, rule, *args, **kwargs):
        if kwargs.get("engine") == engine.ENGINE:
            reported.setdefault(current[-1], set()).add(rule.code)
        return original_report(self, rule, *args, **kwargs)

    monkeypatch.setattr(Context, "report", report)
    try:
        for path in sorted(FIXTURES.glob("*.cu")):
            deep(path)
    finally:
        engine._visitors.cache_clear()
    assert reported, "the deep fixtures report nothing"
    for visitor, codes in reported.items():
        assert codes <= {r.code for r in visitor.codes}, visitor.fn.__qualname__


@needs_libclang
def test_clang_visitors_of_ignored_rules_are_left_out() -> None:
    from hipport import deep as engine

    everything = engine._visitors(Options(engine="clang"))
    no_masks = engine._visitors(Options(engine="clang", ignore=frozenset({"HP201", "HP202"})))
    names = {fn.__qualname__ for fns in everything[0].values() for fn in fns} | {fn.__qualname__ for fn in everything[1]}
    kept = {fn.__qualname__ for fns in no_masks[0].values() for fn in fns} | {fn.__qualname__ for fn in no_masks[1]}
    assert {"_call", "_resolve_templates"} <= names - kept
    assert {"_reference", "_undeclared_names"} <= kept
