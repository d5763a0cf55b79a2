"""Read every file of a repository that declares or reveals a dependency, into RepoFacts.

Nothing is executed or installed. A file that cannot be parsed becomes a ParseIssue naming
it, and the rest of the repository is still read.
"""

from __future__ import annotations

import re
from pathlib import Path

from hipport.deps.conda import read_environment
from hipport.deps.docker import read_dockerfile
from hipport.deps.docs import read_docs
from hipport.deps.extensions import Extension, extension_findings
from hipport.deps.imports import local_modules, read_python
from hipport.deps.model import RepoFacts
from hipport.deps.pep508 import squash
from hipport.deps.reach import propagate_optional
from hipport.deps.pins import index_finding, pin_findings
from hipport.deps.pyproject import read_pyproject
from hipport.deps.requirements import read_requirements
from hipport.deps.setuppy import read_setup_cfg, read_setup_py
from hipport.deps.submodules import read_gitmodules
from hipport.deps.walk import discover, read_text, real_path


def read_repo(root: Path, source_extensions: tuple[str, ...], hip_guards: tuple[str, ...] = ()) -> RepoFacts:
    files = discover(root, source_extensions)
    root = files.root
    facts = RepoFacts(root=str(root), issues=list(files.issues))
    extensions: list[Extension] = []
    own: set[str] = set()  # the project's own distribution names (setup.py, pyproject, setup.cfg)
    seen: set[Path] = set()
    for path in files.requirements:
        if real_path(path) in seen:  # already read as another file's -r include
            continue
        reqs, issues, findings = read_requirements(path, root, seen=seen)
        facts.requirements += reqs
        facts.issues += issues
        facts.findings += findings
        facts.manifests.append(files.rel(path))
    for path in files.pyprojects:
        reqs, issues, indexes, name = read_pyproject(path, files.rel(path))
        own.add(name)
        facts.requirements += reqs
        facts.issues += issues
        facts.findings += [f for url, line in indexes for f in [index_finding(url, files.rel(path), line)] if f]
        facts.manifests.append(files.rel(path))
    for path in files.setup_pys:
        reqs, exts, issues, modules, name = read_setup_py(path, files.rel(path))
        own.add(name)
        facts.requirements += reqs
        extensions += exts
        facts.issues += issues
        facts.local_modules |= modules
        facts.manifests.append(files.rel(path))
        facts.rocm_aware += [f"{e.path}:{e.line}: extension {e.name!r} has a HIP build path" for e in exts if e.hip_path]
    for path in files.setup_cfgs:
        reqs, issues, name = read_setup_cfg(path, files.rel(path))
        own.add(name)
        facts.requirements += reqs
        facts.issues += issues
        facts.manifests.append(files.rel(path))
    for paths, read in ((files.conda, read_environment), (files.dockerfiles, read_dockerfile)):
        for path in paths:
            reqs, findings, issues = read(path, files.rel(path))
            facts.requirements += reqs
            facts.findings += findings
            facts.issues += issues
            facts.manifests.append(files.rel(path))
    for path in files.docs:
        reqs, findings, issues, amd_lines = read_docs(path, files.rel(path))
        facts.requirements += reqs
        facts.findings += findings
        facts.issues += issues
        if reqs or findings:
            facts.manifests.append(files.rel(path))
        if amd_lines:
            facts.rocm_aware.append(f"{files.rel(path)}:{amd_lines[0]}: AMD/ROCm install instructions")
    if files.gitmodules is not None:
        findings, issues = read_gitmodules(files.gitmodules, root, files.cuda)
        facts.findings += findings
        facts.issues += issues
    facts.local_modules |= local_modules(files.python, root)
    for path in files.python:
        if path.name == "setup.py":
            continue  # its extensions were read above; its imports are build-time only
        reqs, findings, issues, exts = read_python(path, files.rel(path))
        facts.requirements += reqs
        facts.findings += findings
        facts.issues += issues
        extensions += exts
    facts.requirements = propagate_optional(facts.requirements)
    own_squashed = {squash(n) for n in own if n}
    facts.requirements = [r for r in facts.requirements if r.kind == "import" or squash(r.name) not in own_squashed]
    facts.findings += extension_findings(extensions)
    facts.findings += pin_findings(facts.requirements)
    facts.kernel_files = [files.rel(p) for p in files.cuda]
    guarded = _hip_guarded(files.cuda, hip_guards)
    if guarded:
        facts.rocm_aware.append(f"{len(guarded)} of {len(files.cuda)} own C/C++/CUDA file(s) have HIP branches "
                                f"({', '.join(files.rel(p) for p in guarded[:3])}{', …' if len(guarded) > 3 else ''})")
    return facts


def _hip_guarded(sources: list[Path], hip_guards: tuple[str, ...]) -> list[Path]:
    """Sources that already test a HIP macro or include a HIP header (their findings inside
    those branches are left out by the scan itself; this only credits the awareness)."""
    if not hip_guards:
        return []
    sign = re.compile(r"\b(?:" + "|".join(map(re.escape, hip_guards)) + r")\b|#\s*include\s*[<\"]hip/")
    out = []
    for path in sources:
        try:
            if sign.search(read_text(path)):
                out.append(path)
        except (OSError, UnicodeDecodeError, ValueError):
            continue  # the kernel scan names unreadable files
    return out
