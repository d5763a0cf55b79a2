"""Shell build scripts (``*.sh``): the command lines that run nvcc.

No shell grammar is needed for what is ported here: a command line is words, and a line
is ported only when it runs nvcc (its first word is ``nvcc``, a path ending in
``/nvcc``, or ``$NVCC``/``${NVCC}``). Comment lines are left alone; a line continued
with ``\\`` is one command. The words go through the same tables as a Makefile's:
``nvcc`` → ``hipcc``, the nvcc flags, ``-l`` libraries, CUDA install paths.
"""

from __future__ import annotations

import re

from hipport.rewrite.buildfiles import BuildContext
from hipport.rewrite.buildfiles.flags import apply
from hipport.rewrite.buildfiles.make import libraries, paths_and_tools, root_variables
from hipport.rewrite.buildfiles.maps import load
from hipport.rewrite.buildfiles.rename import rename_range
from hipport.rewrite.buildfiles.words import split

_COMMAND = re.compile(rb"(?m)^[ \t]*(?!#)(?:[^\n\\]|\\.|\\\n)+")
_ROOT_REF = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
_NVCC_WORD = re.compile(r"^(?:nvcc|.*/nvcc|\$\{?NVCC\}?|\"\$\{?NVCC\}?\")$")


def convert(ctx: BuildContext) -> None:
    if ctx.options.rename:  # every command line, not only nvcc's: `for f in src/*.cu`
        for m in _COMMAND.finditer(ctx.src):
            rename_range(ctx, m.start(), m.end())
    if b"nvcc" not in ctx.src.lower():
        return
    for m in _COMMAND.finditer(ctx.src):
        words = [w for w in split(ctx.src, m.start(), m.end(), b" \t\r\n") if w.text != "\\"]
        if not words or not _NVCC_WORD.match(words[0].text):
            continue
        roots = root_variables()
        paths_and_tools(ctx, words, roots)
        for w in words:  # $CUDA_HOME/include → $ROCM_PATH/include
            for r in _ROOT_REF.finditer(w.text):
                if r.group(1) in roots:
                    at = w.start + len(w.text[:r.start(1)].encode())
                    ctx.edit(at, at + len(r.group(1)), load().raw["paths"]["root_variable"])
        libraries(ctx, words)
        apply(ctx, words, " ", False, m.start(), m.end())
