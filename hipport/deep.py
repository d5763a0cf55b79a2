"""Deep mode (``--engine clang``): what only the preprocessor and the type checker can see.

tree-sitter reads the text as written. Two kinds of hazard are invisible in the text:

* a CUDA API name assembled by a macro (``#define CALL(f) cuda##f``): the converter cannot
  rewrite it, and an unsupported name built that way is never reported;
* the lane mask of a ``*_sync`` builtin whose 32-bit type lives elsewhere: a typedef in
  another header, or a template parameter instantiated as ``unsigned``.

This module parses each translation unit with libclang (the optional ``hipport[clang]``
extra) in CUDA mode, without a CUDA toolkit (``-nocudainc -nocudalib`` plus the parsing-only
declarations in ``mappings/clang/``), and adds those findings to the tree-sitter ones. They
go through the same ``Context.report`` (so suppressions, HIP guards, ``--ignore`` and
severity overrides hold), carry the same rule codes as the default engine, and say
``engine="clang"``. A clang finding that the tree-sitter engine already made (same code,
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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from glob import glob
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hipport.datafiles import mappings
from hipport.findings import Finding
from hipport.mapping import Status
from hipport.rule import Rule
from hipport.rules.api import NewerThanTarget, NoHipCounterpart, RemovedInTarget
from hipport.rules.deep import ApiNameBuiltByMacro
from hipport.rules.warp.masks import WarpMask32, WarpMaskVariable32
from hipport.rules.warp.vocab import MASKED

if TYPE_CHECKING:
    from clang.cindex import Cursor, TranslationUnit, Type

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
#: Statuses for which the default engine reports an HP1xx finding on a written name.
_STATUS_RULES: dict[Status, Rule] = {
    Status.UNSUPPORTED: NoHipCounterpart,
    Status.NEWER: NewerThanTarget,
    Status.REMOVED: RemovedInTarget,
}
_UNDECLARED_RE = re.compile(r"(?:use of undeclared identifier|unknown type name) '(\w+)'")
_MISSING_HEADER_RE = re.compile(r"'(.+)' file not found")
_TYPE_PARAM_RE = re.compile(r"type-parameter-(\d+)-(\d+)")
_IDENT_RE = re.compile(r"[A-Za-z_]\w*")
#: What clang calls for ``k<<<...>>>()``; declared in the shipped header, never written.
_LAUNCH_HOOKS = frozenset({"cudaConfigureCall", "__cudaPushCallConfiguration"})


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


# -- analysis --------------------------------------------------------------------------

@dataclass
class _Candidate:
    """A finding before the merge; ``also_lines`` are lines where tree-sitter says the same."""

    finding: Finding
    also_lines: frozenset[int] = frozenset()


@dataclass
class _PendingMask:
    """A ``*_sync`` call in a template whose mask type is the template's parameter ``index``."""

    call: "Cursor"
    mask: "Cursor"
    builtin: str
    index: int


@dataclass
class _Instantiation:
    args: list["Type"]
    call: "Cursor"
    label: str  # f<unsigned int>


@dataclass
class _Walk:
    ctx: "Context"
    main: str
    shipped_dir: str
    candidates: list[_Candidate] = field(default_factory=list)
    macros: dict[str, "Cursor"] = field(default_factory=dict)  # name -> its (last) #define
    bodies: dict[str, list[str]] = field(default_factory=dict)  # tokenized on first use
    expansions: list[tuple[int, int, str]] = field(default_factory=list)
    pending: dict[str, list[_PendingMask]] = field(default_factory=dict)
    instances: dict[str, list[_Instantiation]] = field(default_factory=dict)
    seen_names: set[tuple[str, int]] = field(default_factory=set)

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

    # -- reporting ----------------------------------------------------------------
    def report(self, rule: Rule, where: tuple[int, int], message: str, suggestion: str,
               also_lines: Iterator[int | None] = iter(())) -> None:
        before = len(self.ctx.findings)
        if self.ctx.report(rule, where, message, suggestion) and len(self.ctx.findings) > before:
            finding = replace(self.ctx.findings.pop(), engine=ENGINE)
            self.candidates.append(_Candidate(finding, frozenset(ln for ln in also_lines if ln)))

    # -- the walk -------------------------------------------------------------------
    def run(self, tu: "TranslationUnit") -> None:
        from clang.cindex import CursorKind

        for top in tu.cursor.get_children():
            if top.kind == CursorKind.MACRO_DEFINITION:
                self.macros[top.spelling] = top
            elif top.kind == CursorKind.MACRO_INSTANTIATION:
                if self.in_main(top):
                    start, end = self.span(top)
                    self.expansions.append((start, end, top.spelling))
            elif self.is_user_file(top):
                self.visit(top, ())
        self.undeclared_names(tu)
        self.resolve_templates()

    def visit(self, cursor: "Cursor", templates: tuple["Cursor", ...]) -> None:
        from clang.cindex import CursorKind

        kind = cursor.kind
        if kind in _kinds().templates:
            templates = templates + (cursor,)
        elif kind in _kinds().functions and not templates:
            parent = cursor.semantic_parent  # out-of-line member of a class template
            if parent is not None and parent.kind == CursorKind.CLASS_TEMPLATE:
                templates = (parent,)
        if kind == CursorKind.CALL_EXPR:
            self.call(cursor, templates)
        elif kind in (CursorKind.DECL_REF_EXPR, CursorKind.TYPE_REF) and self.in_main(cursor):
            ref = cursor.referenced
            if ref is not None and ref.spelling:
                self.api_name(ref.spelling, cursor.location.offset)
        for child in cursor.get_children():
            self.visit(child, templates)

    # -- API names built by macros ----------------------------------------------------
    def undeclared_names(self, tu: "TranslationUnit") -> None:
        """Names libclang could not resolve (absent from the stubs) still have a use site."""
        for d in tu.diagnostics:
            m = _UNDECLARED_RE.search(d.spelling)
            loc = d.location
            if m and loc.file is not None and loc.file.name == self.main:
                self.api_name(m.group(1), loc.offset)

    def api_name(self, name: str, offset: int) -> None:
        """Report ``name`` used at ``offset`` when no text the default engine reads spells it."""
        ctx = self.ctx
        res = ctx.view.resolve(name)
        if res is None or name in _LAUNCH_HOOKS or ctx.src.startswith(name.encode(), offset):
            return
        around = [e for e in self.expansions if e[0] <= offset < e[1]]
        if not around:
            return
        start, end, use = min(around, key=lambda e: e[1] - e[0])
        if (name, start) in self.seen_names:
            return
        self.seen_names.add((name, start))
        macro = self.pasting_macro(name, use, ctx.src[start:end].decode("utf-8", "replace"))
        if macro is None:
            return
        target = f" (HIP: `{res.target}`)" if res.target and res.status is not Status.UNSUPPORTED else ""
        self.report(
            ApiNameBuiltByMacro, (start, end),
            f"`{name}` is assembled by token pasting in macro `{macro}`{target}; the converter "
            "rewrites names only where they are written, so this stays CUDA",
            f"write `{name}` in full in the macro, or give `{macro}` a HIP branch",
        )
        rule = _STATUS_RULES.get(res.status)
        if rule is not None:
            self.report(rule, (start, end), f"{name} (built by macro `{macro}`): {res.detail}; left as written",
                        f"Replace {name} by hand; `hipport map {name}` shows what is known.")

    def pasting_macro(self, name: str, use: str, invocation: str) -> str | None:
        """The macro that pastes ``name`` together at a use of ``use``, or None.

        None when ``name`` is written somewhere in the expansion (an argument, the body of
        ``use`` or of a macro it reaches, a header's ``#define hipX cudaX`` alias): the
        text has it, so tree-sitter sees it where it is written. None also when no macro
        involved pastes (``##``): then the name came some other way and is not ours to guess.
        """
        idents = set(_IDENT_RE.findall(invocation))
        queue = [use, *sorted(i for i in idents if i in self.macros)]
        seen: set[str] = set()
        pasting = None
        while queue:
            macro = queue.pop(0)
            if macro in seen or macro not in self.macros:
                continue
            seen.add(macro)
            body = self.bodies.get(macro)
            if body is None:
                body = self.bodies[macro] = [t.spelling for t in self.macros[macro].get_tokens()][1:]
            idents.update(body)
            if pasting is None and "##" in body:
                pasting = macro
            queue.extend(t for t in body if t in self.macros)
        return None if name in idents else pasting

    # -- lane masks ---------------------------------------------------------------------
    def call(self, call: "Cursor", templates: tuple["Cursor", ...]) -> None:
        self.record_instantiation(call)
        name = _callee_name(call)
        if name not in MASKED:
            return
        args = list(call.get_arguments()) or list(call.get_children())[1:]
        if not args:
            return
        mask = _strip(args[0])
        mtype = mask.type.get_canonical()
        param = _TYPE_PARAM_RE.search(mtype.spelling)
        if param is not None:
            depth, index = int(param.group(1)), int(param.group(2))
            if depth < len(templates):
                self.pending.setdefault(templates[depth].get_usr(), []).append(
                    _PendingMask(call, mask, name, index))
            return
        bits = _narrow_int_bits(mtype)
        if bits is None or not self.in_main(call):
            return
        self.narrow_mask(mask, name, _shown_type(mask.type), bits, self.span(mask), "")

    def narrow_mask(self, mask: "Cursor", builtin: str, shown: str, bits: int,
                    where: tuple[int, int], why: str) -> None:
        """Report a mask of ``bits`` bits: HP201 for a constant, HP202 for a variable/expression.

        ``shown`` is the type as the message names it; ``why`` says how a template made it.
        """
        text = _text(self.ctx.src, mask) or "mask"
        origin = _declared_where(mask.type, self.main)
        ref = _direct_ref(mask)
        if ref is None and not why:
            self.report(
                WarpMask32, where,
                f"mask `{text}` of `{builtin}` has type {shown} ({bits} bits){origin}; a wave on CDNA "
                "has 64 lanes and HIP masks are 64-bit",
                "use the 64-bit full mask `0xffffffffffffffffull`",
            )
            return
        self.report(
            WarpMaskVariable32, where,
            f"mask `{text}` of `{builtin}` has type {shown} ({bits} bits){origin}{why}; "
            "HIP lane masks are 64-bit",
            "declare the mask as `unsigned long long` (or `uint64_t`)",
            also_lines=iter([self.line_of(ref)] if ref is not None else []),
        )

    def record_instantiation(self, call: "Cursor") -> None:
        """Calls are where templates get their arguments: a function template's, or the class's of a member."""
        from clang.cindex import conf

        fn = call.referenced
        if fn is None or fn.kind not in _kinds().functions:
            return
        primary = conf.lib.clang_getSpecializedCursorTemplate(fn)
        n = fn.get_num_template_arguments()
        if primary is not None and n > 0:
            args = [fn.get_template_argument_type(i) for i in range(n)]
            label = f"{fn.spelling}<{', '.join(a.spelling for a in args)}>"
            self.instances.setdefault(primary.get_usr(), []).append(_Instantiation(args, call, label))
        owner = fn.semantic_parent
        if owner is None:
            return
        owner_primary = conf.lib.clang_getSpecializedCursorTemplate(owner)
        n = owner.type.get_num_template_arguments()
        if owner_primary is not None and n > 0:
            args = [owner.type.get_template_argument_type(i) for i in range(n)]
            self.instances.setdefault(owner_primary.get_usr(), []).append(
                _Instantiation(args, call, owner.type.spelling))

    def resolve_templates(self) -> None:
        """A template's mask is 32-bit when an instantiation in this file makes it so."""
        for usr, masks in self.pending.items():
            for pm in masks:
                narrow = [(inst, bits) for inst in self.instances.get(usr, ())
                          if pm.index < len(inst.args) and (bits := _narrow_int_bits(inst.args[pm.index].get_canonical()))]
                if not narrow:
                    continue
                if self.in_main(pm.call):
                    inst, bits = narrow[0]
                    self.narrow_mask(pm.mask, pm.builtin, f"`{pm.mask.type.spelling}`", bits,
                                     self.span(pm.mask), _instantiated(inst, pm, len(narrow)))
                    continue
                for inst, bits in narrow:  # the template lives in a header: report the instantiation
                    if self.in_main(inst.call):
                        where = f"{Path(pm.call.location.file.name).name}:{pm.call.location.line}"
                        self.narrow_mask(pm.mask, pm.builtin, f"`{pm.mask.type.spelling}`", bits,
                                         self.span(inst.call),
                                         f" in the template at {where}" + _instantiated(inst, pm, 1))


def _instantiated(inst: _Instantiation, pm: _PendingMask, count: int) -> str:
    more = f" and {count - 1} more" if count > 1 else ""
    arg = inst.args[pm.index].spelling
    return f", instantiated as `{arg}` by `{inst.label}` at line {inst.call.location.line}{more}"


@dataclass(frozen=True)
class _Kinds:
    """libclang enum sets, built on first use so that importing this module needs no libclang."""

    templates: frozenset
    functions: frozenset
    integers: frozenset


@lru_cache(maxsize=1)
def _kinds() -> _Kinds:
    from clang.cindex import CursorKind as K, TypeKind as T

    return _Kinds(
        templates=frozenset({K.FUNCTION_TEMPLATE, K.CLASS_TEMPLATE}),
        functions=frozenset({K.FUNCTION_DECL, K.CXX_METHOD, K.CONSTRUCTOR, K.FUNCTION_TEMPLATE}),
        integers=frozenset({T.UINT, T.INT, T.USHORT, T.SHORT, T.UCHAR, T.SCHAR, T.CHAR_U, T.CHAR_S,
                            T.ULONG, T.LONG, T.CHAR16, T.CHAR32, T.WCHAR}),
    )


def _callee_name(call: "Cursor") -> str:
    """The called name, also for a dependent call in a template (callee unresolved)."""
    from clang.cindex import CursorKind

    if call.spelling:
        return call.spelling
    stack = list(call.get_children())[:1]
    while stack:
        c = stack.pop()
        if c.kind in (CursorKind.DECL_REF_EXPR, CursorKind.OVERLOADED_DECL_REF) and c.spelling:
            return c.spelling
        stack.extend(c.get_children())
    return ""


def _strip(expr: "Cursor") -> "Cursor":
    """Look through implicit conversions and parentheses to the expression as written."""
    from clang.cindex import CursorKind

    while expr.kind in (CursorKind.UNEXPOSED_EXPR, CursorKind.PAREN_EXPR):
        children = list(expr.get_children())
        if len(children) != 1:
            break
        expr = children[0]
    return expr


def _direct_ref(expr: "Cursor") -> "Cursor | None":
    """The declaration a mask expression reads, when it reads one (not a pure constant)."""
    from clang.cindex import CursorKind

    stack = [expr]
    while stack:
        c = stack.pop()
        if c.kind in (CursorKind.DECL_REF_EXPR, CursorKind.MEMBER_REF_EXPR):
            ref = c.referenced
            if ref is not None and ref.kind != CursorKind.ENUM_CONSTANT_DECL:
                return ref
        stack.extend(c.get_children())
    return None


def _narrow_int_bits(t: "Type") -> int | None:
    """Bits of an integer type narrower than 64 (a HIP lane mask), else None."""
    t = t.get_canonical()
    if t.kind not in _kinds().integers:
        return None
    size = t.get_size()
    return size * 8 if 0 < size < 8 else None


def _shown_type(t: "Type") -> str:
    """`` `lane_mask_t` = `unsigned int` `` when a typedef hides the width, else the type."""
    canonical = t.get_canonical().spelling
    return f"`{t.spelling}`" + (f" = `{canonical}`" if canonical != t.spelling else "")


def _declared_where(t: "Type", main: str) -> str:
    """`` (typedef in mask.h:3)`` when a typedef or alias names the type in another file."""
    decl = t.get_declaration()
    loc = decl.location if decl is not None else None
    if loc is None or loc.file is None or loc.file.name == main:
        return ""
    return f" (declared in {Path(loc.file.name).name}:{loc.line})"


def _text(src: bytes, cursor: "Cursor") -> str:
    start, end = cursor.extent.start.offset, cursor.extent.end.offset
    if cursor.extent.start.file is None or not 0 <= start < end <= len(src) or end - start > 80:
        return ""
    return src[start:end].decode("utf-8", "replace")


# -- entry point -----------------------------------------------------------------------

def merge(tree_sitter: list[Finding], deep: list[_Candidate]) -> list[Finding]:
    """Tree-sitter findings, plus each clang finding the default engine did not already make."""
    have = {(f.code, f.line) for f in tree_sitter}
    out = list(tree_sitter)
    seen: set[tuple] = set()
    for c in deep:
        f = c.finding
        key = (f.code, f.line, f.col, f.message)
        if key in seen or any((f.code, ln) in have for ln in {f.line, *c.also_lines}):
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
    walk = _Walk(ctx=ctx, main=tu.spelling, shipped_dir=str(Path(_shipped()[0]).parent))
    walk.run(tu)
    ctx.findings = merge(ctx.findings, walk.candidates)


def check_setup(options: "Options") -> None:
    """Fail early, with what to do, when deep mode cannot run: no libclang, bad ``-p``."""
    ensure_available()
    if options.compile_commands is not None:
        try:
            load_compile_commands(options.compile_commands)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ClangUnavailable(f"cannot read compile database {options.compile_commands}: {e}") from e
