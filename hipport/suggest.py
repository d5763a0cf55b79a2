""""Did you mean …?": one way, difflib's, for every usage error that names a near miss.

Unknown config keys, rule codes given to ``--select``/``--ignore``, ``hipport rules
CODE`` and ``hipport map NAME`` all suggest through here, so a typo gets the same kind
of answer whichever command it was made in. The measure is difflib's ratio (standard
library; matching blocks, so a transposition or a dropped letter scores well on long
names, where an edit count grows with the name's length), computed on case-folded text:
``failOn`` and ``hp2o1`` are typos of ``fail-on`` and ``HP201`` too. The original
spelling of the candidate is what is suggested.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: difflib's default: below this ratio a candidate is more likely noise than what was meant.
CUTOFF = 0.6


def close_matches(value: str, candidates: Iterable[str], n: int = 3,
                  cutoff: float = CUTOFF) -> list[str]:
    """Up to ``n`` candidates spelled like ``value``, best first. Among equally good ones
    (common with short codes: HP013 is as like HP113 as HP101), the one with more letters
    in the same places, then sorted order; ``difflib.get_close_matches`` would take the
    last in sorted order, so ``HP01`` would suggest HP701 before HP101."""
    wanted = value.casefold()
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(wanted)  # seq2 is the side difflib analyses once
    scored: dict[str, float] = {}
    for c in set(candidates):
        matcher.set_seq1(c.casefold())
        if matcher.real_quick_ratio() >= cutoff and matcher.quick_ratio() >= cutoff \
                and (ratio := matcher.ratio()) >= cutoff:
            scored[c] = ratio
    return sorted(scored, key=lambda c: (-scored[c], -_in_place(wanted, c.casefold()), c))[:n]


def _in_place(a: str, b: str) -> int:
    return sum(x == y for x, y in zip(a, b))


def closest(value: str, candidates: Iterable[str], cutoff: float = CUTOFF) -> str | None:
    """The one candidate most like ``value``, if any is close enough to be what was meant."""
    found = close_matches(value, candidates, n=1, cutoff=cutoff)
    return found[0] if found else None
