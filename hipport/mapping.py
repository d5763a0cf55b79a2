"""The CUDA→HIP mapping tables, and what they mean for one target ROCm release.

Data lives in ``mappings/`` (installed as ``hipport.mappings``):

- ``api/<family>.json``: generated from two editions of HIPIFY's tables by
  ``tools/gen_mappings.py``; one row per CUDA name with the HIP and ROC names and their
  version cells (the newer edition's), plus ``spans``: the timeline of HIP spellings of the
  names whose spelling changed between releases or whose cells a header overrode
  (``hipport.timeline``; rules in ``timeline.toml``).
- ``families.toml``: family order, library names and policies.
- ``headers.toml``, ``namespaces.toml``, ``macros.toml``, ``overloads.toml``: curated by
  hand, with sources.

A ``MappingTable`` is the data; ``MappingTable.view(rocm)`` is the data seen from one target.
``MappingView.resolve`` first takes, for a name with spans, the HIP name and HIP cells of
the span valid on the target (``cublasScnrm2_v2`` is ``hipblasScnrm2_v2`` until ROCm 7.0,
``hipblasScnrm2`` from it), then decides, in this order (first match wins):

1. no target name → UNSUPPORTED;
2. ``removed <= rocm`` → REMOVED;
3. ``added > rocm`` → NEWER ("exists from ROCm X; target is Y");
4. experimental (``E`` set) → EXPERIMENTAL, applied only with ``experimental=True``.
   Every ``E`` in the tables is ``7.14.0`` on an API added in ``7.13.0``; an API that
   exists on the target and carries ``E`` is treated as experimental even when the ``E``
   version is above the target, because "stable in 7.13, experimental in 7.14" is not a
   reading anyone should rewrite code on;
5. ``deprecated <= rocm`` → DEPRECATED (applied);
6. otherwise MAPPED (applied). A HIP name equal to the CUDA name (``__shfl_sync``) is
   MAPPED too; the rewriter compares the names and makes no edit.

With ``roc=True`` a row's ROC name and ROC versions are used when the row has a ROC name,
otherwise its HIP name (as hipify-perl does with ``--roc``: roc substitutions first, the
HIP ones for the rest); the detail says so.

cuDNN: the table's hipDNN names carry no versions, newer HIPIFY docs dropped them, and
HIPIFY 20 stopped translating to hipDNN by default (rocm-versions.md LIB-12). So without
``--roc`` every cuDNN name is UNSUPPORTED with the detail "cuDNN has no HIP marshalling
library; port to MIOpen (use --roc to map to MIOpen names)"; with ``--roc`` the MIOpen
names from HIPIFY's MIOPEN table are used (``families.toml``: ``hip_policy``).

A name in several families (only ``libraryPropertyType`` and ``libraryPropertyType_t``,
in runtime and dnn) resolves to the first family, in ``families.toml`` order, whose row
has a HIP or ROC name; failing that, the first family listing it.

A curated macro rule (``macros.toml``) with action ``keep`` or ``report`` wins over a
table row for the same name: the resolution keeps its status but ``apply`` is False and
the detail carries the rule's note. (``__CUDACC__`` is in both, and both rewrite it.)

Load time matters (every CLI run): rows stay as JSON lists until a name is looked up;
``ApiEntry`` objects are built on first use and cached.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from hipport.cachefile import secret_key, write_entry
from hipport.datafiles import cache_dir, mappings
from hipport.mapping_files import CACHE_KIND, Resource, load_raw
from hipport.timeline import Span, entry_at, later_spelling, parse_spans
from hipport.versions import NAMED_RELEASES, Version, parse_version, short_version

Experimental = Version | Literal[True] | None


class Status(str, Enum):
    MAPPED = "mapped"
    DEPRECATED = "deprecated"
    EXPERIMENTAL = "experimental"
    NEWER = "newer"
    REMOVED = "removed"
    UNSUPPORTED = "unsupported"


@dataclass(frozen=True, slots=True)
class ApiEntry:
    """One CUDA name as HIPIFY's tables describe it. Versions are integer tuples."""

    cuda: str
    hip: str | None
    roc: str | None
    family: str
    kind: str  # function | type | enumerator | constant | data (see tools/gen_mappings.py)
    section: str
    cuda_added: Version | None
    cuda_deprecated: Version | None
    cuda_changed: tuple[Version, ...]
    cuda_removed: Version | None
    hip_added: Version | None
    hip_deprecated: Version | None
    hip_changed: tuple[Version, ...]
    hip_removed: Version | None
    hip_unsupported_cuda: tuple[Version, ...]  # CUDA versions for which the mapping is wrong
    hip_experimental: Experimental
    roc_added: Version | None
    roc_deprecated: Version | None
    roc_changed: tuple[Version, ...]
    roc_removed: Version | None
    roc_experimental: Experimental
    spans: tuple[Span, ...] = ()  # the HIP spellings over time; empty: the row is the only one


@dataclass(frozen=True, slots=True)
class Resolution:
    cuda: str
    status: Status
    target: str | None  # the HIP (or roc) name, even when not applied
    apply: bool  # rewrite cuda → target now (MAPPED, DEPRECATED, EXPERIMENTAL with --experimental)
    entry: ApiEntry
    detail: str  # a sentence for reports: "hipStreamCopyAttributes exists from ROCm 7.2.0; target is 6.3"


@dataclass(frozen=True, slots=True)
class HeaderResolution:
    cuda: str
    action: str  # map | keep | drop | none
    target: str | None
    library: str
    note: str
    apply: bool  # rewrite (map) or remove (drop) the include now


@dataclass(frozen=True, slots=True)
class HeaderRule:
    """A ``headers.toml`` entry; ``prefix`` rules match ``path.startswith(name)``."""

    cuda: str
    action: str
    hip: str | None
    roc: str | None
    library: str
    note: str
    since: Version | None
    prefix: bool


@dataclass(frozen=True, slots=True)
class MacroRule:
    """A ``macros.toml`` entry: what to do where code tests or uses a CUDA macro."""

    name: str
    action: str  # rewrite | keep | report
    target: str | None
    note: str
    inform: bool = False  # a rewrite that is also an info finding (HP118)
    roc_target: str | None = None  # the target with --roc, when the roc header differs
    #: the HIP compiler's macros: where a file's own tests of them already give the HIP
    #: build its branch, the rewrite is not applied (``preprocessor.apart``)
    kept_if_tested: tuple[str, ...] = ()
    #: (CUDA word, HIP word) pairs that make a macro's HIP twin (EIGEN_CUDACC, EIGEN_HIPCC)
    twins: tuple[tuple[str, str], ...] = ()
    #: words a macro defined under the test may hold that a HIP build needs as well
    #: (``__host__``, ``__device__``): the rewrite is applied where no HIP branch defines it
    needed: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class NamespaceRule:
    """A ``namespaces.toml`` entry: ``map`` (to ``target``), ``keep`` or ``none``."""

    name: str
    action: str
    target: str | None
    library: str
    note: str


@dataclass(frozen=True, slots=True)
class OverloadRule:
    """An ``overloads.toml`` entry: ``cuda`` called with ``arguments`` arguments means ``as_``."""

    cuda: str
    arguments: int
    as_: str
    note: str


@dataclass(frozen=True, slots=True)
class FamilyInfo:
    name: str
    hip_library: str
    roc_library: str | None
    hip_unsupported_note: str | None  # set when the HIP side is not mapped by policy
    #: a header-only library a tree can carry a copy of: the directory name such a copy
    #: sits in (``families.toml``: ``bundled``), or ""
    bundled: str = ""


_MISS = object()
_HEADER_ACTIONS = {"map", "keep", "drop", "none"}
_MACRO_ACTIONS = {"rewrite", "keep", "report"}
_NAMESPACE_ACTIONS = {"map", "keep", "none"}


class _Rows:
    """One family's JSON rows, turned into ApiEntry objects on demand."""

    def __init__(self, family: str, doc: dict[str, Any]) -> None:
        self.family = family
        self.sections: list[str] = doc["sections"]
        self.rows: dict[str, list[Any]] = {r[0]: r for r in doc["rows"]}
        cols = doc["columns"]
        self._idx = {c: cols.index(c) for c in cols}
        self.spans: dict[str, list[list[Any]]] = doc.get("spans") or {}
        self._span_columns: list[str] = doc.get("span_columns") or []

    def cell(self, row: list[Any], column: str) -> Any:
        return row[self._idx[column]]

    def has_target(self, name: str) -> bool:
        row = self.rows[name]
        return row[self._idx["hip"]] is not None or row[self._idx["roc"]] is not None

    def entry(self, name: str, versions: dict[str, Version]) -> ApiEntry:
        row = self.rows[name]
        c = self._idx

        def v(col: str) -> Version | None:
            text = row[c[col]]
            if text is None:
                return None
            found = versions.get(text)
            if found is None:
                found = versions[text] = parse_version(text)
            return found

        def vs(col: str) -> tuple[Version, ...]:
            return tuple(parse_version(t) for t in row[c[col]] or ())

        def e(col: str) -> Experimental:
            text = row[c[col]]
            return True if text is True else (parse_version(text) if text else None)

        return ApiEntry(
            cuda=name, hip=row[c["hip"]], roc=row[c["roc"]], family=self.family,
            kind=row[c["kind"]], section=self.sections[row[c["section"]]],
            cuda_added=v("cuda_added"), cuda_deprecated=v("cuda_deprecated"),
            cuda_changed=vs("cuda_changed"), cuda_removed=v("cuda_removed"),
            hip_added=v("hip_added"), hip_deprecated=v("hip_deprecated"),
            hip_changed=vs("hip_changed"), hip_removed=v("hip_removed"),
            hip_unsupported_cuda=vs("hip_unsupported"), hip_experimental=e("hip_experimental"),
            roc_added=v("roc_added"), roc_deprecated=v("roc_deprecated"),
            roc_changed=vs("roc_changed"), roc_removed=v("roc_removed"),
            roc_experimental=e("roc_experimental"),
            spans=parse_spans(self._span_columns, self.spans[name]) if name in self.spans else (),
        )


class _LazyEntries(Mapping[str, ApiEntry]):
    """``MappingTable.entries``: a read-only mapping that builds entries as they are read."""

    def __init__(self, table: "MappingTable") -> None:
        self._table = table

    def __getitem__(self, name: str) -> ApiEntry:
        entry = self._table.lookup(name)
        if entry is None:
            raise KeyError(name)
        return entry

    def __iter__(self) -> Iterator[str]:
        return iter(self._table._owner)

    def __len__(self) -> int:
        return len(self._table._owner)

    def __contains__(self, name: object) -> bool:
        return name in self._table._owner


class MappingTable:
    """All mapping data, independent of the target. Build with ``load_table()``."""

    def __init__(self, families: dict[str, FamilyInfo], rows: dict[str, _Rows],
                 headers: dict[str, HeaderRule], macros: dict[str, MacroRule],
                 namespaces: dict[str, NamespaceRule],
                 overloads: dict[tuple[str, int], OverloadRule] | None = None) -> None:
        self.families = families
        self._rows = rows
        self.headers = headers
        self._prefix_headers = sorted((h for h in headers.values() if h.prefix),
                                      key=lambda h: -len(h.cuda))
        self.macros = macros
        self.namespaces = namespaces
        self.overloads = overloads or {}
        self._versions: dict[str, Version] = {}
        self._cache: dict[str, ApiEntry] = {}
        self._reverse: dict[str, list[str]] | None = None
        self._owner = self._merge_order()
        self.entries: Mapping[str, ApiEntry] = _LazyEntries(self)

    @classmethod
    def from_dir(cls, api_dir: Path | Resource, data_dir: Path | Resource | None = None,
                 cache_dir: Path | None = None) -> "MappingTable":
        """Load JSON from ``api_dir`` and curated TOML from ``data_dir`` (default: the package).

        With ``cache_dir``, the parsed data is kept there as JSON authenticated by this
        user's key (never a pickle, never an entry someone else wrote: see
        ``hipport.cachefile``; no key, no cache) under the hash of every data file and of
        the code that reads them (``hipport.mapping_files``), so an entry can never be
        stale and is safe to delete. An entry that does not build a table is a miss: the
        sources are parsed again and the entry rewritten.
        """
        data = data_dir if data_dir is not None else mappings()
        secret = secret_key(cache_dir) if cache_dir is not None else None
        raw, cached = load_raw(api_dir, data, cache_dir, secret)
        if cached is None or secret is None:
            return cls._from_raw(raw)
        try:
            return cls._from_raw(raw)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            raw, _ = load_raw(api_dir, data, None, None)
            write_entry(cached, CACHE_KIND, raw, secret)
            return cls._from_raw(raw)

    @classmethod
    def _from_raw(cls, raw: dict[str, Any]) -> "MappingTable":
        families = {
            name: FamilyInfo(name, meta["hip_library"], meta.get("roc_library"),
                             meta.get("hip_policy_note") if meta.get("hip_policy") == "unsupported" else None,
                             str(meta.get("bundled", "")))
            for name, meta in raw["families.toml"]["families"].items()
        }
        rows = {name: _Rows(name, raw[f"api/{name}.json"]) for name in families}
        return cls(families, rows, _headers(raw["headers.toml"]), _macros(raw["macros.toml"]),
                   _namespaces(raw["namespaces.toml"]), _overloads(raw["overloads.toml"]))

    def _merge_order(self) -> dict[str, str]:
        """CUDA name → the family whose row represents it (see the module docstring)."""
        owner: dict[str, str] = {}
        for fam, rows in self._rows.items():
            for name in rows.rows:
                current = owner.get(name)
                if current is None or (rows.has_target(name) and not self._rows[current].has_target(name)):
                    owner[name] = fam
        return owner

    def lookup(self, name: str) -> ApiEntry | None:
        """The entry for a CUDA name, or None."""
        entry = self._cache.get(name)
        if entry is None:
            fam = self._owner.get(name)
            if fam is None:
                return None
            entry = self._cache[name] = self._rows[fam].entry(name, self._versions)
        return entry

    def family_entries(self, family: str) -> Iterator[ApiEntry]:
        """Every row of one family, including names another family owns in ``lookup``."""
        rows = self._rows[family]
        for name in rows.rows:
            yield rows.entry(name, self._versions)

    def bundled(self) -> dict[str, frozenset[str]]:
        """The directory a copy of a library sits in → every CUDA name of its family, for
        the families a tree can carry a copy of (``bundled``)."""
        return {info.bundled: frozenset(self._rows[fam].rows) for fam, info in self.families.items() if info.bundled}

    def find_by_target(self, name: str) -> list[ApiEntry]:
        """Entries whose HIP or ROC name is ``name`` (reverse lookup), sorted by CUDA name."""
        return [e for c in self.reverse_index().get(name, ()) if (e := self.lookup(c)) is not None]

    def reverse_index(self) -> dict[str, list[str]]:
        """HIP/ROC name → the CUDA names mapping to it; built on first use."""
        if self._reverse is None:
            reverse: dict[str, list[str]] = {}
            for cuda in sorted(self._owner):
                fam = self._rows[self._owner[cuda]]
                row = fam.rows[cuda]
                targets = [fam.cell(row, "hip"), fam.cell(row, "roc")]
                targets += [span[0] for span in fam.spans.get(cuda, ())]
                for target in targets:
                    if target is not None and cuda not in reverse.get(target, ()):
                        reverse.setdefault(target, []).append(cuda)
            self._reverse = reverse
        return self._reverse

    def release_span(self) -> tuple[Version, Version]:
        """The oldest and newest ROCm release any HIP or ROC version cell names: the
        releases these tables describe (``--rocm`` outside them is a usage error)."""
        columns = ("hip_added", "hip_deprecated", "hip_removed", "roc_added", "roc_deprecated",
                   "roc_removed")
        seen = set(NAMED_RELEASES.values())
        for rows in self._rows.values():
            idx = [rows._idx[c] for c in columns]
            texts = {row[i] for row in rows.rows.values() for i in idx}
            seen.update(parse_version(t) for t in texts if isinstance(t, str))
        return min(seen), max(seen)

    def view(self, rocm: Version, *, roc: bool = False, experimental: bool = False) -> "MappingView":
        return MappingView(self, rocm, roc=roc, experimental=experimental)


class MappingView:
    """A MappingTable seen from one target; answers are cached per name."""

    def __init__(self, table: MappingTable, rocm: Version, *, roc: bool, experimental: bool) -> None:
        self.table = table
        self.rocm = rocm
        self.roc = roc
        self.experimental = experimental
        self._cache: dict[str, Resolution | None] = {}

    def resolve(self, name: str) -> Resolution | None:
        """None when ``name`` is not a CUDA API name; O(1) after the first call per name."""
        found = self._cache.get(name, _MISS)
        if found is _MISS:
            entry = self.table.lookup(name)
            found = self._cache[name] = None if entry is None else self._resolve(entry)
        return found  # type: ignore[return-value]

    def _resolve(self, e: ApiEntry) -> Resolution:
        if e.spans:
            e = entry_at(e, self.rocm)
        fam = self.table.families[e.family]
        tgt = short_version(self.rocm)
        notes: list[str] = []
        if self.roc and e.roc is not None:
            name, lib = e.roc, fam.roc_library or fam.hip_library
            added, deprecated, removed, changed, exp = (
                e.roc_added, e.roc_deprecated, e.roc_removed, e.roc_changed, e.roc_experimental)
        else:
            name, lib = e.hip, fam.hip_library
            added, deprecated, removed, changed, exp = (
                e.hip_added, e.hip_deprecated, e.hip_removed, e.hip_changed, e.hip_experimental)
            if fam.hip_unsupported_note:
                name = None
            elif self.roc and fam.roc_library and e.hip is not None:
                notes.append(f"no {fam.roc_library} equivalent; the {lib} name is used")
        if name is None:
            status, apply = Status.UNSUPPORTED, False
            if fam.hip_unsupported_note and not self.roc:
                text = fam.hip_unsupported_note + (f"; {fam.roc_library} name: {e.roc}" if e.roc else "")
            elif self.roc and fam.roc_library:
                libs = fam.roc_library if fam.hip_unsupported_note else f"{fam.roc_library} or {fam.hip_library}"
                text = f"{e.cuda} has no {libs} equivalent"
            elif e.roc is not None and fam.roc_library:
                # Only the tables' hip column is empty: the ROC library is the route they know
                # (cublasGetStatusString: rocblas_status_to_string); "no equivalent" says too much.
                since = f" from ROCm {short_version(e.roc_added)}" if e.roc_added is not None else ""
                text = (f"{e.cuda} has no {lib} name in HIPIFY's tables; {fam.roc_library} has "
                        f"{e.roc}{since} (--roc writes {fam.roc_library} names)")
            else:
                text = f"{e.cuda} has no {lib} equivalent"
        elif removed is not None and removed <= self.rocm:
            status, apply = Status.REMOVED, False
            text = f"{name} was removed in ROCm {short_version(removed)}; target is {tgt}"
        elif added is not None and added > self.rocm:
            status, apply = Status.NEWER, False
            text = f"{name} exists from ROCm {short_version(added)}; target is {tgt}"
        elif exp is not None:
            status, apply = Status.EXPERIMENTAL, self.experimental
            since = "" if exp is True else f" (marked in ROCm {short_version(exp)})"
            text = f"{name} is experimental in {lib}{since}" + (
                "; mapped because of --experimental" if self.experimental else "; pass --experimental to map it")
        elif deprecated is not None and deprecated <= self.rocm:
            status, apply = Status.DEPRECATED, True
            text = f"{name} is deprecated since ROCm {short_version(deprecated)}"
        else:
            status, apply = Status.MAPPED, True
            text = f"{e.cuda} → {name}"
        if name is not None and e.hip_unsupported_cuda and name == e.hip:
            notes.append("not a drop-in for code written against CUDA "
                         + ", ".join(short_version(v) for v in e.hip_unsupported_cuda))
        later = later_spelling(e, self.rocm) if name is not None and name == e.hip else None
        if later is not None:
            notes.append(later)
        changed_by_target = [short_version(v) for v in changed if v <= self.rocm]
        if name is not None and changed_by_target:
            notes.append(f"{name} changed in ROCm {', '.join(changed_by_target)}")
        rule = self.table.macros.get(e.cuda)
        if rule is not None and rule.action != "rewrite":
            apply = False
            notes.append(f"not applied: macros.toml says {rule.action} ({rule.note})")
        detail = "; ".join([text, *notes])
        return Resolution(e.cuda, status, name, apply, e, detail)

    def header(self, include_path: str) -> HeaderResolution | None:
        """The rule for an include path: an exact entry, else the longest prefix entry."""
        rule = self.table.headers.get(include_path)
        if rule is None:
            rule = next((h for h in self.table._prefix_headers if include_path.startswith(h.cuda)), None)
            if rule is None:
                return None
        target = rule.roc if self.roc and rule.roc else rule.hip
        note, action, apply = rule.note, rule.action, rule.action in ("map", "drop")
        if action == "map" and target is None:
            action, apply = "none", False
        elif rule.since is not None and rule.since > self.rocm:
            apply = False
            note = (f"{target} exists from ROCm {short_version(rule.since)}; target is "
                    f"{short_version(self.rocm)}" + (f". {note}" if note else ""))
        return HeaderResolution(include_path, action, target, rule.library, note, apply)

    def namespace(self, name: str) -> str | None:
        """``cub`` → ``hipcub``; None when the namespace is unchanged, has no HIP counterpart
        (see ``namespace_rule``) or is unknown."""
        rule = self.table.namespaces.get(name)
        return rule.target if rule is not None and rule.action == "map" else None

    def namespace_rule(self, name: str) -> NamespaceRule | None:
        """The full rule, for reporting namespaces without a counterpart (``nvcuda``)."""
        return self.table.namespaces.get(name)

    def macro(self, name: str) -> MacroRule | None:
        """The rule for ``name``; with ``--roc``, a guard of a header mapped to its roc
        library names that library's guard (``CURAND_H_``: ``HIPRAND_H_``, ``ROCRAND_H_``)."""
        rule = self.table.macros.get(name)
        if rule is not None and self.roc and rule.roc_target:
            return replace(rule, target=rule.roc_target)
        return rule

    def overload(self, name: str, arguments: int) -> tuple[OverloadRule, Resolution | None] | None:
        """For a call of ``name`` with ``arguments`` arguments that means another CUDA
        function (``overloads.toml``): the rule and that function's resolution."""
        rule = self.table.overloads.get((name, arguments))
        return None if rule is None else (rule, self.resolve(rule.as_))


def _check(action: str, allowed: set[str], where: str) -> str:
    if action not in allowed:
        raise ValueError(f"{where}: action {action!r} is not one of {sorted(allowed)}")
    return action


def _headers(doc: dict[str, Any]) -> dict[str, HeaderRule]:
    return {
        path: HeaderRule(
            cuda=path, action=_check(h["action"], _HEADER_ACTIONS, f"headers.toml {path}"),
            hip=h.get("hip"), roc=h.get("roc"), library=h.get("library", ""),
            note=h.get("note", ""), since=parse_version(h["since"]) if "since" in h else None,
            prefix=bool(h.get("prefix", False)))
        for path, h in doc["headers"].items()
    }


def _macros(doc: dict[str, Any]) -> dict[str, MacroRule]:
    return {
        name: MacroRule(name, _check(m["action"], _MACRO_ACTIONS, f"macros.toml {name}"),
                        m.get("target"), m.get("note", ""), bool(m.get("inform", False)),
                        m.get("roc_target"), tuple(m.get("kept_if_tested", ())),
                        tuple(m.get("twins", {}).items()), frozenset(m.get("needed", ())))
        for name, m in doc["macros"].items()
    }


def _namespaces(doc: dict[str, Any]) -> dict[str, NamespaceRule]:
    return {
        name: NamespaceRule(name, _check(n["action"], _NAMESPACE_ACTIONS, f"namespaces.toml {name}"),
                            n.get("target"), n.get("library", ""), n.get("note", ""))
        for name, n in doc["namespaces"].items()
    }


def _overloads(doc: dict[str, Any]) -> dict[tuple[str, int], OverloadRule]:
    return {
        (o["cuda"], int(o["arguments"])): OverloadRule(o["cuda"], int(o["arguments"]), o["as"], o.get("note", ""))
        for o in doc.get("overloads", [])
    }


@lru_cache(maxsize=1)
def load_table() -> MappingTable:
    """The installed tables, loaded once per process."""
    return MappingTable.from_dir(mappings() / "api", cache_dir=cache_dir())


@dataclass(frozen=True, slots=True)
class FamilySummary:
    family: str
    rows: int
    with_hip: int  # rows with a HIP name (before policies such as cuDNN's)
    applied: dict[Version, int]  # target → rows a view applies (MAPPED, DEPRECATED)


def family_summary(table: MappingTable, targets: tuple[Version, ...] | None = None) -> list[FamilySummary]:
    """Per family (every row of its own tables), how many names map for each target.

    Counts use ``view(target)`` without ``--roc`` and ``--experimental``, so a cuDNN row
    counts as not mapped and an experimental one as not applied.
    """
    targets = targets or tuple(NAMED_RELEASES.values())
    views = [table.view(t) for t in targets]
    out = []
    for fam in table.families:
        entries = list(table.family_entries(fam))
        applied = {v.rocm: sum(1 for e in entries if v._resolve(e).apply) for v in views}
        out.append(FamilySummary(fam, len(entries), sum(1 for e in entries if e.hip), applied))
    return out
