"""`hipport deps` output: text, markdown, json, jsonl and a self-contained html page (SARIF:
``deps_sarif``).

All formats render the same ``assessment_dict``, so they cannot disagree; JSON follows the
report's conventions (``schema``, ``version``, ``target``, ``command``, findings via
``hipport.report.json.finding_dict``).
"""

from __future__ import annotations

import html
import json

from hipport import __version__
from hipport.deps.model import Assessment, Failure, Verdict
from hipport.deps.score import __doc__ as FORMULA
from hipport.deps.verdict import VERDICTS
from hipport.report.json import finding_dict
from hipport.versions import short_version

SCHEMA_VERSION = 1
FORMATS = ("text", "markdown", "json", "jsonl", "html", "sarif")


def verdict_dict(v: Verdict) -> dict:
    return {
        "key": v.key, "title": v.title, "verdict": v.verdict, "level": v.level, "status": v.status,
        "factor": v.factor, "blocker": v.blocker, "declared": v.declared, "optional": v.optional,
        "pin": v.pin, "bump": v.bump, "reason": v.reason, "install": v.install,
        "replacement": v.replacement, "caveats": v.caveats, "notes": list(v.notes), "effort": str(v.effort),
        "evidence": [{"path": r.source, "line": r.line, "kind": r.kind, "text": r.raw or r.name} for r in v.evidence],
    }


def assessment_dict(a: Assessment) -> dict:
    """The whole assessment as plain data; verdicts blockers-first, then by factor."""
    ordered = sorted(a.verdicts, key=lambda v: (-VERDICTS.index(v.verdict), v.factor, v.key))
    return {
        "schema": SCHEMA_VERSION, "version": __version__, "target": short_version(a.target), "command": "deps",
        "repository": a.root, "score": a.score, "grade": a.grade, "grade_meaning": a.grade_meaning,
        "blockers": [v.key for v in ordered if v.blocker],
        "verdicts": {level: [v.key for v in ordered if v.verdict == level] for level in reversed(VERDICTS)},
        "deductions": [{"target": d.target, "points": d.points, "raw": d.raw, "reason": d.reason}
                       for d in a.deductions],
        "dependencies": [verdict_dict(v) for v in ordered],
        "plan": a.plan,
        "kernels": a.kernel_summary,
        "findings": [finding_dict(f) for f in a.findings],
        "errors": [{"path": i.path, "line": i.line, "message": i.message} for i in a.issues],
        "manifests": a.manifests,
        "rocm_aware": a.rocm_aware,
    }


def failure_dict(f: Failure) -> dict:
    """A repository that could not be scored: same envelope, no score, the reason."""
    return {"schema": SCHEMA_VERSION, "version": __version__, "command": "deps",
            "repository": f.root, "score": None, "grade": None, "error": f.message}


def render_all(results: list[Assessment | Failure], fmt: str) -> str:
    """Every repository in one output: concatenated, except SARIF (one log, a run each)."""
    if fmt == "sarif":
        from hipport.report.deps_sarif import render_sarif

        return render_sarif([a for a in results if isinstance(a, Assessment)])
    return "".join(render(a, fmt) for a in results)


def render(a: Assessment | Failure, fmt: str) -> str:
    if isinstance(a, Failure):
        d = failure_dict(a)
        if fmt in ("json", "jsonl"):
            return json.dumps(d, indent=2 if fmt == "json" else None, ensure_ascii=False,
                              separators=None if fmt == "json" else (",", ":")) + "\n"
        return f"{a.root}: not scored: {a.message}\n"
    d = assessment_dict(a)
    if fmt == "json":
        return json.dumps(d, indent=2, ensure_ascii=False) + "\n"
    if fmt == "jsonl":
        return json.dumps(d, ensure_ascii=False, separators=(",", ":")) + "\n"
    return {"text": _text, "markdown": _markdown, "html": _html}[fmt](d)


def _text(d: dict) -> str:
    out = [f"{d['repository']}: {d['score']:.1f}/100, grade {d['grade']} ({d['grade_meaning']}) "
           f"for ROCm {d['target']}", ""]
    if d["blockers"]:
        out.append("Blockers: " + ", ".join(d["blockers"]))
        out.append("")
    if d["rocm_aware"]:
        out += ["Already ROCm-aware:"] + [f"  {x}" for x in d["rocm_aware"]] + [""]
    out.append("Dependencies (worst first):")
    for v in d["dependencies"]:
        if v["level"] == "fine":
            continue
        out.append(f"  {v['key']:<22} {v['verdict']:<10} {v['status']}  [{v['level']}]")
        out.append(f"      {v['reason']}")
        if v["pin"]:
            out.append(f"      pin: {v['key']}{v['pin']}" + (f" ({v['bump']})" if v["bump"] else ""))
        for note in v["notes"]:
            out.append(f"      note: {note}")
        if v["factor"] < 1 and (v["install"] or v["replacement"]):
            out.append(f"      route: {v['replacement'] if v['blocker'] and v['replacement'] else v['install']}")
    fine = [v["key"] for v in d["dependencies"] if v["level"] == "fine"]
    if fine:
        out.append(f"  ok, no GPU code (CPU packages, or unknown with no sign of CUDA): {', '.join(fine)}")
    out += ["", "Points lost (every one attributed):"]
    for x in d["deductions"]:
        out.append(f"  -{x['points']:>5.1f}  {x['target']}: {x['reason']}")
    k = d["kernels"]
    if k.get("findings"):
        out += ["", f"Own CUDA/C++ sources: {k['findings']} finding(s) in {k['files']} file(s); "
                    + ", ".join(f"{n} {s}" for s, n in k["by_severity"].items() if n)]
        out += [f"  {w['path']}: {w['findings']} finding(s), worst {w['worst_severity']}" for w in k["worst_files"]]
    if d["plan"]:
        out += ["", "Porting plan (cheapest first):"]
        out += [f"  {n}. [{s['effort']}] +{s['points']:.1f}  {s['step']}" for n, s in enumerate(d["plan"], 1)]
    if d["errors"]:
        out += ["", "Could not read:"] + [f"  {e['path']}:{e['line']}: {e['message']}" for e in d["errors"]]
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")


def _markdown(d: dict) -> str:
    out = [f"# ROCm portability: `{_md(d['repository'])}`", "",
           f"**Score {d['score']:.1f}/100, grade {d['grade']}** ({d['grade_meaning']}), target ROCm {d['target']}.", ""]
    if d["blockers"]:
        out += ["**Blockers:** " + ", ".join(f"`{b}`" for b in d["blockers"]), ""]
    out += ["## Dependencies", "", "| Dependency | Verdict | Kind | Reason | Route |", "|---|---|---|---|---|"]
    for v in d["dependencies"]:
        route = v["replacement"] if v["blocker"] and v["replacement"] else v["install"]
        out.append(f"| `{_md(v['key'])}` | {v['verdict']} | {_md(v['status'])} | {_md(v['reason'])} | {_md(route)} |")
    out += ["", "## Where the points went", "", "| Points | Attributed to | Why |", "|---:|---|---|"]
    out += [f"| -{x['points']:.1f} | `{_md(x['target'])}` | {_md(x['reason'])} |" for x in d["deductions"]]
    out += ["", "## Porting plan", ""]
    out += [f"{n}. **{s['effort']}** (+{s['points']:.1f}) {_md(s['step'])}" for n, s in enumerate(d["plan"], 1)]
    if d["errors"]:
        out += ["", "## Files that could not be read", ""]
        out += [f"- `{_md(e['path'])}:{e['line']}`: {_md(e['message'])}" for e in d["errors"]]
    out += ["", "<details><summary>Scoring formula</summary>", "", "```", FORMULA.strip(), "```", "</details>"]
    return "\n".join(out) + "\n"


def _html(d: dict) -> str:
    e = html.escape
    rows = "".join(
        f"<tr class='{e(v['level'])}'><td><code>{e(v['key'])}</code></td><td>{e(v['verdict'])}</td><td>{e(v['status'])}</td>"
        f"<td>{e(v['reason'])}</td><td>{e(v['replacement'] if v['blocker'] and v['replacement'] else v['install'])}</td></tr>"
        for v in d["dependencies"])
    deds = "".join(f"<tr><td>-{x['points']:.1f}</td><td><code>{e(x['target'])}</code></td><td>{e(x['reason'])}</td></tr>"
                   for x in d["deductions"])
    plan = "".join(f"<li><b>{e(s['effort'])}</b> (+{s['points']:.1f}) {e(s['step'])}</li>" for s in d["plan"])
    errors = "".join(f"<li><code>{e(x['path'])}:{x['line']}</code> {e(x['message'])}</li>" for x in d["errors"])
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>hipport deps: {e(d['repository'])}</title>
<style>body{{font:14px system-ui,sans-serif;margin:2em;max-width:80em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:.3em .5em;vertical-align:top}}.grade{{font-size:2em;font-weight:bold}}
.not_supported,.not_supported_with_replacement{{background:#fdd}}.unknown_gpu,.community,.amd_fork{{background:#ffe9c7}}</style>
</head><body>
<h1>ROCm portability of <code>{e(d['repository'])}</code></h1>
<p class="grade">{d['score']:.1f}/100 &middot; {e(d['grade'])}</p><p>{e(d['grade_meaning'])}; target ROCm {e(d['target'])}.</p>
<p><b>Blockers:</b> {e(', '.join(d['blockers']) or 'none')}</p>
<h2>Dependencies</h2><table><tr><th>Dependency</th><th>Verdict</th><th>Kind</th><th>Reason</th><th>Route</th></tr>{rows}</table>
<h2>Where the points went</h2><table><tr><th>Points</th><th>Attributed to</th><th>Why</th></tr>{deds}</table>
<h2>Porting plan</h2><ol>{plan}</ol>
{f'<h2>Files that could not be read</h2><ul>{errors}</ul>' if errors else ''}
<details><summary>Scoring formula</summary><pre>{e(FORMULA.strip())}</pre></details>
</body></html>
"""
