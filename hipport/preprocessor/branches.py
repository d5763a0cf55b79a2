"""Which ``#if`` branches of a file a HIP build compiles, following the project's headers.

Real ports keep the CUDA and HIP paths in one tree and decide between them in the
preprocessor, often through macros a project header defines conditionally::

    // common.cuh
    #if !defined(GGML_USE_HIP) && __CUDA_ARCH__ >= 800
    #define AMPERE_MMA_AVAILABLE
    #endif
    // mma.cuh
    #include "common.cuh"
    #ifdef AMPERE_MMA_AVAILABLE
      asm("mma.sync…");          // never compiled by a HIP build: not a finding
    #endif

Each pass of the build (``passes``) runs the file's directives in order, entering the
``#include "…"`` headers it can find next to the including file or the first file, or
for a name with a directory (``"ggml-cuda/common.cuh"``) up to ``MAX_UP`` levels above
the first file, as a project's ``-I`` of its source root would (once each, at most
``MAX_HEADERS`` of them, ``MAX_DEPTH`` deep, regular files only; an ``#ifndef X`` /
``#define X`` include guard holds the first time), and records for every branch of the
file itself whether the pass takes it (1), skips it (0) or cannot tell (None). A branch is *never compiled* when every pass skips it; "maybe" keeps
the findings, as before this model existed. Nothing here writes or executes anything.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import re
from collections.abc import Callable
import stat
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from hipport.preprocessor import directives as dv
from hipport.preprocessor.macros import UNSEEN, Macro, Macros, Recorder, _absent
from hipport.preprocessor.passes import Build, cuda_build, passes

MAX_DEPTH = 24
MAX_HEADERS = 400
MAX_HEADER_BYTES = 4 << 20
#: Directories above the first file where ``#include "dir/name.h"`` is also looked for.
MAX_UP = 3
#: What may start a conditional directive or a project include (``#  ifdef`` indented too);
#: a file with neither has nothing for the model to say, and is not even scanned.
_CONDITIONAL = re.compile(rb"#[ \t]*(?:if|el)")
_PROJECT_INCLUDE = re.compile(rb'#[ \t]*include[ \t]*"')
_LINE_START = re.compile(rb"[ \t]*")


def _has_directive(src: bytes, pattern: re.Pattern) -> bool:
    """Whether ``pattern`` (from its ``#``) matches at the start of a line: a search for
    the rare ``#`` first, then a look back, is far cheaper than a multi-line ``^`` regex."""
    for m in pattern.finditer(src):
        line = src.rfind(b"\n", 0, m.start()) + 1
        if _LINE_START.match(src, line).end() == m.start():
            return True
    return False


@dataclass
class Branches:
    """The answer for one file: byte ranges no pass compiles, and condition parts that
    cannot change any pass's result."""

    never: list[tuple[int, int]] = field(default_factory=list)  # sorted, disjoint
    #: per pass, the irrelevant (start, end) spans of conditions the pass evaluated or
    #: skipped, and in a ported project its own tests of CUDA macros (``Macros.meant_spans``)
    irrelevant: list[list[tuple[int, int]]] = field(default_factory=list)
    #: names the project's #defines define where a pass surely compiles them
    from_headers: frozenset[str] = frozenset()
    #: headers whose code a pass surely compiles: path -> (directives, bytes, the sure gaps)
    sure_headers: dict[str, tuple[tuple, bytes, frozenset[int]]] = field(default_factory=dict, repr=False)
    #: for the file's own declarations, read only when asked: its bytes, its directives and
    #: whether some pass surely compiles each gap between them
    own: tuple[bytes, tuple, tuple[bool, ...]] | None = field(default=None, repr=False)
    #: what ``skipped`` looks up: never compiled, or irrelevant in every pass; sorted,
    #: disjoint, and the starts apart for bisect (built once per file, ``_combine``)
    _skip: list[tuple[int, int]] = field(default_factory=list, repr=False)
    _starts: list[int] = field(default_factory=list, repr=False)
    #: the branches a CUDA build never compiles (written for AMD), worked out when first asked
    cuda_build: Callable[[], list[tuple[int, int]]] | None = field(default=None, repr=False)
    _amd: list[tuple[int, int]] | None = field(default=None, repr=False)
    #: the branches of the file but its include guard: only code in them can be AMD-only
    _in_branch: list[tuple[int, int]] = field(default_factory=list, repr=False)
    _amd_starts: list[int] = field(default_factory=list, repr=False)
    _own_names: dict[str, bool] = field(default_factory=dict, repr=False)
    #: for a file without conditionals: the analysis ``provides`` runs when first asked
    pending: Callable[[], "Branches"] | None = field(default=None, repr=False)
    #: what no GPU pass compiles (the host pass may): code a __device__-only function has
    #: there never runs on the GPU (``device_never``); None: the same as ``never``
    gpu_never: list[tuple[int, int]] | None = None

    def never_compiled(self, offset: int) -> bool:
        """In a branch no pass compiles."""
        return _within(self.never, offset)

    def device_never(self, offset: int) -> bool:
        """In a branch no GPU pass compiles (``never_compiled``, or only the host pass)."""
        spans = self.never if self.gpu_never is None else self.gpu_never
        return _within(spans, offset)

    def skipped(self, offset: int) -> bool:
        """In a branch no pass compiles, or a condition part no pass's result depends on."""
        i = bisect.bisect_right(self._starts, offset) - 1
        return i >= 0 and offset < self._skip[i][1]

    def amd_only(self, offset: int) -> bool:
        """In a branch a CUDA build of the same code never compiles: written for AMD."""
        if self._amd is None:
            if not _within(self._in_branch, offset):
                return False  # the CUDA pass is run only for code inside some branch
            self._amd = self.cuda_build() if self.cuda_build is not None else []
            self._amd_starts = [s for s, _ in self._amd]
        i = bisect.bisect_right(self._amd_starts, offset) - 1
        return i >= 0 and offset < self._amd[i][1]

    def provides(self, name: str) -> bool:
        """Whether the project itself defines ``name`` (a macro, typedef or function) in
        code a HIP build surely compiles: its own port of that name."""
        self._resolve()
        if name in self.from_headers:
            return True
        if self.own is None:
            return False
        found = self._own_names.get(name)
        if found is None:
            src, items, sure = self.own
            found = any(sure[g] for g in dv.declares(src, items, name)) or any(
                not gaps.isdisjoint(_declares(key, data, items, name))
                for key, (items, data, gaps) in self.sure_headers.items())
            self._own_names[name] = found
        return found


    def defines(self, name: str) -> list[str] | None:
        """The bodies of the object-like ``#define name`` directives some pass surely
        compiles, in the file and in the project headers it surely compiles
        (``sure_headers``): vLLM's core/cuda_compat.h defines ``WARP_SIZE`` as 32 only in
        the ``#else`` of ``#ifdef USE_ROCM``, which its HIP build never compiles. A
        function-like ``#define name(x) …`` gives ``name`` no value (the name alone is not
        expanded). None for a file the model did not analyze (no conditional and no project
        include): its own defines are all compiled."""
        self._resolve()
        if self.own is None:
            return None
        _, items, sure = self.own
        out = [body for i, d in enumerate(items) if sure[i] and (body := _object_body(d, name)) is not None]
        for items, _, gaps in self.sure_headers.values():
            out += [body for i in gaps if i < len(items) and (body := _object_body(items[i], name)) is not None]
        return out

    def header_texts(self) -> list[bytes]:
        """The bytes of the project headers some pass surely compiles (``sure_headers``)."""
        self._resolve()
        return [data for _, data, _ in self.sure_headers.values()]

    def _resolve(self) -> None:
        """Work out the headers of a file without conditionals, once first asked."""
        if self.pending is not None:
            full, self.pending = self.pending(), None
            self.from_headers, self.sure_headers, self.own = full.from_headers, full.sure_headers, full.own


NOTHING = Branches()


def _object_body(d: dv.Directive, name: str) -> str | None:
    """The body of ``d`` when it is an object-like ``#define name``."""
    m = d.macro if d.kind == "define" else None
    return m[2] if m is not None and m[0] == name and not m[1] else None


def analyze(src: bytes, path: str, build: Build) -> Branches:
    """The branches of ``src`` (the bytes of ``path``) no pass of ``build`` compiles.

    A file without conditionals has no such branch; its headers still tell what the
    project provides, worked out only if ``provides`` is asked (most files never are)."""
    if b"#" not in src:
        return NOTHING
    if not _has_directive(src, _CONDITIONAL):  # no branch: only what the headers provide
        if not _has_directive(src, _PROJECT_INCLUDE):
            return NOTHING
        return Branches(pending=lambda: _analyze(src, path, build, dv.scan(src)))
    own = dv.scan(src)
    if not any(d.kind.startswith(("if", "el")) for d in own):  # in comments or strings only
        return Branches(pending=lambda: _analyze(src, path, build, own))
    return _analyze(src, path, build, own)


def _analyze(src: bytes, path: str, build: Build, own: list[dv.Directive]) -> Branches:
    base = _directory(os.path.abspath(path))  # absolute, as every path of the model: see project_header
    host, *devices = passes(build)
    dirs = tuple(Path(os.path.abspath(d)) for d in build.include_dirs)
    results = [_Pass(macros.copy(), base, dirs).run(own, path) for macros in devices]
    gpu_never = None
    if any(r.macros.read_pass_dependent for r in results) or not results:
        if results:
            gpu_never = _never(results)
        results.append(_Pass(host.copy(), base, dirs).run(own, path))
    # else: nothing the passes differ in was read, so the host pass decides as they do
    found = _combine(results)
    if gpu_never is not None and gpu_never != found.never:
        found.gpu_never = gpu_never
    found.cuda_build = lambda: _merge(
        [(s, e) for s, e, now in _Pass(cuda_build(build).copy(), base, dirs).run(own, path).branches if now == 0])
    first = results[0]  # code in no branch but the include guard is compiled by every build
    found._in_branch = _merge([(s, e) for s, e, _ in first.branches if s not in first.guards])
    found.from_headers = frozenset(
        key[len(_PROVIDES):] for r in results for key, st in r.macros.pseudo.items()
        if key.startswith(_PROVIDES) and st is not UNSEEN)
    for r in results:  # what each pass surely compiled of each header (replayed ones too)
        for key, st in r.macros.pseudo.items():
            if key.startswith(_GAPS) and isinstance(st, Macro) and st.body:
                header = key[len(_GAPS):]
                source = r.sources.get(header) or (project_header(header) or ((None, None),))[0]
                items, data = source  # a header a replayed memo entered is read from the cache
                if items is None:
                    continue
                old = found.sure_headers.get(header, (items, data, frozenset()))[2]
                found.sure_headers[header] = (items, data, old | _gap_set(st.body))
    own_path = _SEEN + os.path.abspath(path)
    for key in {k for r in results for k in r.macros.pseudo if k.startswith(_SEEN) and k != own_path}:
        project_header(key[len(_SEEN):])  # noted as read: a replayed memo entry entered it unread
    for key in {k for r in results for k in r.macros.pseudo if k.startswith(_ABSENT)}:
        project_header(key[len(_ABSENT):])  # noted as absent, replayed or not
    own_sure = tuple(any(r.gaps[i] == 1 for r in results) for i in range(len(own) + 1))
    found.own = (src, tuple(own), own_sure)
    for r in results:  # the file's own #defines where a pass surely compiles them
        for d, at in zip(own, r.gaps):
            if at == 1 and d.kind == "define" and d.macro is not None:
                found.from_headers |= {d.macro[0]}
    return found


def _directory(path: str) -> Path | None:
    try:
        p = Path(path)
        return p.parent if p.parent.is_dir() else None
    except (OSError, ValueError):
        return None


class _Pass:
    """One pass over the file's directives; ``branches[i]`` is the i-th branch's activity."""

    def __init__(self, macros: Macros, top_dir: Path | None, include_dirs: tuple[Path, ...] = ()) -> None:
        self.macros = macros
        self.top_dir = top_dir
        self.include_dirs = include_dirs  # the build's -I, searched after the includer's folder
        self.headers = 0  # headers entered, against MAX_HEADERS
        self.branches: list[tuple[int, int, int | None]] = []
        self.irrelevant: list[tuple[int, int]] = []
        self.gaps: list[int | None] = []  # the file's own: activity before each directive, and after
        self.guards: set[int] = set()  # where the bodies of the file's include guards start
        self.sources: dict[str, tuple[tuple, bytes]] = {}  # headers met: path -> (directives, bytes)

    def run(self, own: list[dv.Directive], path: str) -> "_Pass":
        self.macros.set(_SEEN + os.path.abspath(path), Macro("1"))  # a header including it
        self._directives(own, 1, self.top_dir, 0, record=True)
        return self

    def _directives(self, items: list[dv.Directive] | tuple[dv.Directive, ...], outer: int | None,
                    here: Path | None, depth: int, record: bool, header: str = "") -> None:
        """Run ``items`` (of the file itself when ``record``, else of the ``header`` at that
        path, whose surely compiled gaps are noted for ``Branches.provides``)."""
        # Each frame: [parent activity, taken so far, this branch's activity, body start]
        stack: list[list] = []
        active: int | None = outer
        sure: list[int] = []
        for i, d in enumerate(items):
            if record:
                self.gaps.append(active)
            elif active == 1:
                sure.append(i)
            k = d.kind
            if k in ("if", "ifdef", "ifndef"):
                cond = self._condition(d, active, record)
                if cond is None and k == "ifndef" and self._include_guard(items, i):
                    cond = 1
                    if record:
                        self.guards.add(d.end)
                now = _and(active, cond)
                stack.append([active, cond, now, d.end])
                active = now
            elif k in ("elif", "elifdef", "elifndef", "else"):
                if not stack:
                    continue
                frame = stack[-1]
                parent, taken, now, body = frame
                if record:
                    self.branches.append((body, d.start, now))
                if k == "else":
                    cond: int | None = 1
                else:
                    cond = self._condition(d, _and(parent, _not(taken)), record)
                frame[2] = _and(_and(parent, _not(taken)), cond)
                frame[1] = _or(taken, cond)
                frame[3] = d.end
                active = frame[2]
            elif k == "endif":
                if not stack:
                    continue
                parent, _, now, body = stack.pop()
                if record:
                    self.branches.append((body, d.start, now))
                active = parent
            elif k == "define":  # also where skipped: a name only defined there is undefined
                m = d.macro
                if m is not None:
                    self.macros.define(m[0], Macro(m[2], m[1]), active)
                    if active == 1 and not record:
                        self.macros.set(_PROVIDES + m[0], Macro("1"))
            elif k == "undef":
                m = d.macro
                if m is not None:
                    self.macros.undefine(m[0], active)
            elif k in ("include", "include_next") and active != 0 and depth < MAX_DEPTH:
                self._include(d, active, here, depth)
        if record:
            self.gaps.append(active)
            for parent, _, now, body in reversed(stack):  # unterminated: to the end of the file
                self.branches.append((body, 1 << 62, now))
        else:
            if active == 1:
                sure.append(len(items))
            if sure:
                self.macros.set(_GAPS + header, Macro(",".join(map(str, sure))))

    def _include_guard(self, items: list[dv.Directive] | tuple[dv.Directive, ...], i: int) -> bool:
        """``#ifndef X`` then ``#define X``, X never seen: an include guard, which holds the
        first time (no build passes a header's own guard with -D)."""
        m = items[i].macro
        after = items[i + 1] if i + 1 < len(items) else None
        return (m is not None and after is not None and after.kind == "define"
                and (after.macro or ("",))[0] == m[0] and self.macros.state(m[0]) is UNSEEN)

    def _condition(self, d: dv.Directive, active: int | None, record: bool) -> int | None:
        """The value of the directive's condition; not evaluated where the pass cannot reach."""
        if active == 0:
            if record:
                self.irrelevant.append((d.arg_start, d.end))
            return 0
        if record and self.macros.meant is not None:  # a ported project's own CUDA tests
            self.irrelevant.extend((d.arg_start + s, d.arg_start + e) for s, e in self.macros.meant_spans(d.arg))
        if d.kind in ("ifdef", "ifndef", "elifdef", "elifndef"):
            m = d.macro
            if m is None:
                return None
            v = self.macros.decide_defined(m[0])
            return v if v is None or d.kind in ("ifdef", "elifdef") else int(not v)
        result = self.macros.decide(d.arg)
        if record:
            self.irrelevant.extend((d.arg_start + s, d.arg_start + e) for s, e in result.irrelevant)
        if result.value is None:
            return None
        return int(bool(result.value))

    def _include(self, d: dv.Directive, active: int | None, here: Path | None, depth: int) -> None:
        name = d.include
        if name is None or self.headers >= MAX_HEADERS:
            return
        folders: tuple[Path | None, ...] = (here, self.top_dir, *self.include_dirs)
        if "/" in name and self.top_dir is not None:  # "ggml-cuda/common.cuh": a -I of the source root
            folders += tuple(self.top_dir.parents)[:MAX_UP]
        for folder in folders:
            if folder is None:
                continue
            key = os.path.normpath(os.path.join(folder, name))
            seen = _SEEN + key
            if self.macros.state(seen) is not UNSEEN:
                return  # included once: #pragma once and include guards, the common case
            found = project_header(key)
            if found is None:
                self.macros.set(_ABSENT + key, Macro("1"))  # a header appearing there changes the answer
                continue
            self.headers += 1
            self.sources[key] = found[0]
            self._enter(key, *found, active, depth)
            return

    def _enter(self, key: str, found: tuple[tuple[dv.Directive, ...], bytes],
               stamp: tuple[int, int], active: int | None, depth: int) -> None:
        """Process a header, or replay what it did last time the macros it reads were the same."""
        macros = self.macros
        memo_key = (key, stamp, active, self.top_dir, self.include_dirs)  # both decide what its includes are
        recording = bool(macros.recorders)  # inside another header's recording: its reads must be seen
        for reads, writes, dependent in _MEMO.get(memo_key, ()):
            if _reads_match(macros, reads, recording):
                macros.read_pass_dependent |= dependent
                macros.replay(writes)
                return
        recorder = Recorder()
        macros.recorders.append(recorder)
        try:
            macros.set(_SEEN + key, Macro("1"))
            self._directives(found[0], active, Path(key).parent, depth + 1, record=False, header=key)
        finally:
            macros.recorders.pop()
        entries = _MEMO.setdefault(memo_key, [])
        if len(entries) < MEMO_PER_HEADER:
            reads = tuple(recorder.reads.items())
            entries.append((reads, tuple(recorder.writes.items()),
                            any(n in macros.pass_dependent for n, _ in reads)))


def _reads_match(macros: Macros, reads: tuple[tuple[str, object], ...], recording: bool) -> bool:
    """Whether every name a memo entry read is in the same state now. A loop, not
    ``all()`` over a generator: this is the branch model's innermost test (~40 names per
    entry on ggml-cuda's headers), and an identical state (a replayed header sets the very
    objects it recorded) is told by identity before a dataclass comparison."""
    if recording:
        state = macros.state  # records the reads, as processing the header would
        for name, st in reads:
            if state(name) != st:
                return False
        return True
    get, pattern = macros.table.get, macros.undefined_pattern
    for name, st in reads:
        now = get(name)
        if now is None:
            now = _absent(pattern, name)
        if now is not st and now != st:
            return False
    return True


#: A header's surely compiled gaps, as the ``_GAPS`` pseudo-macro spells them ("0,3,7"): the
#: same few strings for every file that includes the header, parsed once each.
@lru_cache(maxsize=4096)
def _gap_set(body: str) -> frozenset[int]:
    return frozenset(int(g) for g in body.split(","))


#: (header, its mtime and size, activity, the folders its includes are looked for in after its
#: own: the first file's and -I) -> what processing it read and wrote, per distinct set of reads.
_MEMO: dict[tuple[str, tuple[int, int], int | None, Path | None, tuple[Path, ...]], list[tuple]] = {}
MEMO_PER_HEADER = 32
#: The pseudo-macro that records a header as included (so the memo sees it as a read).
_SEEN = "#include "
#: The pseudo-macro that records a name the project provides (``Branches.provides``).
_PROVIDES = "#provides "
#: The pseudo-macro that records which gaps of a header a pass surely compiles.
_GAPS = "#compiled "
#: The pseudo-macro that records a place an include was looked for and found no header
#: (before the one it found, or all of them), so a replayed memo entry notes it too.
_ABSENT = "#absent "


@lru_cache(maxsize=512)
def _header_cached(path: str, mtime_ns: int, size: int) -> tuple[tuple[dv.Directive, ...], bytes]:
    """A header's directives, and its bytes (for ``Branches.provides``)."""
    with open(path, "rb") as f:
        data = f.read(MAX_HEADER_BYTES)
    return tuple(dv.scan(data)), data


def _declares(path: str, data: bytes, items: tuple, name: str) -> frozenset[int]:
    """The gaps of a header where it declares ``name`` (``dv.declares``), once per name."""
    key = (path, hash(data), name)  # a bytes object keeps its hash: cheap after the first
    found = _DECLARES.get(key)
    if found is None:
        if len(_DECLARES) > 100_000:
            _DECLARES.clear()
        found = _DECLARES[key] = frozenset(dv.declares(data, items, name))
    return found


_DECLARES: dict[tuple[str, int, str], frozenset[int]] = {}


def project_header(path: str) -> tuple[tuple, tuple[int, int]] | None:
    """The directives and bytes of a project header and its (mtime, size), or None when it
    is not a readable regular file (a FIFO or a device would block or never end). Noted
    in the reads begun by ``begin_header_reads``: a file's findings depend on them."""
    found = _project_header(os.path.abspath(path))  # the caches outlive a chdir
    if _READS is not None:
        _READS[path] = found[1] if found is not None else None
    return found


#: The project headers read since ``begin_header_reads`` (path -> (mtime, size), None for a
#: place looked at that held no header), or None.
_READS: dict[str, tuple[int, int] | None] | None = None


def begin_header_reads() -> None:
    """Start noting the project headers read, for one file's analysis."""
    global _READS
    _READS = {}


#: ``end_header_reads``'s mtime and size for a place that held no header (``ABSENT``).
ABSENT = -1


def end_header_reads() -> tuple[tuple[str, int, int, str], ...]:
    """The headers read since ``begin_header_reads`` as (absolute path, mtime_ns, size,
    sha256 of the bytes read), and the places an include looked at first that held none as
    (absolute path, ``ABSENT``, ``ABSENT``, ""), sorted, and stop noting. Check's cache
    keeps them with a file's findings and misses when one changed, or a header appeared
    where there was none: its key covers the file's own bytes only."""
    global _READS
    reads, _READS = _READS or {}, None
    out = []
    for path, stamp in reads.items():
        found = _project_header(path)
        if stamp is None and found is None:
            out.append((os.path.abspath(path), ABSENT, ABSENT, ""))
        elif found is not None and found[1] == stamp:
            out.append((os.path.abspath(path), *stamp, _digest(path, *stamp)))
    return tuple(sorted(out))


@lru_cache(maxsize=4096)
def _digest(path: str, mtime_ns: int, size: int) -> str:
    """sha256 of the header's bytes as ``_header_cached`` read them, once per version."""
    found = _project_header(path)
    return hashlib.sha256(found[0][1] if found else b"").hexdigest()


@lru_cache(maxsize=4096)
def _project_header(path: str) -> tuple[tuple, tuple[int, int]] | None:
    """``project_header``, looked up once per process: every file of a tree includes the
    same few headers, in every pass."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_HEADER_BYTES:
            return None
        return _header_cached(path, st.st_mtime_ns, st.st_size), (st.st_mtime_ns, st.st_size)
    except (OSError, ValueError):
        return None


def _combine(results: list[_Pass]) -> Branches:
    """Never compiled = skipped by every pass (the branch lists line up: same directives)."""
    never = _never(results)
    irrelevant = [r.irrelevant for r in results]
    everywhere = _merge(irrelevant[0])
    for spans in irrelevant[1:]:
        everywhere = _intersect(everywhere, _merge(spans))
    skip = _merge(never + everywhere)
    return Branches(never, irrelevant, _skip=skip, _starts=[s for s, _ in skip])


def _never(results: list[_Pass]) -> list[tuple[int, int]]:
    return _merge([(start, end) for i, (start, end, _) in enumerate(results[0].branches)
                   if all(r.branches[i][2] == 0 for r in results)])


def _within(spans: list[tuple[int, int]], offset: int) -> bool:
    """Whether ``offset`` lies in one of ``spans`` (merged)."""
    i = bisect.bisect_right(spans, (offset, 1 << 63)) - 1
    return i >= 0 and offset < spans[i][1]


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` sorted, overlapping ones joined."""
    merged: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            if e > merged[-1][1]:
                merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    return merged


def _intersect(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The offsets in both of two merged span lists, merged."""
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            out.append((s, e))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def _and(a: int | None, b: int | None) -> int | None:
    if a == 0 or b == 0:
        return 0
    return None if a is None or b is None else 1


def _or(a: int | None, b: int | None) -> int | None:
    if a == 1 or b == 1:
        return 1
    return None if a is None or b is None else 0


def _not(a: int | None) -> int | None:
    return None if a is None else int(not a)
