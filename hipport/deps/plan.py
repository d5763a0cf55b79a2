"""The porting plan: what to do, cheapest work first, and how many points each step wins back."""

from __future__ import annotations

from collections import defaultdict

from hipport.deps.codes import CODES, is_repo_finding
from hipport.deps.model import Deduction, Verdict
from hipport.findings import Finding


def porting_plan(verdicts: list[Verdict], findings: list[Finding], deds: list[Deduction]) -> list[dict]:
    """Steps ordered by effort (small first), then by points recovered (most first)."""
    points = defaultdict(float)
    for d in deds:
        kind, _, rest = d.target.partition(":")
        key = rest.split(":")[0] if kind == "finding" else rest if kind == "dependency" else "kernels"
        points[(kind, key)] += d.points
    steps = []
    for v in verdicts:
        gain = points.get(("dependency", v.key), 0.0)
        if gain <= 0:
            continue
        action = v.replacement if v.blocker and v.replacement else v.install
        steps.append({"effort": v.effort, "target": f"dependency:{v.key}", "points": round(gain, 1),
                      "step": f"{v.title}: {action or v.reason}"})
    by_code: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        if is_repo_finding(f.code):
            by_code[f.code].append(f)
    for code, fs in sorted(by_code.items()):
        where = ", ".join(sorted({f"{f.path}:{f.line}" for f in fs})[:4])
        steps.append({"effort": fs[0].effort, "target": f"finding:{code}",
                      "points": round(points.get(("finding", code), 0.0), 1),
                      "step": f"{CODES[code].title} ({len(fs)}: {where}). {fs[0].suggestion}".strip()})
    kernel = [f for f in findings if not is_repo_finding(f.code) and not f.fixed]
    if kernel:
        files = sorted({f.path for f in kernel})
        steps.append({"effort": max(f.effort for f in kernel), "target": "kernels",
                      "points": round(points.get(("kernels", "kernels"), 0.0), 1),
                      "step": f"Port the repository's own CUDA sources: {len(kernel)} finding(s) in "
                              f"{len(files)} file(s); run `hipport convert` on them."})
    steps.sort(key=lambda s: (int(s["effort"]), -s["points"], s["target"]))
    return [dict(s, effort=str(s["effort"])) for s in steps]
