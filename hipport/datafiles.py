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
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable


def mappings() -> "Traversable":
    """The checkout's own ``mappings/`` when this ``hipport`` is a source tree (beside a
    pyproject.toml), else the installed package's. In that order because an editable
    install maps ``hipport.mappings`` to the checkout it was made from: another checkout
    run through PYTHONPATH (a git worktree) read that one's tables, not its own.

    The installed package is found as a directory from its import spec: importing
    ``importlib.resources`` (tempfile, shutil, random, lzma…) cost every process about
    5 ms. ``importlib.resources`` still answers for a package that is not a directory
    (a zip)."""
    checkout = Path(__file__).resolve().parent.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "mappings" / "families.toml").is_file():
        return checkout / "mappings"
    try:
        spec = find_spec("hipport.mappings")
    except ModuleNotFoundError:
        spec = None
    if spec is None:
        return checkout / "mappings"
    for location in spec.submodule_search_locations or ():
        if (Path(location) / "families.toml").is_file():
            return Path(location)
    from importlib.resources import files

    return files("hipport.mappings")


def cache_dir() -> Path:
    """``$HIPPORT_CACHE_DIR``, else ``$XDG_CACHE_HOME/hipport``, else ``~/.cache/hipport``:
    where ``check`` keeps results and the mapping tables their parsed form."""
    env = os.environ.get("HIPPORT_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "hipport"


#: Format of a parsed-data cache entry (``hipport.cachefile`` kind); bumped with its layout.
DATA_CACHE_KIND = "toml-data-1"
#: The largest parsed-data entry read (the largest file, arguments.toml, parses to ~60 kB).
MAX_DATA_CACHE_BYTES = 4 << 20


def toml_data(name: str, blob: bytes | None = None) -> dict:
    """``mappings/<name>`` (or ``blob``, the bytes of a file of that name read elsewhere)
    parsed as TOML, through an authenticated cache entry.

    Every process reads a few of these files (arguments, released headers, the library
    catalogue, GPUs, CUDA aliases, build flags, mapping families): parsing them with the
    pure-Python ``tomllib`` cost about 10 ms of each start, where the same values as JSON load in well under 1 ms. The entry
    is data, never code (``hipport.cachefile``: JSON under this user's HMAC key), named by
    the SHA-256 of the file's bytes, so an edited file never reads an old entry; an entry
    that is missing, foreign, unreadable or not a table is a miss, and the file is parsed.
    A value TOML holds and JSON does not (a date) is simply not cached.
    """
    import hashlib

    if blob is None:
        blob = mappings().joinpath(name).read_bytes()
    from hipport.cachefile import load, secret_key, write_entry

    try:
        root = cache_dir()
    except (RuntimeError, KeyError):  # no home directory to find the cache under: no cache
        root = None
    stem = name.removesuffix(".toml")
    path = root / f"data-{stem}-{hashlib.sha256(blob).hexdigest()[:32]}.json" if root is not None else None
    secret = secret_key(root) if root is not None else None
    if path is not None and secret is not None:
        value = load(path, root, DATA_CACHE_KIND, secret, MAX_DATA_CACHE_BYTES)
        if isinstance(value, dict):
            return value
    from hipport.options import toml_module

    value = toml_module().loads(blob.decode("utf-8"))
    if path is not None and secret is not None and write_entry(path, DATA_CACHE_KIND, value, secret):
        _remove_other_entries(path, f"data-{stem}-")
    return value


def _remove_other_entries(current: Path, prefix: str) -> None:
    """One entry per data file: those of its earlier contents go. Best effort."""
    try:
        for entry in os.scandir(current.parent):
            digest = entry.name[len(prefix):-len(".json")]
            if entry.name.startswith(prefix) and entry.name.endswith(".json") and len(digest) == 32 \
                    and entry.name != current.name and all(c in "0123456789abcdef" for c in digest):
                os.unlink(entry.path)
    except OSError:
        pass
