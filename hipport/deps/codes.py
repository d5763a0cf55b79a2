"""The DEP finding codes: facts about a repository's build and pins, not about a package.

HP codes belong to the kernel rules (``hipport.rules``); DEP codes are what the dependency
readers report at a file and line. Each code's points live in python-deps-scoring.toml under
``[points]``, keyed by the slug with ``-`` as ``_``.
"""

from __future__ import annotations

from hipport.findings import Effort, Finding, Severity

#: code → (slug, severity, effort, what it means)
CODES: dict[str, tuple[str, Severity, Effort, str]] = {
    "DEP101": ("cuda-index-url", Severity.HIGH, Effort.SMALL,
               "an index, find-links URL or conda channel that serves CUDA builds"),
    "DEP102": ("cuda-local-version", Severity.HIGH, Effort.SMALL,
               "a +cuXYZ local version pins the CUDA build of a package"),
    "DEP103": ("cuda-only-wheel", Severity.MEDIUM, Effort.SMALL,
               "the CUDA flavour of a package that has a ROCm route"),
    "DEP104": ("cuda-base-image", Severity.HIGH, Effort.SMALL,
               "a container built FROM an NVIDIA CUDA image"),
    "DEP201": ("cuda-extension", Severity.HIGH, Effort.MEDIUM,
               "a CUDA extension the repository compiles itself"),
    "DEP202": ("cuda-submodule", Severity.MEDIUM, Effort.MEDIUM,
               "a git submodule that holds CUDA code"),
    "DEP203": ("cuda-source-string", Severity.LOW, Effort.SMALL,
               "Python code that names a CUDA-only provider or tool"),
}


def dep_finding(code: str, path: str, line: int, message: str, suggestion: str = "") -> Finding:
    """A Finding for a DEP code, at a whole line (columns are not meaningful in manifests)."""
    slug, severity, effort, _ = CODES[code]
    return Finding(code=code, slug=slug, severity=severity, path=path, line=line, col=1,
                   end_line=line, end_col=1, message=message, suggestion=suggestion,
                   effort=effort, engine="deps")


def points_key(code: str) -> str:
    return CODES[code][0].replace("-", "_")
