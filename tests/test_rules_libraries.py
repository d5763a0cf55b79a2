"""HP4xx library rules, over fixtures/rules/libraries/ (markers as in test_rules_device)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hipport.rules import load
from hipport.rules.libraries import catalogue, parse_catalogue
from test_rules_device import (_EXPECT_RE, _NEGATIVES_RE, FIXTURES, TARGETS, expected, fixture_codes,
                               found, run)

LIBRARIES = sorted((FIXTURES / "libraries").iterdir())


@pytest.mark.parametrize("rocm", TARGETS)
@pytest.mark.parametrize("path", LIBRARIES, ids=lambda p: p.name)
def test_fixture_findings_match_markers(path: Path, rocm: str) -> None:
    assert found(path, rocm, "HP4") == expected(path, rocm)


def test_every_library_rule_has_positive_and_negative_fixtures() -> None:
    codes = {c for c in load().rules if c.startswith("HP4")}
    assert codes <= fixture_codes(FIXTURES / "libraries", _EXPECT_RE)
    assert codes <= fixture_codes(FIXTURES / "libraries", _NEGATIVES_RE)


def test_rule_pages_have_before_after_examples() -> None:
    for code, rule in load().rules.items():
        if code.startswith("HP4"):
            assert "```cuda" in rule.doc and rule.title, code


def test_catalogue_rules_exist_and_unknown_codes_are_rejected() -> None:
    cat = catalogue()
    assert {lib.rule.code for lib in cat.libraries} | {a.rule.code for a in cat.apis} <= set(load().rules)
    with pytest.raises(ValueError, match="HP999"):
        parse_catalogue({"library": {"x": {"rule": "HP999", "message": "m"}}})


def test_one_finding_per_library_per_file() -> None:
    src = "#include <cute/tensor.hpp>\n#include <cutlass/cutlass.h>\nusing T = cute::Tensor<int>;\n"
    assert [(f.line, f.code) for f in run(src) if f.code.startswith("HP4")] == [(1, "HP401")]


def test_cub_note_depends_on_target() -> None:
    src = "#include <cub/cub.cuh>\n"
    (old,) = [f.message for f in run(src, "6.3") if f.code == "HP409"]
    (new,) = [f.message for f in run(src, "7.2.1") if f.code == "HP409"]
    assert "still accepts C++14" in old
    assert "requires C++17" in new and "AsmThreadLoad" in new


def test_texref_iterator_removed_from_7_1() -> None:
    src = "#include <cub/cub.cuh>\ncub::TexRefInputIterator<float, 0> it;\n"
    assert [(f.line, f.code) for f in run(src, "7.2.1") if f.code == "HP410"] == [(2, "HP410")]
    assert not [f for f in run(src, "7.0") if f.code == "HP410"]


def test_guarded_first_use_does_not_hide_a_later_unguarded_use() -> None:
    src = ("#ifndef USE_ROCM\n#include <cudnn.h>\n#endif\n"
           "void f(cudnnHandle_t h) { cudnnDestroy(h); }\n")
    assert [(f.line, f.code) for f in run(src) if f.code == "HP404"] == [(4, "HP404")]
