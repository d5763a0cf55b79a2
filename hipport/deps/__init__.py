"""`hipport deps`: how portable a research repository is to ROCm, and what blocks it.

read (reader: manifests, imports, extensions) → judge (verdict, against mappings/
python-deps.json) → scan own kernels (kernels, via hipport.pipeline) → score (score) →
plan (plan); ``assess`` runs them all for one repository. Its output is rendered under
``hipport.report`` (``deps``, ``deps_sarif``) like every other command's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from hipport.deps.kernels import scan_kernels
from hipport.deps.model import Assessment, Failure
from hipport.deps.plan import porting_plan
from hipport.deps.reader import read_repo
from hipport.deps.score import deductions, score_and_grade
from hipport.deps.verdict import verdicts
from hipport.findings import Finding
from hipport.options import Options


def assess(root: Path, options: Options, *, scan_own_sources: bool = True) -> Assessment:
    """Score one repository directory for ``options.rocm``. Raises NotADirectoryError."""
    if not root.is_dir():
        raise NotADirectoryError(f"{root}: not a directory")
    facts = read_repo(root, options.extensions, options.hip_guards)
    judged = verdicts(facts.requirements, facts.local_modules, options.rocm)
    kernel_findings, kernel_issues, kernel_summary = [], [], {"status": "not requested"}
    if scan_own_sources:
        base = Path(facts.root)
        kernel_findings, kernel_issues, kernel_summary = scan_kernels(
            base, [base / p for p in facts.kernel_files], options)
    findings = apply_policy(sorted(facts.findings, key=lambda f: f.sort_key()), options) + kernel_findings
    deds = deductions(judged, findings)
    score, grade, meaning = score_and_grade(deds)
    return Assessment(
        root=str(root), target=options.rocm, verdicts=judged, findings=findings,
        issues=facts.issues + kernel_issues, deductions=deds, score=score, grade=grade,
        grade_meaning=meaning, plan=porting_plan(judged, findings, deds),
        kernel_summary=kernel_summary, manifests=facts.manifests, rocm_aware=facts.rocm_aware,
    )


def apply_policy(findings: list[Finding], options: Options) -> list[Finding]:
    """``--ignore`` / ``[tool.hipport] ignore`` and ``severity`` for the HP5xx findings.

    The kernel findings get them from the rules' own Context; the readers' findings come
    here. A code or a family (``HP5xx``) can be ignored; a severity override also scales
    the finding's points (hipport.deps.score).
    """
    out = []
    for f in findings:
        if f.code in options.ignore or f"{f.code[:3]}XX" in options.ignore:
            continue
        severity = options.severity_overrides.get(f.code)
        out.append(replace(f, severity=severity) if severity is not None else f)
    return out


def assess_or_fail(root: Path, make_options: Callable[[], Options], *,
                   scan_own_sources: bool = True) -> Assessment | Failure:
    """``assess``, with anything that stops one repository turned into a Failure naming it.

    This is the batch boundary (``deps A B C -f jsonl``): every file-level problem is
    already a ParseIssue inside the Assessment, so what reaches here is a repository that
    is not a directory, a bad ``[tool.hipport]`` table, or a bug — and one of those must
    not lose the other repositories' lines.
    """
    if not root.is_dir():
        return Failure(str(root), "not a directory (expected a repository checkout)")
    try:
        options = make_options()
    except Exception as e:  # click.UsageError / ConfigError: the message names the file
        return Failure(str(root), getattr(e, "message", None) or str(e))
    try:
        return assess(root, options, scan_own_sources=scan_own_sources)
    except Exception as e:  # noqa: BLE001 - see the docstring: report, never lose the batch
        return Failure(str(root), f"internal error: {type(e).__name__}: {e}")
