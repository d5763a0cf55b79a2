"""Byte-range edits on the original buffer, pyupgrade-style: what is not edited stays byte for byte."""

from __future__ import annotations

import bisect
from itertools import accumulate, count
from operator import add
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


def ordered_edits(edits: list[Edit]) -> list[Edit]:
    """``edits`` without identical duplicates, by place; insertions at the same offset keep
    the order given (stable sort), so a rewriter that inserts ``A`` then ``B`` gets ``AB``.
    What ``apply_edits`` and ``output_lines`` work from: ``pipeline.transform`` orders once
    for both."""
    return sorted(dict.fromkeys(edits), key=_place)


def _place(e: Edit) -> tuple[int, int]:
    return e.start, e.end


def apply_edits(src: bytes, edits: list[Edit]) -> bytes:
    """Apply non-overlapping edits; identical duplicates are merged (``ordered_edits``)."""
    return apply_ordered(src, ordered_edits(edits))


def apply_ordered(src: bytes, ordered: list[Edit]) -> bytes:
    """``apply_edits`` of edits already ``ordered_edits``."""
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


def line_starts(src: bytes) -> list[int]:
    """The byte offset where each line of ``src`` starts (``Context`` keeps the same list).

    From C-level loops (split, map(len), accumulate): a Python step per line was a
    visible share of convert's time."""
    return [0, *map(add, accumulate(map(len, src.split(b"\n")[:-1])), count(1))]


def output_lines(src: bytes, edits: list[Edit], new: bytes, lines: list[tuple[int, int]], *,
                 ordered: list[Edit] | None = None, starts: list[int] | None = None) -> list[int]:
    """Where each 1-based (line, byte column) of ``src`` lands in ``new`` (``apply_edits``'s
    result): its 1-based line there. A place inside a replaced range maps to the
    replacement's start. Reports name both lines, because rewrites above a finding (an
    added ``#include``, a longer name) move the line a person edits in the output.

    ``ordered`` (``ordered_edits(edits)``) and ``starts`` (``line_starts(src)``) may be
    given when the caller has them: sorting a file's edits and splitting it into lines
    were most of this function's cost.
    """
    if ordered is None:
        ordered = ordered_edits(edits)
    if starts is None:
        starts = line_starts(src)
    ends = [e.end for e in ordered]
    shift = [0, *accumulate(len(e.text) - (e.end - e.start) for e in ordered)]
    last = len(starts)
    moved = []
    for line, col in lines:
        at = starts[min(max(line, 1), last) - 1] + col - 1
        i = bisect.bisect_right(ends, at)  # edits wholly before ``at``
        if i < len(ordered) and ordered[i].start < at:
            at = ordered[i].start  # inside a replaced range
        moved.append(at + shift[i])
    # The output line is one more than the newlines before the place: counted in order of
    # place, so the whole output is scanned once.
    out = [0] * len(moved)
    pos = newlines = 0
    for j in sorted(range(len(moved)), key=moved.__getitem__):
        at = max(moved[j], pos)
        newlines += new.count(b"\n", pos, at)
        pos = at
        out[j] = newlines + 1
    return out
