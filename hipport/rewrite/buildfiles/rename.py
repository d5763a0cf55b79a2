"""``--rename``: the names in build files that follow ``x.cu`` → ``x.hip``.

Every ``.cu`` file of a converted tree is written as ``.hip`` (``hip_name``), so every name
that ends in ``.cu`` can be updated without knowing which file it is: a source
(``a.cu``, ``${n}.cu``, ``src/*.cu``), a Make pattern (``%.cu``, ``$(SRCS:.cu=.o)``), a
regular expression (``\\.cu$``). What is left is a ``.cu`` made of pieces — an extension
held apart (``set(EXT cu)``, ``EXT := cu``, ``ext = "cu"``) — which is a finding (HP610),
as is a ``.cu`` string in a Python script that is no extension build (it may be a tool that
reads CUDA sources, not a name of this tree).

Each reader calls ``rename_range`` on the parts of its file that are not comments; the
edits are plain byte replacements of ``.cu`` by ``.hip``.
"""

from __future__ import annotations

import re

from hipport.rewrite.buildfiles import BuildContext

#: ``.cu`` ending a name: not ``.cuh``, ``.cuda``, ``.cu.o``, ``x.cu/`` (a directory).
CU_NAME = re.compile(rb"\.cu(?![A-Za-z0-9_./-])")
#: Words that are flags' values, not extensions: ``-x cu`` (nvcc's language).
_LANGUAGE_FLAGS = frozenset({"-x", "--x"})


def rename_range(ctx: BuildContext, start: int, end: int) -> None:
    """``.cu`` → ``.hip`` at the end of every name in ``src[start:end]``."""
    for m in CU_NAME.finditer(ctx.src, start, end):
        ctx.edit(m.start(), m.end(), ".hip")


def extension_word(ctx: BuildContext, text: str, previous: str, start: int, end: int) -> None:
    """HP610 for a word that is the ``cu`` extension held apart from a name."""
    if text.strip("\"'") in ("cu", "CU") and previous not in _LANGUAGE_FLAGS:
        ctx.report("HP610", start, end,
                   f"{text}: a .cu extension held apart from the name it completes; --rename "
                   "cannot tell whether it names a renamed source",
                   "write hip where it names this tree's sources (they are .hip now)")


def outside_extension_build(ctx: BuildContext, start: int, end: int, text: str) -> None:
    """HP610 for a ``.cu`` name in a Python script that does not build an extension."""
    ctx.report("HP610", start, end,
               f"{text}: a .cu name in a script that builds no extension; --rename left it",
               "write .hip if it names one of this tree's sources")
