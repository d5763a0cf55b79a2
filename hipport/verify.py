"""Prove converted code compiles: syntax-check each translation unit with AMD's hipcc.

A translation is only as good as whether AMD's compiler accepts it, and hipport's promise
is that every failure is predicted by a finding at its line. So each compile error is
linked to the unfixed findings on or near its line and given the first class that fits:

* ``not-installed``  ``'lib/header.h' file not found`` for a header hipport maps to: a
                     ROCm library is missing from this machine, not from the code;
* ``older-compiler`` the error names a HIP API that the mapping tables date after the
                     compiler's HIP version (added, or changed, later): the installed
                     headers are too old to judge that line, not the translation wrong;
* ``predicted``      a finding within ``WINDOW`` lines says so;
* ``missing-header`` any other ``file not found``: an include path is missing (``-I``);
* ``older-compiler`` again for an error within ``WINDOW`` lines after an older-compiler
                     error in the same file (cascades such as "expected ';'");
* ``unpredicted``    none of the above: a gap in hipport's rules, reported plainly.

Machine-explained classes come first because they say nothing about the code on its
target; the findings near them are still shown.

The compile command (found by trying it with ROCm 5.2's hipcc, about 0.6–2 s a file)::

    HIP_PLATFORM=amd hipcc --offload-arch=gfx90a -fsyntax-only -std=c++17 -x hip -H FILE

``HIP_PLATFORM=amd`` is forced because hipcc otherwise picks the NVIDIA path whenever an
``nvcc`` is on PATH. ``-std=c++17`` because hipcc 5.2 forces ``-std=c++11`` while the
6.3 and 7.2.1 targets compile as C++17. ``-H`` lists the headers each unit reaches, so a
header no unit includes is checked on its own (``-x hip`` on the header) and the others
are checked through their includers. Host and device are both checked (the driver runs
both front ends); inline PTX is only rejected by the backend, which ``-fsyntax-only``
skips, so it stays the rules' job.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from hipport.convert import Plan, destination
from hipport.files import looks_like_cuda, read_bytes
from hipport.findings import Finding
from hipport.options import Options
from hipport.pipeline import FileResult, scan_paths
from hipport.versions import Version, short_version

DEFAULT_ARCH = "gfx90a"
#: A finding this many lines from an error still predicts it (macros, wrapped calls).
WINDOW = 2
#: Seconds one unit may take; ROCm 5.2 needs ~1-2 s, a slow CI runner several times that.
TIMEOUT = 180
#: Extensions compiled as translation units; every other file is a header.
UNIT_SUFFIXES = frozenset({".cu", ".hip", ".cpp", ".cc", ".cxx", ".c"})
INSTALL_HINT = ("install AMD's HIP compiler (Debian/Ubuntu: apt-get install hipcc "
                "libamdhip64-dev rocm-device-libs), or set HIPCC to its path or ROCM_PATH "
                "to the ROCm root")

PREDICTED, OLDER, NOT_INSTALLED, MISSING, UNPREDICTED = (
    "predicted", "older-compiler", "not-installed", "missing-header", "unpredicted")
KINDS = (PREDICTED, OLDER, NOT_INSTALLED, MISSING, UNPREDICTED)


class NoCompiler(RuntimeError):
    """No usable hipcc: the CLI exits 2 with ``INSTALL_HINT``."""


@dataclass(frozen=True)
class Compiler:
    path: Path
    hip_version: Version | None  # (major, minor, 0); None when --version does not say


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


@dataclass(frozen=True)
class Unit:
    """A converted file to check, with the findings that concern it in its own line numbers."""

    path: Path
    findings: tuple[Finding, ...] = ()

    @property
    def is_translation_unit(self) -> bool:
        return self.path.suffix.lower() in UNIT_SUFFIXES


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
    findings: tuple[Finding, ...] = ()  # the unfixed findings on or near ``line``
    reason: str = ""
    more: int = 0  # further errors in system headers reached through the same include


@dataclass
class Verification:
    compiler: Compiler
    arch: str
    runs: list[Compiled]
    verdicts: list[Verdict]

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


# -- finding the compiler -------------------------------------------------------------

def find_hipcc(env: Mapping[str, str] = os.environ) -> Path | None:
    """HIPCC (a path or a command name), then ROCM_PATH/bin, then PATH, then /opt/rocm."""
    if env.get("HIPCC"):
        found = shutil.which(env["HIPCC"])
        return Path(found) if found else None
    candidates = []
    if env.get("ROCM_PATH"):
        candidates.append(Path(env["ROCM_PATH"]) / "bin" / "hipcc")
    on_path = shutil.which("hipcc", path=env.get("PATH"))
    if on_path:
        candidates.append(Path(on_path))
    candidates.append(Path("/opt/rocm/bin/hipcc"))
    return next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)


_HIP_VERSION = re.compile(r"HIP version:\s*(\d+)\.(\d+)|^(\d+)\.(\d+)\.\d+", re.M)


def parse_hip_version(text: str) -> Version | None:
    """``HIP version: 5.2.21153-0`` → (5, 2, 0). The third field is a build number, not a patch."""
    m = _HIP_VERSION.search(text)
    if not m:
        return None
    major, minor = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    return (int(major), int(minor), 0)


def compile_env(env: Mapping[str, str] = os.environ) -> dict[str, str]:
    return {**env, "HIP_PLATFORM": "amd"}


def probe(env: Mapping[str, str] = os.environ) -> Compiler:
    """The hipcc to use and its HIP version (``hipcc --version``, else ``hipconfig --version``)."""
    path = find_hipcc(env)
    if path is None:
        raise NoCompiler(f"no hipcc found; {INSTALL_HINT}")
    version = None
    for cmd in ([str(path), "--version"], [str(path.with_name("hipconfig")), "--version"]):
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=compile_env(env))
        except (OSError, subprocess.TimeoutExpired):
            continue
        version = parse_hip_version(out.stdout + out.stderr)
        if version is not None:
            break
    return Compiler(path, version)


# -- compiling and parsing -------------------------------------------------------------

def command(compiler: Compiler, path: Path, *, arch: str, includes: Iterable[Path]) -> list[str]:
    incs = [f"-I{d}" for d in dict.fromkeys([path.parent, *includes])]
    return [str(compiler.path), f"--offload-arch={arch}", "-fsyntax-only", "-std=c++17",
            "-Wno-unused-command-line-argument", "-H", *incs, "-x", "hip", str(path)]


def compile_one(compiler: Compiler, path: Path, *, arch: str = DEFAULT_ARCH,
                includes: Iterable[Path] = (), timeout: float = TIMEOUT) -> Compiled:
    cmd = command(compiler, path, arch=arch, includes=includes)
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
_DRIVER = re.compile(r"^(?:clang|hipcc)(?:-\d+)?: (?P<sev>error|fatal error): (?P<msg>.*)$")
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
    return diags, headers


def _resolve(path: str, cwd: Path) -> Path:
    p = Path(path)
    return (p if p.is_absolute() else cwd / p).resolve()


# -- linking errors to findings ---------------------------------------------------------

_QUOTED = re.compile(r"'([A-Za-z_][\w:]*)")


def dated_after(message: str, compiler_version: Version | None, target: Version,
                lookup: Callable[[str], list]) -> str:
    """Why the compiler's headers cannot know a name in ``message``, or "" when they can.

    ``lookup`` is ``MappingTable.find_by_target``: HIP name → table entries. A name counts
    when its ``hip_added`` is after the compiler's HIP version, or it changed after that
    version and no later than the target. Compared on (major, minor): hipcc reports a build
    number where the tables have a patch.
    """
    if compiler_version is None:
        return ""
    have = compiler_version[:2]
    for name in dict.fromkeys(_QUOTED.findall(message)):
        for entry in lookup(name.rsplit("::", 1)[-1]):
            if entry.hip_added is not None and entry.hip_added[:2] > have:
                return (f"{name} exists from HIP {short_version(entry.hip_added)}; "
                        f"this compiler is HIP {short_version(compiler_version)}")
            later = [v for v in entry.hip_changed if have < v[:2] and v <= target]
            if later:
                return (f"{name} changed in HIP {short_version(later[0])}; "
                        f"this compiler is HIP {short_version(compiler_version)}")
    return ""


_NOT_FOUND = re.compile(r"^'(?P<header>[^']+)' file not found")


def classify(diags_by_unit: Iterable[tuple[Path, Diagnostic]], findings: Mapping[Path, list[Finding]],
             *, compiler_version: Version | None, target: Version,
             lookup: Callable[[str], list], library_headers: frozenset[str]) -> list[Verdict]:
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
    for unit, d in sorted(errors.values(), key=lambda ud: ud[1].key()):
        path, line = _judged_at(d, findings)
        if (path, line) != (d.path, d.line):
            if (path, line) in by_include:
                by_include[(path, line)].more += 1
                continue
        near = tuple(f for f in findings.get(path, ()) if not f.fixed
                     and f.line - WINDOW <= line <= (f.end_line or f.line) + WINDOW) if path else ()
        missing = _NOT_FOUND.match(d.message)
        if missing and missing["header"] in library_headers:
            kind, reason = NOT_INSTALLED, (f"{missing['header']} belongs to a ROCm library that is "
                                           "not installed here; the rest of this file was not checked")
        elif reason := dated_after(d.message, compiler_version, target, lookup):
            kind = OLDER
        elif near:
            kind, reason = PREDICTED, "; ".join(sorted({f.code for f in near}))
        elif near := _naming(d.message, findings.get(path, ()) if path else ()):
            kind, reason = PREDICTED, "; ".join(sorted({f.code for f in near})) + " (names it)"
        elif missing:
            kind, reason = MISSING, "not on the include path (pass its directory with -I)"
        elif cause := _follows(path, line, verdicts):
            kind, reason = OLDER, f"follows the error at line {cause.line}"
        else:
            kind, reason = UNPREDICTED, "no hipport finding on or near this line"
        v = Verdict(d, unit, path, line, kind, near, reason)
        if (path, line) != (d.path, d.line):
            by_include[(path, line)] = v
        verdicts.append(v)
    return verdicts


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
    """The diagnostic's own place when in a checked file, else the innermost checked include."""
    if d.path is None or d.path in checked:
        return d.path, d.line
    for where in reversed(d.included_from):
        name, _, line = where.rpartition(":")
        candidate = Path(name).resolve()
        if candidate in checked:
            return candidate, int(line)
    return d.path, d.line


def _follows(path: Path | None, line: int, earlier: list[Verdict]) -> Verdict | None:
    return next((v for v in reversed(earlier) if v.kind == OLDER and v.path == path
                 and 0 <= line - v.line <= WINDOW), None)


# -- whole runs --------------------------------------------------------------------------

def verify(units: Iterable[Unit], *, compiler: Compiler, target: Version, arch: str = DEFAULT_ARCH,
           includes: Iterable[Path] = (), jobs: int = 2) -> Verification:
    """Compile every translation unit, then every header no unit reached, and classify."""
    from hipport.mapping import load_table

    units = sorted({u.path.resolve(): u for u in units}.values(), key=lambda u: str(u.path))
    includes = list(includes)

    def run(paths: list[Path]) -> list[Compiled]:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return list(pool.map(lambda p: compile_one(compiler, p, arch=arch, includes=includes), paths))

    runs = run([u.path for u in units if u.is_translation_unit])
    reached = set().union(*(r.headers for r in runs)) if runs else set()
    runs += run([u.path for u in units if not u.is_translation_unit and u.path.resolve() not in reached])
    findings = {u.path.resolve(): list(u.findings) for u in units}
    table = load_table()
    library_headers = frozenset(h for rule in table.headers.values() for h in (rule.hip, rule.roc) if h)
    verdicts = classify(((r.path, d) for r in runs for d in r.diagnostics), findings,
                        compiler_version=compiler.hip_version, target=target,
                        lookup=table.find_by_target, library_headers=library_headers)
    return Verification(compiler, arch, runs, verdicts)


def line_map(old: bytes, new: bytes) -> Callable[[int], int]:
    """Input line → output line, for findings made on the CUDA source and errors in its HIP."""
    a = old.splitlines()
    b = new.splitlines()
    blocks = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()

    def to_new(line: int) -> int:
        i = line - 1
        for tag, i1, i2, j1, j2 in blocks:
            if i1 <= i < i2:
                if tag == "equal":
                    return j1 + (i - i1) + 1
                return j1 + min(i - i1, max(j2 - j1 - 1, 0)) + 1
        return line

    return to_new


def remap(findings: Iterable[Finding], old: bytes, new: bytes, path: Path) -> tuple[Finding, ...]:
    """Findings moved onto ``path`` and its line numbers."""
    to_new = line_map(old, new)
    return tuple(replace(f, path=str(path), line=to_new(f.line), end_line=to_new(f.end_line or f.line))
                 for f in findings)


# -- what to check -------------------------------------------------------------------------

_HIP_HINT = re.compile(rb"hip[A-Z_]|<hip/|__global__|__device__")


def worth_checking(data: bytes) -> bool:
    """CUDA- or HIP-looking text; plain C++ that hipport left alone is not its output to judge."""
    return looks_like_cuda(data) or _HIP_HINT.search(data) is not None


def units_from_convert(plan_: Plan, results: Iterable[FileResult], into: list[Unit]) -> Iterator[FileResult]:
    """Pass convert's results through, noting each written source in ``into``.

    Findings are made on the input's lines and moved onto the output's (the converter adds
    and drops include lines). In place, the input bytes are gone once written, so the
    input's numbering is kept and ``WINDOW`` absorbs small shifts.
    """
    for r in results:
        yield r
        if r.status not in ("converted", "unchanged") or r.source is None:
            continue
        target = next(t for t in plan_.targets if _within(r.source.path, t.input))
        dest = destination(target, r)
        try:
            data = read_bytes(dest)
        except OSError:
            continue
        if r.status == "unchanged" and not worth_checking(data):
            continue
        if target.in_place or r.output is None:
            findings = tuple(replace(f, path=str(dest)) for f in r.findings)
        else:
            findings = remap(r.findings, read_bytes(r.source.path), r.output, dest)
        into.append(Unit(dest, findings))


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


def units_from_paths(paths: Iterable[Path], options: Options) -> list[Unit]:
    """Already converted code: each source worth checking, with the findings a scan makes on it."""
    units = []
    for r in scan_paths(paths, options):
        if r.source is None or r.status in ("error", "skipped", "other"):
            continue
        try:
            data = read_bytes(r.source.path)
        except OSError:
            continue
        if worth_checking(data):
            units.append(Unit(r.source.path, tuple(r.findings)))
    return units


def run_and_report(units: list[Unit], *, target: Version, arch: str, includes: Iterable[Path],
                   jobs: int, echo: Callable[..., None]) -> int:
    """What ``--verify`` and ``hipport verify`` do: 0 compiles, 1 compile errors, 2 no hipcc."""
    try:
        compiler = probe()
    except NoCompiler as e:
        echo(f"hipport: verify: {e}", err=True)
        return 2
    if not units:
        echo("hipport verify: no CUDA or HIP sources to check")
        return 0
    result = verify(units, compiler=compiler, target=target, arch=arch, includes=includes, jobs=jobs)
    echo(render(result), nl=False)
    return result.exit_status()


# -- text output -------------------------------------------------------------------------

def _shown(path: Path | None) -> str:
    if path is None:
        return "hipcc"
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def render(v: Verification) -> str:
    """Errors in file order, each with its class and linked findings; then a summary."""
    version = short_version(v.compiler.hip_version) if v.compiler.hip_version else "unknown version"
    lines = [f"hipport verify: {v.compiler.path} (HIP {version}), --offload-arch={v.arch}"]
    for r in sorted(v.runs, key=lambda r: str(r.path)):
        if r.failure:
            lines.append(f"{_shown(r.path)}: not checked: {r.failure}")
    for verdict in v.verdicts:
        d = verdict.diagnostic
        where = f"{_shown(d.path)}:{d.line}:{d.col}" if d.path else "hipcc"
        lines.append(f"{where}: {d.severity}: {d.message} [{verdict.kind}: {verdict.reason}]")
        if verdict.path != d.path:
            lines.append(f"    reached from {_shown(verdict.path)}:{verdict.line}"
                         + (f" (+{verdict.more} more errors there)" if verdict.more else ""))
        elif d.path != verdict.unit.resolve():
            lines.append(f"    compiled as part of {_shown(verdict.unit)}")
        for f in verdict.findings:
            lines.append(f"    {f.code} at line {f.line}: {f.message}")
    failed = v.failed()
    counts = ", ".join(f"{v.count(k)} {k}" for k in KINDS)
    total = len(v.verdicts) + sum(x.more for x in v.verdicts)
    lines.append(f"hipport verify: {len(v.runs)} files checked, {len(v.runs) - len(failed)} compile, "
                 f"{len(failed)} fail; {total} errors ({len(v.verdicts)} judged): {counts}")
    return "\n".join(lines) + "\n"
