"""Deep mode (``--engine clang``): what only the preprocessor and the type checker can see.

tree-sitter reads the text as written. Two kinds of hazard are invisible in the text:

* a CUDA API name assembled by a macro (``#define CALL(f) cuda##f``): the converter cannot
  rewrite it, and an unsupported name built that way is never reported;
* the lane mask of a ``*_sync`` builtin whose 32-bit type lives elsewhere: a typedef in
  another header, or a template parameter instantiated as ``unsigned``.

This module is the engine: it parses each translation unit with libclang (the optional
``hipport[clang]`` extra) in CUDA mode, without a CUDA toolkit (``-nocudainc -nocudalib``
plus the parsing-only declarations in ``mappings/clang/``), walks it once and calls the
clang visitors the rule families register (``Registry.visits_clang``; the checks are in
``hipport.rules.deep``). Their findings go through the same ``Context.report`` (so
suppressions, HIP guards, ``--ignore`` and severity overrides hold), carry the same rule
codes as the default engine, and say ``engine="clang"``. A clang finding that the tree-sitter engine already made (same code,
same line, or for a mask variable the line tree-sitter reported its declaration on) is
dropped.

libclang is imported only from functions here, and this module only when
``options.engine == "clang"``, so the default engine never pays for it.

Parsing choices: ``--cuda-device-only --cuda-gpu-arch=sm_80`` (unless ``--clang-arg``
names an architecture), because warp code is commonly fenced by ``__CUDA_ARCH__ >= 700``
and clang still parses host functions in a device compilation. A header that cannot be
found is replaced by an empty in-memory stub and the parse is retried (a missing include
is fatal to clang and would hide everything after it), at most ``MAX_STUB_ROUNDS`` times.
"""

from __future__ import annotations

import atexit
import json
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from glob import glob
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from hipport.datafiles import mappings
from hipport.findings import Finding
from hipport.rule import Rule

if TYPE_CHECKING:
    from clang.cindex import Cursor, TranslationUnit

    from hipport.context import Context
    from hipport.options import Options

ENGINE = "clang"
INSTALL_HINT = "--engine clang needs libclang: pip install 'hipport[clang]'"
#: A missing header costs one re-parse; past this many the parse goes ahead as it is.
MAX_STUB_ROUNDS = 8
#: Where missing headers are stubbed; a directory that never exists on disk.
_STUB_DIR = "/__hipport_missing_headers__"
DEFAULT_GPU_ARCH = "sm_80"
BASE_ARGS: tuple[str, ...] = (
    "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", "-std=c++17",
    # Typo correction would silently replace an unknown cudaFoo by a declared cudaFoa.
    "-fno-spell-checking", "-ferror-limit=0", "-w",
)
_MISSING_HEADER_RE = re.compile(r"'(.+)' file not found")


class ClangUnavailable(RuntimeError):
    """libclang is not installed or its shared library cannot be loaded."""


def ensure_available() -> None:
    """Raise ClangUnavailable with what to install; called by the CLI before any work."""
    try:
        from clang import cindex
    except ImportError as e:
        raise ClangUnavailable(f"{INSTALL_HINT} ({e})") from e
    try:
        cindex.conf.lib  # loads libclang.so; fails when the wheel lacks it
    except (cindex.LibclangError, OSError) as e:
        raise ClangUnavailable(f"{INSTALL_HINT} ({e})") from e


# -- flags: compile_commands.json and --clang-arg ---------------------------------------

#: Flags worth keeping from a compile command, and whether their value is a path.
_PATH_FLAGS = ("-I", "-isystem", "-iquote", "-idirafter", "-include")
_VALUE_FLAGS = ("-D", "-U")


def usable_flags(argv: Sequence[str], directory: Path) -> list[str]:
    """The include paths, macros and language standard of a compile command, for clang.

    Whitelisting (rather than passing the command through) is what lets an nvcc command
    line (``--generate-code``, ``-Xcompiler``, ``-ccbin``…) drive a clang parse.
    """
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        for flag in _PATH_FLAGS + _VALUE_FLAGS:
            if arg == flag and i + 1 < len(argv):
                value, i = argv[i + 1], i + 1
            elif arg.startswith(flag) and len(arg) > len(flag) and (flag != "-I" or not arg.startswith("-isystem")):
                value = arg[len(flag):]
            else:
                continue
            if flag in _PATH_FLAGS:
                value = str(directory / value) if not Path(value).is_absolute() else value
                out += [flag, value]
            else:
                out.append(flag + value)
            break
        else:
            if arg.startswith("-std=") or arg.startswith("--std="):
                out.append("-std=" + arg.split("=", 1)[1])
        i += 1
    return out


@lru_cache(maxsize=4)
def load_compile_commands(location: Path) -> dict[Path, tuple[str, ...]]:
    """``compile_commands.json`` (in ``location``, or ``location`` itself) → file → flags."""
    db = location / "compile_commands.json" if location.is_dir() else location
    entries: list[dict[str, Any]] = json.loads(db.read_text(encoding="utf-8"))
    out: dict[Path, tuple[str, ...]] = {}
    for e in entries:
        directory = db.parent / e.get("directory", ".")  # an absolute directory replaces the base
        argv = e["arguments"] if "arguments" in e else shlex.split(e.get("command", ""))
        path = Path(e["file"])
        path = (path if path.is_absolute() else directory / path).resolve()
        out[path] = tuple(usable_flags(argv[1:], directory))
    return out


def flags_for(path: Path, database: dict[Path, tuple[str, ...]]) -> tuple[str, ...]:
    """A file's own entry or, for a header, the entry sharing the longest directory prefix.

    Headers have no entry of their own; their includer's flags are the best guess (clangd
    infers them the same way).
    """
    path = path.resolve()
    if path in database:
        return database[path]
    best, best_len = (), -1
    for candidate, flags in database.items():
        common = _common_prefix(candidate.parts, path.parts)
        if common > best_len:
            best, best_len = flags, common
    return best


def _common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    """How many leading path parts ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


@lru_cache(maxsize=1)
def _shipped() -> tuple[str, str]:
    """(forced-include header, stub include dir) shipped in ``mappings/clang/``."""
    root = Path(str(mappings())) / "clang"
    return str(root / "hipport_cuda.h"), str(root / "include")


@lru_cache(maxsize=1)
def _compiler_builtin_includes() -> tuple[str, ...]:
    """GCC's own header dir (stddef.h, stdarg.h): the libclang wheel ships no resource dir."""
    found = sorted(glob("/usr/lib/gcc/*/*/include/stddef.h"))
    return ("-idirafter", str(Path(found[-1]).parent)) if found else ()


def clang_args(path: Path, options: "Options") -> list[str]:
    """Everything passed to libclang for ``path``: base, project flags, user flags, shipped."""
    forced, stubs = _shipped()
    project: tuple[str, ...] = ()
    if options.compile_commands is not None:
        project = flags_for(path, load_compile_commands(options.compile_commands))
    user = list(options.clang_args)
    arch = [] if any(a.startswith(("--cuda-gpu-arch", "--offload-arch")) for a in user) else [
        f"--cuda-gpu-arch={DEFAULT_GPU_ARCH}"]
    return [*BASE_ARGS, *arch, *project, *user, "-include", forced, "-idirafter", stubs,
            *_compiler_builtin_includes(), "-idirafter", _STUB_DIR]


# -- parsing ---------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _index():
    from clang.cindex import Index

    # Dispose of the index while cindex is still alive: at interpreter teardown its
    # __del__ would find the library handle already gone and print a traceback.
    atexit.register(_index.cache_clear)
    return Index.create()


def parse(path: Path, src: bytes, args: list[str]) -> "TranslationUnit":
    """Parse ``src`` as ``path``, stubbing headers that cannot be found (see module doc)."""
    from clang.cindex import Diagnostic, TranslationUnit

    unsaved: list[tuple[str, bytes]] = [(str(path), src)]
    opts = TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    for _ in range(MAX_STUB_ROUNDS):
        tu = _index().parse(str(path), args=args, unsaved_files=unsaved, options=opts)
        missing = [m.group(1) for d in tu.diagnostics if d.severity == Diagnostic.Fatal
                   and (m := _MISSING_HEADER_RE.search(d.spelling))]
        if not missing:
            return tu
        unsaved.append((f"{_STUB_DIR}/{missing[0]}", b""))
    return tu


# -- the walk --------------------------------------------------------------------------

S = TypeVar("S")


@dataclass
class ClangUnit:
    """One translation unit as the clang visitors see it: where a cursor is, the macros
    (definitions, and where the main file uses them), the templates around the cursor
    being visited, typed per-unit state, and ``report``."""

    ctx: "Context"
    main: str
    shipped_dir: str
    macros: dict[str, "Cursor"] = field(default_factory=dict)  # name -> its (last) #define
    expansions: list[tuple[int, int, str]] = field(default_factory=list)  # uses in the main file
    #: The function and class templates around the cursor being visited, outermost first.
    templates: tuple["Cursor", ...] = ()
    #: Finding (by id) -> lines where tree-sitter reporting the same code means the same.
    also_lines: dict[int, frozenset[int]] = field(default_factory=dict)
    states: dict = field(default_factory=dict)
    _bodies: dict[str, list[str]] = field(default_factory=dict)

    def state(self, cls: type[S]) -> S:
        """This unit's instance of ``cls``, made with no arguments on first use."""
        found = self.states.get(cls)
        if found is None:
            found = self.states[cls] = cls()
        return found

    # -- places ------------------------------------------------------------------
    def in_main(self, cursor: "Cursor") -> bool:
        f = cursor.location.file
        return f is not None and f.name == self.main

    def is_user_file(self, cursor: "Cursor") -> bool:
        f = cursor.location.file
        return f is not None and not cursor.location.is_in_system_header and not (
            f.name.startswith(self.shipped_dir) or f.name.startswith(_STUB_DIR))

    def span(self, cursor: "Cursor") -> tuple[int, int]:
        start, end = cursor.extent.start.offset, cursor.extent.end.offset
        return (start, end) if start < end else (start, start + 1)

    def line_of(self, cursor: "Cursor") -> int | None:
        return cursor.location.line if self.in_main(cursor) else None

    def macro_body(self, name: str) -> list[str]:
        """The tokens of a defined macro's body (tokenized on first use)."""
        body = self._bodies.get(name)
        if body is None:
            body = self._bodies[name] = [t.spelling for t in self.macros[name].get_tokens()][1:]
        return body

    # -- reporting ----------------------------------------------------------------
    def report(self, rule: Rule, where: tuple[int, int], message: str, suggestion: str,
               also_lines: Iterable[int | None] = ()) -> None:
        """``Context.report`` as the clang engine; ``also_lines`` are the lines where a
        tree-sitter finding of the same code makes this one redundant (``merge``)."""
        if self.ctx.report(rule, where, message, suggestion, engine=ENGINE):
            lines = frozenset(ln for ln in also_lines if ln)
            if lines:
                self.also_lines[id(self.ctx.findings[-1])] = lines

    # -- the walk -------------------------------------------------------------------
    def run(self, tu: "TranslationUnit", visitors: dict, after: tuple) -> None:
        """Record the macros, visit every cursor of the user's files, then run the
        per-unit visitors (``after``)."""
        from clang.cindex import CursorKind

        for top in tu.cursor.get_children():
            if top.kind == CursorKind.MACRO_DEFINITION:
                self.macros[top.spelling] = top
            elif top.kind == CursorKind.MACRO_INSTANTIATION:
                if self.in_main(top):
                    start, end = self.span(top)
                    self.expansions.append((start, end, top.spelling))
            elif self.is_user_file(top):
                self._visit(top, visitors)
        for fn in after:
            fn(self, tu)

    def _visit(self, cursor: "Cursor", visitors: dict) -> None:
        from clang.cindex import CursorKind

        kind = cursor.kind
        outer = self.templates
        if kind in clang_kinds().templates:
            self.templates = outer + (cursor,)
        elif kind in clang_kinds().functions and not outer:
            parent = cursor.semantic_parent  # out-of-line member of a class template
            if parent is not None and parent.kind == CursorKind.CLASS_TEMPLATE:
                self.templates = (parent,)
        for fn in visitors.get(kind, ()):
            fn(cursor, self)
        for child in cursor.get_children():
            self._visit(child, visitors)
        self.templates = outer


@lru_cache(maxsize=16)
def _visitors(options: "Options") -> tuple[dict, tuple]:
    """CursorKind -> the registered visitor functions a run with ``options`` keeps, and
    the per-unit ones; a visitor whose rules are all disabled is left out."""
    from clang.cindex import CursorKind

    from hipport.rules import load

    table: dict = {}
    after = []
    for v in load().clang_visitors:
        if not v.wanted(options):
            continue
        if not v.kinds:
            after.append(v.fn)
        for name in v.kinds:
            table.setdefault(getattr(CursorKind, name), []).append(v.fn)
    return table, tuple(after)


@dataclass(frozen=True)
class _Kinds:
    """libclang enum sets, built on first use so that importing this module needs no libclang."""

    templates: frozenset
    functions: frozenset
    integers: frozenset


@lru_cache(maxsize=1)
def clang_kinds() -> _Kinds:
    from clang.cindex import CursorKind as K, TypeKind as T

    return _Kinds(
        templates=frozenset({K.FUNCTION_TEMPLATE, K.CLASS_TEMPLATE}),
        functions=frozenset({K.FUNCTION_DECL, K.CXX_METHOD, K.CONSTRUCTOR, K.FUNCTION_TEMPLATE}),
        integers=frozenset({T.UINT, T.INT, T.USHORT, T.SHORT, T.UCHAR, T.SCHAR, T.CHAR_U, T.CHAR_S,
                            T.ULONG, T.LONG, T.CHAR16, T.CHAR32, T.WCHAR}),
    )


# -- entry point -----------------------------------------------------------------------

def merge(findings: list[Finding], also_lines: dict[int, frozenset[int]]) -> list[Finding]:
    """Tree-sitter findings, plus each clang finding the default engine did not already make
    (same code on its line, or on one of its ``also_lines``)."""
    out = [f for f in findings if f.engine != ENGINE]
    have = {(f.code, f.line) for f in out}
    seen: set[tuple] = set()
    for f in findings:
        if f.engine != ENGINE:
            continue
        key = (f.code, f.line, f.col, f.message)
        if key in seen or any((f.code, ln) in have for ln in {f.line, *also_lines.get(id(f), ())}):
            continue
        seen.add(key)
        out.append(f)
    return out


def add_deep_findings(ctx: "Context", path: Path) -> None:
    """Run deep mode on the file ``ctx`` analysed, merging its findings into ``ctx.findings``.

    libclang refuses a translation unit only for unusable arguments or an unreadable
    compile database, which the CLI validates before any file (``check_setup``); a file it
    still refuses keeps its tree-sitter findings.
    """
    from clang.cindex import TranslationUnitLoadError

    path = path.resolve()
    try:
        tu = parse(path, ctx.src, clang_args(path, ctx.options))
    except TranslationUnitLoadError:
        return
    unit = ClangUnit(ctx=ctx, main=tu.spelling, shipped_dir=str(Path(_shipped()[0]).parent))
    unit.run(tu, *_visitors(ctx.options))
    ctx.findings = merge(ctx.findings, unit.also_lines)


def check_setup(options: "Options") -> None:
    """Fail early, with what to do, when deep mode cannot run: no libclang, bad ``-p``."""
    ensure_available()
    if options.compile_commands is not None:
        try:
            load_compile_commands(options.compile_commands)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ClangUnavailable(f"cannot read compile database {options.compile_commands}: {e}") from e
