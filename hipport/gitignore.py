"""``.gitignore`` while walking a tree, as git reads it (ruff and black do the same).

A tree's ignore files are read where the walk meets them, plus those of the input's
ancestors up to its repository root (the nearest directory holding ``.git``), and
``.git/info/exclude``. Each file's patterns apply to paths below its directory and the
deepest file that matches decides, as in git; an ignored directory is not entered, so
nothing under it can be re-included (git's rule too). Files named on the command line are
never filtered: pre-commit names staged files, which git has already chosen.

Matching is pathspec's ``GitIgnoreSpec``, the maintained implementation of git's rules
(negation, anchoring, ``**``, directory-only patterns, the cases where git differs from
its documentation) that black and many linters use; hand-rolled fnmatch gets these wrong.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

IGNORE_FILE = ".gitignore"


@dataclass(frozen=True)
class Layer:
    """The patterns of one ignore file and the directory they are relative to."""

    base: str  # absolute directory, no trailing separator
    spec: "GitIgnoreSpec"


Chain = tuple[Layer, ...]


def _read(directory: str, name: str = IGNORE_FILE) -> Layer | None:
    path = os.path.join(directory, name)
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError:
        return None  # an unreadable ignore file ignores nothing, as git does
    from pathspec import GitIgnoreSpec

    spec = GitIgnoreSpec.from_lines(lines)
    return Layer(directory, spec) if spec.patterns else None


def repository_root(path: str | os.PathLike) -> str | None:
    """The nearest directory at or above ``path`` holding ``.git`` (a folder, or the file of
    a linked worktree or submodule), as git finds its work tree; None outside one."""
    d = os.path.abspath(path)
    while not os.path.exists(os.path.join(d, ".git")):
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent
    return d


def root_chain(root: Path) -> Chain:
    """The ignore files that apply at ``root``: its repository's, from the top down to it."""
    here = os.path.abspath(root)
    ancestors = [here]
    top = repository_root(here)  # None, not in a repository: only the tree's own ignore files count
    while top is not None and ancestors[-1] != top:
        ancestors.append(os.path.dirname(ancestors[-1]))
    layers: list[Layer] = []
    top = ancestors[-1]
    if os.path.isdir(os.path.join(top, ".git", "info")):
        exclude = _read(os.path.join(top, ".git", "info"), "exclude")
        if exclude is not None:
            layers.append(Layer(top, exclude.spec))
    for directory in reversed(ancestors):
        layer = _read(directory)
        if layer is not None:
            layers.append(layer)
    return tuple(layers)


def descend(chain: Chain, directory: str) -> Chain:
    """``chain`` inside ``directory`` (below the root): plus its own ignore file, if any."""
    layer = _read(directory)
    return chain + (layer,) if layer is not None else chain


def ignored(chain: Chain, path: str, is_dir: bool) -> bool:
    """Whether git would ignore ``path`` (absolute) given the ignore files in ``chain``."""
    verdict = None
    for layer in chain:
        if not path.startswith(layer.base + os.sep):
            continue
        rel = path[len(layer.base) + 1:].replace(os.sep, "/") + ("/" if is_dir else "")
        include = layer.spec.check_file(rel).include
        if include is not None:
            verdict = include
    return bool(verdict)
