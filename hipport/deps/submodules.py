"""Git submodules that hold CUDA code (CUTLASS, a vendored rasterizer, a CUDA kernel repo).

A submodule that is checked out is judged by its files; one that is not is judged by its
name and URL, and the finding says so.
"""

from __future__ import annotations

import configparser
from pathlib import Path

from hipport.deps import kb
from hipport.deps.codes import dep_finding
from hipport.deps.model import ParseIssue
from hipport.deps.walk import is_inside, read_text
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
    findings: list[Finding] = []
    for section in parser.sections():
        sub = parser.get(section, "path", fallback="").strip()
        url = parser.get(section, "url", fallback="").strip()
        line = next((n for n, t in enumerate(text.splitlines(), 1) if f"[{section}]" in t), 0)
        where = (root / sub).resolve()
        if not sub or not is_inside(where, root):
            continue
        cuda = [p for p in sources if p.suffix in CUDA_SUFFIXES and is_inside(p, where)]
        if cuda:
            findings.append(dep_finding("HP512", rel, line,
                                        f"submodule {sub} holds {len(cuda)} CUDA file(s) ({url})",
                                        "Check for a ROCm fork of the submodule, or port it with `hipport convert`."))
        elif not any(where.iterdir() if where.is_dir() else ()) and kb.load().looks_gpu(f"{sub} {url}"):
            findings.append(dep_finding("HP512", rel, line,
                                        f"submodule {sub} is not checked out; its name suggests CUDA code ({url})",
                                        "Check it out and run `hipport deps` again, or look for a ROCm fork."))
    return findings, []
