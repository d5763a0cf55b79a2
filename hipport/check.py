"""``hipport check``: the commit gate for mixed CUDA/HIP codebases.

Three things on top of the scan pipeline, each small and separately testable:

* **output** — one compiler-style line per finding (``path:line:col: HP201 high: msg [slug]``)
  so editors, CI logs and pre-commit show it well;
* **baseline** — findings recorded once (``--write-baseline``) are let through later. A
  finding is matched by file, code, message and the text of its source line (whitespace
  collapsed), never by line number, so code moving up or down does not break the match;
  duplicates are counted, so two recorded findings let two through, not three;
* **cache** — a file's findings stored under a hash of everything that decides them: its
  bytes and path, the options (``Options.cache_key()``) and a fingerprint of the installed
  hipport (version plus the size and mtime of every code and data file, and of the
  tree-sitter grammar). The project headers the analysis read (``FileResult.headers``:
  path, mtime, size and sha256), and the places an include looked at before the header it
  found, are kept in the entry; a header changed or gone, or one appearing at such a place,
  is a miss, so an entry is never stale; the directory is safe to delete. Entries are JSON authenticated with
  an HMAC under a per-user key kept outside the cache folder (``hipport.cachefile``), so
  a planted or copied entry is a miss; they are written atomically, validated on reading
  (anything doubtful is a miss, never a pass), and pruned: unused for 30 days, or beyond
  50,000 entries, they go.

Suppressions, HIP guards, ignore lists and severity overrides are applied by the rules
themselves (``hipport.context``), exactly as for ``scan``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hipport import __version__
from hipport.datafiles import cache_dir
from hipport.findings import Effort, Finding, Severity
from hipport.options import Options

if TYPE_CHECKING:
    from hipport.files import FileError, SourceFile
    from hipport.pipeline import FileResult
    from hipport.preprocessor.includers import Includes
    from hipport.report.model import Report

BASELINE_FORMAT = 1
#: Bumped when the layout of a cache entry changes; part of every key.
CACHE_FORMAT = "check-9"  # 5: for_includers; 6: parsed, held (the included-header pass); 7: headers; 8: absent ones; 9: for_includers names


class BaselineError(ValueError):
    """A baseline file that cannot be read or written; exit status 2."""


def format_finding(f: Finding) -> str:
    """``path:line:col: CODE severity: message [slug]`` — the shape compilers use."""
    return f"{f.path}:{f.line}:{f.col}: {f.code} {f.severity}: {f.message} [{f.slug}]"


#: GitHub workflow command per severity: blocker/high fail a check run's annotations as
#: errors, medium warns, low and info are notices.
_GITHUB_LEVEL = {Severity.BLOCKER: "error", Severity.HIGH: "error", Severity.MEDIUM: "warning",
                 Severity.LOW: "notice", Severity.INFO: "notice"}


def format_github(f: Finding) -> str:
    """A GitHub Actions annotation (``::error file=…,line=…::message``), so a CI job shows
    findings on the pull request's diff without a SARIF upload."""
    props = ",".join(f"{k}={_github_escape(str(v), prop=True)}" for k, v in (
        ("file", f.path), ("line", f.line), ("col", f.col), ("endLine", f.end_line),
        ("endColumn", f.end_col), ("title", f"{f.code} {f.slug}")))
    return f"::{_GITHUB_LEVEL[f.severity]} {props}::{_github_escape(f'{f.code} {f.severity}: {f.message}')}"


def _github_escape(text: str, prop: bool = False) -> str:
    """GitHub's escaping of workflow-command data (``%``, CR, LF) and properties (also ``:`` ``,``)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


# -- baseline ------------------------------------------------------------------------

BaselineKey = tuple[str, str, str, str]  # (path relative to the baseline, code, message, source)


def _baseline_key(f: Finding, root: Path) -> BaselineKey:
    """What identifies a finding across edits elsewhere in the file: not its line number."""
    p = Path(f.path).resolve()
    try:
        rel = p.relative_to(root).as_posix()
    except ValueError:
        rel = p.as_posix()
    return (rel, f.code, f.message, " ".join(f.source_line.split()))


def write_baseline(path: Path, findings: Iterable[Finding]) -> int:
    """Record ``findings`` in ``path`` (paths relative to its directory); returns how many.

    Relative paths make the baseline valid whatever directory the gate later runs from.
    The file is sorted so that regenerating it gives a readable diff.
    """
    from hipport.files import atomic_write

    root = path.resolve().parent
    counts = Counter(_baseline_key(f, root) for f in findings)
    entries = [
        {"path": p, "code": c, "message": m, "source": s, "count": n}
        for (p, c, m, s), n in sorted(counts.items())
    ]
    data = {"hipport-baseline": BASELINE_FORMAT, "tool-version": __version__, "findings": entries}
    try:
        atomic_write(path, (json.dumps(data, indent=2) + "\n").encode("utf-8"),
                     mode_from=path if path.exists() else None)
    except OSError as e:
        raise BaselineError(f"{path}: cannot write baseline: {e.strerror or e}") from e
    return sum(counts.values())


def read_baseline(path: Path) -> Counter[BaselineKey]:
    """The multiset of recorded findings; BaselineError names the file when it is unusable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: no such baseline (create it with --write-baseline)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise BaselineError(f"{path}: cannot read baseline: {e}") from e
    except json.JSONDecodeError as e:
        raise BaselineError(f"{path}: not a hipport baseline (invalid JSON: {e})") from e
    if not isinstance(data, dict) or data.get("hipport-baseline") != BASELINE_FORMAT:
        raise BaselineError(f"{path}: not a hipport baseline (format {BASELINE_FORMAT} expected)")
    out: Counter[BaselineKey] = Counter()
    try:
        for e in data["findings"]:
            out[(e["path"], e["code"], e["message"], e["source"])] += int(e.get("count", 1))
    except (KeyError, TypeError, ValueError) as e:
        raise BaselineError(f"{path}: malformed baseline entry: {e!r}") from e
    return out


def split_baselined(
    findings: Iterable[Finding], recorded: Counter[BaselineKey], baseline_path: Path
) -> tuple[list[Finding], list[Finding]]:
    """(new, baselined): each recorded entry lets through as many findings as its count."""
    root = baseline_path.resolve().parent
    left = Counter(recorded)
    new: list[Finding] = []
    old: list[Finding] = []
    for f in sorted(findings, key=Finding.sort_key):
        key = _baseline_key(f, root)
        if left[key] > 0:
            left[key] -= 1
            old.append(f)
        else:
            new.append(f)
    return new, old


# -- cache ---------------------------------------------------------------------------

@lru_cache(maxsize=1)
def tool_fingerprint() -> str:
    """A digest that changes whenever installed code or data that decides findings changes.

    Stat-based (relative path, size, mtime) rather than content-based: it costs a few
    directory listings instead of reading megabytes of mapping tables on every commit, and
    any reinstall or edit rewrites the files it covers.
    """
    from importlib.util import find_spec

    from hipport.datafiles import mappings

    roots: list[str] = [str(mappings())]
    for package in ("hipport", "tree_sitter", "tree_sitter_cuda"):
        spec = find_spec(package)
        roots += list(spec.submodule_search_locations or []) if spec else [f"<no {package}>"]
    return tree_digest(roots, salt=f"{CACHE_FORMAT}\0{__version__}")


def tree_digest(roots: Iterable[str], salt: str = "") -> str:
    """sha256 over (root, relative path, size, mtime) of every file under ``roots``."""
    h = hashlib.sha256(salt.encode())
    for root in roots:
        h.update(f"{root}\n".encode())
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                st = os.stat(full)
                h.update(f"{os.path.relpath(full, root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _finding_to_json(f: Finding) -> dict:
    d = {fl.name: getattr(f, fl.name) for fl in fields(Finding)}
    d["severity"], d["effort"] = int(f.severity), int(f.effort)
    return d


#: Each Finding field and the JSON type its value must have in a cache entry.
_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    fl.name: int if fl.name in ("severity", "effort") else {"int": int, "str": str, "bool": bool}[str(fl.type)]
    for fl in fields(Finding)
}
_STATUSES = frozenset({"unchanged", "converted", "skipped", "other"})


def _finding_from_json(d: Any) -> Finding:
    """A Finding from an entry's dict; ValueError for anything but exactly its fields."""
    if not isinstance(d, dict) or set(d) != set(_FIELD_TYPES):
        raise ValueError("not a finding")
    for name, kind in _FIELD_TYPES.items():
        if not isinstance(d[name], kind) or (kind is int and isinstance(d[name], bool)):
            raise ValueError(f"finding field {name}")
    return Finding(**{**d, "severity": Severity(d["severity"]), "effort": Effort(d["effort"])})


class Cache:
    """Per-file check results on disk, keyed so that a hit is always correct.

    Entries are ``hipport.cachefile`` documents (JSON under this user's HMAC key, read
    only from regular files of this user inside the folder, at most MAX_ENTRY_BYTES),
    validated field by field: anything else is a miss and the file is scanned, so a
    broken, edited, planted or copied entry can cost time but never pass the gate with
    findings removed. A hit refreshes the entry's time, which ``prune`` goes by. Without
    a usable key (``secret``, by default this user's) nothing is read or written.
    """

    def __init__(self, root: Path, options: Options, secret: bytes | None = None) -> None:
        from hipport.cachefile import secret_key

        self.root = root
        self._secret = secret if secret is not None else secret_key(root)
        self.salt(options)
        #: header record -> unchanged, as ``_header_unchanged`` found it in this run
        self._headers: dict[tuple[str, int, int, str], bool] = {}

    def salt(self, options: Options) -> None:
        """Key entries by ``options``: ``check_paths`` calls it again once the tree pass has
        filled ``bundled_copies``/``tree_macros``, on which a file's findings depend."""
        self._salt = f"{tool_fingerprint()}\0{options.cache_key()}\0".encode()

    def key(self, path: str, data: bytes) -> str:
        h = hashlib.sha256(self._salt)
        h.update(path.encode("utf-8", "surrogateescape") + b"\0")
        h.update(data)
        return h.hexdigest()

    def _file(self, key: str) -> Path:
        return self.root / CACHE_FORMAT / key[:2] / f"{key[2:]}.json"

    def get(self, key: str, path: str, rel: str) -> "FileResult | None":
        """The stored result, or None on a miss or an entry that cannot be trusted."""
        from hipport.cachefile import load
        from hipport.pipeline import FileResult

        if self._secret is None:
            return None
        file = self._file(key)
        entry = load(file, self.root, CACHE_FORMAT, self._secret, MAX_ENTRY_BYTES)
        try:
            if not isinstance(entry, dict) or entry.get("key") != key \
                    or entry.get("status") not in _STATUSES \
                    or not isinstance(entry.get("findings"), list) \
                    or not isinstance(entry.get("note"), str) \
                    or type(entry.get("rewrites")) is not int:
                return None
            findings = [_finding_from_json(d) for d in entry["findings"]]
            includes = tuple((str(name), bool(live)) for name, live in entry["includes"]
                             if isinstance(name, str) and isinstance(live, bool))
            for_includers = tuple((line, col, name) for line, col, name in entry["for_includers"]
                                  if type(line) is int and type(col) is int and type(name) is str)
            parsed, held = entry["parsed"], entry["held"]
            if type(parsed) is not bool or type(held) is not bool:
                return None
            headers = tuple(self._header(h) for h in entry["headers"])
            if not all(self._header_unchanged(h) for h in headers):
                return None
        except (ValueError, TypeError, KeyError):
            return None
        try:
            os.utime(file)
        except OSError:
            pass
        return FileResult(path=path, rel=rel, status=entry["status"], findings=findings,
                          rewrites=entry["rewrites"], note=entry["note"], includes=includes,
                          for_includers=for_includers, parsed=parsed, held=held, headers=headers)

    @staticmethod
    def _header(h: Any) -> tuple[str, int, int, str]:
        """An entry's record of a header read, checked; ValueError for anything else."""
        if not isinstance(h, list) or len(h) != 4 or not isinstance(h[0], str) \
                or type(h[1]) is not int or type(h[2]) is not int or not isinstance(h[3], str):
            raise ValueError("not a header record")
        return h[0], h[1], h[2], h[3]

    def _header_unchanged(self, h: tuple[str, int, int, str]) -> bool:
        """Whether a header an entry's analysis read still has the bytes it read: the same
        (mtime, size) answers without reading it; another mtime, the same size, is read and
        hashed (a checkout rewrites unchanged files). A place the include search tried
        before the header it found (``branches.ABSENT``) must still hold none. Once per
        header and run."""
        from hipport.preprocessor.branches import ABSENT, MAX_HEADER_BYTES

        found = self._headers.get(h)
        if found is None:
            path, mtime_ns, size, digest = h
            try:
                st = os.stat(path)
                if mtime_ns == ABSENT:  # a place the include search tried first: still no header there
                    found = not stat.S_ISREG(st.st_mode) or st.st_size > MAX_HEADER_BYTES
                else:
                    found = stat.S_ISREG(st.st_mode) and st.st_size == size and (
                        st.st_mtime_ns == mtime_ns or _file_digest(path) == digest)
            except OSError:
                found = mtime_ns == ABSENT
            self._headers[h] = found
        return found

    def put(self, key: str, result: "FileResult") -> None:
        """Store a result; a cache that cannot be written only costs speed, never the run.
        Now and then (once a day) the folder is pruned."""
        from hipport.cachefile import write_entry

        if self._secret is None:
            return
        entry = {"key": key, "status": result.status, "rewrites": result.rewrites,
                 "note": result.note, "findings": [_finding_to_json(f) for f in result.findings],
                 "includes": [list(i) for i in result.includes],
                 "for_includers": [list(p) for p in result.for_includers],
                 "parsed": result.parsed, "held": result.held,
                 "headers": [list(h) for h in result.headers]}
        if write_entry(self._file(key), CACHE_FORMAT, entry, self._secret):
            prune_now_and_then(self.root)


def _file_digest(path: str) -> str:
    """sha256 of a file's bytes, as ``branches.end_header_reads`` records a header's."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


#: An entry larger than this is not read (a file's findings take a few KB).
MAX_ENTRY_BYTES = 4 << 20
#: Pruning: entries unused for this long go, and beyond this many the least recently used.
MAX_AGE_DAYS = 30
MAX_ENTRIES = 50_000
#: How often ``put`` prunes, at most.
PRUNE_EVERY_SECONDS = 86400


def prune_now_and_then(root: Path) -> None:
    """``prune`` when the last one is a day old (the stamp file's time says when)."""
    stamp = root / CACHE_FORMAT / ".pruned"
    try:
        if time.time() - stamp.stat().st_mtime < PRUNE_EVERY_SECONDS:
            return
    except OSError:
        pass
    try:
        stamp.touch()
    except OSError:
        return
    prune(root)


def prune(root: Path, *, max_entries: int = MAX_ENTRIES, max_age_days: float = MAX_AGE_DAYS,
          now: float | None = None) -> int:
    """Delete entries unused for ``max_age_days``, then the least recently used beyond
    ``max_entries``; returns how many. Old entries are never wrong (the key covers the
    tool and options), only dead weight: every upgrade of hipport strands a set, and a
    new cache format strands the old format's folder (removed whole). Only regular files
    named like entries are touched; links are removed, never followed."""
    now = time.time() if now is None else now
    base = root / CACHE_FORMAT
    kept: list[tuple[float, str]] = []
    removed = _remove_old_formats(root)
    try:
        tops = list(os.scandir(base))
    except OSError:
        return removed
    shards = [e.path for e in tops if e.is_dir(follow_symlinks=False) and len(e.name) == 2]
    # The rule-code lists beside the shards, one per hipport fingerprint: the age rule only.
    for e in tops:
        if e.name.startswith("rule-codes-") and e.name.endswith(".json"):
            removed += _unlink_if_stale(e, now, max_age_days)
    for shard in shards:
        try:
            entries = list(os.scandir(shard))
        except OSError:
            continue
        for e in entries:
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if not e.name.endswith(".json") or not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                continue
            if stat.S_ISLNK(st.st_mode) or now - st.st_mtime > max_age_days * 86400:
                removed += _unlink(e.path)
            else:
                kept.append((st.st_mtime, e.path))
    kept.sort(reverse=True)
    for _, path in kept[max_entries:]:
        removed += _unlink(path)
    return removed


def _unlink_if_stale(e: os.DirEntry, now: float, max_age_days: float) -> int:
    """Remove a link, or a regular file unused for ``max_age_days``; 1 if removed."""
    try:
        st = e.stat(follow_symlinks=False)
    except OSError:
        return 0
    if stat.S_ISLNK(st.st_mode) or (stat.S_ISREG(st.st_mode) and now - st.st_mtime > max_age_days * 86400):
        return _unlink(e.path)
    return 0


#: The folders of check's earlier cache formats (check-1, check-2, ...): never read again.
_FORMAT_DIR = re.compile(r"check-\d+")


def _remove_old_formats(root: Path) -> int:
    """Delete the folders of earlier cache formats whole (a link in their place is removed,
    never followed); the number of files removed."""
    removed = 0
    try:
        old = [e for e in os.scandir(root) if _FORMAT_DIR.fullmatch(e.name) and e.name != CACHE_FORMAT]
    except OSError:
        return 0
    for e in old:
        if not e.is_dir(follow_symlinks=False):
            removed += _unlink(e.path) if e.is_symlink() else 0
            continue
        for _, _, files in os.walk(e.path):
            removed += len(files)
        shutil.rmtree(e.path, ignore_errors=True)
    return removed


def _unlink(path: str) -> int:
    try:
        os.unlink(path)
        return 1
    except OSError:
        return 0


# -- the gate ------------------------------------------------------------------------

def check_paths(paths: Iterable[Path], options: Options, cache: Cache | None
                ) -> tuple[list["FileResult"], list[tuple[str, "Includes"]]]:
    """Scan ``paths`` (files or directories) in order, answering from ``cache`` where it can;
    with the results, the includes of the repository's files that include a given header
    with findings (``repository.Repositories``), for ``collect`` to judge its findings by
    every includer, as ``scan`` of the repository does.

    ``[tool.hipport] exclude`` applies to files named on the command line too, because
    pre-commit names every staged file. Misses go through the pipeline together, so a
    cold run over a whole tree still uses the process pool.

    A CUDA-free header among them that holds what a rule fixes in included headers too
    (``FileResult.held``: ``register``, ``throw(``) gets the findings ``convert`` of its
    repository would give it: check is given the changed files only (pre-commit names the
    staged ones), and the header's includers are usually not among them. So where no given
    file reaches it, the repository holding it (``gitignore.repository_root``, walked as a
    directory input is) is searched for the files that include it, through other files too
    (``Repositories.held_includers``); outside a repository only the given files count. Only
    the held headers' findings change: the includers found there are read, never reported.

    The sources go through scan's tree pass first (``pipeline.tree_definitions``), so a
    tree's bundled CUB copy is left whole and its includes routed as ``scan`` does; a given
    file inside a copy brings the rest of that copy's directory (``enclosing_copies``).
    """
    from functools import partial

    from hipport.files import discover, is_excluded
    from hipport.pipeline import enclosing_copies, tree_definitions, with_included_headers
    from hipport.preprocessor.includers import HEADER_SUFFIXES
    from hipport.repository import Repositories

    options = options.with_(apply_fixes=False)
    inputs = [p for p in paths if not (p.is_file() and is_excluded(p, options.exclude))]
    items = list(discover(inputs, options))
    options = tree_definitions([*items, *enclosing_copies(items, options)], options)
    if cache is not None:
        cache.salt(options)
    results = _scan(items, options, cache)
    repositories = Repositories(results, options)
    results = list(with_included_headers(results, options, partial(
        repositories.held_includers, scan=partial(_scan, options=options, cache=cache))))
    # a header's includers judge its findings; a source's, its templates' (UNLESS_INCLUDED)
    headers = [r.path for r in results if (r.path.endswith(HEADER_SUFFIXES) or r.for_includers)
               and any(not f.fixed for f in r.findings)]
    return results, repositories.includers_includes(headers) if headers else []


def _scan(items: "Iterable[SourceFile | FileError]", options: Options, cache: Cache | None) -> list["FileResult"]:
    """Discovered items' results in order: cache hits as stored, misses through the
    pipeline together (stored when the file did not change meanwhile)."""
    from hipport.files import FileError, read_bytes
    from hipport.pipeline import discovery_result, run

    results: list[FileResult | None] = []
    misses: list[tuple[int, SourceFile, str | None]] = []
    for item in items:
        if isinstance(item, FileError):
            results.append(discovery_result(item))
            continue
        if not item.is_source or cache is None:
            misses.append((len(results), item, None))
            results.append(None)
            continue
        display, rel = str(item.path), item.rel.as_posix()
        try:
            key = cache.key(display, read_bytes(item.path))
        except OSError:  # let process() report it in its usual words
            key = None
        hit = cache.get(key, display, rel) if key else None
        if hit is None:
            misses.append((len(results), item, key))
        else:
            hit.source = item  # a held header is read again by the included-header pass
        results.append(hit)
    for (i, sf, key), result in zip(misses, run([sf for _, sf, _ in misses], options)):
        results[i] = result
        if cache is not None and key is not None and result.status != "error":
            # Store only if the file did not change while it was being scanned.
            try:
                unchanged = cache.key(str(sf.path), read_bytes(sf.path)) == key
            except OSError:
                unchanged = False
            if unchanged:
                cache.put(key, result)
    return [r for r in results if r is not None]  # every slot is filled by now


@dataclass
class CheckRun:
    """What the CLI prints and returns: the report holds only the findings that count."""

    report: "Report"
    baselined: int
    status: int


def run_check(paths: list[Path], options: Options, *, baseline: Path | None = None,
              use_cache: bool = True) -> CheckRun:
    """The whole gate: scan (cached), drop baselined findings, decide the exit status.

    The report is folded without the rule registry (and so without tree-sitter): a run
    answered from the cache need not pay for that.
    """
    # Read first, so that a bad baseline fails before any scanning.
    recorded = read_baseline(baseline) if baseline is not None else None
    cache = Cache(cache_dir(), options) if use_cache else None
    results, includers = check_paths(paths, options, cache)
    return gate(results, options, baseline, recorded, includers)


def gate(results: "list[FileResult]", options: Options, baseline: Path | None = None,
         recorded: "Counter[BaselineKey] | None" = None,
         includers: "Iterable[tuple[str, Includes]]" = ()) -> CheckRun:
    """Results (of files, or of standard input) → the gate's report and exit status;
    ``includers``: more files' includes that judge the results' headers (``check_paths``).
    Standard input is judged alone: its buffer need not be the file on disk, so no
    repository is read for it, and its findings are all kept."""
    from hipport.pipeline import collect, exit_status

    if baseline is not None and recorded is None:
        recorded = read_baseline(baseline)
    report = collect(results, options, "check", with_rules=False, includers=includers)
    old: list[Finding] = []
    if recorded is not None and baseline is not None:
        report.findings, old = split_baselined(report.findings, recorded, baseline)
    else:
        report.findings.sort(key=Finding.sort_key)
    return CheckRun(report, len(old), exit_status(report, options.fail_on))
