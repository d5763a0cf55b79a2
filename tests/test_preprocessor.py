"""The preprocessor model: #if expressions, directives, passes, headers, and what Context drops."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hipport.analyze import analyze
from hipport.options import DEFAULT_HIP_GUARDS, Options
from hipport.preprocessor import Build, analyze as branches_of
from hipport.preprocessor import directives, expr

MACROS = {"ONE": 1, "TWO": 2, "ZERO": 0}
DEFINED = {"ONE": 1, "TWO": 2, "ZERO": 1, "GONE": 0}


def value(text: str):
    return expr.evaluate(text, lambda n: MACROS.get(n, 0 if DEFINED.get(n) == 0 else None),
                         lambda n: (1 if n in MACROS else DEFINED.get(n))).value


@pytest.mark.parametrize(("text", "expected"), [
    ("1 + 2 * 3", 7),
    ("(1 + 2) * 3", 9),
    ("10 - 4 - 3", 3),  # left to right
    ("-7 / 2", -3),  # C truncates toward zero
    ("-7 % 2", -1),
    ("1 << 4 | 1", 17),
    ("0x10 + 010 + 0b11", 16 + 8 + 3),
    ("100000UL >= 99999", 1),
    ("'A' == 65", 1),
    ("defined(ONE) && defined TWO", 1),
    ("defined(GONE)", 0),
    ("GONE + 1", 1),  # an undefined macro is 0 in #if
    ("ONE ? TWO : 3", 2),
    ("ZERO ? 1 : TWO", 2),
    ("!ONE", 0),
    ("~0 == -1", 1),
    ("true && !false", 1),
    ("UNKNOWN", None),
    ("defined(UNKNOWN)", None),
    ("UNKNOWN + 1", None),
    ("0 && UNKNOWN", 0),  # a short-circuit decides without it
    ("UNKNOWN && 0", 0),
    ("1 || UNKNOWN", 1),
    ("UNKNOWN || 1", 1),
    ("UNKNOWN && 1", None),
    ("UNKNOWN ? 4 : 4", 4),
    ("UNKNOWN ? 4 : 5", None),
    ("__has_include(<hip/hip_runtime.h>)", None),
    ("F(1, (2)) && 0", 0),
    ("1 / 0", None),
    ("1.5 > 1", None),
    ("1 +", None),  # malformed: undecided, never an exception
    ("(1", None),
    ("1 2", None),
    ("", None),
])
def test_expression_values(text: str, expected) -> None:
    assert value(text) == expected


def test_the_part_that_cannot_change_the_result_is_irrelevant() -> None:
    text = "!defined(GUARD) && __CUDA_ARCH__ >= 800"
    result = expr.evaluate(text, lambda n: None, lambda n: 1 if n == "GUARD" else None)
    assert result.value == 0
    (start, end), = result.irrelevant
    assert text[start:end] == "__CUDA_ARCH__ >= 800"


def test_directives_join_continuations_and_blank_comments() -> None:
    src = (b"int a; /* #if 1\n#endif */\n"
           b"#if A && \\\n    B /* && C\n */ // D\n"
           b"#  define F(x) ((x) + 1)\n"
           b"#include \"dir/h.cuh\"\n#include <cuda.h>\n"
           b"const char *s = R\"(\n#if 0\n)\";\n#endif\n")
    found = directives.scan(src)
    # a <system> include is not kept: the model never enters one
    assert [d.kind for d in found] == ["if", "define", "include", "endif"]
    cond = found[0]
    assert cond.arg.split() == ["A", "&&", "B"]
    assert src[cond.arg_start:cond.arg_start + 4] == b" A &"  # offsets are the file's bytes
    assert found[1].macro == ("F", True, "((x) + 1)")
    assert found[2].include == "dir/h.cuh"


def build(*guards: str, archs: tuple[str, ...] = ("gfx942",), defines: tuple[str, ...] = (),
          rocm: tuple[int, ...] = (7, 2, 1)) -> Build:
    return Build(rocm, archs, DEFAULT_HIP_GUARDS + guards, defines)


def never_lines(src: str, b: Build, path: str = "t.cu") -> list[int]:
    """Lines of ``src`` inside a never-compiled branch."""
    data = src.encode()
    model = branches_of(data, path, b)
    starts = [0] + [i + 1 for i, c in enumerate(data) if c == 10]
    return [n + 1 for n, at in enumerate(starts) if at < len(data) and model.never_compiled(at)]


def test_cuda_only_branches_and_arch_branches() -> None:
    src = ("#ifdef __CUDA_ARCH__\n"        # 1
           "cuda device\n"                 # 2
           "#elif defined(__gfx942__)\n"   # 3
           "gfx942\n"                      # 4
           "#elif defined(__gfx1100__)\n"  # 5
           "gfx1100\n"                     # 6
           "#else\n"                       # 7
           "host\n"                        # 8
           "#endif\n"                      # 9
           "#if 0\nnever\n#endif\n"        # 10-12
           "#if HIP_VERSION >= 60200000\nnew\n#else\nold\n#endif\n")  # 13-17
    # __CUDA_ARCH__ is undefined, but its test is one the port rewrites (HP309): line 2
    # stays; the RDNA branch does not, for a CDNA target.
    assert never_lines(src, build()) == [6, 11, 16]
    # Targets are a list: a branch any pass compiles is compiled.
    assert never_lines(src, build(archs=("gfx942", "gfx1100"))) == [11, 16]
    assert never_lines(src, build(rocm=(6, 1, 0))) == [6, 11, 14]


def test_unknown_macros_keep_their_branches() -> None:
    src = "#ifdef SOME_OPTION\na\n#else\nb\n#endif\n#if FOO > 2\nc\n#endif\n"
    assert never_lines(src, build()) == []
    assert never_lines(src, build(defines=("SOME_OPTION", "FOO=1"))) == [4, 7]


def test_another_platforms_guard_is_undefined_in_a_hip_build() -> None:
    # llama.cpp ggml-cuda common.cuh:204: the HIP build (GGML_USE_HIP) is never a MUSA build,
    # and HIP defines no CUDART_VERSION: cublasGetStatusString (HP101) is never compiled.
    src = ("#if CUDART_VERSION >= 12000 || defined(GGML_USE_MUSA)\nnew\n#else\nold\n#endif\n"
           "#if defined(__MUSACC__) || MUSART_VERSION > 1\nmusa\n#endif\n"
           "#define GGML_MUSA_LOCAL\n#ifdef GGML_MUSA_LOCAL\nown\n#endif\n")
    assert never_lines(src, build("GGML_USE_HIP")) == [2, 7]
    assert never_lines(src, build("GGML_USE_HIP", defines=("GGML_USE_MUSA",))) == [4, 7]
    # unported (no guard named), CUDART_VERSION's test is one to rewrite: both sides stay
    assert never_lines(src, build()) == [7]
    src = (b"#if CUDART_VERSION >= 12000 || defined(GGML_USE_MUSA)\n"
           b"static const char *f(cublasStatus_t e) { return cublasGetStatusString(e); }\n#endif\n")
    guarded = Options(hip_guards=DEFAULT_HIP_GUARDS + ("GGML_USE_HIP",))
    assert [f.code for f in analyze(src, "common.cuh", guarded).findings] == []


def test_hip_guards_and_device_passes() -> None:
    src = ("#if defined(GGML_USE_HIP)\nh\n#else\nc\n#endif\n"
           "#ifdef __HIP_DEVICE_COMPILE__\nd\n#else\nhost\n#endif\n")
    assert never_lines(src, build("GGML_USE_HIP")) == [4]  # host and device passes each take one


def test_macros_follow_the_file_and_expand() -> None:
    src = ("#define CC_AMPERE 800\n#define AMD_OFFSET 0x1000000\n"
           "#define CC_CDNA3 (AMD_OFFSET + 0x942)\n"
           "#if CC_CDNA3 > CC_AMPERE\nyes\n#else\nno\n#endif\n"
           "#undef CC_AMPERE\n#if defined(CC_AMPERE)\ngone\n#endif\n")
    assert never_lines(src, build()) == [7, 11]


def test_project_headers_decide_conditional_macros(tmp_path: Path) -> None:
    (tmp_path / "vendors").mkdir()
    (tmp_path / "common.cuh").write_text(
        "#pragma once\n#if defined(MY_HIP)\n#include \"vendors/hip.h\"\n#endif\n"
        "#if !defined(MY_HIP) && __CUDA_ARCH__ >= 800\n#define AMPERE_MMA_AVAILABLE\n#endif\n"
        "#if defined(MY_HIP) && defined(CDNA)\n#define MFMA_AVAILABLE\n#endif\n")
    (tmp_path / "vendors" / "hip.h").write_text(
        "#if defined(__gfx942__) || defined(__gfx90a__)\n#define CDNA\n#endif\n"
        "#include \"../common.cuh\"\n")  # a cycle: included once
    src = ("#include \"common.cuh\"\n"
           "#ifdef AMPERE_MMA_AVAILABLE\nptx\n#endif\n"      # 2-4
           "#ifdef MFMA_AVAILABLE\nmfma\n#else\nother\n#endif\n")  # 5-9
    top = str(tmp_path / "mma.cuh")
    assert never_lines(src, build("MY_HIP"), top) == [3]
    # The host pass skips the MFMA branch, the device pass takes it: both compiled.
    assert never_lines(src, build("MY_HIP", archs=("gfx1100",)), top) == [3, 6]
    # Without the guard only __CUDA_ARCH__ closes the branch: a test the port rewrites.
    assert never_lines(src, build(), top) == []


def test_a_header_seen_in_other_macro_states_is_processed_again(tmp_path: Path) -> None:
    (tmp_path / "h.h").write_text("#ifdef WANT\n#define GOT 1\n#else\n#define GOT 0\n#endif\n")
    src = "#include \"h.h\"\n#if GOT\na\n#else\nb\n#endif\n"
    top = str(tmp_path / "t.cu")
    assert never_lines(src, build(defines=("WANT",)), top) == [5]
    assert never_lines(src, build(defines=("WANT=0",)), top) == [5]  # defined, whatever its value
    assert never_lines(src, build(), top) == []  # WANT unknown: GOT maybe 1, maybe 0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_like_a_header_is_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "h.h")
    src = "#include \"h.h\"\n#ifdef X\na\n#endif\n"
    assert never_lines(src, build(), str(tmp_path / "t.cu")) == []  # returns at once, X unknown


def test_findings_in_branches_a_hip_build_never_compiles_are_dropped(tmp_path: Path) -> None:
    (tmp_path / "common.cuh").write_text(
        "#if !defined(MY_HIP) && __CUDA_ARCH__ >= 800\n#define CP_ASYNC\n#endif\n")
    src = ("#include \"common.cuh\"\n"
           "__device__ void f(void *p) {\n"
           "#ifdef CP_ASYNC\n"
           "  asm volatile(\"cp.async.wait_all;\");\n"
           "#endif\n"
           "}\n").encode()
    path = str(tmp_path / "k.cu")
    guarded = Options(hip_guards=DEFAULT_HIP_GUARDS + ("MY_HIP",))
    assert [f.code for f in analyze(src, path, guarded).findings] == []
    assert [f.code for f in analyze(src, path, Options()).findings] == ["HP301"]


def test_a_hip_guard_makes_the_cuda_arch_test_after_it_irrelevant() -> None:
    src = (b"#if !defined(MY_HIP) && __CUDA_ARCH__ >= 700\n"
           b"#define FAST 1\n"
           b"#endif\n"
           b"#if __CUDA_ARCH__ >= 700\n"
           b"#define FAST2 1\n"
           b"#endif\n")
    guarded = Options(hip_guards=DEFAULT_HIP_GUARDS + ("MY_HIP",))
    # A project that names its own HIP guard is ported: the second test is decided (false)
    # by its HIP build as the project means it, the #else being its HIP path. Unported, both
    # are tests to rewrite.
    assert sorted({f.line for f in analyze(src, "t.cu", guarded).findings}) == []
    assert sorted({f.line for f in analyze(src, "t.cu", Options()).findings}) == [1, 4]


def test_a_branch_opened_by_a_cuda_macro_being_undefined_stays_maybe_both_ways() -> None:
    src = ("#if !defined(__CUDA_ARCH__)\nhost\n#else\ndevice\n#endif\n"
           "#ifndef __CUDACC__\nplain\n#else\ncuda\n#endif\n")
    assert never_lines(src, build()) == []  # the port rewrites these tests: both sides matter
    assert never_lines(src, build("MY_HIP")) == [4, 9]  # a ported project means them


def test_a_function_like_macro_is_no_value_of_its_name() -> None:
    """``#define WARP_SIZE(x) 32`` defines no object macro WARP_SIZE: in ``#if WARP_SIZE == 32``
    the name is not followed by ``(``, so the compiler does not expand it (the model says
    "maybe", not 32), ``defined(WARP_SIZE)`` holds either way, and ``Branches.defines`` gives
    no body for it (found in review: it gave "32", as for ``#define WARP_SIZE 32``)."""
    src = ("#ifdef __HIP_PLATFORM_AMD__\n#define HIP_SIDE\n#endif\n"   # 1-3: a conditional
           "#define WARP_SIZE(x) 32\n"                                      # 4
           "#if WARP_SIZE == 32\nthirty-two\n#else\nother\n#endif\n"   # 5-9
           "#if defined(WARP_SIZE)\nyes\n#else\nno\n#endif\n")         # 10-14
    assert never_lines(src, build()) == [13]
    model = branches_of(src.encode(), "t.cu", build())
    assert model.defines("WARP_SIZE") == []
    assert model.defines("NONE") == []
    plain = branches_of(src.replace("WARP_SIZE(x) 32", "WARP_SIZE 32").encode(), "t.cu", build())
    assert plain.defines("WARP_SIZE") == ["32"]
    assert never_lines(src.replace("WARP_SIZE(x) 32", "WARP_SIZE 32"), build()) == [8, 13]


def test_the_places_an_include_tried_first_are_noted_as_absent_replayed_or_not(tmp_path: Path) -> None:
    """``#include "common.cuh"`` in src/mid.cuh finds inc/common.cuh through -I after
    src/common.cuh held nothing: check's cache must know that a header appearing there
    changes the answer (``end_header_reads``), also for a file whose analysis replays
    mid.cuh from the memo instead of reading it (b.cu after a.cu)."""
    from hipport.preprocessor import branches

    (tmp_path / "inc").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "inc" / "common.cuh").write_text("#pragma once\n#define WAVE_SIZE 64\n")
    (tmp_path / "src" / "mid.cuh").write_text('#pragma once\n#include "common.cuh"\n')
    b = Build((7, 2, 1), ("gfx942",), DEFAULT_HIP_GUARDS, include_dirs=(str(tmp_path / "inc"),))
    absent = (str(tmp_path / "src" / "common.cuh"), branches.ABSENT, branches.ABSENT, "")
    for name in ("a.cu", "b.cu"):
        src = b'#include "mid.cuh"\n#ifdef WAVE_SIZE\nx\n#endif\n'
        branches.begin_header_reads()
        branches_of(src, str(tmp_path / "src" / name), b).header_texts()
        reads = branches.end_header_reads()
        assert absent in reads, name
        assert {r[0] for r in reads if r[1] != branches.ABSENT} == {
            str(tmp_path / "inc" / "common.cuh"), str(tmp_path / "src" / "mid.cuh")}


def test_a_header_is_replayed_only_for_files_whose_include_search_is_the_same(tmp_path: Path) -> None:
    """A/h.cuh's ``#include "cfg.h"`` is looked for beside it, then in the first file's
    folder: B1/k.cu finds B1/cfg.h, B2/k.cu B2/cfg.h (``#define NARROW``). The memo replayed
    what h.cuh did for B1 when B2 came second, so B2's ``#ifndef NARROW`` branch was "maybe"
    or never compiled depending on which file the process met first."""
    from hipport.preprocessor import branches

    for d, body in (("A", '#pragma once\n#include "cfg.h"\n'), ("B1", "#define WIDE 1\n"),
                    ("B2", "#define NARROW 1\n")):
        (tmp_path / d).mkdir()
        (tmp_path / d / ("h.cuh" if d == "A" else "cfg.h")).write_text(body)
    src = '#include "../A/h.cuh"\n#ifndef NARROW\nw\n#endif\n'
    branches._MEMO.clear()
    assert never_lines(src, build(), path=str(tmp_path / "B2" / "k.cu")) == [3]
    branches._MEMO.clear()
    assert never_lines(src, build(), path=str(tmp_path / "B1" / "k.cu")) == []
    assert never_lines(src, build(), path=str(tmp_path / "B2" / "k.cu")) == [3]


def test_a_memo_entry_matches_on_equal_states_identical_or_not():
    """``_reads_match`` (the header memo's test) tells a state by identity first, then by
    equality: an equal Macro built anew matches, another body or an absent name does not,
    and inside another header's recording the reads are recorded as ``state`` records them."""
    from hipport.preprocessor.branches import _reads_match
    from hipport.preprocessor.macros import UNSEEN, Macro, Macros, Recorder

    macros = Macros({"A": Macro("1"), "B": Macro("x", True)})
    assert _reads_match(macros, (("A", Macro("1")), ("B", macros.table["B"]), ("C", UNSEEN)), False)
    assert not _reads_match(macros, (("A", Macro("2")),), False)
    assert not _reads_match(macros, (("C", Macro("1")),), False)
    recorder = Recorder()
    macros.recorders.append(recorder)
    assert _reads_match(macros, (("A", Macro("1")), ("C", UNSEEN)), True)
    assert recorder.reads == {"A": Macro("1"), "C": UNSEEN}


def test_a_header_looked_up_by_a_relative_path_is_the_one_in_the_current_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The header cache and the memo last the process: keyed by the path as spelled
    ("common.cuh" for a file given as k.cu), a caller that changed directory got the answer
    for the header of the first directory (here: none) and lost the wave of 64 that the
    second directory's header names (test_check's first test failed after another test
    file had analysed a "t.cu" including a "common.cuh" from the repository's root)."""
    src = '#include "common.cuh"\n#if WAVE_SIZE == 64\nwide\n#else\nnarrow\n#endif\n'
    (tmp_path / "A").mkdir()
    (tmp_path / "B").mkdir()
    (tmp_path / "B" / "common.cuh").write_text("#pragma once\n#define WAVE_SIZE 64\n")
    monkeypatch.chdir(tmp_path / "A")
    assert never_lines(src, build(), path="k.cu") == []  # no header: WAVE_SIZE unknown, both maybe
    monkeypatch.chdir(tmp_path / "B")
    assert never_lines(src, build(), path="k.cu") == [5]


def test_a_header_named_with_a_directory_is_found_however_the_file_is_spelled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``#include "inc/common.cuh"`` is looked for up to MAX_UP folders above the first
    file, as a -I of the project's root would find it. For a file given as k.cu (scan run
    in its folder, or check's repository-relative paths from pre-commit) the folder was
    Path("."), whose parents are none: the header was missed and the answer hung on the
    spelling (k.cu: both branches maybe; the absolute path: the narrow one never compiled)."""
    src = '#include "inc/common.cuh"\n#if WAVE_SIZE == 64\nwide\n#else\nnarrow\n#endif\n'
    (tmp_path / "inc").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "inc" / "common.cuh").write_text("#pragma once\n#define WAVE_SIZE 64\n")
    monkeypatch.chdir(tmp_path / "src")
    assert never_lines(src, build(), path=str(tmp_path / "src" / "k.cu")) == [5]
    assert never_lines(src, build(), path="k.cu") == [5]
