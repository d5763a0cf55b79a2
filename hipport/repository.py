"""The files of a ``check``'s repositories it was not given: the includers of its headers.

pre-commit gives check the staged files alone, so a header's includers are usually not
among them, yet they decide the header's findings as they do for ``scan`` and ``convert``
of the repository:

* a CUDA-free header holding what a rule fixes in included headers (``FileResult.held``:
  ``register``, ``throw(``) gets convert's fixes only where a unit includes it
  (``held_includers``, which scans the files on the way);
* a header's findings are dropped where every includer includes it only in branches the HIP
  build never compiles (``pipeline._drop_cuda_only_headers``), and its HP204/HP209 left to
  the includers are dropped when every includer names a 64-lane wave
  (``pipeline._drop_logical_in_wave64_includers``). Seeing only the given includers, a
  commit of ``w.cuh`` and ``cuda.cu`` (``#ifndef USE_ROCM #include "w.cuh"``) lost the
  header's finding that ``hip.cu``, not staged, compiles (``includers_includes`` reads
  every includer's includes, without its rules).

The repository is ``gitignore.repository_root`` (the nearest folder holding ``.git``),
walked as a directory input is; outside one only the given files count. Each
repository's sources are read once per run for the names they include; the walk goes up
from a header through the files that include it by that name, and on through the headers
among them (given ones too), each file once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from hipport.files import FileError, SourceFile, discover, read_bytes
from hipport.gitignore import repository_root
from hipport.options import Options
from hipport.preprocessor.includers import HEADER_SUFFIXES, Includes, own_includes

if TYPE_CHECKING:
    from hipport.pipeline import FileResult


def _key(path: str | os.PathLike) -> str:
    return os.path.normpath(os.path.abspath(path))


class Repositories:
    """The repositories of a check run's ``given`` results, read when first asked."""

    def __init__(self, given: Iterable[FileResult], options: Options) -> None:
        self.given = {_key(r.path): r for r in given}
        self.options = options
        self._names: dict[str, tuple[SourceFile, frozenset[str]]] = {}  # path -> (file, included names)
        self._trees: set[str] = set()

    def held_includers(self, held: list[FileResult],
                       scan: Callable[[list[SourceFile]], list[FileResult]]) -> list[FileResult]:
        """The results (by ``scan``) of the files not given that include a ``held`` header,
        and of those that include such a file that is not parsed itself (a plain header on
        the way: a parsed file is a root of its own)."""
        found: list[FileResult] = []

        def visit(step: list[str]) -> list[str]:
            results = scan([self._names[p][0] for p in step if p not in self.given])
            found.extend(results)
            return [r.path for r in results if not r.parsed] + \
                [p for p in step if p in self.given and not self.given[p].parsed]

        self._walk([r.path for r in held], visit)
        return found

    def includers_includes(self, headers: list[str]) -> list[tuple[str, Includes]]:
        """``(path, includes)`` of each file not given that includes one of ``headers``,
        directly or through other headers, as ``process`` records them
        (``pipeline.includes_of``: no rule runs)."""
        from hipport.pipeline import MAX_SOURCE_BYTES, includes_of

        out: list[tuple[str, Includes]] = []

        def visit(step: list[str]) -> list[str]:
            for path in step:
                if path in self.given:
                    continue
                try:
                    data = read_bytes(Path(path))
                except OSError:
                    continue
                if len(data) <= MAX_SOURCE_BYTES:
                    out.append((path, includes_of(data, path, self.options)))
            return [p for p in step if p.endswith(HEADER_SUFFIXES)]

        self._walk(headers, visit)
        return out

    def _walk(self, paths: list[str], visit: Callable[[list[str]], list[str]]) -> None:
        """Up from ``paths``: each round gives ``visit`` the files (not met yet) that include
        one of the names wanted, and goes on with the names of the paths it returns."""
        self._read(paths)
        wanted, seen = {os.path.basename(p) for p in paths}, {_key(p) for p in paths}
        while wanted:
            step = [p for p, (_, names) in self._names.items() if p not in seen and not names.isdisjoint(wanted)]
            seen.update(step)
            wanted = {os.path.basename(p) for p in visit(step)} if step else set()

    def _read(self, paths: list[str]) -> None:
        """Index the sources of the repositories of ``paths`` not read yet by the names they
        include (``own_includes``, without the branch model)."""
        from hipport.pipeline import MAX_SOURCE_BYTES

        trees = sorted({t for t in (repository_root(os.path.dirname(_key(p))) for p in paths) if t} - self._trees)
        self._trees.update(trees)
        for item in discover([Path(t) for t in trees], self.options):
            if isinstance(item, FileError) or not item.is_source:
                continue
            path = _key(item.path)
            if path in self._names:
                continue
            try:
                data = read_bytes(item.path)
            except OSError:
                continue
            if len(data) <= MAX_SOURCE_BYTES and (names := frozenset(
                    os.path.basename(name) for name, _ in own_includes(data, None))):
                self._names[path] = (item, names)
