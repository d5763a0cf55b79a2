"""Cache entries as data: one checksummed JSON document per file, read defensively.

Both caches (the parsed mapping tables, ``check``'s per-file results) live in a folder
that something else may write: a cache shared between users, or restored by CI. So an
entry is never code (JSON, never pickle), and reading one cannot hang, exhaust memory or
crash: it is opened without following a link, must be a regular file inside the cache
folder, owned by this user and writable by nobody else, no larger than the caller's
bound, and must start with a header naming its kind and the SHA-256 of its body. Any
doubt is a miss (``None``), and the caller recomputes.

The checksum catches corruption, truncation and hand edits. It is not a signature: a
party that can write the cache folder can still write a well-formed entry, which is why
entries owned by anyone else are refused. Such an entry can at worst give a wrong
answer, never run code; ``hipport check --no-cache`` (or a private ``HIPPORT_CACHE_DIR``)
takes the cache out of the gate.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

MAGIC = b"hipport-cache"


def encode(kind: str, value: Any) -> bytes:
    """``hipport-cache KIND SHA256\\n`` then the compact JSON of ``value``.

    Raises TypeError or ValueError when ``value`` is not plain JSON data."""
    body = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return b"%s %s %s\n" % (MAGIC, kind.encode(), hashlib.sha256(body).hexdigest().encode()) + body


def decode(kind: str, blob: bytes) -> Any:
    """The value of an entry of ``kind``, or None when it is not one, intact."""
    head, sep, body = blob.partition(b"\n")
    parts = head.split(b" ")
    if not sep or len(parts) != 3 or parts[0] != MAGIC or parts[1] != kind.encode():
        return None
    if hashlib.sha256(body).hexdigest().encode() != parts[2]:
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def read_entry(path: Path, root: Path, limit: int) -> bytes | None:
    """The bytes of cache file ``path`` if it is safe to trust as data, else None.

    Refused: a path whose directory leads out of ``root``; a symbolic link (``O_NOFOLLOW``);
    anything but a regular file (a FIFO is opened non-blocking and refused, never read); a
    file of another user or writable by group or others; more than ``limit`` bytes."""
    try:
        real_dir = os.path.realpath(path.parent)
        real_root = os.path.realpath(root)
    except (OSError, ValueError):
        return None
    if real_dir != real_root and not real_dir.startswith(os.path.join(real_root, "")):
        return None
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
        | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        if hasattr(os, "geteuid") and (st.st_uid != os.geteuid() or st.st_mode & 0o022):
            return None
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        blob = b"".join(chunks)
        return blob if len(blob) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def write_entry(path: Path, kind: str, value: Any) -> bool:
    """Store ``value`` as an entry of ``kind`` (private to this user, written atomically);
    False when it could not be (not plain data, or an unwritable folder: only speed is lost)."""
    from hipport.files import atomic_write

    try:
        atomic_write(path, encode(kind, value), mode=0o600)
    except (OSError, TypeError, ValueError):
        return False
    return True
