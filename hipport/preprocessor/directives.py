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
_DIRECTIVE_START = re.compile(rb"^[ \t]*#[ \t]*([A-Za-z_]\w*)?", re.M)
_CONTINUATION = re.compile(rb"\\\r?\n")
_DEFINE = re.compile(r"\s*([A-Za-z_]\w*)(\()?")
_INCLUDE = re.compile(r'\s*"([^"\n]+)"')

#: The directives the branch model reads; others (#pragma, #error, #line) are skipped.
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
    spans = [(m.start(), m.end()) for m in _LEXEMES.finditer(src)]
    starts = [s for s, _ in spans]
    out: list[Directive] = []
    pos = 0
    for m in _DIRECTIVE_START.finditer(src):
        start = m.start()
        if start < pos or _inside(spans, starts, src.index(b"#", start)):
            continue
        end = _logical_end(src, m.end(), spans, starts)
        pos = end
        kind = (m.group(1) or b"").decode("latin-1")
        if kind not in KINDS:
            continue
        arg_start = m.end()
        out.append(Directive(kind, start, end, arg_start, _blank(src, arg_start, end, spans, starts)))
    return out


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
    text = _CONTINUATION.sub(lambda m: b" " * len(m.group(0)), bytes(text))
    return text.decode("latin-1").rstrip("\r\n")


#: What a project's own code declares between directives, found by shape, not parsed:
#: ``typedef … NAME;``, ``using NAME =``, and a function defined as ``NAME(…) {``. A
#: project that provides a CUDA name itself for its HIP build (llama.cpp's HIP header
#: typedefs ``nv_bfloat162`` and defines ``__vsub4``) has already ported that name.
#: Three patterns, each run over the whole buffer once (one alternation is several times
#: slower: the regex engine loses each pattern's literal prefix).
_DECLARATIONS = (
    re.compile(rb"\btypedef\b[^;{}]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*;"),
    re.compile(rb"\busing\s+([A-Za-z_]\w*)\s*="),
    re.compile(rb"\b([A-Za-z_]\w*)\s*\((?:[^;{}()]|\([^;{}()]*\))*\)\s*(?:const\s*)?(?:noexcept\s*)?\{"),
)
_NOT_FUNCTIONS = frozenset({
    "if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignof",
    "static_assert", "defined", "__launch_bounds__", "__attribute__", "__declspec", "do",
})


def declared(src: bytes, items: list[Directive] | tuple[Directive, ...]) -> tuple[frozenset[str], ...]:
    """Per gap between directives (before the first, between each pair, after the last),
    the names the code there declares: ``len(items) + 1`` sets."""
    starts = [d.start for d in items]
    out: list[set[str]] = [set() for _ in range(len(items) + 1)]
    for pattern in _DECLARATIONS:
        for m in pattern.finditer(src):
            name = m.group(1).decode("latin-1")
            if name in _NOT_FUNCTIONS:
                continue
            gap = bisect.bisect_right(starts, m.start())
            if gap and m.start() < items[gap - 1].end:
                continue  # inside a directive: a #define body is the macro's, not a declaration
            out[gap].add(name)
    return tuple(frozenset(names) for names in out)


def declares(src: bytes, items: list[Directive] | tuple[Directive, ...], name: str) -> set[int]:
    """The gaps (as ``declared`` numbers them) where the code declares ``name``: the same
    shapes, looked for one name only (a file's own names are asked about one at a time)."""
    word = name.encode("latin-1")
    if word not in src or name in _NOT_FUNCTIONS:
        return set()
    w = re.escape(word)
    shapes = (rb"\btypedef\b[^;{}]*?\b" + w + rb"\s*(?:\[[^\]]*\]\s*)*;",
              rb"\busing\s+" + w + rb"\s*=",
              rb"\b" + w + rb"\s*\((?:[^;{}()]|\([^;{}()]*\))*\)\s*(?:const\s*)?(?:noexcept\s*)?\{")
    starts = [d.start for d in items]
    gaps = set()
    for shape in shapes:
        for m in re.finditer(shape, src):
            gap = bisect.bisect_right(starts, m.start())
            if not (gap and m.start() < items[gap - 1].end):
                gaps.add(gap)
    return gaps
