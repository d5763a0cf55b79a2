"""The mapping tables' data files, read and cached: ``hipport.mapping`` builds its
tables from the values ``load_raw`` returns.

Kept apart from the tables so that what is cached, under which key, and when an entry is
dropped, reads in one place.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Protocol

from hipport.cachefile import load, write_entry
from hipport.datafiles import toml_data


class Resource(Protocol):
    """What is read from a data directory: a Path, or an importlib.resources Traversable."""

    def __truediv__(self, child: str) -> "Resource": ...
    def read_bytes(self) -> bytes: ...


#: The modules whose code reads the cached values: their bytes are part of the key.
_READERS = ("mapping.py", "mapping_files.py")


TOML_FILES = ("families.toml", "headers.toml", "macros.toml", "namespaces.toml", "overloads.toml")


#: Format of a mapping cache entry (``hipport.cachefile`` kind); bumped with its layout.
CACHE_KIND = "mappings-2"
#: The largest mapping cache entry read (today's is about 1.7 MB).
MAX_CACHE_BYTES = 64 << 20


def load_raw(api_dir: Path | Resource, data: Path | Resource, cache_dir: Path | None,
              secret: bytes | None) -> tuple[dict[str, Any], Path | None]:
    """Every data file, parsed: ``{"headers.toml": {...}, "api/runtime.json": {...}, ...}``,
    and the cache entry it came from (None when parsed from the sources). The cache is
    used only with both ``cache_dir`` and the ``secret`` its entries are authenticated by.

    TOML parsing is most of a cold start; one JSON document of the parsed values loads as
    fast as the pickle it replaces did (measured: about 20 ms either way for the 1.7 MB
    of tables) and cannot run code. The key hashes the bytes of every file (and of this
    module and ``hipport.mapping``, whose code reads the values), so an edited table or a
    new hipport never reads an old entry.
    """
    blobs = {name: (data / name).read_bytes() for name in TOML_FILES}
    families = toml_data("families.toml", blobs["families.toml"])["families"]
    for fam in families:
        blobs[f"api/{fam}.json"] = (api_dir / f"{fam}.json").read_bytes()
    digest = hashlib.sha256()
    for module in _READERS:
        digest.update(Path(__file__).with_name(module).read_bytes())
    for name in sorted(blobs):
        digest.update(name.encode() + b"\0" + blobs[name] + b"\0")
    cache = None
    if cache_dir is not None and secret is not None:
        cache = cache_dir / f"mappings-{digest.hexdigest()[:32]}.json"
        raw = load(cache, cache_dir, CACHE_KIND, secret, MAX_CACHE_BYTES)
        if isinstance(raw, dict) and set(raw) == set(blobs) \
                and all(isinstance(v, dict) for v in raw.values()):
            return raw, cache
    from hipport.options import toml_module  # here: a cached start never parses TOML

    tomllib = toml_module()
    raw = {}
    for name, blob in blobs.items():
        text = blob.decode("utf-8")
        raw[name] = tomllib.loads(text) if name.endswith(".toml") else json.loads(text)
    if cache is not None and secret is not None and write_entry(cache, CACHE_KIND, raw, secret):
        _remove_old_entries(cache)
    return raw, None


def _remove_old_entries(current: Path) -> None:
    """The mapping cache keeps one entry: the others (older tables, and the pickles of
    earlier hipport, which must not stay where an older hipport would load them)
    are deleted. Best effort."""
    try:
        for entry in os.scandir(current.parent):
            if entry.name.startswith("mappings-") and entry.name != current.name \
                    and entry.name.endswith((".json", ".pickle")):
                os.unlink(entry.path)
    except OSError:
        pass
