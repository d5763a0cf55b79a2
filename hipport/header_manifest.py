"""A header set is checked file by file before verify trusts it.

The sets under ``<cache>/hip-headers/`` decide what ``hipport verify`` reports: a planted
or edited ``hip_runtime.h`` (a shared or restored cache folder) could make a wrong
conversion "compile". So the build writes a manifest, ``share/hip/hipport-manifest``: the
SHA-256 and size of every other file of the set, as a ``cachefile`` entry authenticated by
an HMAC under this user's key (kept outside the cache, ``cachefile.secret_key``) and bound
to the set's directory name (its version). Before a set is used, ``problem`` walks it:
every file must be listed with its size and hash, every listed file present, nothing a
link, FIFO or device, nothing owned by another user or writable by group or others.

A set built before manifests existed (or under another key) has none that checks. It is
adopted, its manifest written, only when its content is exactly the content the catalogue
pins (``digest`` in ``mappings/hip_header_sets.toml``, which ships with hipport and is not
in the cache): an existing cache goes on working without a download, a planted one does not.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from hipport import cachefile
from hipport.files import atomic_write

MANIFEST = Path("share") / "hip" / "hipport-manifest"
KIND = "hip-header-set"
#: The manifest of a set of a few hundred files is ~40 KB; a larger one is not ours.
MANIFEST_LIMIT = 4 << 20
#: A set is ~3.5 MB; one with more than this in it is not read (hashed) at all.
SET_LIMIT = 64 << 20
#: rel path -> [sha256 hex, size]
Files = dict[str, list]


class Unsafe(Exception):
    """The set has a file that must not be read (a link, FIFO, another user's file...)."""


def scan(root: Path, expected: Files | None = None) -> Files:
    """Every file of the set at ``root`` but the manifest, hashed: {rel: [sha256, size]}.

    Links are not followed and refused, as is anything but a regular file or directory, or
    an entry another user owns or may write. With ``expected``, a file whose size is not
    the expected one is not read (a planted /dev/zero-sized file costs nothing): it gets
    the hash "" and fails the comparison."""
    found: Files = {}
    total = 0
    me = os.geteuid() if hasattr(os, "geteuid") else None
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        for name in [*dirnames, *filenames]:
            path = here / name
            st = os.lstat(path)
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(st.st_mode):
                raise Unsafe(f"{rel} is a symbolic link")
            if (me is not None and st.st_uid != me) or st.st_mode & 0o022:
                raise Unsafe(f"{rel} is another user's or writable by others")
            if stat.S_ISDIR(st.st_mode):
                continue
            if not stat.S_ISREG(st.st_mode):
                raise Unsafe(f"{rel} is not a regular file")
            if rel == MANIFEST.as_posix():
                continue
            total += st.st_size
            if total > SET_LIMIT:
                raise Unsafe(f"it holds more than {SET_LIMIT >> 20} MiB, which no header set does")
            want = (expected or {}).get(rel)
            if expected is not None and (want is None or want[1] != st.st_size):
                found[rel] = ["", st.st_size]
                continue
            found[rel] = [_sha256(path), st.st_size]
    return found


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def digest(files: Files) -> str:
    """One SHA-256 of a whole set's content (paths, sizes, hashes): what the catalogue pins."""
    lines = "".join(f"{sha} {size} {rel}\n" for rel, (sha, size) in sorted(files.items()))
    return hashlib.sha256(lines.encode("utf-8", "surrogateescape")).hexdigest()


def write(root: Path, sets_root: Path, name: str, files: Files | None = None) -> bool:
    """Write the manifest of the set at ``root`` (under ``sets_root``), whose directory is or
    will be ``name``; False when there is no usable key (then the set cannot be used)."""
    key = cachefile.secret_key(sets_root)
    if key is None:
        return False
    files = scan(root) if files is None else files
    atomic_write(root / MANIFEST, cachefile.encode(KIND, _name(name), {"files": files}, key), mode=0o644)
    return True


def _name(name: str) -> str:
    """The name bound into the manifest's HMAC: the set's own directory (its version), so a
    genuine set copied under another version's name does not pass as that version."""
    return f"{name}/{MANIFEST.as_posix()}"


def problem(root: Path, sets_root: Path, pinned: str | None = None) -> str | None:
    """Why the set at ``root`` must not be used, or None when every file is the one its
    manifest lists. A set with no authentic manifest whose content digest is ``pinned``
    (the catalogue's) is adopted: its manifest is written and it is used."""
    key = cachefile.secret_key(sets_root)
    if key is None:
        return (f"no usable cache key ({cachefile.key_file()}) to authenticate it with: "
                "it must be a private file of this user, outside the cache folder")
    try:
        if os.path.islink(root):
            raise Unsafe(f"{root} is a symbolic link")
        blob = cachefile.read_entry(root / MANIFEST, root, MANIFEST_LIMIT)
        value = None if blob is None else cachefile.decode(KIND, _name(root.name), blob, key)
        listed = value.get("files") if isinstance(value, dict) else None
        if not _well_formed(listed):
            files = scan(root)
            if pinned is not None and digest(files) == pinned:
                return None if write(root, sets_root, root.name, files) else "its manifest cannot be written"
            return (f"its manifest ({MANIFEST.as_posix()}) is missing or was not written by "
                    "this user's hipport (a set from another user, another machine, an earlier "
                    "hipport, or planted)")
        files = scan(root, listed)
    except Unsafe as e:
        return str(e)
    except OSError as e:
        return f"cannot read it: {e}"
    changed = sorted(rel for rel in files.keys() | listed.keys() if files.get(rel) != listed.get(rel))
    if changed:
        shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
        return f"{len(changed)} file(s) differ from its manifest: {shown}"
    return None


def _well_formed(listed: object) -> bool:
    return isinstance(listed, dict) and all(
        isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], int)
        for v in listed.values())
