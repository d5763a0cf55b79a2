"""The terminal report: compiler-style diagnostics, then a summary block.

Each finding reads like a gcc/rustc diagnostic (``path:line:col: HP201 high: message
[slug]``, the source line, a caret under the column) so editors and people already know
how to read it. Source text is untrusted: control characters are neutralised so a file
cannot repaint the terminal.
"""

from __future__ import annotations

import re

from hipport.findings import Effort, Finding, Severity
from hipport.report.common import (
    SEVERITIES_DESC,
    by_path,
    display_width,
    highlight_span,
)
from hipport.report.model import Report

TAB_WIDTH = 8  # what terminals and gcc use, so the caret lines up with `cat`
MAX_SOURCE_WIDTH = 100  # longer lines are shown as a window around the caret
LEFT_CONTEXT = 30  # columns kept before the caret when a long line is windowed
ELLIPSIS = "…"

_SEVERITY_COLOR = {
    Severity.BLOCKER: "1;35",
    Severity.HIGH: "1;31",
    Severity.MEDIUM: "1;33",
    Severity.LOW: "1;36",
    Severity.INFO: "1;34",
}
_CONTROL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


class _Style:
    """ANSI SGR wrapping that collapses to plain text when color is off."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, sgr: str) -> str:
        return f"\x1b[{sgr}m{text}\x1b[0m" if self.color and text else text


def _clean(text: str) -> str:
    """Replace control characters (ANSI escapes, CR, NUL) that would corrupt a terminal."""
    return _CONTROL_RE.sub("\N{REPLACEMENT CHARACTER}", text)


def _cells(line: str) -> list[tuple[str, int]]:
    """Each character as (what to print, columns it takes), tabs expanded to TAB_WIDTH."""
    cells, column = [], 0
    for ch in line:
        if ch == "\t":
            width = TAB_WIDTH - column % TAB_WIDTH
            cells.append((" " * width, width))
        else:
            width = display_width(ch)
            cells.append((ch, width))
        column += width
    return cells


def source_and_caret(finding: Finding) -> tuple[str, str]:
    """The finding's source line as displayed and the caret line drawn under it.

    The caret line is built cell by cell from the same expansion as the source line, so
    tabs, wide characters and non-ASCII bytes before the column cannot shift it.
    """
    line = _clean(finding.source_line)
    start, end = highlight_span(finding)
    if len(line) <= MAX_SOURCE_WIDTH and line.isascii() and "\t" not in line:
        return _plain_source_and_caret(line, start, end)
    return _cell_source_and_caret(line, start, end)


def _cell_source_and_caret(line: str, start: int, end: int) -> tuple[str, str]:
    """The general case: a cell per character, tabs expanded, wide characters counted."""
    cells = _cells(line)
    marks = []
    for i, (_, width) in enumerate(cells):
        mark = " " if not start <= i < end else ("^" if i == start else "~")
        marks.append(mark + (" " if mark == " " else "~") * (width - 1) if width else "")
    if start >= len(cells):  # the column is at or past the end of the line
        cells.append(("", 0))
        marks.append("^")
    total = sum(w for _, w in cells)
    if total <= MAX_SOURCE_WIDTH:
        return "".join(c for c, _ in cells).rstrip(), "".join(marks).rstrip()
    return _window(cells, marks, start)


def _plain_source_and_caret(line: str, start: int, end: int) -> tuple[str, str]:
    """``source_and_caret`` for a short ASCII line without tabs, where a character is a
    column: the same result without a width lookup per character (a report of 30,000
    findings spent most of its time there)."""
    if start >= len(line):
        caret = " " * len(line) + "^"
    else:
        caret = " " * start + "^" + "~" * (min(end, len(line)) - start - 1)
    return line.rstrip(), caret.rstrip()


def _window(cells: list[tuple[str, int]], marks: list[str], start: int) -> tuple[str, str]:
    """Cut a long line to MAX_SOURCE_WIDTH columns, keeping the caret in view."""
    left = 0
    offset = sum(w for _, w in cells[:start])
    while offset > LEFT_CONTEXT and left < start:
        offset -= cells[left][1]
        left += 1
    src, car = (ELLIPSIS, " ") if left else ("", "")
    width = len(src)
    for (text, w), mark in zip(cells[left:], marks[left:]):
        if width + w > MAX_SOURCE_WIDTH - 1:
            src += ELLIPSIS
            break
        src, car, width = src + text, car + mark, width + w
    return src.rstrip(), car.rstrip()


def _finding(f: Finding, style: _Style) -> list[str]:
    sev = _SEVERITY_COLOR[f.severity]
    head = (
        f"{style(f'{_clean(f.path)}:{f.line}:{f.col}:', '1')} "
        f"{style(f'{f.code} {f.severity}:', sev)} {_clean(f.message)} [{_clean(f.slug)}]"
    )
    if f.output_line and f.output_line != f.line:
        head += " " + style(f"(output line {f.output_line})", "2")
    if f.fixed:
        head += " " + style("(fixed)", "32")
    lines = [head]
    if f.source_line:
        src, caret = source_and_caret(f)
        gutter = " " * len(str(f.line))
        lines.append(f" {style(f'{f.line} |', '34')} {src}")
        marks = caret.lstrip()
        lines.append(f" {style(f'{gutter} |', '34')} {caret[:len(caret) - len(marks)]}{style(marks, sev)}")
    if f.suggestion:
        lines.append(f"    {style('= help:', '32')} {_clean(f.suggestion)}")
    return lines


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items() if v) or "none"


def _by_effort_desc(counts: dict[str, int]) -> dict[str, int]:
    """Effort buckets largest first, the order a planner reads them in."""
    return {str(e): counts[str(e)] for e in sorted(Effort, reverse=True) if str(e) in counts}


def _summary(report: Report, style: _Style) -> list[str]:
    s = report.summary()
    open_ = s["findings"] - s["fixed"]
    rows = [
        ("files", f"{s['files']} ({_counts(s['files_by_status'])})" if s["files"] else "0"),
        ("rewrites", str(s["rewrites"])),
        ("findings", f"{s['findings']} ({open_} open, {s['fixed']} fixed)"),
        ("severity", ", ".join(
            style(f"{sev} {s['by_severity'][str(sev)]}", _SEVERITY_COLOR[sev])
            if s["by_severity"][str(sev)] else f"{sev} 0"
            for sev in SEVERITIES_DESC
        )),
        ("families", _counts(s["by_family"])),
        ("effort", _counts(_by_effort_desc(s["by_effort"])) + " (open findings)"),
        ("errors", str(len(report.errors))),
    ]
    title = f"hipport {report.command}: ROCm {report.target_name}"
    lines = [style(title, "1")]
    lines += [f"  {name:<9} {value}" for name, value in rows]
    lines += [f"    {_clean(e.path)}: {_clean(e.message)}" for e in report.errors]
    return lines


def render(report: Report, *, color: bool = False) -> str:
    """Diagnostics grouped by file (sorted by path), a blank line between files, a summary."""
    style = _Style(color)
    blocks = [
        "\n".join(line for f in findings for line in _finding(f, style))
        for findings in by_path(report).values()
    ]
    blocks.append("\n".join(_summary(report, style)))
    return "\n\n".join(blocks) + "\n"


def how_to_read(codes: list[str]) -> str:
    """The closing hint of ``check`` and ``scan``: how to read a rule and how to silence one,
    with a code the run reported (so it can be pasted as is)."""
    code = codes[0] if codes else "HP201"
    return (f"hipport: `hipport rules {code}` explains a rule (what, why, how to fix); silence one "
            f"finding with `// hipport: ignore[{code}]` on its line or the line above, a rule with "
            f"`--ignore {code}` or `ignore = [\"{code}\"]` in [tool.hipport]")
