"""Which files of a repository `hipport deps` reads, and reading them safely.

The walk never follows symlinked directories and never reads a file whose real path leaves
the repository: a hostile repository must not make hipport read /etc or loop forever.
Symlink loops, dangling links, FIFOs, sockets and devices among the files `deps` would read
become one ParseIssue each (a FIFO is never opened for reading: that would block).

Bounds (documented in the README, each exceeded one named in a per-file message):
``MAX_BYTES`` per file read, ``MAX_DEPTH`` bracket nesting in TOML/YAML/Python and
``MAX_ENTRIES`` requirements or sections per manifest.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

from hipport.deps.model import ParseIssue

#: Directories that hold someone else's code or build output, not the repository's own.
SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", "env", ".env", ".tox", ".nox", ".eggs",
    "node_modules", "__pycache__", "site-packages", "build", "dist", ".mypy_cache",
    ".pytest_cache", ".ruff_cache",
})
MAX_BYTES = 2_000_000  # larger "manifests" or sources are reported, not parsed
MAX_DEPTH = 100  # deeper [ { ( nesting is reported, not parsed (the parsers recurse)
MAX_ENTRIES = 20_000  # requirements / sections read per manifest; the rest is reported

REQUIREMENTS_GLOBS = ("requirements*.txt", "requirements*.in", "*requirements.txt",
                      "constraints*.txt")
DOCKERFILE_GLOBS = ("Dockerfile", "Dockerfile.*", "*.Dockerfile", "*.dockerfile", "Containerfile")
CONDA_GLOBS = ("environment*.yml", "environment*.yaml", "conda*.yml", "conda*.yaml")
DOC_GLOBS = ("readme*.md", "readme*.rst", "readme", "readme.txt", "install*.md", "install*.rst",
             "install", "install.txt", "installation*.md")


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
    docs: list[Path] = field(default_factory=list)  # README / INSTALL with install commands
    issues: list[ParseIssue] = field(default_factory=list)  # loops, FIFOs, dangling links

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
            if not _wanted(name, source_extensions):
                continue
            problem = _not_readable(path, root)
            if problem == "outside":
                continue
            if problem:
                found.issues.append(ParseIssue(found.rel(path), 0, f"{problem}; not read"))
                continue
            lower = name.lower()
            if _matches(lower, DOC_GLOBS) and Path(dirpath) == root or _is_install_doc(path, root):
                found.docs.append(path)
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


def _wanted(name: str, source_extensions: tuple[str, ...]) -> bool:
    """Is this a file name `deps` reads (so that a problem with it is worth a message)?"""
    lower = name.lower()
    return (lower.endswith((".py", *(e.lower() for e in source_extensions)))
            or name in ("pyproject.toml", "setup.py", "setup.cfg", ".gitmodules")
            or _matches(lower, REQUIREMENTS_GLOBS + CONDA_GLOBS + DOC_GLOBS)
            or _matches(name, DOCKERFILE_GLOBS))


def _is_install_doc(path: Path, root: Path) -> bool:
    """docs/install*.md and the like: install instructions kept outside the README."""
    rel = path.relative_to(root).parts
    return len(rel) == 2 and rel[0].lower() in ("docs", "doc") and _matches(rel[1].lower(), ("install*.md", "install*.rst", "install*.txt"))


def _not_readable(path: Path, root: Path) -> str:
    """Why ``path`` must not be read: "" (fine), "outside" (silently skipped) or a reason."""
    try:
        st = os.stat(path)  # follows links; ELOOP for a loop, ENOENT for a dangling one
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "symlink loop"
        return "dangling symlink" if path.is_symlink() else f"cannot stat: {e.strerror}"
    if path.is_symlink() and not is_inside(path, root):
        return "outside"
    if not stat.S_ISREG(st.st_mode):
        return f"not a regular file ({_kind(st.st_mode)})"
    return ""


def _kind(mode: int) -> str:
    return ("FIFO" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode)
            else "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "directory" if stat.S_ISDIR(mode) else "special file")


def real_path(path: Path) -> Path | None:
    """``path`` with every symlink resolved, or None for a loop or an unresolvable path.

    ``Path.resolve`` raises RuntimeError for a loop on Python < 3.13 and OSError after.
    """
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def is_inside(path: Path, root: Path) -> bool:
    """True when ``path`` really (after symlinks) lies within ``root``."""
    real, base = real_path(path), real_path(root)
    if real is None or base is None:
        return False
    return real == base or base in real.parents


def read_text(path: Path) -> str:
    """The file as text; raises OSError/UnicodeDecodeError/ValueError with a readable reason.

    Opened non-blocking and checked with fstat *after* opening, so a FIFO swapped in after
    the walk is refused rather than read (which would block forever).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"not a regular file ({_kind(st.st_mode)})")
        if st.st_size > MAX_BYTES:
            raise ValueError(f"{st.st_size} bytes, larger than the {MAX_BYTES}-byte limit")
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"larger than the {MAX_BYTES}-byte limit")
    if b"\0" in data:
        raise ValueError("binary file")
    return data.decode("utf-8-sig")


def nesting_depth(text: str) -> int:
    """The deepest run of open ``[ { (`` brackets, ignoring those inside quotes.

    A cheap linear pre-check: the TOML, YAML and Python parsers recurse per level and die
    (RecursionError, MemoryError) on inputs such as 100,000 ``[``; real manifests nest < 10.
    Quotes are tracked roughly (no escapes); a string that hides brackets only lowers the count.
    """
    depth = deepest = 0
    quote = ""
    for ch in text:
        if quote:
            if ch == quote or ch == "\n":
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]})":
            depth = max(depth - 1, 0)
    return deepest


def check_depth(text: str) -> None:
    """Raise ValueError when ``text`` nests deeper than MAX_DEPTH."""
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        raise ValueError(f"brackets nest {depth} deep, beyond the limit of {MAX_DEPTH}")


def parse_python(path: Path, rel: str, text: str | None = None):
    """``ast.parse`` of a bounded file; its parser's own limits become a ValueError.

    CPython's parser raises MemoryError ("too complex") for 100,000 nested unary minus
    signs and RecursionError for deep brackets: both are about the input, not the machine,
    so they are reported as the file's problem. Brackets deeper than MAX_DEPTH are refused
    before parsing.
    """
    import ast

    text = read_text(path) if text is None else text
    check_depth(text)
    try:
        return ast.parse(text, filename=rel)
    except (MemoryError, RecursionError) as e:
        raise ValueError(f"nested too deeply for Python's parser ({type(e).__name__})") from None
