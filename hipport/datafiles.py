"""Where hipport's files are: the ``mappings/`` data (installed or in a source checkout)
and the user's cache directory.

Installed, ``mappings/`` is the package ``hipport.mappings`` (pyproject.toml maps it), so
it ships inside the wheel. Run from the top of a source checkout (``python -m pytest``
puts the checkout first on ``sys.path``), the ``hipport`` package found is the source
tree, which has no ``hipport/mappings``: the data is then the checkout's own
``mappings/`` directory, the same files.
"""

from __future__ import annotations

import os
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path


def mappings() -> Traversable:
    """The checkout's own ``mappings/`` when this ``hipport`` is a source tree (beside a
    pyproject.toml), else the installed package's. In that order because an editable
    install maps ``hipport.mappings`` to the checkout it was made from: another checkout
    run through PYTHONPATH (a git worktree) read that one's tables, not its own."""
    checkout = Path(__file__).resolve().parent.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "mappings" / "families.toml").is_file():
        return checkout / "mappings"
    try:
        return files("hipport.mappings")
    except ModuleNotFoundError:
        return checkout / "mappings"


def cache_dir() -> Path:
    """``$HIPPORT_CACHE_DIR``, else ``$XDG_CACHE_HOME/hipport``, else ``~/.cache/hipport``:
    where ``check`` keeps results and the mapping tables their parsed form."""
    env = os.environ.get("HIPPORT_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "hipport"
