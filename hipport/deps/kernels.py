"""The repository's own CUDA/C++ sources through the HP rules (``hipport.pipeline``).

``deps`` writes no rules of its own: it asks the pipeline for findings and summarizes them
by family and severity, with the worst files first.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

from hipport.deps.model import ParseIssue
from hipport.findings import Finding, Severity
from hipport.options import Options


def scan_kernels(root: Path, files: list[Path], options: Options) -> tuple[list[Finding], list[ParseIssue], dict]:
    """HP findings (paths relative to ``root``), problems, and a summary for the report."""
    if not files:
        return [], [], summarize([], 0, "no CUDA/C++ sources")
    from hipport.pipeline import scan_paths  # imported late: it loads tree-sitter

    findings: list[Finding] = []
    issues: list[ParseIssue] = []
    for result in scan_paths(files, options):
        rel = _rel(result.path, root)
        if result.error:
            issues.append(ParseIssue(rel, 0, f"kernel scan failed: {result.error}"))
        findings += [replace(f, path=rel) for f in result.findings]
    return findings, issues, summarize(findings, len(files), "scanned")


def summarize(findings: list[Finding], n_files: int, status: str) -> dict:
    """Counts by family and severity, and the five files with the most severe findings."""
    sev = Counter(str(f.severity) for f in findings)
    fam = Counter(f.code[:3] + "xx" for f in findings)
    weight: Counter = Counter()
    for f in findings:
        weight[f.path] += 10 ** int(f.severity)
    worst = [{"path": p, "findings": sum(1 for f in findings if f.path == p),
              "worst_severity": str(max(f.severity for f in findings if f.path == p))}
             for p, _ in weight.most_common(5)]
    return {"status": status, "files": n_files, "findings": len(findings),
            "by_severity": {str(s): sev.get(str(s), 0) for s in sorted(Severity, reverse=True)},
            "by_family": dict(sorted(fam.items())), "worst_files": worst}


def _rel(path: str, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):  # outside, or a symlink loop (RuntimeError < 3.13)
        return path
