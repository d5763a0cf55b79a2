"""The HTML report: one self-contained page to open, attach to a ticket or publish from CI.

No network, no fonts, no scripts: styles are inline and the severity filter is pure CSS
(``:has()`` on checkboxes), so the page works offline, under a strict CSP and with
JavaScript off. Every string from the report is escaped, because source lines and
messages come from the files scanned and may well contain ``<script>``. Messages and
suggestions quote code in backticks, so those spans (and only after escaping) become
``<code>``.
"""

from __future__ import annotations

import re
from html import escape

from hipport.findings import Effort, Finding, Severity
from hipport.report.common import (
    SEVERITIES_DESC,
    SEVERITY_WEIGHT,
    FileRisk,
    highlight_span,
    riskiest_files,
    rocm_range,
    rules_seen,
)
from hipport.report.doc_html import inline, to_html
from hipport.report.model import Report

_COLORS = {
    Severity.BLOCKER: "#8e24aa",
    Severity.HIGH: "#d32f2f",
    Severity.MEDIUM: "#ef6c00",
    Severity.LOW: "#0277bd",
    Severity.INFO: "#607d8b",
}

_CSS = """
:root { --fg:#1f2328; --muted:#59636e; --bg:#fff; --panel:#f6f8fa; --line:#d1d9e0;
  --mark:#fff1a8; --link:#0969da; color-scheme: light dark; }
@media (prefers-color-scheme: dark) { :root { --fg:#e6edf3; --muted:#9198a1; --bg:#0d1117;
  --panel:#161b22; --line:#30363d; --mark:#5c4a00; --link:#4493f8; } }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",
  "Liberation Sans",sans-serif; color:var(--fg); background:var(--bg); }
a { color:var(--link); text-decoration:none; } a:hover { text-decoration:underline; }
code, pre, .mono { font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",
  "Liberation Mono",monospace; font-size:13px; }
header { padding:24px 32px 8px; border-bottom:1px solid var(--line); }
header > * { max-width:1136px; } /* line up with main's content box */
header h1 { margin:0; font-size:24px; } .meta { color:var(--muted); margin:4px 0 16px; }
main { padding:8px 32px 48px; max-width:1200px; }
h2 { font-size:19px; margin:32px 0 12px; padding-bottom:6px; border-bottom:1px solid var(--line); }
.cards { display:grid; grid-template-columns:repeat(auto-fill,minmax(96px,1fr)); gap:12px;
  margin-bottom:16px; }
.card { background:var(--panel); border:1px solid var(--line); border-radius:8px;
  border-top:4px solid var(--c, var(--line)); padding:8px 14px; }
.card b { display:block; font-size:24px; line-height:1.2; } .card span { color:var(--muted); font-size:13px; }
.grid { display:grid; grid-template-columns:repeat(auto-fit,minmax(320px,1fr)); gap:24px; }
.bars { display:grid; grid-template-columns:max-content 1fr max-content; gap:6px 10px;
  align-items:center; }
.track { background:var(--panel); border-radius:4px; height:16px; display:flex; overflow:hidden; }
.track i { display:block; height:100%; }
.num { text-align:right; font-variant-numeric:tabular-nums; }
.legend { display:flex; gap:14px; flex-wrap:wrap; color:var(--muted); font-size:13px; margin-top:10px; }
.dot { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:4px;
  background:var(--c); }
table { border-collapse:collapse; width:100%; }
th, td { text-align:left; padding:6px 10px; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-size:13px; color:var(--muted); font-weight:600; } td.num, th.num { text-align:right; }
.badge { display:inline-block; color:#fff; background:var(--c); border-radius:10px;
  padding:0 8px; font-size:12px; font-weight:600; line-height:20px; }
.filter { border:1px solid var(--line); border-radius:8px; padding:8px 14px; margin:0 0 16px; }
.filter label { margin-right:16px; white-space:nowrap; cursor:pointer; }
.file { margin:24px 0 8px; font-size:16px; word-break:break-all; }
.file small { color:var(--muted); font-weight:normal; }
.finding { border:1px solid var(--line); border-left:4px solid var(--c); border-radius:6px;
  padding:10px 14px; margin:10px 0; background:var(--bg); }
.finding.fixed { opacity:.7; }
.finding .head { display:flex; flex-wrap:wrap; gap:8px; align-items:baseline; }
.finding .loc { color:var(--muted); } .finding .slug { color:var(--muted); }
.finding p { margin:6px 0; }
.src { background:var(--panel); border-radius:4px; padding:6px 10px; margin:6px 0;
  overflow-x:auto; white-space:pre; tab-size:4; }
.src .ln { color:var(--muted); user-select:none; margin-right:12px; }
.src mark { background:var(--mark); color:inherit; border-bottom:2px solid var(--c); }

.fix { color:var(--muted); } .fix b { color:var(--fg); }
.rule { border:1px solid var(--line); border-radius:8px; padding:4px 18px 8px; margin:14px 0; }
.rule h3 .mono { font-size:inherit; }
.rule pre { background:var(--panel); padding:10px; border-radius:6px; overflow-x:auto; }
.rule :target, .rule:target { outline:2px solid var(--link); }
.empty { color:var(--muted); }
footer { color:var(--muted); font-size:13px; padding:0 32px 32px; }
"""


def _var(sev: Severity) -> str:
    return f'style="--c:{_COLORS[sev]}"'


def _rule_id(code: str) -> str:
    return "rule-" + re.sub(r"[^A-Za-z0-9-]", "", code)


def _filter_css() -> str:
    """Hide a severity's findings when its checkbox is unticked (no JavaScript needed)."""
    return "\n".join(
        f"body:has(#show-{s}:not(:checked)) .finding[data-severity={s}] {{ display:none; }}"
        for s in SEVERITIES_DESC
    )


def _header(report: Report) -> str:
    s = report.summary()
    open_ = s["findings"] - s["fixed"]
    cards = [
        f'<div class="card"><b id="finding-count">{s["findings"]}</b><span>findings</span></div>',
        f'<div class="card"><b id="open-count">{open_}</b><span>open</span></div>',
        *(
            f'<div class="card" {_var(sev)}><b>{s["by_severity"][str(sev)]}</b>'
            f"<span>{sev}</span></div>"
            for sev in SEVERITIES_DESC
        ),
        f'<div class="card"><b>{s["files"]}</b><span>files</span></div>',
        f'<div class="card"><b>{s["rewrites"]}</b><span>rewrites</span></div>',
        f'<div class="card"><b>{len(report.errors)}</b><span>errors</span></div>',
    ]
    return (
        "<header><h1>hipport porting report</h1>"
        f'<p class="meta">Target <b>ROCm {escape(report.target_name)}</b> · '
        f"<code>hipport {escape(report.command)}</code> · hipport {escape(report.tool_version)}</p>"
        f'<div class="cards">{"".join(cards)}</div></header>'
    )


def _bar(segments: list[tuple[Severity, int]], scale: int) -> str:
    """A horizontal stacked bar; widths are percentages of ``scale``."""
    parts = "".join(
        f'<i title="{sev}: {n}" style="width:{100 * n / scale:.2f}%;background:{_COLORS[sev]}"></i>'
        for sev, n in segments
        if n
    )
    return f'<div class="track">{parts}</div>'


def _charts(report: Report) -> str:
    s = report.summary()
    by_sev = [(sev, s["by_severity"][str(sev)]) for sev in SEVERITIES_DESC]
    scale = max((n for _, n in by_sev), default=0) or 1
    sev_rows = "".join(
        f"<span>{sev}</span>{_bar([(sev, n)], scale)}<span class=num>{n}</span>" for sev, n in by_sev
    )
    families: dict[str, dict[Severity, int]] = {}
    for f in report.findings:
        fam = families.setdefault(f.code[:3] + "xx", {})
        fam[f.severity] = fam.get(f.severity, 0) + 1
    fam_scale = max((sum(c.values()) for c in families.values()), default=0) or 1
    fam_rows = "".join(
        f"<span class=mono>{escape(fam)}</span>"
        f"{_bar([(sev, counts.get(sev, 0)) for sev in SEVERITIES_DESC], fam_scale)}"
        f"<span class=num>{sum(counts.values())}</span>"
        for fam, counts in sorted(families.items())
    )
    legend = "".join(f'<span><span class="dot" {_var(sev)}></span>{sev}</span>' for sev in SEVERITIES_DESC)
    effort = s["by_effort"]
    effort_rows = "".join(
        f"<tr><td>{e}</td><td class=num>{effort[str(e)]}</td></tr>"
        for e in sorted(Effort, reverse=True)
        if str(e) in effort
    ) or '<tr><td colspan=2 class="empty">nothing open</td></tr>'
    return (
        '<section id="summary"><h2>Summary</h2><div class="grid">'
        f'<div><h3>By severity</h3><div class="bars">{sev_rows}</div></div>'
        f'<div><h3>By family</h3><div class="bars">{fam_rows or "<span class=empty>none</span>"}</div>'
        f'<div class="legend">{legend}</div></div>'
        '<div><h3>Effort (open findings)</h3><table><tr><th>Effort</th><th class=num>Findings</th></tr>'
        f"{effort_rows}</table></div>"
        "</div></section>"
    )


def _files_table(risks: list[FileRisk]) -> str:
    if not risks:
        return '<section id="files"><h2>Files</h2><p class="empty">No findings.</p></section>'
    heads = "".join(f"<th class=num>{sev}</th>" for sev in SEVERITIES_DESC)
    scale = max(r.score for r in risks) or 1
    rows = []
    for i, r in enumerate(risks):
        counts = {sev: sum(1 for f in r.findings if f.severity == sev) for sev in SEVERITIES_DESC}
        cells = "".join(f"<td class=num>{counts[sev] or ''}</td>" for sev in SEVERITIES_DESC)
        open_ = {sev: sum(1 for f in r.findings if f.severity == sev and not f.fixed) for sev in SEVERITIES_DESC}
        bar = _bar([(sev, SEVERITY_WEIGHT[sev] * open_[sev]) for sev in SEVERITIES_DESC], scale)
        rows.append(
            f'<tr><td class="mono"><a href="#file-{i}">{escape(r.path)}</a></td>'
            f"<td class=num>{r.score}</td><td style='width:22%'>{bar}</td>{cells}</tr>"
        )
    return (
        '<section id="files"><h2>Riskiest files</h2><table>'
        f"<tr><th>File</th><th class=num>Score</th><th>Risk</th>{heads}</tr>{''.join(rows)}</table>"
        "</section>"
    )


def _source(f: Finding) -> str:
    start, end = highlight_span(f)
    line = f.source_line
    return (
        f'<pre class="src"><span class="ln">{f.line}</span>{escape(line[:start])}'
        f"<mark>{escape(line[start:end])}</mark>{escape(line[end:])}</pre>"
    )


def _finding(f: Finding, n: int) -> str:
    sev = str(f.severity)
    fixed = ' <span class="badge" style="--c:#2e7d32">fixed</span>' if f.fixed else ""
    parts = [
        f'<article class="finding{" fixed" if f.fixed else ""}" id="finding-{n}" '
        f'data-severity="{sev}" data-code="{escape(f.code)}" {_var(f.severity)}>',
        '<div class="head">'
        f'<span class="badge">{sev}</span>'
        f'<a class="code mono" href="#{_rule_id(f.code)}"><b>{escape(f.code)}</b></a>'
        f'<span class="slug mono">{escape(f.slug)}</span>'
        f'<span class="loc mono">{escape(f.path)}:{f.line}:{f.col}</span>{fixed}</div>',
        f'<p class="msg">{inline(f.message)}</p>',
    ]
    if f.source_line:
        parts.append(_source(f))
    if f.suggestion:
        parts.append(f'<p class="fix"><b>Suggestion:</b> {inline(f.suggestion)}</p>')
    parts.append("</article>")
    return "".join(parts)


def _findings(report: Report, risks: list[FileRisk]) -> str:
    counts = report.summary()["by_severity"]
    boxes = "".join(
        f'<label><input type="checkbox" id="show-{sev}" checked> '
        f'<span class="dot" {_var(sev)}></span>{sev} ({counts[str(sev)]})</label>'
        for sev in SEVERITIES_DESC
    )
    body, n = [], 0
    for i, r in enumerate(risks):
        body.append(
            f'<h3 class="file mono" id="file-{i}">{escape(r.path)} '
            f"<small>score {r.score} · {len(r.findings)} finding{'s' * (len(r.findings) != 1)}</small></h3>"
        )
        for f in r.findings:
            body.append(_finding(f, n))
            n += 1
    return (
        '<section id="findings"><h2>Findings</h2>'
        f'<fieldset class="filter"><legend>Show severities</legend>{boxes}</fieldset>'
        f'{"".join(body) or "<p class=empty>No findings.</p>"}</section>'
    )


def _errors(report: Report) -> str:
    if not report.errors:
        return ""
    rows = "".join(
        f'<tr><td class="mono">{escape(e.path)}</td><td>{escape(e.message)}</td></tr>'
        for e in sorted(report.errors, key=lambda e: e.path)
    )
    return f'<section id="errors"><h2>Errors</h2><table><tr><th>File</th><th>Message</th></tr>{rows}</table></section>'


def _rules(report: Report) -> str:
    rules = rules_seen(report)
    if not rules:
        return ""
    pages = "".join(
        f'<article class="rule" id="{_rule_id(r.code)}" {_var(r.severity)}>'
        f'<h3><span class="mono">{escape(r.code)}</span> {escape(r.title)}</h3>'
        f'<p class="meta"><span class="badge">{r.severity}</span> <code>{escape(r.slug)}</code> · '
        f"effort {r.effort} · ROCm {escape(rocm_range(r))} · <code>hipport rules {escape(r.code)}</code></p>"
        f"{to_html(r.doc, heading_offset=4)}</article>"
        for r in rules
    )
    return f'<section id="rules"><h2>Rules</h2>{pages}</section>'


def render(report: Report, *, color: bool = False) -> str:
    """The whole page as one string; ``color`` is ignored."""
    risks = riskiest_files(report)
    title = f"hipport report: ROCm {report.target_name}"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; img-src data:\">"
        f"<title>{escape(title)}</title><style>{_CSS}{_filter_css()}</style></head><body>"
        f"{_header(report)}<main>{_charts(report)}{_files_table(risks)}"
        f"{_findings(report, risks)}{_errors(report)}{_rules(report)}</main>"
        f"<footer>Generated by hipport {escape(report.tool_version)}.</footer></body></html>\n"
    )
