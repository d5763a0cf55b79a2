"""CMake arguments that hold compiler flags: generator expressions over the CUDA language
and the nvcc flags in them.

``$<COMPILE_LANGUAGE:CUDA>`` and its relatives become HIP's; a flag argument's words (a
CMake list, or a command line in a ``CMAKE_*_FLAGS`` string) go through the nvcc flag
table; a ``$<COMPILE_LANGUAGE:CUDA:…>`` value whose every flag is dropped goes whole.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hipport.rewrite.buildfiles import BuildContext
from hipport.rewrite.buildfiles.flags import Word, apply
from hipport.rewrite.buildfiles.maps import load
from hipport.rewrite.buildfiles.words import Genex, genex, split

if TYPE_CHECKING:
    from hipport.rewrite.buildfiles.cmake import Arg

_GENEX_LANG_RE = re.compile(r"\$<(COMPILE_LANGUAGE|LINK_LANGUAGE|COMPILE_LANG_AND_ID|CUDA_COMPILER_ID|"
                            r"CUDA_COMPILER_VERSION)(:[^>$]*)?>")


def genex_names(ctx: BuildContext, a: "Arg") -> None:
    table = load().cmake["genex"]
    for m in _GENEX_LANG_RE.finditer(a.text):
        body = m.group()[2:-1]
        at = a.start + bytes_len(a.text[:m.start()]) + 2
        if body in table:
            ctx.edit(at, at + len(body), table[body])
        elif body.startswith(("COMPILE_LANGUAGE:", "LINK_LANGUAGE:")):
            head, _, langs = body.partition(":")
            names = langs.split(",")
            if "CUDA" in names:
                new = ",".join("HIP" if n == "CUDA" else n for n in names)
                ctx.edit(at + len(head) + 1, at + len(body), new)
        elif body.startswith(("CUDA_COMPILER", "COMPILE_LANG_AND_ID:CUDA")):
            ctx.report("HP604", at - 2, at + len(body) + 1,
                       f"$<{body}>: tests nvcc's identity or version, which a HIP build does not have",
                       "test $<HIP_COMPILER_ID:Clang> or $<HIP_COMPILER_VERSION:…> (clang's version)")


def flags(ctx: BuildContext, a: "Arg", spaces: bool, arch_done: bool) -> bool:
    """Every word of a flag argument through the nvcc flag table."""
    words = list(split(ctx.src, a.start, a.end, b" \t\r\n" if spaces else b" \t\r\n;"))
    sep = " " if spaces else ";"
    plain: list[Word] = []
    for w in words:
        g = genex(ctx.src, w)
        if g is not None:
            _genex_value(ctx, g, *_bounds(ctx, a))
        else:
            plain.append(w)
    return apply(ctx, plain, sep, arch_done, *_bounds(ctx, a))


def _bounds(ctx: BuildContext, a: "Arg") -> tuple[int, int]:
    """How far removing a word may reach: inside the quotes of a quoted argument; for an
    unquoted one, its whole line (the word may be the argument, alone on its line)."""
    if a.kind == "quoted_argument":
        return a.start, a.end
    return 0, len(ctx.src)


def genex_flags(ctx: BuildContext, a: "Arg") -> None:
    """Outside a flag context only a ``$<COMPILE_LANGUAGE:CUDA>`` value holds nvcc flags."""
    if "COMPILE_LANGUAGE" not in a.text:
        return
    for w in split(ctx.src, a.start, a.end):
        g = genex(ctx.src, w)
        if g is not None:
            _genex_value(ctx, g, *_bounds(ctx, a))


def _genex_value(ctx: BuildContext, g: Genex, lo: int, hi: int) -> None:
    if "COMPILE_LANGUAGE:" not in g.condition and "COMPILE_LANG_AND_ID:" not in g.condition:
        return
    value = ctx.src[g.value_start:g.value_end]
    shell = value.startswith(b"SHELL:")
    start = g.value_start + (6 if shell else 0)
    words = list(split(ctx.src, start, g.value_end, b" \t" if shell else b" \t\r\n;"))
    if not words:
        return
    before = len(ctx.edits)
    apply(ctx, words, " " if shell else ";", False, start, g.value_end)
    removed = [e for e in ctx.edits[before:] if not e.text]
    if removed and sum(e.end - e.start for e in removed) >= g.value_end - start:
        ctx.remove(g.start, g.end, lo, hi)  # nothing left: the whole expression goes




def bytes_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogateescape"))
