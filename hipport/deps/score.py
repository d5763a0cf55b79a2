"""The portability score: 100 minus what each dependency and finding costs.

The formula (weights from mappings/python-deps-scoring.toml)::

    dependency d:  raw(d) = points.dependency * (1 - factor(d)) * (optional.weight if optional(d) else 1)
                   factor(d) = factor[level(d)] * (factor.experimental if experimental else 1)
                               * (bump[price] if its pin must move else 1)
    HP5xx finding f: raw(f) = points[slug(f)] * kernel_points[severity(f)] / kernel_points[rule severity]
                     (1 unless a severity override or ROCm-awareness changed the finding's severity)
    own sources:   raw(file) = sum of kernel_points[severity] over the file's HP findings;
                   if their total K exceeds kernel_points.kernels_cap, each file's raw is
                   multiplied by kernels_cap / K
    R = sum of all raw;  s = 100 / R if R > 100 else 1
    points(x) = raw(x) * s;  score = 100 - sum(points);  grade = first [[grade]] with score >= min

Every lost point is therefore a ``Deduction`` naming its dependency, finding or file; the
deductions (rounded by largest remainder) add up to exactly 100 - score. Scaling instead of
clamping keeps that true for repositories whose raw penalties exceed 100.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from hipport.deps import kb
from hipport.deps.codes import CODES, is_repo_finding, points_key
from hipport.deps.model import Deduction, Verdict
from hipport.findings import Finding


def deductions(verdicts: list[Verdict], findings: list[Finding]) -> list[Deduction]:
    """Attributed deductions, largest first; their ``points`` sum to 100 - score."""
    weights = kb.scoring()
    raw: list[tuple[str, str, float]] = []
    for v in verdicts:
        cost = weights["points"]["dependency"] * (1 - v.factor) * (weights["optional"]["weight"] if v.optional else 1)
        if cost > 0:
            raw.append((f"dependency:{v.key}", f"{v.title}: {v.reason}", cost))
    for f in findings:
        if is_repo_finding(f.code):
            kp = weights["kernel_points"]
            default = kp[str(CODES[f.code].severity)]
            scale = kp[str(f.severity)] / default if default else 1.0
            if scale > 0:
                raw.append((f"finding:{f.code}:{f.path}:{f.line}", f"{f.code} {f.message}",
                            weights["points"][points_key(f.code)] * scale))
    raw += _kernel_raw(findings, weights["kernel_points"])
    total = sum(r for _, _, r in raw)
    scale = 100.0 / total if total > 100 else 1.0
    rounded = _largest_remainder([r * scale for _, _, r in raw], round(total * scale, 1))
    out = [Deduction(target=t, reason=why, raw=round(r, 3), points=p)
           for (t, why, r), p in zip(raw, rounded)]
    return sorted(out, key=lambda d: (-d.points, d.target))


def score_and_grade(deds: list[Deduction]) -> tuple[float, str, str]:
    score = round(100.0 - sum(d.points for d in deds), 1) + 0.0  # never "-0.0"
    for row in kb.scoring()["grade"]:
        if score >= row["min"]:
            return score, row["grade"], row["meaning"]
    raise AssertionError("the [[grade]] table must end with min = 0")


def _kernel_raw(findings: list[Finding], kp: dict) -> list[tuple[str, str, float]]:
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        if not is_repo_finding(f.code) and not f.fixed:
            by_file[f.path].append(f)
    costs = {p: sum(kp[str(f.severity)] for f in fs) for p, fs in by_file.items()}
    total = sum(costs.values())
    cap_scale = kp["kernels_cap"] / total if total > kp["kernels_cap"] else 1.0
    out = []
    for path, fs in sorted(by_file.items()):
        if costs[path] <= 0:
            continue
        sev = Counter(str(f.severity) for f in fs)
        detail = ", ".join(f"{n} {s}" for s, n in sorted(sev.items()))
        out.append((f"kernels:{path}", f"own source {path}: {len(fs)} finding(s) ({detail})", costs[path] * cap_scale))
    return out


def _largest_remainder(values: list[float], total: float) -> list[float]:
    """Round to tenths so that the rounded values sum to ``total`` exactly."""
    tenths = [v * 10 for v in values]
    floors = [int(t) for t in tenths]
    short = round(total * 10) - sum(floors)
    order = sorted(range(len(values)), key=lambda i: tenths[i] - floors[i], reverse=True)
    for i in order[:max(short, 0)]:
        floors[i] += 1
    return [f / 10 for f in floors]
