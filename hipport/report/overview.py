"""What a porting engineer reads first: one row per rule, identical findings grouped, and
paths short enough to read.

A report of 300 findings is worked through by rule ("fix every HP201, then the PTX"), not
line by line; the per-rule table says how many, how bad, how much work and what to do,
and the groups ("33 × `nv_bfloat162` in 6 files") turn repetition into one decision.
Shared by the Markdown, HTML and text renderers so they cannot disagree.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from hipport.findings import Effort, Finding, Severity
from hipport.report.common import rule_for
from hipport.report.model import Report
from hipport.rule import Rule

#: Longest "what to do" line in the per-rule table before it is cut at a word.
FIX_LINE_WIDTH = 140
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")


@dataclass(frozen=True)
class RuleRow:
    rule: Rule
    severity: Severity  # the worst severity its findings carry (overrides included)
    open: int
    fixed: int
    files: int
    effort: Effort

    @property
    def count(self) -> int:
        return self.open + self.fixed


def rule_rows(report: Report) -> list[RuleRow]:
    """One row per rule cited: worst first, then most open findings, then by code."""
    by_code: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_code.setdefault(f.code, []).append(f)
    rows = []
    for code, fs in by_code.items():
        rule = rule_for(report, fs[0])
        opened = [f for f in fs if not f.fixed]
        rows.append(RuleRow(
            rule, max(f.severity for f in fs), len(opened), len(fs) - len(opened),
            len({f.path for f in fs}), max((f.effort for f in opened), default=Effort.NONE)))
    return sorted(rows, key=lambda r: (-r.severity, -r.open, r.rule.code))


def fix_line(rule: Rule) -> str:
    """The first sentence of the rule page's fix (a ``## Fix`` section or a paragraph that
    starts ``Fix:``), else its title, as one line."""
    text = _section(rule.doc, "Fix") or _paragraph(rule.doc, "Fix:") or rule.title
    text = " ".join(text.split())
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    first = first[:1].upper() + first[1:]
    if len(first) <= FIX_LINE_WIDTH:
        return first
    cut = first.rfind(" ", 0, FIX_LINE_WIDTH - 1)
    return first[:cut if cut > 0 else FIX_LINE_WIDTH - 1] + "…"


def _paragraph(doc: str, prefix: str) -> str:
    for para in re.split(r"\n\s*\n", doc):
        if para.lstrip().startswith(prefix):
            return para.lstrip()[len(prefix):].strip()
    return ""


def _section(doc: str, name: str) -> str:
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        if line.strip().lstrip("#").strip().lower() == name.lower() and line.lstrip().startswith("#"):
            body = []
            for more in lines[i + 1:]:
                if more.lstrip().startswith("#") or more.startswith("```"):
                    break
                body.append(more)
            return "\n".join(body).strip()
    return ""


@dataclass(frozen=True)
class Group:
    """Findings with the same rule and message: one decision, many places."""

    code: str
    message: str
    severity: Severity
    findings: tuple[Finding, ...]

    @property
    def files(self) -> int:
        return len({f.path for f in self.findings})

    def label(self) -> str:
        """``33 × HP101 in 6 files`` (or ``1 ×`` … ``in 1 file``)."""
        n = self.files
        return f"{len(self.findings)} × {self.code} in {n} file{'s' * (n != 1)}"


def groups(findings: Iterable[Finding], at_least: int = 2) -> list[Group]:
    """Findings repeated ``at_least`` times (same code and message), most first."""
    found: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        found.setdefault((f.code, f.message), []).append(f)
    out = [Group(code, msg, max(f.severity for f in fs), tuple(fs))
           for (code, msg), fs in found.items() if len(fs) >= at_least]
    return sorted(out, key=lambda g: (-len(g.findings), -g.severity, g.code, g.message))


def common_root(report: Report) -> str:
    """The directory every input path of the report lies under ("" when they share none).
    Outputs have their own (``output_root``): ``convert SRC -o /elsewhere`` shares only
    ``/`` with its input, and paths relative to ``/`` are not short."""
    return _root([f.path for f in report.findings] + [f.path for f in report.files])


def output_root(report: Report) -> str:
    """The directory every written file lies under ("" when none or they share none)."""
    return _root([f.output for f in report.files if f.output])


def _root(paths: list[str]) -> str:
    if not paths:
        return ""
    dirs = [os.path.dirname(p) for p in paths]
    try:
        root = os.path.commonpath(dirs) if all(dirs) else ""
    except ValueError:  # absolute and relative paths mixed
        return ""
    return root


def short(path: str, root: str) -> str:
    """``path`` relative to ``root``, with forward slashes."""
    if root and (path == root or path.startswith(root.rstrip("/\\") + os.sep)):
        path = path[len(root.rstrip("/\\")) + 1:]
    return path.replace("\\", "/")
