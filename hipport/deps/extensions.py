"""The repository's own CUDA extensions, counted once each, with their ROCm-awareness.

An extension is often declared twice: ``CUDAExtension(...)`` in setup.py for installs and
``torch.utils.cpp_extension.load(...)`` in the code for development. Both are one piece of
porting work, so extensions whose CUDA sources overlap (by file name) become one HP511
finding that lists every place. A setup.py that already has a HIP build path
(``torch.version.hip``, ``ROCM_HOME``, ``hipcc``, ``USE_ROCM``…) makes its extensions
ROCm-aware: reported at medium rather than high severity, which halves and more their
points (HP5xx points scale with severity; see hipport.deps.score).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from hipport.deps.codes import dep_finding
from hipport.findings import Finding, Severity

CUDA_SUFFIXES = (".cu", ".cuh")
#: Signs that a build script already knows how to build for HIP/ROCm.
HIP_BUILD_SIGNS = re.compile(
    r"torch\.version\.hip|\bROCM_(?:HOME|PATH)\b|\bhipcc\b|\bHIPCC\b|\bUSE_ROCM\b|\bIS_(?:HIP|ROCM)\w*|"
    r"\bis_(?:hip|rocm)\w*|\bBUILD_TARGET\b.*rocm|--offload-arch|\bHIP_HOME\b")
_SUGGESTION = ("torch.utils.cpp_extension hipifies CUDAExtension sources on ROCm; run `hipport scan` on "
               "them and fix what it reports (warp size, inline PTX, CUDA-only libraries).")


@dataclass(frozen=True)
class Extension:
    """One place that builds CUDA code: a setup.py extension or a JIT ``load``."""

    path: str
    line: int
    name: str
    sources: tuple[str, ...]  # as written; () when computed at run time
    how: str  # "builds" (setup.py) | "JIT-builds" (load/load_inline)
    hip_path: bool = False  # the build script has a HIP/ROCm branch

    @property
    def cuda_files(self) -> frozenset[str]:
        return frozenset(PurePosixPath(s).name for s in self.sources if s.endswith(CUDA_SUFFIXES))


def hip_build_line(text: str) -> int:
    """The first line of a build script that shows a HIP build path, or 0."""
    m = HIP_BUILD_SIGNS.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else 0


def extension_findings(extensions: list[Extension]) -> list[Finding]:
    """One HP511 per distinct extension; those sharing a .cu file are one extension."""
    groups: list[list[Extension]] = []
    for ext in extensions:
        files = ext.cuda_files
        home = next((g for g in groups if files and any(files & e.cuda_files for e in g)), None)
        if home is None:
            groups.append([ext])
        else:
            home.append(ext)
    out = []
    for group in groups:
        first = min(group, key=lambda e: (e.how != "builds", e.path, e.line))  # setup.py first
        cu = sorted(set().union(*(e.cuda_files for e in group)))
        listed = f"{len(cu)} .cu source(s): {', '.join(cu[:4])}" if cu else "sources computed at run time"
        message = f"{first.how} CUDA extension {first.name!r} ({listed})"
        others = [f"{e.path}:{e.line}" for e in group if e is not first]
        if others:
            message += f"; the same sources are also built at {', '.join(others)} (counted once)"
        finding = dep_finding("HP511", first.path, first.line, message, _SUGGESTION)
        if any(e.hip_path for e in group):
            finding = replace(finding, severity=Severity.MEDIUM,
                              message=message + "; its build script already has a HIP path (ROCm-aware)")
        out.append(finding)
    return out
