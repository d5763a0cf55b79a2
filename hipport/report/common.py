"""What every renderer needs the same way: order, risk scores, rules seen, columns.

Kept in one place so that the five formats cannot disagree about which file is riskiest,
which rules a report cites, or where on a line a finding starts.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from hipport.findings import Finding, Severity
from hipport.report.model import Report
from hipport.rule import Rule
from hipport.versions import short_version

#: Weight of one open finding in a file's risk score: each step up is three times as bad,
#: so a few serious findings outrank many minor ones; info never makes a file risky.
SEVERITY_WEIGHT: dict[Severity, int] = {
    Severity.INFO: 0,
    Severity.LOW: 1,
    Severity.MEDIUM: 3,
    Severity.HIGH: 9,
    Severity.BLOCKER: 27,
}

#: Severities from worst to mildest, the order every summary lists them in.
SEVERITIES_DESC: tuple[Severity, ...] = tuple(sorted(Severity, reverse=True))


def ordered_findings(report: Report) -> list[Finding]:
    """Findings by path, line, column, code: the same order in every format, every run."""
    return sorted(report.findings, key=Finding.sort_key)


def by_path(report: Report) -> dict[str, list[Finding]]:
    """Findings grouped by file, paths in sorted order."""
    groups: dict[str, list[Finding]] = {}
    for f in ordered_findings(report):
        groups.setdefault(f.path, []).append(f)
    return groups


@dataclass(frozen=True)
class FileRisk:
    path: str
    score: int
    findings: list[Finding]


def risk_score(findings: list[Finding]) -> int:
    """Weighted sum of the findings still open (fixed ones cost nobody anything)."""
    return sum(SEVERITY_WEIGHT[f.severity] for f in findings if not f.fixed)


def riskiest_files(report: Report) -> list[FileRisk]:
    """Files with findings, highest score first; ties broken by path for determinism."""
    risks = [FileRisk(p, risk_score(fs), fs) for p, fs in by_path(report).items()]
    return sorted(risks, key=lambda r: (-r.score, r.path))


def rule_for(report: Report, finding: Finding) -> Rule:
    """The registered rule of a finding, or a stand-in built from the finding itself.

    Renderers that must describe every rule they cite (SARIF, the Rules sections) would
    otherwise break on a report whose rule table is incomplete.
    """
    rule = report.rules.get(finding.code)
    if rule is not None:
        return rule
    return Rule(finding.code, finding.slug, finding.severity, finding.effort, finding.slug, "")


def rules_seen(report: Report, findings: Iterable[Finding] | None = None) -> list[Rule]:
    """One rule per code cited by ``findings`` (default: all the report's), sorted by code."""
    seen: dict[str, Rule] = {}
    for f in report.findings if findings is None else findings:
        if f.code not in seen:
            seen[f.code] = rule_for(report, f)
    return [seen[c] for c in sorted(seen)]


def rocm_range(rule: Rule) -> str:
    """The ROCm releases a rule applies to, e.g. ``>=7.0``, ``<7.0``, ``>=6.2, <7.0``, ``all``."""
    parts = []
    if rule.rocm_min is not None:
        parts.append(f">={short_version(rule.rocm_min)}")
    if rule.rocm_max is not None:
        parts.append(f"<{short_version(rule.rocm_max)}")
    return ", ".join(parts) or "all"


def char_index(line: str, byte_col: int) -> int:
    """0-based character index in ``line`` of a 1-based UTF-8 byte column.

    Findings carry byte columns (tree-sitter's); anything that draws or reports in
    characters must convert, or a caret lands right of its target after any non-ASCII.
    Columns past the end of the line clamp to just after it.
    """
    prefix = line.encode("utf-8")[: max(byte_col - 1, 0)]
    return min(len(prefix.decode("utf-8", "ignore")), len(line))


def highlight_span(finding: Finding) -> tuple[int, int]:
    """Character range ``[start, end)`` of ``source_line`` that the finding covers.

    A finding spanning several lines is highlighted to the end of its first line; an
    empty range is widened to one character so there is always something to point at.
    """
    line = finding.source_line
    start = char_index(line, finding.col)
    if finding.end_line == finding.line and finding.end_col > finding.col:
        end = char_index(line, finding.end_col)
    else:
        end = len(line) if finding.end_line > finding.line else start
    return start, max(end, min(start + 1, len(line)), start)


def display_width(text: str) -> int:
    """Terminal columns taken by ``text``: wide CJK counts 2, combining marks 0."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width
