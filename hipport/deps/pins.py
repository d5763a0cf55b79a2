"""Pins that force CUDA builds: CUDA index URLs, ``+cuXYZ`` local versions, CUDA wheel names.

These are findings about the repository (a line to change), separate from the verdict on
the package itself: ``torch`` has a ROCm route, ``torch==2.1.0+cu121`` does not take it.
"""

from __future__ import annotations

from hipport.deps import kb
from hipport.deps.codes import dep_finding
from hipport.deps.model import Requirement
from hipport.findings import Finding


def is_cuda_index(url: str) -> bool:
    return bool(kb.load().cuda_index.search(url))


def index_finding(url: str, path: str, line: int) -> Finding | None:
    """HP501 for an index / find-links URL that serves CUDA wheels, else None."""
    if not is_cuda_index(url):
        return None
    return dep_finding("HP501", path, line, f"package index {url!r} serves CUDA wheels",
                       "Install torch, torchvision and torchaudio from "
                       "https://download.pytorch.org/whl/rocm<X.Y> instead.")


def pin_findings(reqs: list[Requirement]) -> list[Finding]:
    """HP502 and HP503 for each requirement that pins a CUDA build."""
    base = kb.load()
    out: list[Finding] = []
    for req in reqs:
        if req.kind == "import":
            continue
        if req.local and base.cuda_local.search(req.local):
            out.append(dep_finding("HP502", req.source, req.line,
                                   f"{req.raw or req.name} pins the CUDA build (+{req.local})",
                                   "Drop the local version; take the ROCm build (+rocmX.Y) from the ROCm index."))
        entry = base.by_name(req.name)
        cuda_extras = [x for x in req.extras if base.looks_gpu(x) and "rocm" not in x.lower()]
        if entry is not None and cuda_extras:
            out.append(dep_finding("HP503", req.source, req.line,
                                   f"{req.name}[{','.join(cuda_extras)}] installs the CUDA build of {entry.title}",
                                   entry.install_hint))
        if entry is not None and entry.is_cuda_only(req.name):
            out.append(dep_finding("HP503", req.source, req.line,
                                   f"{req.name} is the CUDA wheel of {entry.title}",
                                   entry.install_hint))
    return out
