"""Pre-filters rewritten for speed answer exactly as the forms they replaced."""

from __future__ import annotations

import random

from hypothesis import given, strategies as st

from hipport.rules.warp.shuffles import _SHFL_RE, _spells_shfl


@given(st.binary(max_size=64) | st.lists(st.sampled_from([b"s", b"S", b"h", b"H", b"f", b"F", b"l", b"L",
                                                           b"\xc5", b"\n", b"x"]), max_size=24).map(b"".join))
def test_spells_shfl_is_the_case_blind_search(src: bytes) -> None:
    assert _spells_shfl(src) == (_SHFL_RE.search(src) is not None)


def test_spells_shfl_on_every_casing() -> None:
    rng = random.Random(0)
    for i in range(16):
        word = bytes(c - 32 if i >> k & 1 else c for k, c in enumerate(b"shfl"))
        pad = bytes(rng.choice(b"ab \n") for _ in range(8))
        assert _spells_shfl(pad + word + pad), word
        assert not _spells_shfl(pad + word[:3] + b"_" + word[3:]), word
