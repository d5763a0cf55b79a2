"""``hipport rules``: the catalogue table, one rule's page, unknown codes, json/markdown.

The registry is replaced by a hand-made one so these tests do not depend on which rules
exist; one test runs over the real registry, whatever it holds.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

import hipport.rules
from hipport.cli import main
from hipport.findings import Effort, Severity
from hipport.rule import Rule

DOC = """AMD wavefronts have 64 lanes, so a 32-bit mask silently drops lanes 32-63.

## Example

Before:

```cuda
unsigned mask = __ballot_sync(0xffffffff, pred);
```

After:

```cuda
unsigned long long mask = __ballot(pred);
```"""

RULES = {
    r.code: r
    for r in (
        Rule("HP201", "warp-mask-32bit", Severity.HIGH, Effort.MEDIUM,
             "32-bit warp masks truncate 64-lane wavefronts", DOC, rocm_min=(6, 0, 0)),
        Rule("HP101", "api-unsupported", Severity.BLOCKER, Effort.LARGE,
             "API with no HIP equivalent | in target", "No mapping."),
        Rule("HP305", "cooperative-groups-old", Severity.LOW, Effort.SMALL,
             "Cooperative groups before 7.0", "", rocm_max=(7, 0, 0)),
    )
}


@pytest.fixture
def fake_rules(monkeypatch):
    monkeypatch.setattr(hipport.rules, "load", lambda: SimpleNamespace(rules=RULES))


def run(*args: str):
    return CliRunner().invoke(main, ["rules", *args])


def test_list_is_a_sorted_table(fake_rules):
    result = run()
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["CODE", "SEVERITY", "SLUG", "ROCM", "TITLE"]
    assert [l.split()[0] for l in lines[1:]] == ["HP101", "HP201", "HP305"]
    hp201 = next(l for l in lines if l.startswith("HP201"))
    assert hp201.split()[:4] == ["HP201", "high", "warp-mask-32bit", ">=6.0"]
    assert hp201.endswith("32-bit warp masks truncate 64-lane wavefronts")
    assert "<7.0" in next(l for l in lines if l.startswith("HP305"))
    assert " all " in next(l for l in lines if l.startswith("HP101"))
    assert len({l.index(l.split()[4]) for l in lines[1:]}) == 1, "title column is aligned"


def test_page_shows_title_metadata_and_example(fake_rules):
    result = run("HP201")
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.startswith("HP201 (warp-mask-32bit): 32-bit warp masks truncate 64-lane wavefronts\n")
    lines = out.splitlines()
    for meta in ("  severity high", "  effort   medium", "  family   HP2xx", "  rocm     >=6.0"):
        assert meta in lines, meta
    assert "unsigned mask = __ballot_sync(0xffffffff, pred);" in out
    assert "unsigned long long mask = __ballot(pred);" in out


@pytest.mark.parametrize("query", ["hp201", "HP201", "warp-mask-32bit"])
def test_lookup_by_code_any_case_or_slug(fake_rules, query):
    result = run(query)
    assert result.exit_code == 0 and result.output.startswith("HP201 ")


def test_unknown_code_suggests_close_matches_and_exits_2(fake_rules):
    result = run("HP202")
    assert result.exit_code == 2
    assert "unknown rule 'HP202'" in result.stderr
    assert "HP201" in result.stderr
    assert result.stdout == ""
    assert "warp-mask-32bit" in run("warp-mask-32").stderr


def test_unknown_with_nothing_close(fake_rules):
    result = run("zzz")
    assert result.exit_code == 2 and "hipport rules" in result.stderr


def test_json_list(fake_rules):
    result = run("--format", "json")
    data = json.loads(result.output)
    assert [r["code"] for r in data] == ["HP101", "HP201", "HP305"]
    hp201 = data[1]
    assert hp201 == {
        "code": "HP201", "slug": "warp-mask-32bit",
        "title": "32-bit warp masks truncate 64-lane wavefronts", "severity": "high",
        "effort": "medium", "family": "HP2xx", "rocm_min": "6.0", "rocm_max": None, "doc": DOC,
    }


def test_markdown_docs_page(fake_rules):
    md = run("--format", "markdown").output
    assert md.startswith("# hipport rules\n")
    assert "| [HP201](#rule-hp201) | high | `warp-mask-32bit` | \\>=6.0 |" in md
    assert "API with no HIP equivalent \\| in target" in md  # escaped: the table stays intact
    assert '<a id="rule-hp201"></a>' in md
    assert "## HP201: 32-bit warp masks truncate 64-lane wavefronts" in md
    assert "```cuda\nunsigned long long mask = __ballot(pred);\n```" in md


def test_single_rule_as_json_and_markdown(fake_rules):
    assert json.loads(run("HP305", "--format", "json").output)["rocm_max"] == "7.0"
    md = run("HP201", "--format", "markdown").output
    assert md.startswith("# HP201: 32-bit warp masks") and "- **Severity:** high" in md


def test_empty_registry(monkeypatch):
    monkeypatch.setattr(hipport.rules, "load", lambda: SimpleNamespace(rules={}))
    assert run().output == "no rules registered\n"
    assert run("HP201").exit_code == 2


def test_every_registered_rule_has_a_page():
    registry = hipport.rules.load()
    listing = run()
    assert listing.exit_code == 0
    for code, rule in registry.rules.items():
        assert code in listing.output
        page = run(code)
        assert page.exit_code == 0 and rule.title in page.output
