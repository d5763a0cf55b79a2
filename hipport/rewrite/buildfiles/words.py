"""Cutting build-file text into words, with byte offsets into the original buffer.

CMake lists (``a;b``), command lines (``a b``) and generator expressions
(``$<$<COMPILE_LANGUAGE:CUDA>:--use_fast_math>``) nest; the scanner keeps ``$<…>``,
``$(…)`` and ``${…}`` whole so a separator inside one does not split a word.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from hipport.rewrite.buildfiles.flags import Word

_OPEN = {b"$<": b">", b"$(": b")", b"${": b"}"}


def split(src: bytes, start: int, end: int, seps: bytes = b" \t\r\n;") -> Iterator[Word]:
    """Words of ``src[start:end]`` separated by any of ``seps`` outside ``$<…>``, ``$(…)``, ``${…}``."""
    i = start
    while i < end:
        while i < end and src[i:i + 1] in _sep_set(seps):
            i += 1
        if i >= end:
            return
        j = _word_end(src, i, end, seps)
        yield Word(i, j, src[i:j].decode("utf-8", "surrogateescape"))
        i = j


def _word_end(src: bytes, i: int, end: int, seps: bytes) -> int:
    stack: list[bytes] = []
    seps_set = _sep_set(seps)
    while i < end:
        two = src[i:i + 2]
        if two in _OPEN:
            stack.append(_OPEN[two])
            i += 2
            continue
        c = src[i:i + 1]
        if stack and c == stack[-1]:
            stack.pop()
        elif not stack and c in seps_set:
            return i
        i += 1
    return end


def _sep_set(seps: bytes) -> frozenset[bytes]:
    return frozenset(seps[k:k + 1] for k in range(len(seps)))


@dataclass(frozen=True)
class Genex:
    """``$<CONDITION:VALUE>``: the whole expression and where its value is."""

    start: int
    end: int
    condition: str
    value_start: int
    value_end: int


def genex(src: bytes, word: Word) -> Genex | None:
    """The outer generator expression a word is, when it is exactly one ``$<…:…>``."""
    s, e = word.start, word.end
    if not (src[s:s + 2] == b"$<" and src[e - 1:e] == b">"):
        return None
    depth = 0
    i = s
    while i < e:
        two = src[i:i + 2]
        if two == b"$<":
            depth += 1
            i += 2
            continue
        c = src[i:i + 1]
        if c == b">":
            depth -= 1
            if depth == 0 and i != e - 1:
                return None  # two expressions side by side
        elif c == b":" and depth == 1:
            cond = src[s + 2:i].decode("utf-8", "surrogateescape")
            return Genex(s, e, cond, i + 1, e - 1)
        i += 1
    return None
