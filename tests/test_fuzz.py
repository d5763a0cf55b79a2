"""A seeded, few-second run of tools/fuzz.py: mutated real-shaped CUDA never crashes,
hangs, converts differently a second time, or gets its hip include off its own line.

The long run (``python tools/fuzz.py -n 10000``) prints the same classes per 10,000
inputs; this one keeps a fixed seed so a failure here is reproducible as it stands.
"""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("fuzz", ROOT / "tools" / "fuzz.py")
fuzz = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz)


def test_seeded_fuzz_finds_nothing() -> None:
    shown = io.StringIO()
    counts = fuzz.run(250, seed=17, hang_seconds=10.0, show=2, mutations=8, out=shown)
    assert sum(counts.values()) == 0, f"{dict(counts)}\n{shown.getvalue()}"


def test_the_classifier_sees_each_class() -> None:
    """The checks themselves can fail: a misplaced include, a second pass that differs."""
    assert fuzz._misplaced(b"// c#include <hip/hip_runtime.h>\n", (fuzz.INCLUDE,)) == 1
    assert fuzz._misplaced(b"#include <hip/hip_runtime.h>\r\n", (fuzz.INCLUDE,)) == 0
    opts = fuzz.option_sets()[0]
    assert fuzz.classify(b"__global__ void k(){}\n", "a.cu", opts) is None


#: The failures the long run (seeds 1-3, 10,000 inputs each; later seeds 1-6) still found, minimised (ddmin),
#: before and during the fixes:
#: (file name, option set of fuzz.option_sets(), input). Each failed before its fix.
LONG_RUN_FAILURES = [
    # A "directive" in the middle of a line is no directive (parse.starts_line): it was
    # converted on one pass and not the other, depending on the parser's error recovery.
    ("b.cuh", 0, b'K(c\rt;((c))cub::K(#include"cublas_v2.h"e'),
    ("c.cpp", 0, b"d#include<cub/>cub::"),
    ("a.cu", 2, b"3<<<g,b>>>();.#include<cuda.h>"),
    ("c.cpp", 0, b"v.p c\nr 1;cuStreamSetAttribute(#include<cuda.h>"),
    ("b.cuh", 0, b"p#include <cuda.h\t>"),  # the include class: a converted include mid-line
    ("a.cu", 2, b"f>e<d<<<g,b>>>();d>#include<cuda_runtime.h>"),
    ("b.cuh", 0, b')#include"cublas_v2.h";l#include<cuda.h>\nN,#include<>\n'),
    ("b.cuh", 2, b"l(;_#include<cuda_runtime.h>\na<<<(1)/h,s>>>()"),
    ("a.cu", 0, b"i#i b,cudaStream_t{d<<<"),  # the "argument" of a mid-line #i is code
    # A launch with an error inside it is not rewritten: the rewrite swallowed skipped text
    # (an EditConflict with a rename in it), or launched a kernel named "<<<g,b>>>().".
    ("b.cuh", 2, b"e\n_ A'A' p e)<<<1,s>>>()"),
    ("b.cuh", 2, b"<1,e\nCUDA_SUCCESS k<<<1,s>>>()"),
    ("c.cpp", 2, b"#h\n<<<g,b>>>().<<<g,b>>>()"),
    ("c.cpp", 2, b"k<<<1,s>>>();}k<<<1,s>>>()"),  # a clean launch inside a malformed one
    ("b.cuh", 2, b"m<<<0,m>>>();*m<<<6,m>>>()"),  # a clean launch beside one in an ERROR node
    # The added include went before the line of an include read out of the middle of a
    # line (no directive), inside the broken statement there: the next parse of it differed.
    ("a.cu", 2, b'*\no#i.h>\nx<><<<2,s>>>();#include""'),
    # HP334's <cstring> in a file with no include: added only once hip_runtime.h was there.
    ("a.cu", 0, b"memset(cudaMemset;"),
    # Tokens after a broken include path: renamed once the parser read the line as an include.
    ("b.cuh", 0, b"}\n#include<>,cudaStream_t"),
    ("b.cuh", 0, b"}\n#include<>*cudaStream_t"),  # ... or after the include node, on its line
    # A launch at file scope, clean only once the include added above changed how the
    # parser recovered from the broken code before it.
    ("c.cpp", 2, b"4>b;cuStreamSynchronize(s)k<<<1,s>>>();"),
    ("c.cpp", 2, b"){d<<<1,s>>>();cuStreamSynchronize;"),  # a block at file scope is no body
    # An include at the start of a line that the parser read as comparisons (< cuda . h >):
    # converted from its bytes, and renames inside it dropped (they collided: cuComplex).
    ("a.cu", 2, b"3<<<g,b>>>();.\n#include<cuda.h>"),
    ("a.cu", 0, b"x = (a\n#include<cuComplex.h>\n"),
    ("a.cu", 0, b"i#i b,cudaStream_t{\nd<<<"),  # a mid-line directive outside an ERROR node
    # The added include went after a line splice: it continued that line and pushed the
    # text there onto a line of its own for the next run.
    ("a.cu", 0, b"\\\n#include<cuda_runtime.h>cudaSuccess"),
    ("b.cuh", 0, b"//<<<\n\\\n#include<cuda_runtime.h>"),
]


@pytest.mark.parametrize("name, option_set, data", LONG_RUN_FAILURES)
def test_long_run_failures_stay_fixed(name: str, option_set: int, data: bytes) -> None:
    assert fuzz.classify(data, name, fuzz.option_sets()[option_set], hang_seconds=10.0) is None


def test_directives_start_lines_by_the_bytes() -> None:
    from hipport.parse import starts_line

    assert starts_line(b"#include <a>", 0) and starts_line(b"x;\n  \t#include <a>", 5)
    assert starts_line(b"/* c */ #include <a>", 8)  # a comment is a blank to the preprocessor
    assert not starts_line(b"c#include <a>", 1)
    assert not starts_line(b"x \\\n#include <a>", 4) and not starts_line(b"x \\\r\n#include <a>", 5)


def test_a_directive_after_a_comment_is_still_converted_and_a_mid_line_one_is_left() -> None:
    from hipport.pipeline import transform

    opts = fuzz.option_sets()[0]
    out = transform(b"/* licence */ #include <cuda_runtime.h>\nx#include <cublas_v2.h>\n", "a.cpp", opts)[0]
    assert out == b"/* licence */ #include <hip/hip_runtime.h>\nx#include <cublas_v2.h>\n"


def test_an_include_with_tokens_after_its_path_is_converted_and_the_tokens_left() -> None:
    """The parser loses the path of ``#include <cuda_runtime.h> cudaStream_t``: it was left
    unconverted (a second hip_runtime.h added above it) and the trailing token renamed."""
    from hipport.pipeline import transform

    src = b"#include <cuda_runtime.h> cudaStream_t\nvoid f() { cudaStream_t s; }\n"
    out = transform(src, "a.cu", fuzz.option_sets()[0])[0]
    assert out == b"#include <hip/hip_runtime.h> cudaStream_t\nvoid f() { hipStream_t s; }\n"


def test_a_launch_outside_every_function_is_left_one_in_a_function_or_macro_rewritten() -> None:
    from hipport.pipeline import transform

    opts = fuzz.option_sets()[2]
    src = (b"k<<<1, 2>>>(x);\nvoid f() { k<<<1, 2>>>(x); }\n#define L k<<<1, 2>>>(x)\n"
           b"struct S { void g() { if (c) { k<<<1, 2>>>(x); } } };\nauto h = [] { k<<<1, 2>>>(x); };\n")
    out = transform(src, "a.cpp", opts)[0]
    assert out.count(b"k<<<1, 2>>>(x)") == 1 and out.startswith(b"k<<<1, 2>>>(x);\n")
    assert out.count(b"hipLaunchKernelGGL(k, dim3(1), dim3(2), 0, 0, x)") == 4


@pytest.mark.xfail(strict=True, reason="left (1 in 60,000 inputs of the long run): the include "
                   "added above broken code lets the parser read a function with a missing ')' "
                   "around a launch that the first run saw inside an ERROR node")
def test_a_launch_the_parser_puts_in_a_function_only_below_the_added_include() -> None:
    assert fuzz.classify(b"(0)n(e i{d<<<1,s>>>();cuStreamSynchronize;", "c.cpp",
                         fuzz.option_sets()[2], hang_seconds=10.0) is None
