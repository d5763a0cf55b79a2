"""Headers a HIP build never includes: the other side of the branch model, across files.

A ported project keeps one compat header per platform and picks one in the preprocessor::

    // common.cuh
    #if defined(GGML_USE_HIP)
    #include "vendors/hip.h"
    #elif defined(GGML_USE_MUSA)
    #include "vendors/musa.h"
    #else
    #include "vendors/cuda.h"      // CUDA-only: its CUDA names are not a HIP porting problem
    #endif

Scanned on its own, ``vendors/cuda.h`` is a list of CUDA names with no HIP counterpart.
Each file's result carries its own ``#include "…"`` directives and whether a HIP build
compiles each (``own_includes``, in the worker, from the file's branch model); once
every result is in, a header of the run that some scanned file includes, but only ever
in a branch no pass compiles, is a CUDA-build header (``cuda_only_headers``): its
findings are dropped (``--all-branches`` shows them as info), as findings in such a
branch of a file are. A header no scanned file includes is judged as it is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable

from hipport.preprocessor.branches import MAX_UP, Branches
from hipport.preprocessor.directives import directive_starts

#: The directives that open and close conditionals, and ``#include "name"``, at the start
#: of a line. Comments are not lexed: a directive in a block comment can only make an
#: include look conditional (then the branch model decides it) or live (findings kept).
#: Matched at the ``#`` of each line that starts with one (``directives.directive_starts``:
#: a multi-line ``^`` regex tried at every byte cost ~1 % of convert).
_DIRECTIVE = re.compile(rb'#[ \t]*(if|ifdef|ifndef|endif|include)\b[ \t]*(?:"([^"\n]+)")?')
#: Extensions of files that are only ever included, never compiled on their own.
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc")

Includes = tuple[tuple[str, bool], ...]


def own_includes(src: bytes, branches: Callable[[], Branches] | None) -> Includes:
    """``(name, compiled)`` for each ``#include "name"`` of ``src``: compiled is False when
    no pass of the HIP build compiles the directive. Only an include inside a conditional
    asks ``branches`` (the file's model, worked out on demand; None: all compiled), so a
    file whose includes all stand outside any ``#if`` never pays for the model."""
    if b"include" not in src:
        return ()
    out: list[tuple[str, bool]] = []
    depth, model = 0, None
    for line, hash_at, _, _ in directive_starts(src):
        m = _DIRECTIVE.match(src, hash_at)
        if m is None:
            continue
        kind = m.group(1)
        if kind == b"include":
            if m.group(2) is None:
                continue
            compiled = True
            if depth > 0 and branches is not None:
                model = model or branches()
                compiled = not model.never_compiled(line)
            out.append((m.group(2).decode("utf-8", "replace"), compiled))
        elif kind == b"endif":
            depth = max(depth - 1, 0)
        else:
            depth += 1
    return tuple(out)


def _targets(includer: str, name: str) -> list[str]:
    """Where ``name`` may be, as the branch model looks: beside the includer, and for a
    name with a directory also up to ``MAX_UP`` levels above it."""
    here = os.path.dirname(os.path.abspath(includer))
    folders = [here]
    if "/" in name:
        for _ in range(MAX_UP):
            here = os.path.dirname(here)
            folders.append(here)
    return [os.path.normpath(os.path.join(folder, name)) for folder in folders]


def cuda_only_headers(headers: Iterable[str], includes: Iterable[tuple[str, Includes]]) -> dict[str, str]:
    """Of ``headers`` (paths of the run), those some file includes only where a HIP build
    does not compile it: path -> where (``common.cuh:#include "vendors/cuda.h"``)."""
    wanted = {os.path.normpath(os.path.abspath(h)): h for h in headers if h.endswith(HEADER_SUFFIXES)}
    if not wanted:
        return {}
    names = {os.path.basename(t) for t in wanted}
    live: set[str] = set()
    never: dict[str, str] = {}
    for includer, items in includes:
        for name, compiled in items:
            if os.path.basename(name) not in names:
                continue
            target = next((t for t in _targets(includer, name) if os.path.isfile(t)), None)
            if target not in wanted:
                continue  # another file of that name, or none: the compiler's search
            if compiled:
                live.add(target)
            else:
                never.setdefault(target, f'{os.path.basename(includer)}: #include "{name}"')
    return {wanted[t]: where for t, where in never.items() if t not in live}
