"""HP1xx API-mapping rules over fixtures/rules/api/ (same markers as the other families)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_rules_device import _EXPECT_RE, _NEGATIVES_RE, FIXTURES, TARGETS, expected, fixture_codes, found

from hipport.rules import load

API = sorted((FIXTURES / "api").iterdir())
#: Every experimental row in HIPIFY's tables is dated after 7.2.1, so HP105 cannot fire for
#: the fixtures' targets; tests/test_rewrite.py covers it from ROCm 7.14.
ONLY_FROM_LATER_RELEASES = {"HP105"}
#: HP119 fires only with --roc, which the fixtures do not use; tests/test_arguments.py covers it.
ONLY_WITH_ROC = {"HP119"}


@pytest.mark.parametrize("rocm", TARGETS)
@pytest.mark.parametrize("path", API, ids=lambda p: p.name)
def test_fixture_findings_match_markers(path: Path, rocm: str) -> None:
    assert found(path, rocm, "HP1") == expected(path, rocm)


def test_every_api_rule_has_positive_and_negative_fixtures() -> None:
    codes = {c for c in load().rules if c.startswith("HP1") and c != "HP190"} - ONLY_FROM_LATER_RELEASES - ONLY_WITH_ROC
    assert codes <= fixture_codes(FIXTURES / "api", _EXPECT_RE)
    assert codes <= fixture_codes(FIXTURES / "api", _NEGATIVES_RE)


def test_rule_pages_have_examples() -> None:
    for code, rule in load().rules.items():
        if code.startswith("HP1"):
            assert "```cuda" in rule.doc and rule.title, code
