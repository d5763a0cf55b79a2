"""HP4xx library rules, over fixtures/rules/libraries/ (markers as in test_rules_device)."""

from __future__ import annotations


import pytest

from hipport.rules import load
from hipport.library_catalogue import parse_catalogue
from hipport.rules.libraries import catalogue
from conftest import FIXTURES, run

LIBRARIES = sorted((FIXTURES / "libraries").iterdir())


def test_catalogue_rules_exist_and_unknown_codes_are_rejected() -> None:
    cat = catalogue()
    assert {lib.rule.code for lib in cat.libraries} | {a.rule.code for a in cat.apis} <= set(load().rules)
    with pytest.raises(ValueError, match="HP999"):
        parse_catalogue({"library": {"x": {"rule": "HP999", "message": "m"}}}, load().rules)


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
