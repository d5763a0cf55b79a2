"""What ``hipport verify`` checks: the converted files (units), and which it compiles.

A file is checked where the build compiles it: translation units as themselves, headers
through the units that include them (clang's ``-H`` says which it reached). A file that
another file of the tree ``#include``s is not a unit of its own, whatever its suffix:
simpleGLES's ``graphics_interface.c`` is included by its ``main.cpp`` and needs the X11
types that file declared first; smokeParticles' ``framebufferObject.h`` needs the GL types
of its includer. Checked alone, such a file gives errors that say nothing about the
translation. When no compile reaches it (its includer stopped at a missing header before
it, or includes it in a branch not taken) it is listed as not reached instead, and its
includer's verdict stands for it.

A file no compile of a unit reached is checked through the outermost file that includes it
(plain C++ hipport left alone is read for its includes, and compiled for this when it is
such an includer: ``multithreading.cpp`` for ``multithreading.h``). When no source of the
tree includes it, the project's other files are read too (``project_files``): a header-only
library's arch headers are reached only through its umbrella header, a file with no suffix
that convert copied as it is (Eigen's ``Eigen/Core`` for ``arch/GPU/PacketMath.h``).
Compiled alone, ``PacketMath.h`` failed for reasons no rewrite caused (589 errors on Eigen
3.4), so it is checked through ``Eigen/Core`` and, when that compile does not reach it,
listed as not reached. Only a file that no file of the tree includes is compiled alone.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from hipport.convert import Plan, destination
from hipport.files import read_bytes, spells_cuda
from hipport.findings import Finding
from hipport.options import Options
from hipport.pipeline import FileResult, scan_paths

#: Extensions compiled as translation units; every other file is a header.
UNIT_SUFFIXES = frozenset({".cu", ".hip", ".cpp", ".cc", ".cxx", ".c"})


@dataclass(frozen=True)
class Unit:
    """A converted file to check, with the findings that concern it in its own line numbers."""

    path: Path
    findings: tuple[Finding, ...] = ()
    #: False for plain C++ hipport left alone, and for a bundled library copy's files (its
    #: ROCm port replaces the copy: ``pipeline.tree_definitions``): not checked, only read
    #: for its #includes (a file it includes is checked through it, not alone)
    checked: bool = True

    @property
    def is_translation_unit(self) -> bool:
        return self.path.suffix.lower() in UNIT_SUFFIXES


def at_output(f: Finding, dest: Path) -> Finding:
    """A convert finding moved onto the converted file ``dest`` and its line numbers
    (``Finding.output_line``; 0 when convert changed nothing in the file)."""
    if not f.output_line:
        return replace(f, path=str(dest))
    shift = f.output_line - f.line
    return replace(f, path=str(dest), line=f.output_line, end_line=(f.end_line or f.line) + shift)


# -- what to check -------------------------------------------------------------------------

_HIP_HINT = re.compile(rb"hip[A-Z_]|<hip/|__global__|__device__")


def worth_checking(data: bytes) -> bool:
    """Text that spells CUDA or HIP; plain C++ that hipport left alone is not its output to
    judge. The HIP build compiles such a file with the project's C++ compiler, as the CUDA
    build did: colmap 3.8's lib/PBA/SparseBundleCPU.cpp, byte for byte the same after
    convert, whose 13 narrowings in braced initializers clang rejects in any language mode
    and g++ only warns about, was compiled as HIP because the convert pre-filter's words
    (``clock``, ``cu[A-Z]`` of ``_cuCameraData``) matched it."""
    return spells_cuda(data) or _HIP_HINT.search(data) is not None


def units_from_convert(plan_: Plan, results: Iterable[FileResult], into: list[Unit]) -> Iterator[FileResult]:
    """Pass convert's results through, noting each written source in ``into``.

    Findings are made on the input's lines and moved onto the output's (the converter adds
    and drops include lines): convert gives each its output line.
    """
    for r in results:
        yield r
        if r.status not in ("converted", "unchanged") or r.source is None or not r.source.is_source:
            continue  # build files (CMakeLists.txt …) are converted too, but are no units
        target = next(t for t in plan_.targets if _within(r.source.path, t.input))
        dest = destination(target, r)
        try:
            data = read_bytes(dest)
        except OSError:
            continue
        if r.bundled or (r.status == "unchanged" and not worth_checking(data)):
            into.append(Unit(dest, checked=False))
            continue
        into.append(Unit(dest, tuple(at_output(f, dest) for f in r.findings)))


def _within(path: Path, root: Path) -> bool:
    path, root = path.resolve(), root.resolve()
    return path == root or root in path.parents


def include_roots(plan_: Plan) -> list[Path]:
    """The output tree's roots: converted code includes its own headers from there."""
    roots = []
    for t in plan_.targets:
        if t.root is not None:
            roots.append(t.root)
        elif t.file is not None:
            roots.append(t.file.parent)
        else:
            roots.append(t.input if t.input.is_dir() else t.input.parent)
    return list(dict.fromkeys(roots))


def converted_dirs(plan_: Plan, dirs: Iterable[Path]) -> list[Path]:
    """``-I`` directories as the compiler must see them: one inside a converted input tree
    is its converted copy (``convert samples -o out --verify -I samples/Common`` checks
    against ``out/Common``, which the conversion wrote; the CUDA original would bring CUDA
    headers back). Others stay as given."""
    out = []
    for d in dirs:
        for t in plan_.targets:
            if t.root is not None and t.input.is_dir() and _within(d, t.input):
                out.append(t.root / d.resolve().relative_to(t.input.resolve()))
                break
        else:
            out.append(d)
    return out


def units_from_paths(paths: Iterable[Path], options: Options) -> list[Unit]:
    """Already converted code: each source worth checking, with the findings a scan makes on it.

    ``.hip`` is scanned too: it is what converted code is often named, though no CUDA
    input has it.
    """
    units = []
    if ".hip" not in options.extensions:
        options = replace(options, extensions=(*options.extensions, ".hip"))
    for r in scan_paths(paths, options):
        if r.source is None or r.status in ("error", "skipped", "other"):
            continue
        try:
            data = read_bytes(r.source.path)
        except OSError:
            continue
        units.append(Unit(r.source.path, tuple(r.findings), checked=not r.bundled and worth_checking(data)))
    return units


# -- which to compile ---------------------------------------------------------------------

_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)


def includers(paths: Iterable[Path], dirs: Iterable[Path]) -> dict[Path, tuple[Path, int]]:
    """For each of ``paths`` (resolved) that another of them includes: the first includer
    and the line of its ``#include``. A name is looked up beside the includer, then in
    ``dirs``, the first file found wins (a superset: the compiler finds a ``<name>``
    beside the unit only when its folder is one of ``dirs``)."""
    files = {p.resolve() for p in paths}
    dirs = [d.resolve() for d in dirs]
    found: dict[Path, tuple[Path, int]] = {}
    for includer in sorted(files):
        try:
            src = read_bytes(includer)
        except OSError:
            continue
        if b"include" not in src:
            continue
        for m in _INCLUDE.finditer(src):
            name = m.group(1).decode("utf-8", "replace").strip()
            where = [includer.parent, *dirs]
            target = next((t for t in ((d / name).resolve() for d in where) if t.is_file()), None)
            if target in files and target != includer and target not in found:
                found[target] = (includer, src.count(b"\n", 0, m.start()) + 1)
    return found



#: Suffixes of the files read for their ``#include``s when a header no source of the tree
#: includes is looked for an includer: C/C++ sources and headers, and none at all (an
#: umbrella header such as Eigen's ``Eigen/Core``, which convert copies without reading).
INCLUDER_SUFFIXES = frozenset({"", ".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc", ".ipp",
                               ".tcc", ".tpp", ".txx", ".c", ".cc", ".cpp", ".cxx", ".cu", ".hip"})
#: A larger file is not read as a possible includer (a generated table, not an umbrella).
INCLUDER_BYTES = 1 << 20


def project_files(roots: Iterable[Path], known: Iterable[Path]) -> list[Path]:
    """The regular files under ``roots`` (resolved, sorted, hidden ones and links to
    directories left out), other than ``known``, that may include a header: those with an
    ``INCLUDER_SUFFIXES`` suffix of at most ``INCLUDER_BYTES``."""
    seen = {p.resolve() for p in known}
    out: list[Path] = []
    for root in dict.fromkeys(Path(r).resolve() for r in roots):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                path = Path(dirpath, name)
                if name.startswith(".") or path.suffix.lower() not in INCLUDER_SUFFIXES:
                    continue
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and st.st_size <= INCLUDER_BYTES and path not in seen:
                    seen.add(path)
                    out.append(path)
    return out


def outermost(path: Path, included: dict[Path, tuple[Path, int]]) -> Path:
    """The file to compile so that ``path`` is checked where the build sees it: up its
    includers (``includers``) to one that no file includes; ``path`` itself in a cycle."""
    start, seen = path, {path}
    while (up := included.get(path)) is not None:
        path = up[0]
        if path in seen:
            return start
        seen.add(path)
    return path
