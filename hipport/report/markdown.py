"""The Markdown report written beside converted sources (hipport-report.md), for GitHub.

Everything that came from a scanned file (paths, messages, source text) is escaped: a
``|`` would otherwise split a table cell, a backtick open a code span, and ``<tag>`` be
swallowed as HTML. Rule docs are hipport's own Markdown and go in unescaped.
"""

from __future__ import annotations

import re

from hipport.findings import Effort, Finding
from hipport.report.common import SEVERITIES_DESC, riskiest_files, rocm_range, rules_seen
from hipport.report.model import Report
from hipport.report.overview import common_root, fix_line, groups, output_root, rule_rows, short

_SPECIAL_RE = re.compile(r"([\\`*_\[\]<>|~&#!])")
_BACKTICKS_RE = re.compile(r"`+")
_HEADING_RE = re.compile(r"#{1,4} ")


def escape(text: str) -> str:
    """Plain text safe in a paragraph or a table cell: punctuation escaped, one line."""
    return "<br>".join(_SPECIAL_RE.sub(r"\\\1", text).splitlines())


def code(text: str) -> str:
    """A code span that holds any text: the fence is longer than any backtick run inside.

    ``|`` is escaped even inside the span, because GFM splits table cells before it
    parses code spans (and unescapes ``\\|`` afterwards).
    """
    longest = max((len(m) for m in _BACKTICKS_RE.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else ""
    body = " ".join(text.splitlines()).replace("|", "\\|")
    return f"{fence}{pad}{body}{pad}{fence}"


def anchor(rule_code: str) -> str:
    return "rule-" + re.sub(r"[^a-z0-9-]", "", rule_code.lower())


def _table(header: list[str], rows: list[list[str]], align: str) -> list[str]:
    """A GFM table; ``align`` has one character per column, ``l`` or ``r``."""
    rule = ["---:" if a == "r" else "---" for a in align]
    return [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(rule) + " |",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _summary(report: Report) -> list[str]:
    s = report.summary()
    statuses = ", ".join(f"{k} {v}" for k, v in s["files_by_status"].items())
    rows = [
        ["Files", f"{s['files']}" + (f" ({escape(statuses)})" if statuses else "")],
        ["Rewrites", str(s["rewrites"])],
        ["Findings", str(s["findings"])],
        ["Open", str(s["findings"] - s["fixed"])],
        ["Fixed automatically", str(s["fixed"])],
        ["Errors", str(len(report.errors))],
    ]
    return ["## Summary", "", *_table(["", "Count"], rows, "lr")]


def _by_family(report: Report) -> list[str]:
    counts: dict[str, dict[str, int]] = {}
    for f in report.findings:
        counts.setdefault(f.code[:3] + "xx", {}).setdefault(str(f.severity), 0)
        counts[f.code[:3] + "xx"][str(f.severity)] += 1
    sevs = [str(s) for s in SEVERITIES_DESC]
    rows = [
        [fam, *(str(by_sev.get(s, 0)) for s in sevs), str(sum(by_sev.values()))]
        for fam, by_sev in sorted(counts.items())
    ]
    totals = report.summary()["by_severity"]
    rows.append(["**Total**", *(f"**{totals[s]}**" for s in sevs), f"**{len(report.findings)}**"])
    return [
        "## By family and severity",
        "",
        *_table(["Family", *sevs, "Total"], rows, "l" + "r" * (len(sevs) + 1)),
    ]


def _effort(report: Report) -> list[str]:
    counts = report.summary()["by_effort"]
    rows = [[str(e), str(counts[str(e)])] for e in sorted(Effort, reverse=True) if str(e) in counts]
    if not rows:
        return []
    return ["## Effort (open findings)", "", *_table(["Effort", "Findings"], rows, "lr")]


def _rule_table(report: Report) -> list[str]:
    """Opens the report: one row per rule, worst first, with what to do about it."""
    rows = [
        [f"[{r.rule.code}](#{anchor(r.rule.code)}) {code(r.rule.slug)}", str(r.severity),
         str(r.open), str(r.fixed), str(r.files), str(r.effort), escape(fix_line(r.rule))]
        for r in rule_rows(report)
    ]
    if not rows:
        return []
    return ["## Rules at a glance", "",
            *_table(["Rule", "Severity", "Open", "Fixed", "Files", "Effort", "What to do"], rows, "llrrrll")]


def _repeated(report: Report) -> list[str]:
    found = groups(f for f in report.findings if not f.fixed)
    if not found:
        return []
    rows = [[g.label(), str(g.severity), escape(g.message)] for g in found]
    return ["## Repeated findings", "", "Each row is one decision to make once, for every place it lists.", "",
            *_table(["Where", "Severity", "Message"], rows, "lll")]


def _line(f: Finding) -> str:
    """``12:5``, and where the line is in the converted output when it moved: ``12:5 → 14``."""
    at = f"{f.line}:{f.col}"
    return at + (f" → {f.output_line}" if f.output_line and f.output_line != f.line else "")


def _finding_row(f: Finding) -> list[str]:
    return [
        _line(f),
        f"[{f.code}](#{anchor(f.code)})",
        str(f.severity),
        escape(f.message),
        code(f.source_line.strip()) if f.source_line.strip() else "",
        escape(f.suggestion),
    ]


def _findings(report: Report, root: str) -> list[str]:
    """Open findings per file, riskiest file first; fixed ones in a section of their own."""
    lines = ["## Findings"]
    outputs = {o.path: o.output for o in report.files if o.output}
    out_root = output_root(report)
    any_open = False
    for risk in riskiest_files(report):
        opened = [f for f in risk.findings if not f.fixed]
        if not opened:
            continue
        any_open = True
        out = outputs.get(risk.path)
        title = f"### {code(short(risk.path, root))} · score {risk.score}"
        lines += ["", title + (f" · output {code(short(out, out_root))}" if out else ""), ""]
        lines += _table(["Line", "Rule", "Severity", "Message", "Source", "Suggestion"],
                        [_finding_row(f) for f in opened], "rlllll")
    if not any_open:
        lines += ["", "No open findings."]
    fixed = [f for f in report.findings if f.fixed]
    if fixed:
        lines += ["", "## Fixed automatically", "",
                  f"{len(fixed)} finding{'s' * (len(fixed) != 1)} that `hipport convert` fixed; "
                  "review them in the output."]
        rows = [[code(short(f.path, root)), _line(f), f"[{f.code}](#{anchor(f.code)})", escape(f.message)]
                for f in sorted(fixed, key=Finding.sort_key)]
        lines += ["", *_table(["File", "Line", "Rule", "Message"], rows, "lrll")]
    return lines


def _errors(report: Report) -> list[str]:
    if not report.errors:
        return []
    rows = [[code(e.path), escape(e.message)] for e in sorted(report.errors, key=lambda e: e.path)]
    return ["## Errors", "", *_table(["File", "Message"], rows, "ll")]


def _rules(report: Report) -> list[str]:
    rules = rules_seen(report)
    if not rules:
        return []
    lines = ["## Rules"]
    for r in rules:
        meta = (
            f"{code(r.slug)} · {r.severity} · effort {r.effort} · ROCm {escape(rocm_range(r))}"
            f" · `hipport rules {r.code}`"
        )
        lines += ["", f'<a id="{anchor(r.code)}"></a>', "", f"### {r.code}: {escape(r.title)}", "", meta]
        if r.doc:
            lines += ["", "<details><summary>Why, and how to fix</summary>", "", _demoted(r.doc), "", "</details>"]
    return lines


def _demoted(doc: str) -> str:
    """A rule page with its headings (``## Why``) put under the report's ``### HP…``,
    so they do not close the report's sections; code blocks are left alone."""
    out, fenced = [], False
    for line in doc.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and _HEADING_RE.match(line):
            line = "##" + line
        out.append(line)
    return "\n".join(out)


def render(report: Report, *, color: bool = False) -> str:
    """Title, the per-rule table, summary, family × severity, effort, repeated findings,
    open findings per file (riskiest first), fixed ones, errors, rule pages."""
    root, out_root = common_root(report), output_root(report)
    meta = f"{code('hipport ' + report.command)} · hipport {escape(report.tool_version)}"
    if report.gpus:
        meta += f" · GPUs {escape(report.gpus)}"
    sections = [
        [f"# hipport porting report: ROCm {report.target_name}", "", meta]
        + (["", f"Paths are relative to {code(root)}" + (
            f", outputs to {code(out_root)}." if out_root and out_root != root else ".")] if root else []),
        _rule_table(report),
        _summary(report),
        _by_family(report),
        _effort(report),
        _repeated(report),
        _findings(report, root),
        _errors(report),
        _rules(report),
    ]
    return "\n\n".join("\n".join(s) for s in sections if s) + "\n"
