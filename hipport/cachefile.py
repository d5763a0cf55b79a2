"""Cache entries as data: one authenticated JSON document per file, read defensively.

Both caches (the parsed mapping tables, ``check``'s per-file results) live in a folder
that something else may write: a cache shared between users, or restored by CI. So an
entry is never code (JSON, never pickle), and reading one cannot hang, exhaust memory or
crash: it is opened without following a link, must be a regular file inside the cache
folder, owned by this user and writable by nobody else, no larger than the caller's
bound, and must start with a header naming its kind and the HMAC-SHA256 of its name and
body. Any doubt is a miss (``None``), and the caller recomputes.

The HMAC is keyed with a per-user secret (``secret_key``) that lives *outside* the cache
folder, in the user's state directory: a plain checksum can be recomputed by whoever
plants an entry, the HMAC cannot. An entry written under another key (another user,
another machine, a cache restored by CI) is a miss, never a hidden finding or a wrong
mapping; the entry's file name is in the MAC too, so a genuine entry copied to another
name is a miss as well. No usable key (unreadable, unsafe, or one that cannot be made)
means no cache: slower, never wrong.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from pathlib import Path
from typing import Any

MAGIC = b"hipport-cache"
#: Length of the secret key, in bytes (the key file holds exactly these).
KEY_BYTES = 32
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
    | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)


def _mac(key: bytes, kind: str, name: str, body: bytes) -> bytes:
    head = b"%s %s %s\n" % (MAGIC, kind.encode(), name.encode("utf-8", "surrogateescape"))
    return hmac.new(key, head + body, hashlib.sha256).hexdigest().encode()


def encode(kind: str, name: str, value: Any, key: bytes) -> bytes:
    """``hipport-cache KIND HMAC\\n`` then the compact JSON of ``value``; ``name`` is the
    entry's file name, bound into the HMAC.

    Raises TypeError or ValueError when ``value`` is not plain JSON data."""
    body = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return b"%s %s %s\n" % (MAGIC, kind.encode(), _mac(key, kind, name, body)) + body


def decode(kind: str, name: str, blob: bytes, key: bytes) -> Any:
    """The value of an entry of ``kind`` stored as ``name`` under ``key``, or None when it
    is not one, authentic."""
    head, sep, body = blob.partition(b"\n")
    parts = head.split(b" ")
    if not sep or len(parts) != 3 or parts[0] != MAGIC or parts[1] != kind.encode():
        return None
    if not hmac.compare_digest(_mac(key, kind, name, body), parts[2]):
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def read_entry(path: Path, root: Path, limit: int) -> bytes | None:
    """The bytes of cache file ``path`` if it is safe to read as data, else None.

    Refused: a path whose directory leads out of ``root``; a symbolic link (``O_NOFOLLOW``);
    anything but a regular file (a FIFO is opened non-blocking and refused, never read); a
    file of another user or writable by group or others; more than ``limit`` bytes."""
    try:
        real_dir = os.path.realpath(path.parent)
        real_root = os.path.realpath(root)
    except (OSError, ValueError):
        return None
    if not _inside(real_dir, real_root):
        return None
    return _read_private(path, limit, forbidden=0o022)


def load(path: Path, root: Path, kind: str, key: bytes, limit: int) -> Any:
    """The value of the entry at ``path`` (inside ``root``), or None: ``read_entry`` then
    ``decode``."""
    blob = read_entry(path, root, limit)
    return None if blob is None else decode(kind, path.name, blob, key)


def write_entry(path: Path, kind: str, value: Any, key: bytes) -> bool:
    """Store ``value`` as an entry of ``kind`` (private to this user, written atomically);
    False when it could not be (not plain data, or an unwritable folder: only speed is lost)."""
    from hipport.files import atomic_write

    try:
        atomic_write(path, encode(kind, path.name, value, key), mode=0o600)
    except (OSError, TypeError, ValueError):
        return False
    return True


# -- the secret key ---------------------------------------------------------------------

def key_file() -> Path:
    """``$XDG_STATE_HOME/hipport/cache.key``, else ``~/.local/state/hipport/cache.key``:
    state of this user, which a restored or shared *cache* folder does not carry."""
    xdg = os.environ.get("XDG_STATE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "state") / "hipport" / "cache.key"


def secret_key(cache_root: Path) -> bytes | None:
    """This user's key for the caches under ``cache_root``, made on first use; None when
    there is no safe one (then the caller uses no cache).

    A key file inside the cache folder would travel with it, so one there is refused. The
    file must be a regular file of this user that nobody else can read or write, holding
    exactly KEY_BYTES; a file that exists but is not that is left alone (not replaced, so
    a mistake is visible rather than silently rotating the key)."""
    try:
        path = key_file()
        if _inside(os.path.realpath(path), os.path.realpath(cache_root)):
            return None
        key = _read_private(path, KEY_BYTES, forbidden=0o077)
        if key is None and not os.path.lexists(path):
            key = _create_key(path)
    except (OSError, RuntimeError, ValueError):  # RuntimeError: no home directory
        return None
    return key if key is not None and len(key) == KEY_BYTES else None


def _create_key(path: Path) -> bytes | None:
    """Write a new random key atomically: a private temporary file, then a hard link to the
    key's name, which fails if another process made one first (then that one is used)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, os.urandom(KEY_BYTES))  # what secrets.token_bytes returns; that module imports random
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not os.path.lexists(path):
                os.replace(tmp, path)
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return _read_private(path, KEY_BYTES, forbidden=0o077)


def _read_private(path: Path, limit: int, forbidden: int) -> bytes | None:
    """The bytes of regular file ``path`` (not a link, FIFO or device) owned by this user
    with none of the ``forbidden`` mode bits, at most ``limit`` bytes; else None."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        if hasattr(os, "geteuid") and (st.st_uid != os.geteuid() or st.st_mode & forbidden):
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


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(os.path.join(root, ""))
