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
in a branch no pass compiles, is a CUDA-build header (``cuda_only_headers``), and so is
a header only CUDA-build headers include: their findings are dropped (``--all-branches`` shows them as info), as findings in such a
branch of a file are. A header no scanned file includes is judged as it is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable

from hipport.preprocessor.branches import MAX_UP, Branches, project_header
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


def _targets(includer: str, name: str, include_dirs: Iterable[os.PathLike | str] = ()) -> list[str]:
    """Where ``name`` may be, as the branch model looks: beside the includer, in the build's
    ``-I`` directories, and for a name with a directory also up to ``MAX_UP`` levels above it."""
    here = os.path.dirname(os.path.abspath(includer))
    folders = [here, *(os.path.abspath(d) for d in include_dirs)]
    if "/" in name:
        for _ in range(MAX_UP):
            here = os.path.dirname(here)
            folders.append(here)
    return [os.path.normpath(os.path.join(folder, name)) for folder in folders]


def _found(includer: str, name: str, dirs: tuple[os.PathLike | str, ...],
           known: set[str] | frozenset[str] = frozenset()) -> str | None:
    """The file ``#include "name"`` in ``includer`` takes: the first of ``_targets`` that is a
    file, ``known`` ones (files of the run) taken without a stat; None when there is none."""
    return next((t for t in _targets(includer, name, dirs) if t in known or os.path.isfile(t)), None)


def project_include(includer: str, name: str, include_dirs: Iterable[os.PathLike | str] = ()) -> str | None:
    """The project file ``#include "name"`` in ``includer`` takes, as the branch model looks
    for it (beside the includer, then the build's ``-I``), or None when there is none. Read
    through ``project_header``, so check's cache notes each place tried: a finding that
    hangs on the answer is analysed again when a header there vanishes or appears."""
    return next((t for t in _targets(includer, name, include_dirs) if project_header(t) is not None), None)


def cuda_only_headers(headers: Iterable[str], includes: Iterable[tuple[str, Includes]],
                      include_dirs: Iterable[os.PathLike | str] = ()) -> dict[str, str]:
    """Of ``headers`` (paths of the run), those only a CUDA build includes: path -> why
    (``in a branch it never compiles (topk.cu: #include "persistent_topk.cuh")``).

    Every scanned file no other includes is compiled as it is (a root: a ``.cu``, or a
    header judged alone); a header is compiled when a compiled file includes it outside
    never-compiled branches. One a compiled file includes only in such branches is a
    CUDA-build header, and so is every header only those include (vLLM's topk.cu includes
    persistent_topk.cuh under ``#ifndef USE_ROCM``, and that includes
    topk_histogram_4096.cuh as it is). A cycle no root reaches is judged as it is. An
    include is looked for beside its includer, then in ``include_dirs`` (the build's -I)."""
    asked = {os.path.normpath(os.path.abspath(h)): h for h in headers if h.endswith(HEADER_SUFFIXES)}
    if not asked:
        return {}
    includes = [(os.path.normpath(os.path.abspath(p)), items) for p, items in includes]
    dirs = tuple(include_dirs)  # the build's -I: where a bare name is looked for after the includer's folder
    nodes = set(asked) | {p for p, _ in includes if p.endswith(HEADER_SUFFIXES)}
    names = {os.path.basename(t) for t in nodes}
    edges: dict[str, list[tuple[str, bool, str]]] = {}
    included: set[str] = set()
    for includer, items in includes:
        for name, compiled in items:
            if os.path.basename(name) not in names:
                continue
            target = _found(includer, name, dirs)
            if target not in nodes:
                continue  # another file of that name, or none: the compiler's search
            edges.setdefault(includer, []).append(
                (target, compiled, f'{os.path.basename(includer)}: #include "{name}"'))
            included.add(target)
    live = _reach([p for p, _ in includes if p not in included] + [h for h in asked if h not in included],
                  edges)
    why: dict[str, str] = {}
    todo: list[str] = []
    for src in live:  # the first step out of the compiled files: a never-compiled include
        for target, compiled, where in edges.get(src, ()):
            if not compiled and target not in live and target not in why:
                why[target] = f"in a branch it never compiles ({where})"
                todo.append(target)
    while todo:  # then whatever those include, as they are or not
        for target, _, where in edges.get(todo.pop(), ()):
            if target not in live and target not in why:
                why[target] = f"by headers only the CUDA build includes ({where})"
                todo.append(target)
    return {asked[t]: w for t, w in why.items() if t in asked}


def _reach(roots: list[str], edges: dict[str, list[tuple[str, bool, str]]]) -> set[str]:
    """The files ``roots`` reach through includes a HIP build compiles."""
    seen = set(roots)
    todo = list(roots)
    while todo:
        for target, compiled, _ in edges.get(todo.pop(), ()):
            if compiled and target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def reached(roots: Iterable[str], includes: Iterable[tuple[str, Includes]], files: Iterable[str],
            include_dirs: Iterable[os.PathLike | str] = ()) -> set[str]:
    """Of ``files`` (paths of the run), those ``roots`` include, directly or through other
    files of the run, by includes a HIP build compiles: what the HIP build of the roots
    compiles besides them. Paths as given in ``files``; each include is the first file found
    where ``cuda_only_headers`` looks (beside the includer, in ``include_dirs``, the build's
    -I, and for a name with a directory up to ``MAX_UP`` levels above it), and counts only
    when that file is one of ``files`` or an includer of the run (a plain header between a
    unit and a held one is a step of the way): a header of the same name the compiler finds
    first is the one it compiles."""
    includes = [(os.path.normpath(os.path.abspath(p)), items) for p, items in includes]
    by_path = {os.path.normpath(os.path.abspath(f)): f for f in files}
    nodes = set(by_path) | {p for p, _ in includes}
    names = {os.path.basename(p) for p in nodes}
    dirs = tuple(include_dirs)
    edges: dict[str, list[tuple[str, bool, str]]] = {}
    for here, items in includes:
        for name, compiled in items:
            if os.path.basename(name) not in names:
                continue  # none of the files on the way: no stat
            target = _found(here, name, dirs, nodes)
            if target in nodes:
                edges.setdefault(here, []).append((target, compiled, ""))
    start = [os.path.normpath(os.path.abspath(r)) for r in roots]
    return {by_path[p] for p in _reach(start, edges) - set(start) if p in by_path}


class Includers:
    """The files of the run that include a header where a HIP build compiles the include
    (the first file the name finds, ``_found``), for the many headers of one run: the
    includes are indexed by the name's last component once. (A walk of every include per
    header cost O(headers × includes): 400 headers deferring HP204 to 3,200 units that
    include ten each took 5.9 s of a 8.9 s scan.)"""

    def __init__(self, includes: Iterable[tuple[str, Includes]],
                 include_dirs: Iterable[os.PathLike | str] = ()) -> None:
        self.dirs = tuple(include_dirs)
        self._by_name: dict[str, list[tuple[str, str]]] = {}  # base name -> (includer, name), in order
        for includer, items in includes:
            for name, compiled in items:
                if compiled:
                    self._by_name.setdefault(os.path.basename(name), []).append((includer, name))

    def of(self, header: str) -> list[str]:
        """The includers of ``header``, each once, in the order of the run's includes."""
        target = os.path.normpath(os.path.abspath(header))
        found: dict[str, None] = {}
        for includer, name in self._by_name.get(os.path.basename(target), ()):
            if includer not in found and _found(includer, name, self.dirs) == target:
                found[includer] = None
        return list(found)


#: How many files ``CompileReach.spelled`` reads for one unit at most: past it, the name counts as spelled.
MAX_COMPILE_FILES = 400


class CompileReach:
    """Whether a unit's compile spells a word (``spelled``), asked for many units of one run:
    the run's includes are keyed once, each file's includes found once, and each file
    searched once per word. (Asked per unit, the keying alone cost O(units × files): 400
    units including one header with ``#define WARP_SIZE 32`` took 3.6 s of a 5 s scan.)"""

    def __init__(self, includes: Iterable[tuple[str, Includes]],
                 include_dirs: Iterable[os.PathLike | str] = ()) -> None:
        self.recorded = {os.path.normpath(os.path.abspath(p)): items for p, items in includes}
        self.known, self.dirs = set(self.recorded), tuple(include_dirs)
        self._targets: dict[str, tuple[str, ...]] = {}  # path -> the files its compiled includes take
        self._spells: dict[tuple[str, str], bool] = {}  # (path, word) -> the file spells it

    def spelled(self, unit: str, word: str, defining: str) -> bool:
        """Whether ``word`` is spelled (as a whole word) in ``unit`` or in a project file its
        compile reaches through ``#include``, the header ``defining`` it aside: a unit that
        never spells a header's ``#define WARP_SIZE 32`` cannot be changed by its value
        (DeepSpeed's transformer/general_kernels.cu includes context.h through
        general_kernels.h and uses none of its warp size). A file of the run follows the
        includes its result recorded as compiled; one outside it (a header found in -I) every
        include it spells. Unreadable files, and more than ``MAX_COMPILE_FILES``, count as
        spelling it: the answer may only ever keep a finding."""
        skip = os.path.normpath(os.path.abspath(defining))
        start = os.path.normpath(os.path.abspath(unit))
        seen, todo = {start}, [start]
        while todo:
            path = todo.pop()
            if len(seen) > MAX_COMPILE_FILES or not self._read(path, word):
                return True
            if path != skip and self._spells[path, word]:
                return True
            for target in self._targets[path]:
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return False

    def _read(self, path: str, word: str) -> bool:
        """Note ``path``'s targets and whether it spells ``word``; False when unreadable."""
        if (path, word) in self._spells:
            return True
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return False
        self._spells[path, word] = re.search(rb"\b" + re.escape(word.encode()) + rb"\b", data) is not None
        if path not in self._targets:
            items = self.recorded.get(path)
            targets = [_found(path, name, self.dirs, self.known) for name, compiled in
                       (own_includes(data, None) if items is None else items) if compiled]
            # an #include <…> that the build's -I finds is a project header of the compile too
            targets += [next((t for d in self.dirs if (t := os.path.normpath(os.path.join(
                os.path.abspath(d), name.decode("utf-8", "replace")))) in self.known or os.path.isfile(t)), None)
                for name in _ANGLED.findall(data)]
            self._targets[path] = tuple(dict.fromkeys(t for t in targets if t is not None))
        return True


_ANGLED = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*<([^>\n]+)>", re.M)
