"""Read every file of a repository that declares or reveals a dependency, into RepoFacts.

Nothing is executed or installed. A file that cannot be parsed becomes a ParseIssue naming
it, and the rest of the repository is still read.
"""

from __future__ import annotations

from pathlib import Path

from hipport.deps.conda import read_environment
from hipport.deps.docker import read_dockerfile
from hipport.deps.imports import local_modules, read_python
from hipport.deps.model import RepoFacts
from hipport.deps.pins import index_finding, pin_findings
from hipport.deps.pyproject import read_pyproject
from hipport.deps.requirements import read_requirements
from hipport.deps.setuppy import read_setup_cfg, read_setup_py
from hipport.deps.submodules import read_gitmodules
from hipport.deps.walk import discover, real_path


def read_repo(root: Path, source_extensions: tuple[str, ...]) -> RepoFacts:
    files = discover(root, source_extensions)
    root = files.root
    facts = RepoFacts(root=str(root), issues=list(files.issues))
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
        reqs, issues, indexes = read_pyproject(path, files.rel(path))
        facts.requirements += reqs
        facts.issues += issues
        facts.findings += [f for url, line in indexes for f in [index_finding(url, files.rel(path), line)] if f]
        facts.manifests.append(files.rel(path))
    for path in files.setup_pys:
        reqs, findings, issues, modules = read_setup_py(path, files.rel(path))
        facts.requirements += reqs
        facts.findings += findings
        facts.issues += issues
        facts.local_modules |= modules
        facts.manifests.append(files.rel(path))
    for path in files.setup_cfgs:
        reqs, issues = read_setup_cfg(path, files.rel(path))
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
    if files.gitmodules is not None:
        findings, issues = read_gitmodules(files.gitmodules, root, files.cuda)
        facts.findings += findings
        facts.issues += issues
    facts.local_modules |= local_modules(files.python, root)
    for path in files.python:
        if path.name == "setup.py":
            continue  # its extensions were read above; its imports are build-time only
        reqs, findings, issues = read_python(path, files.rel(path))
        facts.requirements += reqs
        facts.findings += findings
        facts.issues += issues
    facts.findings += pin_findings(facts.requirements)
    facts.kernel_files = [files.rel(p) for p in files.cuda]
    return facts
