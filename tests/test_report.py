"""Renderers: dispatch, JSON, SARIF 2.1.0 shape, text carets, Markdown escaping.

Reports are built by hand (not by scanning) so these tests pin the formats and do not
depend on which rules exist.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hipport.findings import Effort, Finding, Severity
from hipport.report import FORMATS, render
from hipport.report.model import FileOutcome, Report
from hipport.report.text import _cell_source_and_caret, _plain_source_and_caret, source_and_caret
from hipport.rule import Rule

HP201_DOC = """AMD GPUs run 64 lanes per wavefront; a 32-bit mask drops half of them.

**Before**

```cuda
unsigned m = __ballot_sync(0xffffffff, p);
```

**After**

```cuda
unsigned long long m = __ballot(p);
```"""


def finding(**kw) -> Finding:
    base = dict(
        code="HP201", slug="warp-mask-32bit", severity=Severity.HIGH, path="src/reduce.cu",
        line=12, col=12, end_col=25, message="32-bit lane mask",
        suggestion="use a 64-bit mask", effort=Effort.MEDIUM,
        source_line="    mask = __ballot_sync(0xffffffff, p);",
    )
    base.update(kw)
    base.setdefault("end_line", base["line"])
    return Finding(**base)


def sample_report() -> Report:
    """Every severity, a fixed finding, hostile text, a tab, an error, an unknown rule code."""
    findings = [
        finding(),
        finding(code="HP301", slug="inline-ptx", severity=Severity.BLOCKER, line=40, col=5,
                end_col=8, message='inline PTX `asm("...")` | cannot run on AMD',
                suggestion="use __lane_id()", effort=Effort.LARGE,
                source_line='    asm("mov.u32 %0, %%laneid;" : "=r"(lane));'),
        finding(code="HP101", slug="api-renamed", severity=Severity.INFO, path="src/main.cu",
                line=3, col=5, end_col=15, message="cudaMalloc rewritten", suggestion="",
                effort=Effort.NONE, fixed=True, source_line="    cudaMalloc(&p, n);"),
        finding(code="HP401", slug="cuda-only-library", severity=Severity.MEDIUM,
                path="src/evil <b>.cu", line=1, col=1, end_col=9,
                message="<script>alert('msg')</script> uses cuDNN",
                suggestion="<img src=x onerror=alert(1)>", effort=Effort.LARGE,
                source_line="<script>document.title='pwned'</script> // cudnnCreate"),
        finding(code="HP501", slug="setup-cuda-ext", severity=Severity.LOW, path="setup.py",
                line=7, col=2, end_col=10, message="CUDAExtension", suggestion="",
                effort=Effort.SMALL, source_line="\text = CUDAExtension('k', ['k.cu'])"),
    ]
    rules = {
        "HP201": Rule("HP201", "warp-mask-32bit", Severity.HIGH, Effort.MEDIUM,
                      "32-bit warp masks truncate 64-lane wavefronts", HP201_DOC, rocm_min=(6, 0, 0)),
        "HP301": Rule("HP301", "inline-ptx", Severity.BLOCKER, Effort.LARGE,
                      "Inline PTX assembly | <b>not portable</b>", "PTX is NVIDIA's ISA."),
        "HP101": Rule("HP101", "api-renamed", Severity.INFO, Effort.NONE, "API renamed", ""),
        "HP501": Rule("HP501", "setup-cuda-ext", Severity.LOW, Effort.SMALL, "CUDA extension", ""),
    }  # HP401 deliberately missing: renderers must cope with an incomplete rule table
    files = [
        FileOutcome("src/reduce.cu", "converted", 14),
        FileOutcome("src/main.cu", "converted", 3),
        FileOutcome("src/evil <b>.cu", "unchanged"),
        FileOutcome("setup.py", "unchanged"),
        FileOutcome("src/blob.cu", "error", 0, "not UTF-8 | <binary>"),
    ]
    return Report("0.1.0", (7, 2, 1), "scan", findings, files, rules)


# -- dispatch and determinism ----------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_deterministic_and_order_independent(fmt):
    report = sample_report()
    shuffled = sample_report()
    random.Random(4).shuffle(shuffled.findings)
    random.Random(5).shuffle(shuffled.files)
    out = render(report, fmt)
    assert out.endswith("\n")
    assert out == render(report, fmt) == render(shuffled, fmt)


def test_unknown_format_names_the_choices():
    with pytest.raises(ValueError, match="sarif"):
        render(sample_report(), "xml")


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_report_renders(fmt):
    assert render(Report("0.1.0", (6, 3, 0), "scan"), fmt).endswith("\n")


# -- JSON -----------------------------------------------------------------------------

def test_json_shape():
    out = render(sample_report(), "json")
    data = json.loads(out)
    assert list(data)[:7] == ["schema", "version", "target", "command", "summary", "findings", "files"]
    assert data["version"] == "0.1.0" and data["target"] == "7.2.1" and data["command"] == "scan"
    assert out.startswith('{\n  "schema"')  # indent=2
    required = {"code", "slug", "severity", "path", "line", "column", "end_line", "end_column",
                "message", "suggestion", "fixed", "effort", "engine"}
    for f in data["findings"]:
        assert required <= set(f)
        assert "col" not in f
    assert [(f["path"], f["line"]) for f in data["findings"]] == sorted(
        (f["path"], f["line"]) for f in data["findings"])
    first = next(f for f in data["findings"] if f["code"] == "HP201")
    assert (first["severity"], first["column"], first["end_column"], first["effort"]) == (
        "high", 12, 25, "medium")
    assert data["files"][0] == {"path": "setup.py", "status": "unchanged", "rewrites": 0, "message": "",
                                "output": ""}
    assert data["summary"]["by_severity"] == {"blocker": 1, "high": 1, "medium": 1, "low": 1, "info": 1}
    assert data["summary"]["fixed"] == 1
    assert {r["code"] for r in data["rules"]} == {"HP101", "HP201", "HP301", "HP401", "HP501"}


def test_json_target_drops_trailing_zero():
    report = dataclasses.replace(sample_report(), target=(6, 3, 0))
    assert json.loads(render(report, "json"))["target"] == "6.3"


# -- SARIF ----------------------------------------------------------------------------

def _require(obj: dict, keys: set[str], where: str) -> None:
    missing = keys - set(obj)
    assert not missing, f"{where}: missing {sorted(missing)}"


def assert_sarif_shape(sarif: dict) -> None:
    """The parts of the SARIF 2.1.0 schema (and GitHub's ingestion rules) hipport relies on."""
    _require(sarif, {"$schema", "version", "runs"}, "sarifLog")
    assert sarif["version"] == "2.1.0"
    assert "sarif-2.1.0" in sarif["$schema"]
    assert isinstance(sarif["runs"], list) and len(sarif["runs"]) == 1
    run = sarif["runs"][0]
    _require(run, {"tool", "results"}, "run")
    driver = run["tool"]["driver"]
    _require(driver, {"name", "version", "informationUri", "rules"}, "driver")
    assert driver["informationUri"].startswith("https://")
    ids = [r["id"] for r in driver["rules"]]
    assert len(ids) == len(set(ids)), "rule ids must be unique"
    for rule in driver["rules"]:
        _require(rule, {"id", "name", "shortDescription", "fullDescription", "help",
                        "defaultConfiguration", "properties"}, f"rule {rule.get('id')}")
        assert re.fullmatch(r"[a-z0-9-]+", rule["name"])
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        _require(rule["help"], {"text", "markdown"}, "help")
        assert rule["defaultConfiguration"]["level"] in {"none", "note", "warning", "error"}
        assert "security-severity" not in rule["properties"]
        assert all(isinstance(t, str) for t in rule["properties"]["tags"])
    assert run.get("columnKind") in (None, "utf16CodeUnits", "unicodeCodePoints")
    for inv in run.get("invocations", []):
        _require(inv, {"executionSuccessful"}, "invocation")
    for res in run["results"]:
        _require(res, {"ruleId", "ruleIndex", "level", "message", "locations", "partialFingerprints"},
                 "result")
        assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] in {"note", "warning", "error"}
        assert res["message"]["text"]
        assert len(res["locations"]) == 1
        phys = res["locations"][0]["physicalLocation"]
        art = phys["artifactLocation"]
        assert art["uriBaseId"] == "%SRCROOT%"
        assert not art["uri"].startswith(("/", "file:")) and "\\" not in art["uri"]
        region = phys["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        if "endLine" in region:
            assert region["endLine"] >= region["startLine"]
            if region["endLine"] == region["startLine"]:
                assert region["endColumn"] >= region["startColumn"]
        assert all(isinstance(v, str) and v for v in res["partialFingerprints"].values())


def sarif_of(report: Report) -> dict:
    return json.loads(render(report, "sarif"))


def test_sarif_shape_and_mapping():
    sarif = sarif_of(sample_report())
    assert_sarif_shape(sarif)
    run = sarif["runs"][0]
    assert run["tool"]["driver"]["name"] == "hipport"
    results = {r["ruleId"]: r for r in run["results"]}
    assert "HP101" not in results, "fixed findings are not alerts"
    assert {k: r["level"] for k, r in results.items()} == {
        "HP201": "error", "HP301": "error", "HP401": "warning", "HP501": "note"}
    assert results["HP401"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "src/evil%20%3Cb%3E.cu")
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert "```cuda" in rules["HP201"]["help"]["markdown"]
    assert rules["HP201"]["name"] == "warp-mask-32bit"
    assert rules["HP401"]["shortDescription"]["text"]  # synthesised for the missing rule
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert notes[0]["message"]["text"] == "not UTF-8 | <binary>"


@pytest.mark.parametrize(("severity", "level"), [
    (Severity.BLOCKER, "error"), (Severity.HIGH, "error"), (Severity.MEDIUM, "warning"),
    (Severity.LOW, "note"), (Severity.INFO, "note"),
])
def test_sarif_levels(severity, level):
    report = Report("0.1.0", (7, 2, 1), "scan", [finding(severity=severity)])
    result = sarif_of(report)["runs"][0]["results"][0]
    assert result["level"] == level


def _fingerprints(*findings: Finding) -> list[str]:
    sarif = sarif_of(Report("0.1.0", (7, 2, 1), "scan", list(findings)))
    return [next(iter(r["partialFingerprints"].values())) for r in sarif["runs"][0]["results"]]


def test_fingerprint_survives_a_line_move_and_reindent():
    moved = finding(line=112, source_line="\t\tmask  =  __ballot_sync(0xffffffff, p);")
    assert _fingerprints(finding()) == _fingerprints(moved)


def test_fingerprint_differs_for_a_different_message_code_or_path():
    base = _fingerprints(finding())
    assert base != _fingerprints(finding(message="another problem"))
    assert base != _fingerprints(finding(code="HP202"))
    assert base != _fingerprints(finding(path="src/other.cu"))


def test_identical_findings_get_distinct_fingerprints():
    a, b = _fingerprints(finding(), finding(line=30))
    assert a != b and a.rsplit(":", 1)[0] == b.rsplit(":", 1)[0]


def test_sarif_paths_and_columns():
    windows = finding(path="src\\win\\k.cu")
    absolute = finding(path="/abs/k.cu")
    dotted = finding(path="./src/k.cu")
    # "é" is 2 bytes: "x" is at byte column 8 but character column 7.
    unicode_ = finding(path="u.cu", source_line="/*é*/ x = y;", col=8, end_col=9)
    report = Report("0.1.0", (7, 2, 1), "scan", [windows, absolute, dotted, unicode_])
    by_path = {}
    for r in sarif_of(report)["runs"][0]["results"]:
        loc = r["locations"][0]["physicalLocation"]
        by_path[loc["artifactLocation"]["uri"]] = loc
    assert set(by_path) == {"src/win/k.cu", "file:///abs/k.cu", "src/k.cu", "u.cu"}
    assert "uriBaseId" not in by_path["file:///abs/k.cu"]["artifactLocation"]
    region = by_path["u.cu"]["region"]
    assert (region["startColumn"], region["endColumn"]) == (7, 8)
    assert "/*é*/ x = y;"[region["startColumn"] - 1] == "x"


# -- text -----------------------------------------------------------------------------

def _caret_target(out: str, line_no: int) -> str:
    """The displayed source text under the caret marks, for the finding on ``line_no``."""
    lines = out.splitlines()
    i = next(i for i, l in enumerate(lines) if l.startswith(f" {line_no} | "))
    src, caret = lines[i], lines[i + 1]
    return src[caret.index("^"):len(caret)]


def test_text_diagnostic_line_and_caret():
    out = render(sample_report(), "text")
    assert "src/reduce.cu:12:12: HP201 high: 32-bit lane mask [warp-mask-32bit]" in out
    assert _caret_target(out, 12) == "__ballot_sync"
    assert "    = help: use a 64-bit mask" in out
    assert "\x1b[" not in out


def test_text_caret_with_tabs():
    out = render(sample_report(), "text")
    assert _caret_target(out, 7) == "ext = CU"  # bytes 2..9, the first just after the tab
    src, caret = source_and_caret(finding(source_line="\t\tx = __shfl(v);", col=7, end_col=13))
    assert "\t" not in src and "\t" not in caret
    assert src[caret.index("^"):len(caret)] == "__shfl"
    assert caret.index("^") == 20  # two tabs of 8, then "x = "


def test_text_caret_after_multibyte_and_wide_characters():
    line = "/* 漢字 é */ call();"
    col = len("/* 漢字 é */ ".encode()) + 1
    src, caret = source_and_caret(finding(source_line=line, col=col, end_col=col + 4))
    assert caret.index("^") == len("/* ") + 4 + len(" é */ ")  # two wide chars take 4 columns
    assert caret.strip() == "^~~~"


def test_text_caret_past_end_of_line():
    src, caret = source_and_caret(finding(source_line="f(x", col=4, end_col=4))
    assert caret == "   ^"


@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=100),
       st.integers(0, 110), st.integers(0, 12))
def test_the_plain_ascii_caret_matches_the_cell_by_cell_one(line: str, start: int, width: int) -> None:
    """Short ASCII lines without tabs take a shortcut; it must draw what the general path
    draws, wherever the span starts and ends (past the end of the line included)."""
    end = max(start + width, min(start + 1, len(line)), start)  # as highlight_span bounds it
    assert _plain_source_and_caret(line, start, end) == _cell_source_and_caret(line, start, end)


def test_text_long_line_is_windowed_around_the_caret():
    line = "x" * 300 + " target " + "y" * 300
    col = 302
    src, caret = source_and_caret(finding(source_line=line, col=col, end_col=col + 6))
    assert len(src) <= 100 and src.startswith("…") and src.endswith("…")
    assert src[caret.index("^"):len(caret)] == "target"


def test_text_neutralises_control_characters():
    evil = finding(message="boom\x1b[2J", source_line="x\x1b]0;title\x07 = 1;")
    out = render(Report("0.1.0", (7, 2, 1), "scan", [evil]), "text")
    assert "\x1b" not in out and "\x07" not in out


def test_text_color_and_summary():
    report = sample_report()
    out = render(report, "text", color=True)
    assert "\x1b[1;31mHP201 high:\x1b[0m" in out
    plain = render(report, "text")
    summary = plain.split("hipport scan: ROCm 7.2.1", 1)[1]
    assert "files     5 (converted 2, error 1, unchanged 2)" in summary
    assert "rewrites  17" in summary
    assert "findings  5 (4 open, 1 fixed)" in summary
    assert "severity  blocker 1, high 1, medium 1, low 1, info 1" in summary
    assert "effort    large 2, medium 1, small 1 (open findings)" in summary
    assert "src/blob.cu: not UTF-8 | <binary>" in summary
    assert plain.index("setup.py:7") < plain.index("src/evil <b>.cu:1") < plain.index("src/main.cu")


# -- Markdown -------------------------------------------------------------------------

def _finding_rows(md: str) -> list[str]:
    return [l for l in md.splitlines() if re.match(r"\| \d+:\d+ \|", l)]


def _cells(row: str) -> list[str]:
    """Split a GFM table row the way GitHub does: on pipes not escaped by a backslash."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def test_markdown_escapes_pipes_backticks_and_html():
    md = render(sample_report(), "markdown")
    rows = _finding_rows(md)
    assert len(rows) == 4  # the open ones; the fixed one is listed apart
    assert all(len(_cells(r)) == 6 for r in rows), "a | in the text split a cell"
    ptx = next(r for r in rows if "HP301" in r)
    assert 'inline PTX \\`asm("...")\\` \\| cannot run on AMD' in ptx
    evil = next(r for r in rows if "HP401" in r)
    assert "<script>" not in _cells(evil)[3] and r"\<script\>" in evil
    assert r"\<img src=x onerror=alert(1)\>" in evil
    assert "### `src/evil <b>.cu` · score 3" in md
    assert "| `src/blob.cu` | not UTF-8 \\| \\<binary\\> |" in md


def test_markdown_opens_with_one_row_per_rule_worst_first_and_lists_fixed_apart():
    md = render(sample_report(), "markdown")
    table = md[md.index("## Rules at a glance"):md.index("## Summary")]
    codes = re.findall(r"^\| \[(HP\d+)\]", table, re.M)
    assert codes == ["HP301", "HP201", "HP401", "HP501", "HP101"]  # by severity
    hp101 = next(l for l in table.splitlines() if l.startswith("| [HP101]"))
    assert _cells(hp101)[1:6] == ["info", "0", "1", "1", "none"]  # open, fixed, files, effort
    fixed = md[md.index("## Fixed automatically"):md.index("## Errors")]
    assert "cudaMalloc rewritten" in fixed and "cudaMalloc rewritten" not in md[:md.index("## Fixed")]
    # Files riskiest first: the blocker's file, then the medium, then the low.
    assert md.index("### `src/reduce.cu`") < md.index("### `src/evil") < md.index("### `setup.py`")


def test_markdown_groups_repeated_findings_and_names_output_lines():
    repeated = [finding(path=f"src/k{i % 3}.cu", line=10 + i, code="HP101", slug="api-unsupported",
                        message="nv_bfloat162: no HIP equivalent", output_line=11 + i)
                for i in range(5)]
    report = dataclasses.replace(sample_report(), findings=sample_report().findings + repeated)
    md = render(report, "markdown")
    assert "| 5 × HP101 in 3 files | high | nv\\_bfloat162: no HIP equivalent |" in md
    assert "| 10:12 → 11 | [HP101]" in md  # the input line, then the line in the output


def test_markdown_code_span_survives_backticks():
    from hipport.report.markdown import code

    assert code("a`b") == "``a`b``"
    assert code("`x`") == "`` `x` ``"
    assert code("a|b") == r"`a\|b`"


def test_markdown_structure_and_rule_anchors():
    md = render(sample_report(), "markdown")
    assert md.startswith("# hipport porting report: ROCm 7.2.1\n")
    headings = re.findall(r"^## (.+)$", md, re.M)
    assert headings == ["Rules at a glance", "Summary", "By family and severity",
                        "Effort (open findings)", "Findings", "Fixed automatically", "Errors", "Rules"]
    assert "| HP2xx | 0 | 1 | 0 | 0 | 0 | 1 |" in md
    links = set(re.findall(r"\]\(#(rule-[a-z0-9-]+)\)", md))
    anchors = set(re.findall(r'<a id="(rule-[a-z0-9-]+)"></a>', md))
    assert links == anchors == {"rule-hp101", "rule-hp201", "rule-hp301", "rule-hp401", "rule-hp501"}
    assert "### HP301: Inline PTX assembly \\| \\<b\\>not portable\\</b\\>" in md
    assert "```cuda\nunsigned long long m = __ballot(p);\n```" in md
