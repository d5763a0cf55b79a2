"""The HP5xx findings (build and Python) that the dependency readers report.

The rules themselves (code, slug, severity, effort, documentation) are in
``hipport.rules.build.manifests`` and ``.repository``, so ``hipport rules HP501`` documents them like every other rule.
Each code's points live in python-deps-scoring.toml under ``[points]``, keyed by the slug
with ``-`` as ``_``.
"""

from __future__ import annotations

from hipport.findings import Finding
from hipport.rule import Rule


def _rules() -> dict[str, Rule]:
    from hipport.rules import REGISTRY, build  # noqa: F401  (importing build registers them)

    return {code: r for code, r in REGISTRY.rules.items() if is_repo_finding(code)}


def is_repo_finding(code: str) -> bool:
    """HP5xx: about the repository's manifests and build, not about its kernels."""
    return code.startswith("HP5")


CODES: dict[str, Rule] = _rules()


def dep_finding(code: str, path: str, line: int, message: str, suggestion: str = "") -> Finding:
    """A Finding for an HP5xx code, at a whole line (columns are not meaningful in manifests)."""
    rule = CODES[code]
    return Finding(code=code, slug=rule.slug, severity=rule.severity, path=path, line=line,
                   col=1, end_line=line, end_col=1, message=message, suggestion=suggestion,
                   effort=rule.effort, engine="deps")


def points_key(code: str) -> str:
    return CODES[code].slug.replace("-", "_")
