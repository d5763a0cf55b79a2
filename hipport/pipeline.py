"""Files through the stages: read → pre-filter → parse/rewrite/rules (``analyze``) → result.

Used by convert, scan, check and deps. Workers only compute; they never write (the
writers in ``convert`` do, in the parent process). Results come back in input order
whatever the job count, streamed so memory stays bounded on very large trees.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from itertools import chain, islice
from pathlib import Path
from typing import TYPE_CHECKING

from hipport.edits import EditConflict, apply_ordered, ordered_edits, output_lines
from hipport.files import (FileError, SourceFile, discover, is_binary, looks_like_cuda, other_gpu_dialect,
                           read_bytes)
from hipport.findings import Finding, Severity
from hipport.options import Options
from hipport.preprocessor import model
from hipport.preprocessor.includers import (
    HEADER_SUFFIXES, CompileReach, Includers, Includes, cuda_only_headers, own_includes, reached,
)
from hipport.report.model import FileOutcome, Report
from hipport.rewrite.buildfiles import hip_name, kind_of as build_kind, transform as build_transform

if TYPE_CHECKING:
    from hipport.context import Context

#: Below this many files a process pool costs more than it saves.
POOL_THRESHOLD = 16
#: A larger source is an error, not processed: memory grows with the syntax tree and
#: the findings (16 MiB of dense code: about 22 s of CPU and 1.2 GB, tools/bounds.py), and
#: no real source is this big. parse.budget bounds what the parser may cost below it.
MAX_SOURCE_BYTES = 16 << 20


@dataclass
class FileResult:
    path: str  # as the user would write it (input path joined with the relative path)
    rel: str  # relative to its input root (for output trees)
    status: str  # converted | unchanged | skipped | error | other
    output: bytes | None = None  # new bytes when converted
    findings: list[Finding] = field(default_factory=list)
    rewrites: int = 0
    error: str | None = None
    note: str = ""  # e.g. "not valid UTF-8; bytes preserved"
    written_to: str = ""  # convert: the output file, when it is not the input
    source: SourceFile | None = None
    #: the file's own ``#include "…"`` and whether a HIP build compiles each (includers.py)
    includes: tuple[tuple[str, bool], ...] = ()
    #: parsed as CUDA (its own HIP build unit or a header of one), not passed over
    parsed: bool = False
    #: a CUDA-free header holding a construct a rule fixes in included headers too
    #: (``Rule.in_included_headers``): decided once the run's includers are known
    held: bool = False
    #: (line, col, name) of HP204/HP209 findings of a header that its includers' 64-lane wave
    #: makes moot (``warp.logical.for_wave64_includers``; ``collect`` decides); name: the
    #: constant an HP209 defines, which includers that never spell it leave alone ("" for HP204)
    for_includers: tuple[tuple[int, int, str], ...] = ()
    #: part of a bundled copy of a library (``Options.bundled_copies``): left as it is
    bundled: bool = False
    #: the project headers its analysis read: (absolute path, mtime_ns, size, sha256), so
    #: that check's cache can tell when a header, not the file, changed its findings
    headers: tuple[tuple[str, int, int, str], ...] = ()


def includes_of(data: bytes, path: str, options: Options) -> Includes:
    """The includes ``process`` records for the source ``data`` at ``path``
    (``FileResult.includes``), without running its rules: a file the CUDA pre-filter passes
    over has them all live; in another, the branch model decides (``own_includes``)."""
    if not looks_like_cuda(data) or other_gpu_dialect(data):
        return own_includes(data, None)
    return own_includes(data, lambda: model(data, path, options))


def process(sf: SourceFile, options: Options) -> FileResult:
    """One file through every stage; never raises for a bad file."""
    display = str(sf.path)
    rel = sf.rel.as_posix()
    result = FileResult(path=display, rel=hip_name(rel) if options.rename else rel, status="other",
                        source=sf)
    build = not sf.is_source and build_kind(sf.path) is not None  # CMake, Make, setup.py
    if not sf.is_source and not build:
        return result
    if options.bundled_copies and sf.is_source and (copy := _bundled_copy(str(sf.path), options)):
        result.status, result.bundled = "unchanged", True
        result.note = f"part of the bundled library copy {copy}: left as it is (its ROCm port replaces it)"
        return result
    try:
        data = read_bytes(sf.path)
    except OSError as e:
        result.status, result.error = "error", f"cannot read: {e.strerror or e}"
        return result
    if len(data) > MAX_SOURCE_BYTES:
        result.status = "error"
        result.error = (f"{len(data):,} bytes, over the bound of {MAX_SOURCE_BYTES:,} bytes "
                        "for a source: not processed")
        return result
    if is_binary(data):
        result.status, result.note = "skipped", "binary file (NUL bytes); left as it is"
        return result
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        result.note = f"not valid UTF-8 at byte {e.start}; other bytes converted, these preserved"
    if not build and (not looks_like_cuda(data) or other_gpu_dialect(data)):
        result.status = "unchanged"
        result.includes = own_includes(data, None)  # a host file's includes are all live
        result.held = sf.path.suffix.lower() in HEADER_SUFFIXES and any(
            any(b in data for b in needles) for needles in _included_header_rules(options).values())
        return result
    return _transformed(result, data, options, build=build)


def _transformed(result: FileResult, data: bytes, options: Options, *, build: bool = False) -> FileResult:
    """``result`` with ``data`` (its file's bytes) through the rewriters and rules, as a build
    file when ``build``: output, findings, rewrites and status set. A rewriter conflict or an
    exceeded parse budget is the file's error, never an exception (``process`` and
    ``_as_included_header`` both come here)."""
    from hipport.parse import ParseBudgetExceeded  # (tree-sitter loads only for a source)
    from hipport.preprocessor.branches import begin_header_reads, end_header_reads

    begin_header_reads()
    try:
        if build:
            new, result.findings, result.rewrites = build_transform(data, result.path, options)
        else:
            new, result.findings, result.rewrites, result.includes, result.for_includers = \
                _transform(data, result.path, options)
    except EditConflict as e:  # a rewriter bug: report it, keep the file as it was
        result.status, result.error = "error", f"internal: {e}"
        return result
    except ParseBudgetExceeded as e:
        result.status, result.error = "error", str(e)
        return result
    finally:
        result.headers = end_header_reads()
    result.parsed = not build
    if new != data:
        result.status, result.output = "converted", new
    else:
        result.status = "unchanged"
    return result


def _included_header_rules(options: Options) -> dict[str, tuple[bytes, ...]]:
    """The rules this run reports that also run on CUDA-free headers a CUDA unit
    includes, with the bytes that call for them (``Rule.in_included_headers``)."""
    return {code: needles for code, needles in _in_included_headers() if options.reports(code)}


@lru_cache(maxsize=1)
def _in_included_headers() -> tuple[tuple[str, tuple[bytes, ...]], ...]:
    from hipport import rules  # deferred: only a CUDA-free header asks

    return tuple((code, r.in_included_headers) for code, r in rules.load().rules.items() if r.in_included_headers)


def with_included_headers(results: Iterable[FileResult], options: Options,
                          others: Callable[[list[FileResult]], Iterable[FileResult]] | None = None
                          ) -> Iterator[FileResult]:
    """``results`` as they come, except the held CUDA-free headers (``FileResult.held``):
    those come last, once every includer is known. One that a parsed file of the run
    includes (directly or through other files, where the HIP build compiles the include)
    is compiled by the HIP build, so the rules of ``Rule.in_included_headers`` run on it
    (and convert applies their fixes); the others stay as they are.

    ``others`` (check: the project's files the run was not given) is asked, with the held
    headers no file of the run reaches, for the results of more files that may include
    them; their includes count as the run's, their results are not yielded."""
    held: list[FileResult] = []
    includes: list[tuple[str, tuple[tuple[str, bool], ...]]] = []
    roots: list[str] = []

    def note(r: FileResult) -> None:
        if r.includes:
            includes.append((r.path, r.includes))
        if r.parsed:
            roots.append(r.path)

    for r in results:
        note(r)
        if r.held:
            held.append(r)
        else:
            yield r
    if not held:
        return
    compiled = reached(roots, includes, [r.path for r in held], options.include_dirs)
    unreached = [r for r in held if r.path not in compiled]
    if others is not None and unreached:
        for r in others(unreached):
            note(r)
        compiled |= reached(roots, includes, [r.path for r in unreached], options.include_dirs)
    for r in held:
        r.held = False
        yield _as_included_header(r, options) if r.path in compiled else r


def _as_included_header(result: FileResult, options: Options) -> FileResult:
    """A held header run through the rules of ``Rule.in_included_headers`` alone."""
    try:
        data = read_bytes(result.source.path)
    except OSError as e:
        result.status, result.error = "error", f"cannot read: {e.strerror or e}"
        return result
    return _transformed(result, data, options.with_(select=frozenset(_included_header_rules(options))))


def transform(data: bytes, path: str, options: Options) -> tuple[bytes, list[Finding], int]:
    """Bytes in, (converted bytes, sorted findings, rewrite count) out; no I/O.

    ``path`` only names the file in findings (and tells ``.cu`` files apart). Raises
    EditConflict when two rewriters disagree about the same bytes, ParseBudgetExceeded when
    parsing the source costs more than a source of its size may (``parse.budget``).
    """
    return _transform(data, path, options)[:3]


def _transform(data: bytes, path: str, options: Options
               ) -> tuple[bytes, list[Finding], int, tuple[tuple[str, bool], ...], tuple[tuple[int, int], ...]]:
    """``transform``, the file's own includes with whether the HIP build compiles each, and
    the findings its includers decide (``FileResult.for_includers``)."""
    from hipport.analyze import analyze  # deferred: tree-sitter loads only when needed
    from hipport.parse import budget

    with budget(len(data)):
        ctx = analyze(data, path, options)
    if options.engine == "clang":  # deferred too: libclang loads only when asked for
        from hipport.deep import add_deep_findings

        add_deep_findings(ctx, Path(path))
    ordered = ordered_edits(ctx.edits) if ctx.edits else []
    new = apply_ordered(data, ordered) if ordered else data
    findings = ctx.findings
    if options.apply_fixes and new != data:  # convert: the line each finding has in the output
        at = output_lines(data, ctx.edits, new, [(f.line, f.col) for f in findings],
                          ordered=ordered, starts=ctx.line_starts)
        findings = [f.at_output_line(n) for f, n in zip(findings, at)]
    includes = own_includes(data, lambda: ctx.branches)
    return new, sorted(findings, key=Finding.sort_key), ctx.rewrites, includes, _for_includers(ctx)


def _for_includers(ctx: "Context") -> tuple[tuple[int, int, str], ...]:
    """``deferred_to_includers`` when the warp rules were loaded (they are, with any rule)."""
    from hipport.rules.warp.logical import deferred_to_includers

    return deferred_to_includers(ctx)


def discovery_result(item: FileError) -> FileResult:
    """What discovery could not hand on: an error result, or a skipped one naming why."""
    if item.skipped:
        return FileResult(path=str(item.path), rel=item.path.name, status="skipped",
                          note=item.message)
    return FileResult(path=str(item.path), rel=item.path.name, status="error", error=item.message)


def _process_item(item: SourceFile | FileError, options: Options) -> FileResult:
    """A discovered file through the stages, or a discovery error as its result."""
    if isinstance(item, FileError):
        return discovery_result(item)
    return process(item, options)


def _lost(item: SourceFile | FileError, why: str) -> FileResult:
    """The result of a file whose worker died before answering (a native crash)."""
    path = item.path
    rel = item.rel.as_posix() if isinstance(item, SourceFile) else path.name
    return FileResult(path=str(path), rel=rel, status="error", error=f"internal: {why}",
                      source=item if isinstance(item, SourceFile) else None)


def effective_jobs(options: Options) -> int:
    """``--jobs``, or for 0 one worker per CPU this process may use (hipport.cpus)."""
    if options.jobs > 0:
        return options.jobs
    from hipport.cpus import usable_cpus

    return usable_cpus()


def run(items: Iterable[SourceFile | FileError], options: Options) -> Iterator[FileResult]:
    """Process items in order, streamed; in a pool when there are many and jobs > 1.

    ``items`` is consumed lazily (discovery of a 100,000-file tree is never held as a
    list); only the first POOL_THRESHOLD are looked at to choose between in-process and
    pool.
    """
    items = iter(items)
    head = list(islice(items, POOL_THRESHOLD))
    jobs = effective_jobs(options)
    if jobs <= 1 or len(head) < POOL_THRESHOLD:
        for item in chain(head, items):
            yield _process_item(item, options)
        return
    from hipport.analyze import prepare
    from hipport.workers import ordered_map

    if hasattr(os, "fork"):
        prepare(options)  # once here rather than in every worker: forked workers inherit it
    pending = chain(head, items)
    yield from ordered_map(partial(_process_item, options=options), pending, jobs, _lost)
    if next(pending, None) is not None:  # never silently fewer results than files
        raise RuntimeError("internal: the worker pool ended before the input did")


def run_paths(
    paths: Iterable[Path], options: Options, *, avoid: Path | None = None
) -> Iterator[FileResult]:
    """Discover and process, streamed; discovery errors come back as error results in their
    place, and held headers after the rest (``with_included_headers``). The run's sources
    are read once before (``tree_definitions``)."""
    paths = list(paths)
    options = tree_definitions(discover(paths, options, avoid=avoid), options)
    yield from with_included_headers(run(discover(paths, options, avoid=avoid), options), options)


def tree_definitions(items: Iterable[SourceFile | FileError], options: Options) -> Options:
    """``options`` with what the run's sources define of the libraries a tree can carry a
    copy of (``families.toml``: ``bundled``, CUB): ``bundled_copies``, each directory under
    an input named for the library (``cub``) that holds a source defining its names (CUB's
    util_arch.cuh: ``#define CUB_PTX_ARCH``), and ``tree_macros``, the names other sources ``#define`` or
    ``#undef``, which are then the tree's own in every file. Rewritten file by file, relion
    3.1.3's CUB copy kept ``#define CUB_PTX_ARCH`` while its other headers tested
    ``HIPCUB_ARCH``. A pass over the sources before the run, since a file using a name may
    come before the file defining it; a read costs little beside a parse (the scan jumps
    from ``#`` to ``#``)."""
    from hipport.names import bundled_names, defined_names

    libraries = bundled_names()
    found: set[bytes] = set()
    copies: set[str] = set(options.bundled_copies)
    for item in items:
        if not isinstance(item, SourceFile) or not item.is_source:
            continue
        try:
            data = read_bytes(item.path)
        except OSError:
            continue  # the run reports it
        if len(data) > MAX_SOURCE_BYTES:
            continue
        for directory, names in libraries.items():
            defined = defined_names(data, names)
            if not defined:
                continue
            # below the input root only: a run given CUB's own tree ports CUB itself
            dirs = item.rel.parts[:-1]
            if directory in dirs:
                inside = len(dirs) - dirs[::-1].index(directory)  # components of rel up to the copy
                copies.add(str(Path(*item.path.parts[:len(item.path.parts) - len(item.rel.parts) + inside])))
            else:
                found |= defined
    if not found and not copies:
        return options
    return options.with_(tree_macros=options.tree_macros | {n.decode() for n in found},
                         bundled_copies=tuple(sorted(copies)))


def enclosing_copies(items: list[SourceFile | FileError], options: Options) -> list[SourceFile]:
    """The files of the directory a given file lies in that could be a bundled library copy
    (a ``cub`` below the file's repository root, the innermost), rooted at that repository, for
    ``tree_definitions`` to judge (``check``: pre-commit names the staged cub/block.cuh without the
    util_arch.cuh that makes ``cub/`` a copy). Only that directory is read, not the
    repository; outside a repository only the given files count, as for held headers."""
    from hipport.gitignore import repository_root
    from hipport.names import bundled_names

    libraries = bundled_names()
    dirs: dict[Path, Path] = {}  # the directory -> its path from the repository root
    for item in items:
        if not isinstance(item, SourceFile) or item.rel.parent != Path("."):
            continue  # a file under a directory input: the pass sees that directory already
        top = repository_root(os.path.dirname(os.path.abspath(item.path)))
        if top is None:
            continue
        parts = Path(os.path.abspath(item.path)).relative_to(top).parts
        if inside := [i for i, part in enumerate(parts[:-1]) if part in libraries]:
            dirs[Path(top, *parts[:inside[-1] + 1])] = Path(*parts[:inside[-1] + 1])
    return [SourceFile(f.path, at / f.rel, f.root, f.is_source)
            for d, at in sorted(dirs.items()) for f in discover([d], options) if isinstance(f, SourceFile)]


def _bundled_copy(path: str, options: Options) -> str | None:
    """The bundled library copy (``Options.bundled_copies``) that file ``path`` lies in, each
    spelled as it may be (check finds a staged file's copy from its repository's root)."""
    path = os.path.abspath(path)
    return next((c for c in options.bundled_copies if path.startswith(os.path.join(os.path.abspath(c), ""))), None)


def scan_paths(paths: Iterable[Path], options: Options) -> Iterator[FileResult]:
    """Findings only (no fixes applied): what ``scan``, ``check`` and ``deps`` use."""
    yield from run_paths(paths, options.with_(apply_fixes=False))


def collect(results: Iterable[FileResult], options: Options, command: str,
            *, with_rules: bool = True, includers: Iterable[tuple[str, Includes]] = ()) -> Report:
    """Fold results into a Report (findings, per-file outcomes, the rules that fired).

    ``with_rules=False`` leaves ``report.rules`` empty: loading the registry imports every
    rule module, which a cached ``check`` (compiler-style lines only) need not pay for.
    ``includers``: the includes of files not in ``results`` that include its headers
    (check: the repository's, ``repository.Repositories``): they judge which headers a HIP
    build compiles and which includers name a 64-lane wave, as the run's own files do.
    """
    from hipport import __version__
    from hipport.gpus import archs_of, describe

    report = Report(tool_version=__version__, target=options.rocm, command=command,
                    gpus=describe(archs_of(options)))
    includes, deferred = [], {}
    for r in results:
        report.findings.extend(r.findings)
        if r.includes:
            includes.append((r.path, r.includes))
        if r.for_includers:
            deferred[r.path] = set(r.for_includers)
        # Only convert converts; elsewhere such a file is one hipport would change.
        status = r.status if command == "convert" or r.status != "converted" else "would convert"
        report.files.append(FileOutcome(r.path, status, r.rewrites, r.error or r.note, r.written_to))
    includes.extend(includers)
    _drop_cuda_only_headers(report, includes, options)
    if deferred:
        _drop_logical_in_wave64_includers(report, includes, deferred, options)
    if not with_rules:
        return report
    from hipport import rules

    registry = rules.load().rules
    report.rules = {c: registry[c] for c in sorted({f.code for f in report.findings}) if c in registry}
    return report


def _drop_cuda_only_headers(report: Report, includes: list, options: Options) -> None:
    """Findings in a header the run's files include only where a HIP build does not
    compile it (``preprocessor.includers``): dropped, or info with ``--all-branches``."""
    hidden = cuda_only_headers({f.path for f in report.findings if not f.fixed}, includes, options.include_dirs)
    if not hidden:
        return
    kept = []
    for f in report.findings:
        where = hidden.get(f.path)
        if where is None or f.fixed:
            kept.append(f)
        elif options.all_branches:
            kept.append(replace(f, severity=Severity.INFO, message=(
                f"not compiled by the HIP build (included only {where}): {f.message}")))
    report.findings = kept


#: How many levels of includers answer for a header (a header included only by headers).
MAX_INCLUDER_LEVELS = 4


def _drop_logical_in_wave64_includers(report: Report, includes: list, deferred: dict, options: Options) -> None:
    """HP204 and HP209 findings of a header that every file of the run including it, where a
    HIP build compiles the include, answers with a 64-lane wave (``warp.logical``): the
    32-lane groups and a WARP_SIZE of 32 are the project's choice there. An includer that is
    itself a header naming no wave answers through its own includers, up to
    ``MAX_INCLUDER_LEVELS`` (DeepSpeed's context.h is included by general_kernels.h, which
    the transformer's .cu files include after custom_cuda_layers.h). For an HP209, a unit
    whose compile never spells the constant (``includers.CompileReach``) answers too:
    its value changes nothing there (transformer/general_kernels.cu compiles context.h and
    uses none of its WARP_SIZE), provided the header spells the name only once, in its
    definition. A header no file of the run includes keeps them, and so does one on an
    include cycle. An HP334 of a header goes when each includer may bring the C header first
    (``host.brought_by_includers``)."""
    from hipport.mapping import load_table
    from hipport.rules.released_headers.host import BROUGHT, brought_by_includers
    from hipport.rules.warp.logical import UNLESS_INCLUDED, includer_knows_wave64

    view = lru_cache(maxsize=1)(lambda: load_table().view(options.rocm, roc=options.roc,
                                                          experimental=options.experimental))

    names: dict[str, bool] = {}
    answers: dict[tuple[str, int, str, str], bool] = {}
    reach = lru_cache(maxsize=1)(lambda: CompileReach(includes, options.include_dirs))
    index = Includers(includes, options.include_dirs)

    def answered(path: str, level: int, header: str, word: str) -> bool:
        """Every compile of ``path`` in the run names the wave, or (``word`` given) never
        spells ``word`` outside ``header`` (``path`` an includer at ``level``). Kept per
        level: an answer cut off by ``MAX_INCLUDER_LEVELS`` deep in one header's chain is
        no answer for a header the same includer includes directly. A cycle ends at the
        bound, unanswered, as its headers name no wave."""
        key = (path, level, header, word)
        found = answers.get(key)
        if found is None:
            if path not in names:
                names[path] = includer_knows_wave64(read_bytes(Path(path)), path, options)
            found = names[path]
            if not found and path.endswith(HEADER_SUFFIXES):
                if level < MAX_INCLUDER_LEVELS:
                    ups = index.of(path)
                    found = bool(ups) and all(answered(u, level + 1, header, word) for u in ups)
            elif not found and word:
                found = not reach().spelled(path, word, header)
            answers[key] = found
        return found

    moot: dict[str, set[tuple[int, int]]] = {}
    for header, entries in deferred.items():
        includers = index.of(header)
        if not includers:  # a template of a source no file includes: never instantiated
            moot[header] = {(line, col) for line, col, name in entries if name == UNLESS_INCLUDED}
            continue
        for wanted in {name for _, _, name in entries if name.startswith(BROUGHT)}:
            try:
                if brought_by_includers(header, wanted[len(BROUGHT):], index, options, view()):
                    moot.setdefault(header, set()).update((line, col) for line, col, name in entries if name == wanted)
            except OSError:
                pass  # an includer gone since: judged as it is
        # included: its includers may instantiate a template; HP334's were answered above
        entries = {e for e in entries if e[2] != UNLESS_INCLUDED and not e[2].startswith(BROUGHT)}
        try:
            for word in {name for _, _, name in entries}:
                if word and len(re.findall(rb"\b%s\b" % re.escape(word.encode()), read_bytes(Path(header)))) != 1:
                    word_used = ""  # the header uses its constant itself: only the wave answers
                else:
                    word_used = word
                if all(answered(p, 1, header, word_used) for p in includers):
                    moot.setdefault(header, set()).update((line, col) for line, col, name in entries if name == word)
        except OSError:
            continue  # an includer gone since: judged as it is
    if moot:
        report.findings = [f for f in report.findings  # a fix convert made stays listed
                           if f.fixed or f.path not in moot or (f.line, f.col) not in moot[f.path]]


def exit_status(report: Report, fail_on: Severity | None) -> int:
    """2 when any file failed, 1 when asked to fail on findings and one is at or above, else 0."""
    if report.errors:
        return 2
    if fail_on is not None and any(f.severity >= fail_on and not f.fixed for f in report.findings):
        return 1
    return 0
