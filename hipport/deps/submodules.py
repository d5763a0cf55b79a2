"""Git submodules that hold CUDA code (CUTLASS, a vendored rasterizer, a CUDA kernel repo).

A submodule that is checked out is judged by its files; one that is not is judged by its
name and URL, and the finding says so. Linear in the size of .gitmodules plus the number
of CUDA files: the CUDA files are counted per directory once, and each section's line
comes from a one-pass index (#17: a 1.4 MB .gitmodules did not finish in 240 s).
"""

from __future__ import annotations

import configparser
from collections import Counter
from pathlib import Path

from hipport.deps import kb
from hipport.deps.codes import dep_finding
from hipport.deps.lines import LineIndex
from hipport.deps.model import ParseIssue
from hipport.deps.walk import MAX_ENTRIES, read_text, real_path
from hipport.findings import Finding

CUDA_SUFFIXES = (".cu", ".cuh")


def read_gitmodules(path: Path, root: Path, sources: list[Path]) -> tuple[list[Finding], list[ParseIssue]]:
    """HP512 per submodule with CUDA code; ``sources`` are the repository's C/C++/CUDA files."""
    rel = path.relative_to(root).as_posix()
    parser = configparser.ConfigParser(interpolation=None)
    try:
        text = read_text(path)
        parser.read_string(text, source=rel)
    except (OSError, UnicodeDecodeError, ValueError, configparser.Error) as e:
        return [], [ParseIssue(rel, 0, f"cannot parse .gitmodules: {str(e).splitlines()[0]}")]
    lines = LineIndex(text)
    base = real_path(root)
    cuda_under = _cuda_per_directory(sources, base)
    findings: list[Finding] = []
    issues: list[ParseIssue] = []
    sections = parser.sections()
    if len(sections) > MAX_ENTRIES:
        issues.append(ParseIssue(rel, lines.section(sections[MAX_ENTRIES]),
                                 f"more than {MAX_ENTRIES} submodules; the rest are not read"))
    for section in sections[:MAX_ENTRIES]:
        sub = parser.get(section, "path", fallback="").strip()
        url = parser.get(section, "url", fallback="").strip()
        line = lines.section(section)
        where = real_path(root / sub) if sub and base else None
        if where is None or (where != base and base not in where.parents):
            continue  # unresolvable, or a path that leaves the repository
        cuda = cuda_under.get(where, 0)
        if cuda:
            findings.append(dep_finding("HP512", rel, line,
                                        f"submodule {sub} holds {cuda} CUDA file(s) ({url})",
                                        "Check for a ROCm fork of the submodule, or port it with `hipport convert`."))
        elif not _has_files(where) and kb.load().looks_gpu(f"{sub} {url}"):
            findings.append(dep_finding("HP512", rel, line,
                                        f"submodule {sub} is not checked out; its name suggests CUDA code ({url})",
                                        "Check it out and run `hipport deps` again, or look for a ROCm fork."))
    return findings, issues


def _cuda_per_directory(sources: list[Path], base: Path | None) -> Counter:
    """How many .cu/.cuh files lie under each directory of the repository (real paths)."""
    counts: Counter = Counter()
    for p in sources:
        if p.suffix not in CUDA_SUFFIXES:
            continue
        real = real_path(p)
        if real is None or base is None:
            continue
        for parent in real.parents:
            counts[parent] += 1
            if parent == base:
                break
    return counts


def _has_files(directory: Path) -> bool:
    try:
        return directory.is_dir() and any(directory.iterdir())
    except OSError:
        return False
