"""The rules harness: every fixture against its markers, and registry-wide invariants.

Markers and helpers live in conftest.py. The invariants hold for every rule the registry
has, whatever family adds it: a page with What (the title), Why, Example and Fix; a
fixture where it fires and a look-alike where it must not.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import (EXPECT_RE, FAMILIES, FIXTURES, NEGATIVES_RE, TARGETS, expected, fixture_codes,
                      fixture_files, found)

from hipport.rules import load

CASES = [(path, prefix) for directory, prefix in FAMILIES.items() for path in fixture_files(directory)]
#: Rules no tree-sitter fixture can show: the deep engine's (fixtures/deep, tests/test_deep.py),
#: the deps command's (fixtures/deps), HP105, which no mapping triggers before ROCm 7.14
#: (tests/test_rewrite.py covers it there), and HP119, which fires only with --roc
#: (tests/test_arguments.py).
ELSEWHERE = {"HP105", "HP119"}


def _other_engine(code: str) -> bool:
    return code.startswith(("HP19", "HP5")) or code in ELSEWHERE


@pytest.mark.parametrize("rocm", TARGETS)
@pytest.mark.parametrize("path,prefix", CASES, ids=lambda v: v.name if isinstance(v, Path) else v)
def test_fixture_findings_match_markers(path: Path, prefix: str, rocm: str) -> None:
    assert found(path, rocm, prefix) == expected(path, rocm)


def test_every_rule_has_a_positive_and_a_negative_fixture() -> None:
    positives = set().union(*(fixture_codes(FIXTURES / d, EXPECT_RE) for d in FAMILIES))
    negatives = set().union(*(fixture_codes(FIXTURES / d, NEGATIVES_RE) for d in FAMILIES))
    codes = {c for c in load().rules if not _other_engine(c) and c[:3] in FAMILIES.values()}
    assert codes
    assert sorted(codes - positives) == []
    assert sorted(codes - negatives) == []


def test_every_rule_page_has_what_why_example_fix() -> None:
    rules = load().rules
    assert rules
    for code, rule in rules.items():
        assert rule.title, code
        sections = {part.partition("\n")[0].strip(): part.partition("\n")[2].strip()
                    for part in ("\n" + rule.doc).split("\n## ")[1:]}
        for heading in ("Why", "Example", "Fix"):
            assert sections.get(heading), (code, heading)
        assert "```" in sections["Example"], code
