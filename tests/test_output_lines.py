"""edits.output_lines against a plain reference: where a finding's line lands in the output."""

from __future__ import annotations

import bisect
import random

from hipport.edits import Edit, EditConflict, apply_edits, apply_ordered, line_starts, ordered_edits, output_lines


def reference(src: bytes, edits: list[Edit], new: bytes, lines: list[tuple[int, int]]) -> list[int]:
    """One step per line, the obvious way (what output_lines computed before it was sped up)."""
    ordered = sorted(set(edits), key=lambda e: (e.start, e.end))
    ends = [e.end for e in ordered]
    shift = [0]
    for e in ordered:
        shift.append(shift[-1] + len(e.text) - (e.end - e.start))
    starts = [0] + [i + 1 for i, c in enumerate(src) if c == 10]
    new_starts = [0] + [i + 1 for i, c in enumerate(new) if c == 10]
    out = []
    for line, col in lines:
        at = starts[min(line, len(starts)) - 1] + col - 1
        i = bisect.bisect_right(ends, at)
        if i < len(ordered) and ordered[i].start < at:
            at = ordered[i].start
        out.append(bisect.bisect_right(new_starts, at + shift[i]))
    return out


def test_output_lines_match_the_reference_on_random_edits() -> None:
    rnd = random.Random(5)
    checked = 0
    for _ in range(2000):
        n = rnd.randint(0, 60)
        src = bytes(rnd.choice(b"ab\n") for _ in range(n))
        cuts = sorted(rnd.sample(range(n + 1), min(n + 1, rnd.randint(0, 6) * 2)))
        edits = [Edit(a, b, bytes(rnd.choice(b"xy\n") for _ in range(rnd.randint(0, 4))))
                 for a, b in zip(cuts[::2], cuts[1::2])]
        if n and rnd.random() < 0.3:
            at = rnd.randint(0, n)
            edits.append(Edit(at, at, b"#include <hip/hip_runtime.h>\n"))
        try:
            new = apply_edits(src, edits)
        except EditConflict:
            continue
        lines = [(rnd.randint(1, src.count(b"\n") + 1), rnd.randint(1, 5)) for _ in range(rnd.randint(0, 8))]
        expected = reference(src, edits, new, lines)
        assert output_lines(src, edits, new, lines) == expected
        # as pipeline.transform calls it: the edits ordered and the line starts given
        assert output_lines(src, edits, new, lines, ordered=ordered_edits(edits), starts=line_starts(src)) == expected
        assert apply_ordered(src, ordered_edits(edits)) == new
        checked += 1
    assert checked > 1000


def test_line_starts() -> None:
    assert line_starts(b"") == [0]
    assert line_starts(b"a\nbc\n\nd") == [0, 2, 5, 6]
    assert line_starts(b"a\r\n") == [0, 3]


def test_an_added_include_moves_the_lines_below_it() -> None:
    src = b"int a;\ncudaMalloc(&p, n);\n"
    edits = [Edit(0, 0, b"#include <hip/hip_runtime.h>\n"), Edit(7, 17, b"hipMalloc")]
    new = apply_edits(src, edits)
    assert output_lines(src, edits, new, [(1, 1), (2, 1), (2, 12)]) == [2, 3, 3]
