"""Central policy in Context: HIP guards, suppression comments, ignore lists, overrides."""

from __future__ import annotations

import pytest

from hipport.analyze import analyze
from hipport.findings import Severity
from hipport.options import DEFAULT_HIP_GUARDS, Options

UNSUPPORTED = "cudaDeviceFlushGPUDirectRDMAWrites(a, b);"  # no HIP counterpart: HP101


def codes(src: str, options: Options = Options()) -> list[tuple[str, int]]:
    ctx = analyze(src.encode(), "t.cu", options)
    return sorted((f.code, f.line) for f in ctx.findings)


@pytest.mark.parametrize(("cond", "hidden"), [
    # a HIP test: its #else is the CUDA side, not reported
    ("defined(__HIP_PLATFORM_AMD__)", "else"),
    ("defined __HIPCC__", "else"),
    ("USE_ROCM", "else"),
    ("defined(USE_ROCM) || defined(__HIP__)", "else"),
    ("(defined(__HIP_PLATFORM_AMD__))", "else"),
    ("defined(USE_ROCM) || defined(__CUDACC__)", "else"),  # true whatever __CUDACC__ is
    # a negated HIP test, alone or and-ed: its own branch is the CUDA side
    ("!defined(USE_ROCM)", "if"),
    ("!defined(__HIP_PLATFORM_AMD__) && CUDA_VERSION >= 11000", "if"),
    ("!defined(__HIP_PLATFORM_AMD__) /* cuda */ && defined(__CUDA_ARCH__)", "if"),
    # CUDA's own macros stay "maybe" (a port rewrites such tests): both sides reported
    ("defined(__CUDACC__)", ""),
    ("defined(USE_ROCM) && X", ""),  # HIP and something unknown: its #else is not CUDA-only
])
def test_hip_guard_branches(cond: str, hidden: str) -> None:
    """Which side of ``#if COND`` a HIP build never compiles (the branch model decides)."""
    src = f"#if {cond}\n{UNSUPPORTED}\n#else\n{UNSUPPORTED}\n#endif\n"
    expected = [("HP101", line) for line, side in ((2, "if"), (4, "else")) if side != hidden]
    assert [c for c in codes(src) if c[0] == "HP101"] == expected


def test_a_device_compile_test_is_not_a_cuda_side() -> None:
    """``#ifndef __HIP_DEVICE_COMPILE__`` is the HIP build's host pass, not CUDA code: the
    host API call there is reported (the old syntactic guard test hid it)."""
    src = f"#ifndef __HIP_DEVICE_COMPILE__\n{UNSUPPORTED}\n#else\n{UNSUPPORTED}\n#endif\n"
    assert codes(src) == [("HP101", 2), ("HP101", 4)]


def test_cuda_branch_of_a_hip_guard_is_not_reported() -> None:
    src = f"#ifdef USE_ROCM\nhipFoo();\n#else\n{UNSUPPORTED}\n#endif\n{UNSUPPORTED}\n"
    assert codes(src) == [("HP101", 6)]


def test_ifndef_and_elif_forms() -> None:
    src = (f"#ifndef __HIP_PLATFORM_AMD__\n{UNSUPPORTED}\n#endif\n"
           f"#if defined(__HIPCC__)\nx();\n#elif defined(HAVE_NVML)\n{UNSUPPORTED}\n#endif\n"
           f"#if defined(HAVE_NVML)\n{UNSUPPORTED}\n#endif\n")
    assert codes(src) == [("HP101", 10)]


def test_project_guard_macros_count_when_named() -> None:
    src = f"#ifdef GGML_USE_HIP\nx();\n#else\n{UNSUPPORTED}\n#endif\n"
    assert codes(src) == [("HP101", 4)]
    opts = Options(hip_guards=DEFAULT_HIP_GUARDS + ("GGML_USE_HIP",))
    assert codes(src, opts) == []


@pytest.mark.parametrize("comment", [
    "// hipport: ignore[HP101]", "// hipport: ignore", "/* hipport: ignore[HP1XX] */",
    "// hipport: ignore[HP201, HP101]",
])
def test_suppression_on_the_line_or_the_line_above(comment: str) -> None:
    assert codes(f"{UNSUPPORTED} {comment}\n") == []
    assert codes(f"{comment}\n{UNSUPPORTED}\n") == []
    assert codes(f"{comment}\n\n{UNSUPPORTED}\n") == [("HP101", 3)]


def test_suppression_of_another_code_does_not_hide() -> None:
    assert codes(f"{UNSUPPORTED} // hipport: ignore[HP201]\n") == [("HP101", 1)]
    assert codes(f'puts("hipport: ignore");\n{UNSUPPORTED}\n') == [("HP101", 2)]


def test_ignore_list_and_severity_override() -> None:
    assert codes(UNSUPPORTED, Options(ignore=frozenset({"HP101"}))) == []
    assert codes(UNSUPPORTED, Options(ignore=frozenset({"HP1XX"}))) == []
    ctx = analyze(UNSUPPORTED.encode(), "t.cu", Options(severity_overrides={"HP101": Severity.INFO}))
    assert [f.severity for f in ctx.findings] == [Severity.INFO]


def test_a_feature_rule_supersedes_the_bare_mapping_status_at_the_same_token() -> None:
    src = "__global__ void k() { __trap(); }\nvoid f() { cudaDeviceFlushGPUDirectRDMAWrites(a, b); }\n"
    found = codes(src)
    assert ("HP101", 1) not in found and any(c.startswith("HP3") and ln == 1 for c, ln in found)
    assert ("HP101", 2) in found


def test_word_starts_is_the_word_boundary_regex() -> None:
    """Context.word_starts finds what re.finditer(rb"\\bWORD\\b") finds (random texts over a
    small alphabet, so words touch, repeat and overlap)."""
    import random
    import re

    from hipport.context import word_starts

    rng = random.Random(7)
    for _ in range(3000):
        word = "".join(rng.choice("ab_1") for _ in range(rng.randint(1, 3))).encode()
        src = "".join(rng.choice("ab_1 .(\n\xe9") for _ in range(rng.randint(0, 30))).encode()
        assert word_starts(src, word) == [m.start() for m in re.finditer(rb"\b%s\b" % re.escape(word), src)]
