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
from hipport.report.overview import common_root, fix_line, groups, output_root, rule_rows, short

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
.note { color:var(--muted); font-size:13px; margin:8px 0 0; }
.rules-table td:first-child { white-space:nowrap; }
.rules-table input { margin:0 6px 0 0; vertical-align:middle; }
.rules-table tr.fixed-only td { color:var(--muted); }
footer { color:var(--muted); font-size:13px; padding:0 32px 32px; }
"""


def _var(sev: Severity) -> str:
    return f'style="--c:{_COLORS[sev]}"'


def _rule_id(code: str) -> str:
    return "rule-" + re.sub(r"[^A-Za-z0-9-]", "", code)


def _filter_css(codes: list[str]) -> str:
    """Hide a severity's or a rule's findings when its checkbox is unticked (no JavaScript)."""
    sev = [f"body:has(#show-{s}:not(:checked)) .finding[data-severity={s}] {{ display:none; }}"
           for s in SEVERITIES_DESC]
    rules = [f"body:has(#{_rule_box(c)}:not(:checked)) .finding[data-code={c}] {{ display:none; }}"
             for c in codes]
    return "\n".join(sev + rules)


def _rule_box(code: str) -> str:
    return "only-" + re.sub(r"[^A-Za-z0-9-]", "", code)


def _rule_table(report: Report) -> str:
    """Opens the page: one row per rule, worst first; its checkbox shows or hides its findings."""
    rows = rule_rows(report)
    if not rows:
        return ""
    body = "".join(
        f'<tr class="{"fixed-only" if not r.open else ""}" {_var(r.severity)}>'
        f'<td><label><input type="checkbox" id="{_rule_box(r.rule.code)}" checked>'
        f'<a class="mono" href="#{_rule_id(r.rule.code)}"><b>{escape(r.rule.code)}</b></a></label> '
        f'<span class="mono slug">{escape(r.rule.slug)}</span></td>'
        f'<td><span class="badge">{r.severity}</span></td><td class=num>{r.open}</td>'
        f"<td class=num>{r.fixed}</td><td class=num>{r.files}</td><td>{r.effort}</td>"
        f"<td>{inline(fix_line(r.rule))}</td></tr>"
        for r in rows
    )
    return (
        '<section id="rules-at-a-glance"><h2>Rules at a glance</h2><table class="rules-table">'
        "<tr><th>Rule (untick to hide its findings)</th><th>Severity</th><th class=num>Open</th>"
        "<th class=num>Fixed</th><th class=num>Files</th><th>Effort</th><th>What to do</th></tr>"
        f"{body}</table></section>"
    )


def _repeated(report: Report) -> str:
    found = groups(f for f in report.findings if not f.fixed)
    if not found:
        return ""
    rows = "".join(
        f'<tr {_var(g.severity)}><td class="mono">{escape(g.label())}</td>'
        f'<td><span class="badge">{g.severity}</span></td><td>{inline(g.message)}</td></tr>'
        for g in found
    )
    return ('<section id="repeated"><h2>Repeated findings</h2>'
            '<p class="note">Each row is one decision to make once, for every place it lists.</p>'
            f"<table><tr><th>Where</th><th>Severity</th><th>Message</th></tr>{rows}</table></section>")


def _header(report: Report, root: str) -> str:
    s = report.summary()
    out_root = output_root(report)
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
        f"<code>hipport {escape(report.command)}</code> · hipport {escape(report.tool_version)}"
        + (f" · GPUs {escape(report.gpus)}" if report.gpus else "")
        + (f" · paths relative to <code>{escape(root)}</code>" if root else "")
        + (f", outputs to <code>{escape(out_root)}</code>" if root and out_root and out_root != root else "")
        + "</p>"
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


def _files_table(risks: list[FileRisk], root: str) -> str:
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
            f'<tr><td class="mono"><a href="#{f"file-{i}" if any(not f.fixed for f in r.findings) else "fixed"}" title="{escape(r.path)}">{escape(short(r.path, root))}</a></td>'
            f"<td class=num>{r.score}</td><td style='width:22%'>{bar}</td>{cells}</tr>"
        )
    return (
        '<section id="files"><h2>Riskiest files</h2><table>'
        f"<tr><th>File</th><th class=num>Score</th><th>Risk</th>{heads}</tr>{''.join(rows)}</table>"
        f'<p class="note">Score: the open findings weighted by severity, each step three times the one '
        f"below ({_weights()}); info and fixed findings count 0. Files are listed worst first.</p>"
        "</section>"
    )


def _weights() -> str:
    return ", ".join(f"{sev} {SEVERITY_WEIGHT[sev]}" for sev in SEVERITIES_DESC if SEVERITY_WEIGHT[sev])


def _source(f: Finding) -> str:
    start, end = highlight_span(f)
    line = f.source_line
    return (
        f'<pre class="src"><span class="ln">{f.line}</span>{escape(line[:start])}'
        f"<mark>{escape(line[start:end])}</mark>{escape(line[end:])}</pre>"
    )


def _finding(f: Finding, n: int, root: str) -> str:
    sev = str(f.severity)
    fixed = ' <span class="badge" style="--c:#2e7d32">fixed</span>' if f.fixed else ""
    parts = [
        f'<article class="finding{" fixed" if f.fixed else ""}" id="finding-{n}" '
        f'data-severity="{sev}" data-code="{escape(f.code)}" {_var(f.severity)}>',
        '<div class="head">'
        f'<span class="badge">{sev}</span>'
        f'<a class="code mono" href="#{_rule_id(f.code)}"><b>{escape(f.code)}</b></a>'
        f'<span class="slug mono">{escape(f.slug)}</span>'
        f'<span class="loc mono">{escape(short(f.path, root))}:{f.line}:{f.col}{_output_line(f)}</span>{fixed}</div>',
        f'<p class="msg">{inline(f.message)}</p>',
    ]
    if f.source_line:
        parts.append(_source(f))
    if f.suggestion:
        parts.append(f'<p class="fix"><b>Suggestion:</b> {inline(f.suggestion)}</p>')
    parts.append("</article>")
    return "".join(parts)


def _output_line(f: Finding) -> str:
    return f" → output line {f.output_line}" if f.output_line and f.output_line != f.line else ""


def _findings(report: Report, risks: list[FileRisk], root: str) -> str:
    counts = report.summary()["by_severity"]
    boxes = "".join(
        f'<label><input type="checkbox" id="show-{sev}" checked> '
        f'<span class="dot" {_var(sev)}></span>{sev} ({counts[str(sev)]})</label>'
        for sev in SEVERITIES_DESC
    )
    body, n = [], 0
    outputs = {o.path: o.output for o in report.files if o.output}
    out_root = output_root(report)
    for i, r in enumerate(risks):
        opened = [f for f in r.findings if not f.fixed]
        if not opened:
            continue
        out = outputs.get(r.path)
        body.append(
            f'<h3 class="file mono" id="file-{i}" title="{escape(r.path)}">{escape(short(r.path, root))} '
            f"<small>score {r.score} · {len(opened)} open finding{'s' * (len(opened) != 1)}"
            + (f" · output {escape(short(out, out_root))}" if out else "") + "</small></h3>"
        )
        for f in opened:
            body.append(_finding(f, n, root))
            n += 1
    fixed = [f for f in report.findings if f.fixed]
    if fixed:
        body.append(f'<h3 class="file" id="fixed">Fixed automatically <small>{len(fixed)} '
                    f"finding{'s' * (len(fixed) != 1)}: review them in the output</small></h3>")
        for f in sorted(fixed, key=Finding.sort_key):
            body.append(_finding(f, n, root))
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
    root = common_root(report)
    codes = sorted({f.code for f in report.findings})
    title = f"hipport report: ROCm {report.target_name}"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; img-src data:\">"
        f"<title>{escape(title)}</title><style>{_CSS}{_filter_css(codes)}</style></head><body>"
        f"{_header(report, root)}<main>{_rule_table(report)}{_charts(report)}{_files_table(risks, root)}"
        f"{_repeated(report)}{_findings(report, risks, root)}{_errors(report)}{_rules(report)}</main>"
        f"<footer>Generated by hipport {escape(report.tool_version)}.</footer></body></html>\n"
    )
