"""Byte-range edits on the original buffer, pyupgrade-style: what is not edited stays byte for byte."""

from __future__ import annotations

import bisect
from itertools import accumulate
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


def output_lines(src: bytes, edits: list[Edit], new: bytes, lines: list[tuple[int, int]]) -> list[int]:
    """Where each 1-based (line, byte column) of ``src`` lands in ``new`` (``apply_edits``'s
    result): its 1-based line there. A place inside a replaced range maps to the
    replacement's start. Reports name both lines, because rewrites above a finding (an
    added ``#include``, a longer name) move the line a person edits in the output.
    """
    ordered = sorted(dict.fromkeys(edits), key=lambda e: (e.start, e.end))
    ends = [e.end for e in ordered]
    shift = [0]
    for e in ordered:
        shift.append(shift[-1] + len(e.text) - (e.end - e.start))
    # Line starts from C-level loops (split, map(len), accumulate): a Python step per line
    # was a visible share of convert's time. ``line_end[k]`` is where line k+1 ends.
    line_end = list(accumulate(map(len, src.split(b"\n"))))
    moved = []
    for line, col in lines:
        k = min(max(line, 1), len(line_end)) - 1
        at = (line_end[k - 1] + k if k else 0) + col - 1
        i = bisect.bisect_right(ends, at)  # edits wholly before ``at``
        if i < len(ordered) and ordered[i].start < at:
            at = ordered[i].start  # inside a replaced range
        moved.append(at + shift[i])
    # The output line is one more than the newlines before the place: counted in order of
    # place, so the whole output is scanned once.
    out = [0] * len(moved)
    pos = count = 0
    for j in sorted(range(len(moved)), key=moved.__getitem__):
        at = max(moved[j], pos)
        count += new.count(b"\n", pos, at)
        pos = at
        out[j] = count + 1
    return out
