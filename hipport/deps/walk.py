"""Which files of a repository `hipport deps` reads, and reading them safely.

The walk never follows symlinked directories and never reads a file whose real path leaves
the repository: a hostile repository must not make hipport read /etc or loop forever.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

#: Directories that hold someone else's code or build output, not the repository's own.
SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", "env", ".env", ".tox", ".nox", ".eggs",
    "node_modules", "__pycache__", "site-packages", "build", "dist", ".mypy_cache",
    ".pytest_cache", ".ruff_cache",
})
MAX_BYTES = 2_000_000  # larger "manifests" or sources are reported, not parsed

REQUIREMENTS_GLOBS = ("requirements*.txt", "requirements*.in", "*requirements.txt",
                      "constraints*.txt")
DOCKERFILE_GLOBS = ("Dockerfile", "Dockerfile.*", "*.Dockerfile", "*.dockerfile", "Containerfile")
CONDA_GLOBS = ("environment*.yml", "environment*.yaml", "conda*.yml", "conda*.yaml")


@dataclass
class RepoFiles:
    """The repository's files, sorted into the kinds `deps` reads."""

    root: Path
    requirements: list[Path] = field(default_factory=list)
    pyprojects: list[Path] = field(default_factory=list)
    setup_pys: list[Path] = field(default_factory=list)
    setup_cfgs: list[Path] = field(default_factory=list)
    conda: list[Path] = field(default_factory=list)
    dockerfiles: list[Path] = field(default_factory=list)
    python: list[Path] = field(default_factory=list)
    cuda: list[Path] = field(default_factory=list)  # .cu/.cuh and C/C++ sources
    gitmodules: Path | None = None

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


def _matches(name: str, globs: tuple[str, ...]) -> bool:
    return any(fnmatch(name, g) for g in globs)


def discover(root: Path, source_extensions: tuple[str, ...]) -> RepoFiles:
    """Sort every file under ``root`` (a directory) by what `deps` does with it."""
    root = root.resolve()
    found = RepoFiles(root=root)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_symlink() and not is_inside(path, root):
                continue
            lower = name.lower()
            if _matches(lower, REQUIREMENTS_GLOBS):
                found.requirements.append(path)
            elif name == "pyproject.toml":
                found.pyprojects.append(path)
            elif name == "setup.py":
                found.setup_pys.append(path)
            elif name == "setup.cfg":
                found.setup_cfgs.append(path)
            elif _matches(lower, CONDA_GLOBS):
                found.conda.append(path)
            elif _matches(name, DOCKERFILE_GLOBS):
                found.dockerfiles.append(path)
            elif name == ".gitmodules" and Path(dirpath) == root:
                found.gitmodules = path
            if lower.endswith(".py"):
                found.python.append(path)
            elif lower.endswith(tuple(e.lower() for e in source_extensions)):
                found.cuda.append(path)
    return found


def is_inside(path: Path, root: Path) -> bool:
    """True when ``path`` really (after symlinks) lies within ``root``."""
    try:
        path.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return False
    return True


def read_text(path: Path) -> str:
    """The file as text; raises OSError/UnicodeDecodeError/ValueError with a readable reason."""
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise ValueError(f"{size} bytes, larger than the {MAX_BYTES}-byte limit for manifests")
    data = path.read_bytes()
    if b"\0" in data:
        raise ValueError("binary file")
    return data.decode("utf-8-sig")
