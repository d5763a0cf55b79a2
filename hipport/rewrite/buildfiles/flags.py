"""nvcc flags → clang/hipcc flags, over a run of words from any build file.

The CMake, Make and PyTorch readers each cut their own syntax into ``Word`` values (byte
ranges of the original buffer) and call ``translate``; what comes back is replacements
and notes, never text glued back together, so everything around a flag stays as it was.
A flag that takes a value may have it glued (``-arch=sm_80``) or as the next word
(``-arch sm_80``); both forms are in the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hipport.rewrite.buildfiles.maps import Flag, arch_list, load

if TYPE_CHECKING:
    from hipport.rewrite.buildfiles import BuildContext


@dataclass(frozen=True)
class Word:
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Change:
    """Replace the bytes of ``words`` (one or two adjacent words) with ``text``; an empty
    ``text`` removes them, with the separator before them."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Note:
    code: str  # "" for a plain rewrite (counted, not reported)
    start: int
    end: int
    flag: str
    note: str
    fixed: bool


def translate(words: Sequence[Word], arch: Sequence[str], sep: str = " ",
              arch_done: bool = False) -> tuple[list[Change], list[Note], bool]:
    """Changes and notes for the nvcc flags among ``words``.

    ``sep`` joins several output flags (``" "`` on a command line, ``";"`` in a CMake
    list). The first GPU-architecture flag becomes ``--offload-arch=`` for each of
    ``arch``; later ones are removed (``arch_done`` carries that across calls for one
    command line). Returns (changes, notes, arch_done).
    """
    maps = load()
    changes: list[Change] = []
    notes: list[Note] = []
    i = 0
    while i < len(words):
        w = words[i]
        hit = maps.flag(w.text)
        if hit is None:
            i += 1
            continue
        row, glued = hit
        value_word = None
        if row.takes and glued is None and i + 1 < len(words):
            value_word = words[i + 1]
        value = glued if glued is not None else (value_word.text if value_word else "")
        if row.value and value != row.value:
            i += 1
            continue
        end = value_word.end if value_word else w.end
        shown = w.text + (" " + value_word.text if value_word else "")
        i += 2 if value_word else 1
        text, arch_done = _apply(row, value, arch, sep, arch_done)
        if text is None:  # kept as written
            notes.append(Note(row.code or "HP603", w.start, end, shown, row.note, False))
            continue
        changes.append(Change(w.start, end, text))
        if row.action == "arch":
            notes.append(Note("HP601", w.start, end, shown, row.note, True))
        elif row.code:
            notes.append(Note(row.code, w.start, end, shown, row.note, True))
    return changes, notes, arch_done


def _apply(row: Flag, value: str, arch: Sequence[str], sep: str,
           arch_done: bool) -> tuple[str | None, bool]:
    if row.action == "drop":
        return "", arch_done
    if row.action == "replace":
        return sep.join(row.with_.split()), arch_done
    if row.action == "unwrap":
        return sep.join(v for v in value.split(",") if v), arch_done
    if row.action == "arch":
        if arch_done:
            return "", True
        return sep.join(f"--offload-arch={a}" for a in arch), True
    return None, arch_done



def apply(ctx: "BuildContext", words: Sequence[Word], sep: str, arch_done: bool, lo: int, hi: int) -> bool:
    """``translate`` the words and record it in ``ctx``: the edits (a removed flag takes
    its separator, within ``lo``..``hi``) and a finding per note. Returns ``arch_done``."""
    arch = arch_list(ctx.options)
    changes, notes, arch_done = translate(words, arch, sep, arch_done)
    for c in changes:
        if c.text:
            ctx.edit(c.start, c.end, c.text)
        else:
            ctx.remove(c.start, c.end, lo, hi)
    _report(ctx, notes, arch)
    return arch_done


def translated(ctx: "BuildContext", words: Sequence[Word]) -> list[str]:
    """The words as clang's flags, for text written anew (flags moved out of a FindCUDA
    list into HIP's): each change applied to the words, notes reported as ``apply`` does."""
    arch = arch_list(ctx.options)
    changes, notes, _ = translate(words, arch, " ")
    out: list[str] = []
    i = 0
    for w in words:
        if w.start < i:
            continue  # the value of a flag a change already covered
        c = next((c for c in changes if c.start == w.start), None)
        if c is None:
            out.append(w.text)
        else:
            out.extend(c.text.split())
            i = c.end
    _report(ctx, notes, arch)
    return out


def _report(ctx: "BuildContext", notes: list[Note], arch: Sequence[str]) -> None:
    for n in notes:
        if n.code == "HP601":
            msg = f"{n.flag}: CUDA architectures → --offload-arch={','.join(arch)}"
        elif n.fixed:
            msg = f"{n.flag} rewritten: {n.note}"
        else:
            msg = f"{n.flag}: nvcc flag without a clang counterpart: {n.note}"
        ctx.report(n.code, n.start, n.end, msg, n.note, fixed=n.fixed)
