"""Prove converted code compiles: syntax-check each unit with the target release's headers.

A translation is only as good as whether AMD's compiler accepts it, and hipport's promise
is that every failure is predicted by a finding at its line. So each compile error is
linked to the unfixed findings at its line and given the first class that fits:

* ``not-installed``  ``'lib/header.h' file not found`` for a header hipport maps to: a
                     ROCm library is missing from this machine, not from the code;
* ``older-compiler`` the error names a HIP API that the mapping tables date after the
                     headers' HIP version (added, or changed, later): a stand-in set
                     older than the target cannot judge that line, nor the translation wrong;
* ``predicted``      a finding whose span holds the error's line (or the line of a macro
                     the error was expanded from) says so, or one in the file names what
                     the error quotes (library rules report once per file);
* ``predicted``      also an error on the line of a predicted one, or naming as undeclared
                     what a line with a predicted error declares (its cascade);
* ``missing-header`` any other ``file not found``: an include path is missing (``-I``);
* ``older-compiler`` again for an error within ``CASCADE`` lines after an older-compiler
                     error in the same file (cascades such as "expected ';'");
* ``unpredicted``    none of the above: a gap in hipport's rules, reported plainly.

Machine-explained classes come first because they say nothing about the code on its
target; the findings near them are still shown.

Which compiler and headers: ``hipport.compilers`` (the user's ROCm of the target's
release, else clang with the nearest header set from ``hipport.headers``). The command,
with clang (about 0.9 s a unit on 2 cores)::

    clang++-19 -x hip --offload-arch=gfx942 -nogpulib --rocm-path=R -isystem R/include \
        -std=c++17 -fsyntax-only [-DHIP_ENABLE_WARP_SYNC_BUILTINS] -H FILE

``-std=c++17`` because the 6.3 and 7.2.1 targets compile as C++17. ``-H`` lists the
headers each unit reaches, so a header no unit includes is checked on its own (``-x hip``
on the header) and the others are checked through their includers; a file that another
file of the tree includes is never a unit of its own (``hipport.verify_units``). Host and device are
both checked (the driver runs both front ends); inline PTX is only rejected by the
backend, which ``-fsyntax-only`` skips, so it stays the rules' job.
"""
from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from hipport.compilers import DEFAULT_ARCH, Compiler, NoCompiler, compile_env, select
from hipport.files import read_bytes
from hipport.headers import own_words
from hipport.findings import Finding
from hipport.verify_units import Unit, includers, outermost, project_files
from hipport.versions import Version, short_version

if TYPE_CHECKING:
    from hipport.options import Options

#: An error this many lines after an older-compiler one is its cascade ("expected ';'").
CASCADE = 2
#: Seconds one unit may take; ROCm 5.2 needs ~1-2 s, a slow CI runner several times that.
TIMEOUT = 180
PREDICTED, OLDER, NOT_INSTALLED, MISSING, UNPREDICTED = (
    "predicted", "older-compiler", "not-installed", "missing-header", "unpredicted")
KINDS = (PREDICTED, OLDER, NOT_INSTALLED, MISSING, UNPREDICTED)


@dataclass(frozen=True)
class Diagnostic:
    """One compiler diagnostic, with its notes and include chain, path resolved absolute."""

    path: Path | None  # None for driver errors with no location
    line: int
    col: int
    severity: str  # fatal error | error | warning
    message: str
    notes: tuple[str, ...] = ()  # "file:line:col: note: ..." lines that follow it
    included_from: tuple[str, ...] = ()  # "file:line", outermost first, as clang prints them

    @property
    def is_error(self) -> bool:
        return self.severity in ("error", "fatal error")

    def key(self) -> tuple:
        return (str(self.path or ""), self.line, self.col, self.severity, self.message)


@dataclass
class Compiled:
    """One hipcc run."""

    path: Path
    returncode: int
    seconds: float
    diagnostics: list[Diagnostic] = field(default_factory=list)
    headers: set[Path] = field(default_factory=set)
    failure: str = ""  # timeout or exec failure; the unit was not checked


@dataclass
class Verdict:
    diagnostic: Diagnostic
    unit: Path  # the file compiled when the error appeared
    path: Path | None  # where it is judged: its own place, or the checked file's include
    line: int  # that leads to a system header holding it
    kind: str  # one of KINDS
    findings: tuple[Finding, ...] = ()  # the unfixed findings at ``line``
    reason: str = ""
    more: int = 0  # further errors in system headers reached through the same include


@dataclass
class Verification:
    compiler: Compiler
    arch: str
    runs: list[Compiled]
    verdicts: list[Verdict]
    target: Version = (7, 2, 1)
    #: files another file of the tree includes that no compile reached: path -> (includer,
    #: line). Not checked alone (``hipport.verify_units``); the includer's verdict stands.
    unreached: dict[Path, tuple[Path, int]] = field(default_factory=dict)
    #: headers compiled on their own: no file of the tree includes them, so they are what a
    #: user includes first (listed apart: a pass there says the header stands alone)
    alone: set[Path] = field(default_factory=set)

    def failed(self) -> list[Compiled]:
        return [r for r in self.runs if r.returncode != 0]

    def count(self, kind: str) -> int:
        return sum(1 for v in self.verdicts if v.kind == kind)

    def exit_status(self) -> int:
        """1 when an error is predicted, unpredicted or a missing header, or a unit could not
        be run; else 0.

        Errors explained by this machine (older headers, a library not installed) say
        nothing about the code on its target, so alone they do not fail the run; they are
        listed and counted so nobody mistakes them for a pass on the target.
        """
        bad = any(v.kind in (PREDICTED, MISSING, UNPREDICTED) for v in self.verdicts)
        return 1 if bad or any(r.failure for r in self.runs) else 0


# -- compiling and parsing -------------------------------------------------------------

def compile_one(compiler: Compiler, path: Path, *, arch: str = DEFAULT_ARCH,
                includes: Iterable[Path] = (), timeout: float = TIMEOUT, macros: tuple[str, ...] = ()) -> Compiled:
    cmd = compiler.command(path, arch=arch, includes=list(includes), macros=macros)
    start = time.monotonic()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                             timeout=timeout, env=compile_env())
    except subprocess.TimeoutExpired:
        return Compiled(path, -1, time.monotonic() - start, failure=f"timed out after {timeout:g} s")
    except OSError as e:
        return Compiled(path, -1, time.monotonic() - start, failure=f"cannot run {cmd[0]}: {e}")
    diagnostics, headers = parse_output(out.stderr, cwd=Path.cwd())
    return Compiled(path, out.returncode, time.monotonic() - start, diagnostics, headers)


_DIAG = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): "
                   r"(?P<sev>fatal error|error|warning|note|remark): (?P<msg>.*)$")
_DRIVER = re.compile(r"^(?:(?:amd)?clang(?:\+\+)?|hipcc)(?:-\d+)?: (?P<sev>error|fatal error): (?P<msg>.*)$")
_INCLUDED = re.compile(r"^(?:In file included from|\s+from) (?P<where>.+?:\d+)[:,]$")
_HEADER = re.compile(r"^\.+ (?P<path>.+)$")


def parse_output(text: str, cwd: Path) -> tuple[list[Diagnostic], set[Path]]:
    """clang's stderr → diagnostics (notes attached to the one before) and the ``-H`` headers.

    Duplicates (host and device front ends both report a header's error) are dropped.
    """
    diags: list[Diagnostic] = []
    headers: set[Path] = set()
    chain: list[str] = []
    seen: set[tuple] = set()
    last: int | None = None  # index of the diagnostic a following note belongs to
    chains: dict[Path, tuple[str, ...]] = {}
    for line in text.splitlines():
        if m := _INCLUDED.match(line):
            name, _, at = m["where"].rpartition(":")
            chain.append(f"{_resolve(name, cwd)}:{at}")
        elif m := _DIAG.match(line):
            if m["sev"] in ("note", "remark"):
                if last is not None:
                    diags[last] = replace(diags[last], notes=diags[last].notes + (line,))
            else:
                where = _resolve(m["path"], cwd)
                if chain:  # clang prints a header's include chain only before its first diagnostic
                    chains[where] = tuple(chain)
                d = Diagnostic(where, int(m["line"]), int(m["col"]), m["sev"], m["msg"],
                               included_from=chains.get(where, ()))
                last = None if d.key() in seen else len(diags)
                if last is not None:
                    seen.add(d.key())
                    diags.append(d)
            chain = []
        elif m := _DRIVER.match(line):
            d = Diagnostic(None, 0, 0, m["sev"], m["msg"])
            last = None if d.key() in seen else len(diags)
            if last is not None:
                seen.add(d.key())
                diags.append(d)
        elif m := _HEADER.match(line):
            headers.add(_resolve(m["path"], cwd))
    return _with_instantiations(diags), headers


_INSTANTIATION = re.compile(r": note: in instantiation of ")


def _with_instantiations(diags: list[Diagnostic]) -> list[Diagnostic]:
    """Each error gets the instantiation backtrace clang left out of it.

    clang prints a template instantiation's "in instantiation of … requested here" notes
    only when they differ from the last ones it printed: the second error of one
    instantiation (HIP's tile ``shfl_xor<uint4>``: the static_assert, then "no matching
    function for call to '__shfl_xor'" two lines below it) comes bare, and would be judged
    at the include instead of at the call. An error in the same file as the last error
    with such notes, with none of its own, is in that instantiation still: it gets them."""
    out: list[Diagnostic] = []
    inherited: tuple[str, ...] = ()
    where: Path | None = None
    for d in diags:
        own = tuple(n for n in d.notes if _INSTANTIATION.search(n))
        if own:
            inherited, where = own, d.path
        elif d.is_error and inherited and d.path == where:
            d = replace(d, notes=d.notes + inherited)
        elif d.is_error:
            inherited, where = (), None
        out.append(d)
    return out


def _resolve(path: str, cwd: Path) -> Path:
    p = Path(path)
    return (p if p.is_absolute() else cwd / p).resolve()


# -- linking errors to findings ---------------------------------------------------------

_QUOTED = re.compile(r"'([A-Za-z_][\w:]*)")


def dated_after(message: str, compiler_version: Version | None, target: Version,
                lookup: Callable[[str], list],
                filled: tuple[Version, frozenset[str]] | None = None) -> str:
    """Why the headers checked against cannot know a name in ``message``, or "" when they can.

    ``lookup`` is ``MappingTable.find_by_target``: HIP name → table entries. A name counts
    when its ``hip_added`` is after the headers' HIP version, or it changed after that
    version and no later than the target. Compared on (major, minor): hipcc reports a build
    number where the tables have a patch. ``filled`` is (older version, the words of the
    set's own files) for a set whose gaps were filled from an older one: a name its own
    files never spell is judged by the older version (7.1's set has 6.2's hip_fp16.h).
    """
    if compiler_version is None:
        return ""
    for name in dict.fromkeys(_QUOTED.findall(message)):
        short = name.rsplit("::", 1)[-1]
        version = filled[0] if filled and short not in filled[1] else compiler_version
        have = version[:2]
        for entry in lookup(short):
            if entry.hip_added is not None and entry.hip_added[:2] > have:
                return (f"{name} exists from HIP {short_version(entry.hip_added)}; "
                        f"the headers are HIP {short_version(version)}")
            later = [v for v in entry.hip_changed if have < v[:2] and v <= target]
            if later:
                return (f"{name} changed in HIP {short_version(later[0])}; "
                        f"the headers are HIP {short_version(version)}")
    return ""


_NOT_FOUND = re.compile(r"^'(?P<header>[^']+)' file not found")


def classify(diags_by_unit: Iterable[tuple[Path, Diagnostic]], findings: Mapping[Path, list[Finding]],
             *, compiler_version: Version | None, target: Version,
             lookup: Callable[[str], list], library_headers: frozenset[str],
             filled: tuple[Version, frozenset[str]] | None = None,
             foreign: Callable[[Diagnostic], str] = lambda d: "") -> list[Verdict]:
    """One verdict per distinct error, in (path, line, col) order.

    ``findings`` has a key for every checked file. An error inside a header that is not one
    of them (a ROCm system header) is judged at the include in a checked file that leads
    there, and the errors after it through the same include are counted, not repeated.
    """
    errors: dict[tuple, tuple[Path, Diagnostic]] = {}
    for unit, d in diags_by_unit:
        if d.is_error:
            errors.setdefault(d.key(), (unit, d))
    verdicts: list[Verdict] = []
    by_include: dict[tuple, Verdict] = {}
    texts: dict[Path, list[str]] = {}
    for unit, d in sorted(errors.values(), key=lambda ud: ud[1].key()):
        path, line = _judged_at(d, findings)
        if (path, line) != (d.path, d.line):
            if (path, line) in by_include:
                by_include[(path, line)].more += 1
                continue
        near = _near(_lines(d, path, line), findings.get(path, ()) if path else ())
        missing = _NOT_FOUND.match(d.message)
        if missing and missing["header"] in library_headers:
            kind, reason = NOT_INSTALLED, (f"{missing['header']} belongs to a ROCm library that is "
                                           "not installed here; the rest of this file was not checked")
        elif reason := foreign(d):
            kind = NOT_INSTALLED
        elif reason := dated_after(d.message, compiler_version, target, lookup, filled):
            kind = OLDER
        elif near:
            kind, reason = PREDICTED, "; ".join(sorted({f.code for f in near}))
        elif near := _naming(d.message, findings.get(path, ()) if path else ()):
            kind, reason = PREDICTED, "; ".join(sorted({f.code for f in near})) + " (names it)"
        elif cause := _cascade(d.message, path, line, verdicts, texts):
            kind, reason = PREDICTED, f"follows the predicted error at line {cause.line}" + (
                "" if cause.line == line else ", where what it names is declared")
        elif missing:
            kind, reason = MISSING, "not on the include path (pass its directory with -I)"
        elif cause := _follows(path, line, verdicts):
            kind, reason = OLDER, f"follows the error at line {cause.line}"
        else:
            kind, reason = UNPREDICTED, "no hipport finding at this line"
        v = Verdict(d, unit, path, line, kind, near, reason)
        if (path, line) != (d.path, d.line):
            by_include[(path, line)] = v
        verdicts.append(v)
    predicted_at = {(v.path, v.line): v for v in verdicts if v.kind == PREDICTED}
    for v in verdicts:  # a same-line cascade the (line, column) order met before its cause
        if v.kind == UNPREDICTED and (cause := predicted_at.get((v.path, v.line))) is not None:
            v.kind, v.reason = PREDICTED, f"follows the predicted error at line {cause.line}"
    return verdicts


def foreign_library(d: Diagnostic, checked: Mapping[Path, object], compiler: Compiler,
                    libraries: Mapping[str, str], project: Iterable[Path]) -> str:
    """Why an error is this machine's library, not the code: it is inside a ROCm library
    header (a folder such as ``rocrand/`` that a mapped header lives in) found outside the
    header set, and no note ties it to a checked file (only the include does). A header set
    holds the HIP runtime alone, so any library header comes from elsewhere, of another
    release: Debian's rocRAND 5.3.3 in /usr/include reads ``HIP_vector_type::data`` and
    calls ``memset`` through HIP 5's hip_runtime.h, which HIP 7.1's no longer has. An
    instantiation from the project's code leaves a note in the checked file and is judged
    there as usual; "" when any of this does not hold."""
    hs = compiler.headers
    if hs is None or d.path is None or d.path in checked or hs.root.resolve() in d.path.parents:
        return ""
    if any(Path(m["path"]).resolve() in checked for n in d.notes if (m := _DIAG.match(n))):
        return ""
    if any(Path(p).resolve() in d.path.parents for p in project):
        return ""
    top = next((p for p in d.path.parents if p.name in libraries), None)
    if top is None:
        return ""
    return (f"inside {top}/, this machine's {libraries[top.name]}, not the target release's (the "
            f"HIP {short_version(hs.version)} header set has the HIP runtime only): the library "
            "for the target is not installed here")


def _lines(d: Diagnostic, path: Path | None, line: int) -> frozenset[int]:
    """Where a finding predicts the error: the line it is judged at, and in the same file
    the definitions of the macros it was expanded from (a finding in ``CUDA_CHECK``'s body
    is at the ``#define``, the error at each use)."""
    lines = {line}
    for note in d.notes:
        m = _DIAG.match(note)
        if m and "expanded from macro" in m["msg"] and path is not None \
                and Path(m["path"]).resolve() == path:
            lines.add(int(m["line"]))
    return frozenset(lines)


def _near(lines: frozenset[int], findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """The unfixed findings whose span (first to last line) holds one of ``lines``."""
    return tuple(f for f in findings if not f.fixed
                 and any(f.line <= line <= (f.end_line or f.line) for line in lines))


def _naming(message: str, findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """Findings of the file whose message names an identifier the error quotes.

    Library rules report once per file (at the first include of CUTLASS, say); the
    compiler then fails wherever the library's names are used, further down. Short quoted
    words (``'sync'``) are too common to tie an error to a finding.
    """
    names = [n for n in _QUOTED.findall(message) if len(n) >= 4]
    if not names:
        return ()
    pattern = re.compile("|".join(rf"(?<![\w]){re.escape(n)}(?![\w])" for n in names))
    return tuple(f for f in findings if not f.fixed and pattern.search(f.message))


def _judged_at(d: Diagnostic, checked: Mapping[Path, object]) -> tuple[Path | None, int]:
    """The diagnostic's own place when in a checked file; else the first note there (the
    call whose template instantiation failed inside a system header: HIP 7's mask
    static_assert); else the innermost checked include."""
    if d.path is None or d.path in checked:
        return d.path, d.line
    for note in d.notes:
        if (m := _DIAG.match(note)) and (where := Path(m["path"]).resolve()) in checked:
            return where, int(m["line"])
    for where in reversed(d.included_from):
        name, _, line = where.rpartition(":")
        candidate = Path(name).resolve()
        if candidate in checked:
            return candidate, int(line)
    return d.path, d.line


def _cascade(message: str, path: Path | None, line: int, earlier: list[Verdict],
             texts: dict[Path, list[str]]) -> Verdict | None:
    """The predicted error this one follows from: one on the same line (the rest of a
    statement the compiler could not make sense of), or the one on the line that declares
    the name this error says is undeclared (``fragment<…> fa;`` failed, so each use of
    ``fa`` does)."""
    if path is None:
        return None
    same = [v for v in earlier if v.kind == PREDICTED and v.path == path]
    if cause := next((v for v in reversed(same) if v.line == line), None):
        return cause
    m = _UNDECLARED.match(message)
    if m is None or not same:
        return None
    if path not in texts:
        try:
            texts[path] = read_bytes(path).decode("utf-8", "replace").splitlines()
        except OSError:
            texts[path] = []
    word = re.compile(rf"(?<![\w]){re.escape(m[1])}(?![\w])")
    lines = texts[path]
    return next((v for v in same if v.line < line and 0 < v.line <= len(lines)
                 and word.search(lines[v.line - 1])), None)


_UNDECLARED = re.compile(r"use of undeclared identifier '([A-Za-z_]\w*)'")


def _follows(path: Path | None, line: int, earlier: list[Verdict]) -> Verdict | None:
    return next((v for v in reversed(earlier) if v.kind == OLDER and v.path == path
                 and 0 <= line - v.line <= CASCADE), None)


# -- whole runs --------------------------------------------------------------------------

def verify(units: Iterable[Unit], *, compiler: Compiler, target: Version, arch: str = DEFAULT_ARCH,
           includes: Iterable[Path] = (), jobs: int = 2, macros: tuple[str, ...] = (),
           project: Iterable[Path] = ()) -> Verification:
    """Compile every translation unit that no file includes, then for each file no compile
    reached the outermost file that includes it (itself when none does: a header alone,
    or plain C++ hipport left alone whose header hipport changed), and classify.

    ``project`` is the converted tree's roots: when a file no compile reached is included by
    no source, its other files (an umbrella header with no suffix) are read for includers
    (``hipport.verify_units.project_files``), so a header-only library's header is checked
    through the library's own umbrella, not alone."""
    from hipport.mapping import load_table

    units = sorted({u.path.resolve(): u for u in units}.values(), key=lambda u: str(u.path))
    includes = list(includes)
    included = includers((u.path for u in units), includes)
    every = [u.path.resolve() for u in units]
    units = [u for u in units if u.checked]

    def run(paths: Iterable[Path]) -> list[Compiled]:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return list(pool.map(lambda p: compile_one(compiler, p, arch=arch, includes=includes,
                                                       macros=macros), paths))

    runs = run(u.path.resolve() for u in units if u.is_translation_unit and u.path.resolve() not in included)
    reached = {r.path for r in runs}.union(*(r.headers for r in runs))
    pending = [u.path.resolve() for u in units if u.path.resolve() not in reached]
    if any(p not in included for p in pending):
        project = list(project)
        if project:  # a source's own includer wins over another file's
            included = includers([*every, *project_files(project, every)], includes) | included
    tops = {p: outermost(p, included) for p in pending}
    runs += run(p for p in dict.fromkeys(tops.values()) if p not in reached)
    reached = {r.path for r in runs}.union(*(r.headers for r in runs))
    unreached = {p: included[p] for p in pending if p in included and p not in reached}
    alone = {p for p, top in tops.items() if top == p and p not in included}
    findings = {r.path: [] for r in runs} | {u.path.resolve(): list(u.findings) for u in units}
    table = load_table()
    library_headers = frozenset(h for rule in table.headers.values() for h in (rule.hip, rule.roc) if h)
    hs = compiler.headers
    filled = (hs.filled_from, own_words(hs)) if hs is not None and hs.filled_from else None
    libraries = {h.split("/")[0]: rule.library for rule in table.headers.values()
                 if rule.library not in ("", "HIP", "hipRTC") for h in (rule.hip, rule.roc) if h and "/" in h}
    verdicts = classify(((r.path, d) for r in runs for d in r.diagnostics), findings,
                        compiler_version=compiler.hip_version, target=target,
                        lookup=table.find_by_target, library_headers=library_headers, filled=filled,
                        foreign=lambda d: foreign_library(d, findings, compiler, libraries, includes))
    return Verification(compiler, arch, runs, verdicts, target, unreached, alone)


def build_macros(options: "Options") -> tuple[str, ...]:
    """The ``-D``/``-U`` of the HIP build (``--define``/``--undefine``) as compiler flags:
    the check compiles the branches convert decided were the build's."""
    return (*(f"-D{d}" for d in options.defines), *(f"-U{u}" for u in options.undefines))


def run_and_report(units: list[Unit], *, target: Version, arch: str, includes: Iterable[Path],
                   jobs: int, echo: Callable[..., None], compiler: str | None = None,
                   macros: tuple[str, ...] = (), project: Iterable[Path] = ()) -> int:
    """What ``--verify`` and ``hipport verify`` do: 0 compiles, 1 compile errors, 2 no
    compiler or header set for the target. ``project``: the checked trees' roots (``verify``)."""
    from hipport.report.verify import render  # deferred: report.verify imports this module

    try:
        chosen = select(target, compiler=compiler)
    except NoCompiler as e:
        echo(f"hipport: verify: {e}", err=True)
        return 2
    if not any(u.checked for u in units):
        echo("hipport verify: no CUDA or HIP sources to check")
        return 0
    result = verify(units, compiler=chosen, target=target, arch=arch, includes=includes, jobs=jobs,
                    macros=macros, project=project)
    echo(render(result), nl=False)
    return result.exit_status()
