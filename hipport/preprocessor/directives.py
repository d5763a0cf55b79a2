"""The preprocessor directives of a buffer, found the way the preprocessor finds them.

A directive is a logical line (backslash continuations joined) whose first token is ``#``,
outside comments and raw strings. Comments inside it are blanked, so a condition such as
``#if A /* && B */`` reads ``A``. Text is decoded as Latin-1, one character per byte, so an
offset into a directive's text plus its ``arg_start`` is a byte offset of the file: findings
and conditions are compared by byte offsets.

This is deliberately not tree-sitter: the grammar nests ``#if`` inside declarations and
recovers from errors by regrouping, while the preprocessor only ever sees lines.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

#: Comments, string and character literals, raw strings: what can hide a ``#`` at a line start
#: or a comment inside a directive. Raw strings first: ``R"(`` would otherwise open a string.
_LEXEMES = re.compile(
    rb'R"([^()\\\s]{0,16})\(.*?\)\1"'
    rb"|//(?:[^\n\\]|\\.)*"
    rb"|/\*.*?(?:\*/|\Z)"
    rb'|"(?:[^"\\\n]|\\.)*"'
    rb"|'(?:[^'\\\n]|\\.)*'",
    re.S,
)
#: A directive's ``#`` and name, once ``_directive_starts`` found its line.
_AFTER_HASH = re.compile(rb"#[ \t]*([A-Za-z_]\w*)?")
_CONTINUATION = re.compile(rb"\\\r?\n")
_DEFINE = re.compile(r"\s*([A-Za-z_]\w*)(\()?")
_INCLUDE = re.compile(r'\s*"([^"\n]+)"')
_SYSTEM = re.compile(rb"[ \t]*<")

#: The directives the branch model reads; others (#pragma, #error, #line, and #include
#: of a ``<system>`` header) are skipped.
KINDS = frozenset({
    "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else", "endif",
    "define", "undef", "include", "include_next",
})


@dataclass(frozen=True, slots=True)
class Directive:
    kind: str  # if, ifdef, elif, else, endif, define, undef, include…
    start: int  # byte offset of the line's first character
    end: int  # byte offset just past the logical line (its newline included)
    arg_start: int  # byte offset of ``arg``'s first character
    arg: str  # the rest of the line: comments and continuations blanked, Latin-1

    @property
    def macro(self) -> tuple[str, bool, str] | None:
        """For #define/#undef: (name, function-like, body); None when malformed."""
        m = _DEFINE.match(self.arg)
        if m is None:
            return None
        if self.kind != "define":
            return m.group(1), False, ""
        if m.group(2):  # function-like: the body follows the closing parenthesis
            close = self.arg.find(")", m.end())
            return m.group(1), True, self.arg[close + 1:].strip() if close >= 0 else ""
        return m.group(1), False, self.arg[m.end():].strip()

    @property
    def include(self) -> str | None:
        """For #include "file": the file as written; None for <file> and computed includes."""
        m = _INCLUDE.match(self.arg)
        return m.group(1) if m else None


def scan(src: bytes) -> list[Directive]:
    """The directives of ``src`` that the branch model reads, in order."""
    if b"#" not in src:
        return []
    spans = _spans(src)
    starts = [s for s, _ in spans]
    out: list[Directive] = []
    pos = 0
    for start, hash_at, arg_start, name in directive_starts(src):
        if start < pos or (spans and _inside(spans, starts, hash_at)):
            continue
        end = _logical_end(src, arg_start, spans, starts)
        pos = end
        kind = (name or b"").decode("latin-1")
        if kind not in KINDS or (kind.startswith("inc") and _SYSTEM.match(src, arg_start)):
            continue  # and #include <…>: the model never enters a system header
        out.append(Directive(kind, start, end, arg_start, _blank(src, arg_start, end, spans, starts)))
    return out


def directive_starts(src: bytes) -> Iterator[tuple[int, int, int, bytes | None]]:
    """(line start, its ``#``, end of the directive's name, the name or None) for every line
    whose first character other than spaces and tabs is ``#``: what a multi-line regex
    anchored at ``^`` matched, found from the rare ``#`` instead of trying the anchor at
    every byte (four times the cost). Only a line's first ``#`` can start a directive, so
    the search moves on to the next line after it: linear even in a long line of ``#``."""
    at = src.find(b"#")
    while at >= 0:
        line = src.rfind(b"\n", 0, at) + 1
        if line == at or not src[line:at].strip(b" \t"):
            m = _AFTER_HASH.match(src, at)
            yield line, at, m.end(), m.group(1)
        newline = src.find(b"\n", at)
        if newline < 0:
            return
        at = src.find(b"#", newline + 1)


def _spans(src: bytes) -> list[tuple[int, int]]:
    """The comments and literals that can hide a ``#`` at a line start or carry a
    directive over a newline: block comments (and raw strings, when the file has any).

    Lexing every string and line comment of a file cost more than the rest of the branch
    model; a ``/*`` only needs its own line looked at, to tell a comment from a ``"src/*"``.
    """
    if b'R"' in src:
        return [(m.start(), m.end()) for m in _LEXEMES.finditer(src)]
    spans: list[tuple[int, int]] = []
    pos = 0
    while (at := src.find(b"/*", pos)) >= 0:
        line = src.rfind(b"\n", 0, at) + 1
        nl = src.find(b"\n", at)
        hidden = any(m.start() < at < m.end() for m in _LEXEMES.finditer(src, line, len(src) if nl < 0 else nl))
        if hidden:  # inside a string or after // on its line
            pos = at + 2
            continue
        close = src.find(b"*/", at + 2)
        end = len(src) if close < 0 else close + 2
        spans.append((at, end))
        pos = end
    return spans


def _inside(spans: list[tuple[int, int]], starts: list[int], offset: int) -> bool:
    """Whether ``offset`` (the ``#``) lies inside a comment or a literal."""
    i = bisect.bisect_right(starts, offset) - 1
    return i >= 0 and spans[i][0] <= offset < spans[i][1]


def _logical_end(src: bytes, at: int, spans: list[tuple[int, int]], starts: list[int]) -> int:
    """Just past the newline ending the logical line that contains ``at``: a backslash
    continues it, and so does a block comment opened on it."""
    n = len(src)
    while True:
        nl = src.find(b"\n", at)
        if nl < 0:
            return n
        i = bisect.bisect_right(starts, nl) - 1
        if i >= 0 and spans[i][0] <= nl < spans[i][1]:  # inside a comment: go past it
            at = spans[i][1]
            continue
        if nl > 0 and src[nl - 1:nl] == b"\\" or src[max(nl - 2, 0):nl] == b"\\\r":
            at = nl + 1
            continue
        return nl + 1


def _blank(src: bytes, start: int, end: int, spans: list[tuple[int, int]], starts: list[int]) -> str:
    """``src[start:end]`` with comments and continuations replaced by spaces of equal length."""
    raw = src[start:end]
    if b"/" not in raw and b"\\" not in raw:  # the common case: nothing to blank
        return raw.decode("latin-1").rstrip("\r\n")
    text = bytearray(raw)
    i = max(bisect.bisect_right(starts, start) - 1, 0)
    while i < len(spans) and spans[i][0] < end:
        s, e = spans[i]
        if e > start and src[s:s + 2] in (b"//", b"/*"):
            lo, hi = max(s, start) - start, min(e, end) - start
            text[lo:hi] = b" " * (hi - lo)
        i += 1
    if b"//" in text:  # line comments are not in ``spans``: lex the directive's own text
        for m in _LEXEMES.finditer(bytes(text)):
            if m.group(0).startswith(b"//"):
                text[m.start():m.end()] = b" " * (m.end() - m.start())
    text = _CONTINUATION.sub(lambda m: b" " * len(m.group(0)), bytes(text))
    return text.decode("latin-1").rstrip("\r\n")


#: What follows a declared name: ``(…) {`` (a function definition), ``;`` or ``[…];`` (the
#: end of a typedef), ``=`` (an alias, after ``using``).
_FUNCTION_TAIL = re.compile(rb"\s*\((?:[^;{}()]|\([^;{}()]*\))*\)\s*(?:const\s*)?(?:noexcept\s*)?\{")
_TYPEDEF_TAIL = re.compile(rb"\s*(?:\[[^\]]*\]\s*)*;")
_USING_HEAD = re.compile(rb"\busing\s+$")
_TYPEDEF_WORD = re.compile(rb"\btypedef\b")

#: A name the code cannot be declaring with the function shape below.
_NOT_FUNCTIONS = frozenset({
    "if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignof",
    "static_assert", "defined", "__launch_bounds__", "__attribute__", "__declspec", "do",
})


def declares(src: bytes, items: list[Directive] | tuple[Directive, ...], name: str) -> set[int]:
    """The gaps between directives (0 before the first, i before ``items[i]``, the last
    after all) where the code declares ``name``, found by shape, not parsed: ``typedef …
    NAME;``, ``using NAME =``, a function defined as ``NAME(…) {``. A project that provides a
    CUDA name itself for its HIP build (llama.cpp's HIP header typedefs ``nv_bfloat162`` and
    defines ``__vsub4``) has already ported that name.

    Only the places the name is spelled are looked at (a regex over the whole buffer per
    name cost more than the rest of the branch model)."""
    word = name.encode("latin-1")
    if name in _NOT_FUNCTIONS:
        return set()
    starts = [d.start for d in items]
    gaps: set[int] = set()
    at = src.find(word)
    while at >= 0:
        end = at + len(word)
        whole = (at == 0 or not _is_word(src[at - 1])) and (end == len(src) or not _is_word(src[end]))
        if whole and _declared_at(src, at, end):
            gap = bisect.bisect_right(starts, at)
            if not (gap and at < items[gap - 1].end):  # inside a directive: a macro body's text
                gaps.add(gap)
        at = src.find(word, end)
    return gaps


def _is_word(byte: int) -> bool:
    return byte == 95 or 48 <= byte <= 57 or 65 <= byte <= 90 or 97 <= byte <= 122


def _declared_at(src: bytes, at: int, end: int) -> bool:
    """Whether the name at ``src[at:end]`` is being declared (see ``declares``)."""
    if _FUNCTION_TAIL.match(src, end):
        return True
    if _USING_HEAD.search(src, max(0, at - 64), at):
        return True
    if _TYPEDEF_TAIL.match(src, end):
        stmt = max(src.rfind(b";", 0, at), src.rfind(b"{", 0, at), src.rfind(b"}", 0, at)) + 1
        return _TYPEDEF_WORD.search(src, stmt, at) is not None
    return False
