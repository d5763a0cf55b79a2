"""Byte-range edits on the original buffer, pyupgrade-style: what is not edited stays byte for byte."""

from __future__ import annotations

from typing import NamedTuple


class Edit(NamedTuple):
    """Replace ``src[start:end]`` with ``text`` (``start == end`` inserts).

    A named tuple rather than a frozen dataclass: a file can make thousands, and a frozen
    dataclass's ``__init__`` sets each field through ``object.__setattr__``."""

    start: int
    end: int
    text: bytes


class EditConflict(Exception):
    """Two different edits touch the same bytes: a bug in a rewriter, never silently resolved."""


def apply_edits(src: bytes, edits: list[Edit]) -> bytes:
    """Apply non-overlapping edits; identical duplicates are merged.

    Insertions at the same offset are applied in the order given (stable sort), so a
    rewriter that inserts ``A`` then ``B`` at one place gets ``AB``.
    """
    ordered = sorted(dict.fromkeys(edits), key=lambda e: (e.start, e.end))
    out: list[bytes] = []
    pos = 0
    for e in ordered:
        if e.start < pos:
            raise EditConflict(f"overlapping edits at byte {e.start}: {e!r}")
        out.append(src[pos:e.start])
        out.append(e.text)
        pos = e.end
    out.append(src[pos:])
    return b"".join(out)
