"""`hipport deps --format sarif`: the assessment as SARIF 2.1.0, for code-scanning dashboards.

One run per repository. Findings (HP5xx about manifests and builds, HP1xx–HP4xx from the
repository's own kernels) use the same rule descriptors, locations and fingerprints as
`hipport scan --format sarif` (hipport.report.sarif). Each dependency whose verdict is not
"ok" is a result too, under one of three rules (``deps/blocker``, ``deps/needs-work``,
``deps/check``), located at the first line that declares or imports it; the score and
grade go in the run's properties.
"""

from __future__ import annotations

import json

from hipport import __version__
from hipport.deps.model import Assessment, Verdict
from hipport.report.sarif import (
    FINGERPRINT_KEY, INFORMATION_URI, LEVELS, SCHEMA_URI, SRCROOT, artifact_location, fingerprint,
    region, rule_descriptor,
)
from hipport.versions import short_version

VERDICT_RULES = {
    "blocker": ("error", "Dependency with no ROCm route",
                "The package has no ROCm build, fork or replacement at any version: the code needs another package."),
    "needs-work": ("warning", "Dependency that needs work on ROCm",
                   "A ROCm route exists but is not the default install: a separate index, a source build, "
                   "a fork, a pin that must move to a supported or validated release, or a CUDA pin to remove."),
    "check": ("note", "Unknown dependency with CUDA signs",
              "Not in hipport's knowledge base, and its name, URL or pin suggests CUDA code: check whether it has a ROCm build."),
}


def render_sarif(assessments: list[Assessment]) -> str:
    runs = [_run(a) for a in assessments]
    return json.dumps({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": runs}, indent=2, ensure_ascii=False) + "\n"


def _run(a: Assessment) -> dict:
    from hipport.rules import load

    catalog = load().rules
    open_findings = [f for f in a.findings if not f.fixed]
    codes = sorted({f.code for f in open_findings})
    flagged = [v for v in a.verdicts if v.verdict != "ok"]
    rules = [rule_descriptor(catalog[c]) for c in codes] + [_verdict_rule(k) for k in VERDICT_RULES
                                                            if any(v.verdict == k for v in flagged)]
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for f in open_findings:
        results.append({
            "ruleId": f.code, "ruleIndex": index[f.code], "level": LEVELS[f.severity],
            "message": {"text": f"{f.message}\nSuggestion: {f.suggestion}" if f.suggestion else f.message},
            "locations": [{"physicalLocation": {"artifactLocation": artifact_location(f.path), "region": region(f)}}],
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint(f)},
            "properties": {"severity": str(f.severity), "effort": str(f.effort), "engine": f.engine},
        })
    results += [_verdict_result(v, index) for v in flagged]
    return {
        "tool": {"driver": {"name": "hipport", "version": __version__, "semanticVersion": __version__,
                            "informationUri": INFORMATION_URI, "rules": rules}},
        "invocations": [{
            "executionSuccessful": True,
            "toolExecutionNotifications": [
                {"level": "error", "message": {"text": i.message},
                 "locations": [{"physicalLocation": {"artifactLocation": artifact_location(i.path),
                                                     **({"region": {"startLine": i.line}} if i.line else {})}}]}
                for i in a.issues],
            "properties": {"command": "deps", "rocmTarget": short_version(a.target)},
        }],
        "originalUriBaseIds": {SRCROOT: {"description": {"text": f"The repository {a.root}."}}},
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": {"repository": a.root, "score": a.score, "grade": a.grade, "gradeMeaning": a.grade_meaning,
                       "blockers": [v.key for v in a.verdicts if v.blocker]},
    }


def _verdict_rule(verdict: str) -> dict:
    level, title, text = VERDICT_RULES[verdict]
    return {"id": f"deps/{verdict}", "name": f"dependency-{verdict}", "shortDescription": {"text": title},
            "fullDescription": {"text": text}, "help": {"text": f"{title}\n\n{text}"},
            "defaultConfiguration": {"level": level}, "properties": {"tags": ["portability", "rocm", "dependencies"]}}


def _verdict_result(v: Verdict, index: dict[str, int]) -> dict:
    rule = f"deps/{v.verdict}"
    where = v.evidence[0] if v.evidence else None
    route = v.replacement if v.blocker and v.replacement else v.install
    text = f"{v.title}: {v.reason}" + (f"\nRoute: {route}" if route else "")
    location = {"artifactLocation": artifact_location(where.source)} if where else None
    if location and where.line:
        location["region"] = {"startLine": where.line}
    result = {"ruleId": rule, "ruleIndex": index[rule], "level": VERDICT_RULES[v.verdict][0],
              "message": {"text": text},
              "partialFingerprints": {FINGERPRINT_KEY: f"deps/{v.key}/{v.verdict}"},
              "properties": {"dependency": v.key, "kind": v.level, "factor": v.factor, "pin": v.pin}}
    if location:
        result["locations"] = [{"physicalLocation": location}]
    return result
