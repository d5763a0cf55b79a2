"""Regenerate ``mappings/api/<family>.json`` from HIPIFY's markdown support tables.

    python tools/gen_mappings.py [TABLES_DIR] [--older DIR] [--out DIR]

TABLES_DIR defaults to ``../shared/reference/hipify-tables`` (relative to the repository
root), the newer (ROCm 7.x) edition; ``--older`` to ``../shared/reference/hipify-tables-6.3``,
the edition of HIPIFY's ROCm 6.3.0 sync; ``--out`` defaults to ``mappings/api``. Which table
feeds which family, and how the joint ``*_HIP_and_ROC`` tables are merged, is data:
``mappings/families.toml``. How the two editions combine into one timeline of HIP spellings
per CUDA name, and where a HIP header overrides an edition, is data too:
``mappings/timeline.toml`` (its comments state the rules; ``attach_spans`` applies them).

Why a generator and not a hand-kept table: HIPIFY's tables are the public record of what
HIP supports and since when; regenerating from them keeps hipport honest when they move.
The output is deterministic (sorted keys, rows sorted by CUDA name, one row per line,
trailing newline) so a rerun gives identical bytes and ``tests/test_gen_mappings.py`` can
fail when the committed tables are stale.

Parsing follows each section's own header row, because the tables come in two formats:
old ones have no ``U`` column, joint tables have a second target group (whose ``U`` is
missing in the joint CUBLAS/CUSPARSE tables), and ``MIOPEN`` plays the ``ROC`` role for
cuDNN. A row is ``| name | A | D | C | R | name | A | D | C | R | [U] | E | ...``.

Kinds come from the section title: sections whose title names types ("Data types",
"Types") hold types, enums, enumerators and macros mixed together, so a name there is
classified by ``classify_data_name`` (documented there); every other section holds
functions.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
#: ``../shared/reference`` beside the repository (``/work/main``), or beside its parent (a
#: worktree in ``/work/wt/N``): the first that exists.
REFERENCE = next((p for p in (REPO.parent / "shared" / "reference", REPO.parent.parent / "shared" / "reference")
                  if p.is_dir()), REPO.parent / "shared" / "reference")
DEFAULT_TABLES = REFERENCE / "hipify-tables"
DEFAULT_OLDER = REFERENCE / "hipify-tables-6.3"
TIMELINE_TOML = REPO / "mappings" / "timeline.toml"
DEFAULT_OUT = REPO / "mappings" / "api"
FAMILIES_TOML = REPO / "mappings" / "families.toml"
GENERATED_BY = "python tools/gen_mappings.py"

#: The layout of every row in the generated JSON; ``hipport.mapping`` reads it by name.
COLUMNS: tuple[str, ...] = (
    "cuda", "kind", "section",
    "cuda_added", "cuda_deprecated", "cuda_changed", "cuda_removed",
    "hip", "hip_added", "hip_deprecated", "hip_changed", "hip_removed",
    "hip_unsupported", "hip_experimental",
    "roc", "roc_added", "roc_deprecated", "roc_changed", "roc_removed", "roc_experimental",
)
#: A document's ``spans`` maps a CUDA name to its timeline, when it has more than one HIP
#: spelling or an override (other rows have none; their row is their one span). A span: the
#: HIP name valid from ``from`` (inclusive, null: always) until ``until`` (exclusive, null:
#: still), with that spelling's own cells and why it is there.
SPAN_COLUMNS: tuple[str, ...] = (
    "hip", "from", "until", "hip_added", "hip_deprecated", "hip_changed", "hip_removed",
    "hip_unsupported", "hip_experimental", "note",
)
SIDE_COLUMNS = {
    "cuda": COLUMNS[3:7],
    "hip": COLUMNS[7:14],
    "roc": COLUMNS[14:20],
}
_GROUPS = {"CUDA": "cuda", "HIP": "hip", "ROC": "roc", "MIOPEN": "roc"}
_LETTERS = {"A": "added", "D": "deprecated", "C": "changed", "R": "removed",
            "U": "unsupported", "E": "experimental"}
_VERSION_RE = re.compile(r"^\d+(\.\d+){0,3}$")
_SECTION_RE = re.compile(r"^##\s+\*\*(?:\d+\.\s*)?(.*?)\*\*\s*$")
_DATA_SECTION_RE = re.compile(r"\btypes?\b", re.IGNORECASE)
_TYPE_SUFFIX_RE = re.compile(r"(_t|_st|_union|_struct|_enum)$")
_VERSIONED_RE = re.compile(r"^(.*)_v\d+$")
_DIMS_RE = re.compile(r"(?<=\d)x(?=\d)")


class TableError(ValueError):
    """A table line the generator does not understand; it stops rather than guess."""


@dataclass
class ParsedTable:
    """One markdown file: its rows (column → cell) keyed by CUDA name, in file order."""

    name: str
    rows: dict[str, dict[str, object]] = field(default_factory=dict)


def parse_cell(column: str, text: str) -> object:
    """A cell's stored value: names lose their backticks, ``C`` and ``U`` become lists,
    ``E`` stays a version string when it is one and becomes ``True`` when it is a bare flag.
    Empty cells are ``None``."""
    text = text.strip()
    if not text:
        return None
    if column in ("cuda", "hip", "roc"):
        return text.strip("`")
    if column.endswith("_changed") or column.endswith("_unsupported"):
        return [v for v in re.split(r"[,\s]+", text) if v]
    if column.endswith("_experimental"):
        return text if _VERSION_RE.match(text) else True
    if not _VERSION_RE.match(text):
        raise TableError(f"not a version in column {column}: {text!r}")
    return text


def header_columns(line: str) -> list[str]:
    """``|**CUDA**|**A**|...|**ROC**|**A**|...`` → ``["cuda", "cuda_added", ..., "roc", ...]``."""
    columns: list[str] = []
    side = None
    for raw in line.strip().strip("|").split("|"):
        label = raw.strip().strip("*")
        if label in _GROUPS:
            side = _GROUPS[label]
            columns.append(side)
        elif label in _LETTERS and side:
            columns.append(f"{side}_{_LETTERS[label]}")
        else:
            raise TableError(f"unknown header cell {label!r} in {line!r}")
    return columns


def parse_table(path: Path) -> ParsedTable:
    """Read one HIPIFY table; every row is placed by its own section's header row."""
    table = ParsedTable(path.name)
    section = ""
    columns: list[str] | None = None
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = _SECTION_RE.match(line)
        if m:
            section, columns = m.group(1).strip(), None
        elif line.startswith("|**"):
            columns = header_columns(line)
        elif line.startswith("|`"):
            if columns is None:
                raise TableError(f"{path.name}:{lineno}: row before a header")
            cells = line.strip()[1:-1].split("|")
            if len(cells) != len(columns):
                raise TableError(f"{path.name}:{lineno}: {len(cells)} cells, header has {len(columns)}")
            row = {c: parse_cell(c, v) for c, v in zip(columns, cells)}
            if row.get("roc_unsupported"):
                # ApiEntry has no field for it; none of the current tables fill it.
                raise TableError(f"{path.name}:{lineno}: ROC-side U is not modelled")
            row.pop("roc_unsupported", None)
            row["section"] = section
            name = str(row["cuda"])
            if name in table.rows:
                raise TableError(f"{path.name}:{lineno}: {name} listed twice")
            table.rows[name] = row
    return table


def classify_data_name(name: str, siblings: set[str], enum_types: set[str]) -> str:
    """Guess the kind of a name from a data-types section (the tables do not say).

    First match wins:

    1. a ``_t``/``_st``/``_union``/``_struct``/``_enum`` suffix, a sibling ``NAME_st``
       (``typedef struct NAME_st NAME``) or a ``_vN`` alias of one → ``type``;
    2. all capitals, ``x`` between digits allowed (``CUBLASLT_CLUSTER_SHAPE_2x1x1``) →
       ``constant``: an enumerator or a ``#define``, the tables cannot tell which;
    3. other names starting with a capital (``CUdevice``, ``CUmemorytype``) → ``type``;
    4. a camelCase name extending an enum stem (``cudaErrorInvalidValue``) → ``enumerator``,
       where a stem is a sibling that two or more siblings extend (``cudaError``);
    5. a stem that extends no other stem → ``type``;
    6. anything else → ``data`` (``cudaMemcpyKind`` and ``cudaMemcpyHostToDevice`` look
       alike).
    """
    base = _VERSIONED_RE.sub(r"\1", name)
    if _TYPE_SUFFIX_RE.search(name) or f"{base}_st" in siblings or f"{name}_st" in siblings:
        return "type"
    if not any(c.islower() for c in _DIMS_RE.sub("", name)):
        return "constant"
    if name[0].isupper() and not name.startswith("Cub"):
        return "type"
    if any(name.startswith(t) and name[len(t):][:1].isupper() for t in enum_types):
        return "enumerator"
    if name in enum_types:
        return "type"
    return "data"


def _enum_stems(names: set[str]) -> set[str]:
    """camelCase names that two or more siblings extend with a capitalised word."""
    counts: Counter[str] = Counter()
    for name in names:
        for i in range(1, len(name)):
            if name[i].isupper() and name[:i] in names:
                counts[name[:i]] += 1
    return {n for n, c in counts.items() if c >= 2 and n[0].islower()}


def assign_kinds(rows: dict[str, dict[str, object]]) -> None:
    """Set ``kind`` on every row: ``function`` outside data-types sections."""
    by_section: dict[str, set[str]] = {}
    for name, row in rows.items():
        by_section.setdefault(str(row["section"]), set()).add(name)
    for section, names in by_section.items():
        data = bool(_DATA_SECTION_RE.search(section))
        stems = _enum_stems(names) if data else set()
        for name in names:
            rows[name]["kind"] = classify_data_name(name, names, stems) if data else "function"


@dataclass
class MergeStats:
    """What merging a family's tables had to decide, printed so a reviewer sees it."""

    from_joint: Counter[str] = field(default_factory=Counter)  # side → rows filled from joint
    disagreements: Counter[str] = field(default_factory=Counter)  # side → cells that differ


def merge_family(hip: ParsedTable | None, roc: ParsedTable | None,
                 joint: ParsedTable | None, stats: MergeStats) -> dict[str, dict[str, object]]:
    """One row per CUDA name: HIP cells from the HIP table, ROC cells from the ROC table.

    CUDA-side cells and the section come from the ROC table first: in every family the
    separate ROC/MIOPEN table is as new as the HIP one or newer (README: the CUSPARSE ROC
    table has newer CUDA ``D``/``C`` cells for 11 rows, the MIOPEN table 40 more rows and 3
    newer cells). The joint table lags, so it only fills a side that the separate table
    has no row for; cells where it differs are counted, not used."""
    names = set()
    for t in (hip, roc, joint):
        if t:
            names |= t.rows.keys()
    merged: dict[str, dict[str, object]] = {}
    for name in sorted(names):
        row: dict[str, object] = dict.fromkeys(COLUMNS)
        row["cuda"] = name
        first = next(t.rows[name] for t in (roc, hip, joint) if t and name in t.rows)
        for col in ("section", *SIDE_COLUMNS["cuda"]):
            row[col] = first.get(col)
        for side, table in (("hip", hip), ("roc", roc)):
            source = table.rows.get(name) if table else None
            jrow = joint.rows.get(name) if joint else None
            if source is None and jrow is not None and jrow.get(side) is not None:
                source = jrow
                stats.from_joint[side] += 1
            elif source is not None and jrow is not None:
                stats.disagreements[side] += sum(
                    1 for c in SIDE_COLUMNS[side] if c in jrow and jrow[c] != source.get(c))
            if source is not None:
                for col in SIDE_COLUMNS[side]:
                    row[col] = source.get(col)
        merged[name] = row
    return merged


def family_rows(tables_dir: Path, families: dict[str, dict]) -> tuple[
        dict[str, dict[str, dict[str, object]]], dict[str, list[str]], dict[str, MergeStats]]:
    """Per family (split families apart): its merged rows, its source files, and the merge
    statistics per parent family."""
    rows_by: dict[str, dict[str, dict[str, object]]] = {}
    sources: dict[str, list[str]] = {}
    stats: dict[str, MergeStats] = {}
    for fam, meta in families.items():
        if "parent" in meta:
            continue
        st = stats[fam] = MergeStats()
        parsed = {role: parse_table(tables_dir / meta[role]) for role in ("hip", "roc", "joint") if role in meta}
        rows = merge_family(parsed.get("hip"), parsed.get("roc"), parsed.get("joint"), st)
        assign_kinds(rows)
        srcs = sorted(meta[r] for r in ("hip", "roc", "joint") if r in meta)
        for child, cmeta in families.items():
            if cmeta.get("parent") == fam:
                rows_by[child] = {n: r for n, r in rows.items() if r["section"] in cmeta["sections"]}
                sources[child] = srcs
                for n in rows_by[child]:
                    del rows[n]
        rows_by[fam], sources[fam] = rows, srcs
    return rows_by, sources, stats


def build_families(tables_dir: Path, families: dict[str, dict], older_dir: Path | None = None,
                   timeline: dict | None = None) -> tuple[dict[str, dict], dict[str, MergeStats]]:
    """Every family's JSON document, and the merge statistics per family.

    With ``older_dir`` (and the parsed ``timeline.toml``), every row also gets its
    timeline of HIP spellings (``attach_spans``); families the older edition has no table
    for (cuSPARSELt, cuTENSOR, cuFile in the 6.3 edition) keep the newer edition's rows."""
    rows_by, sources, stats = family_rows(tables_dir, families)
    older_sources: dict[str, list[str]] = {}
    if older_dir is not None:
        timeline = timeline if timeline is not None else load_timeline()
        present = {fam: meta for fam, meta in families.items()
                   if all((older_dir / meta[r]).is_file() for r in ("hip", "roc", "joint") if r in meta)
                   and ("parent" not in meta or all((older_dir / families[meta["parent"]][r]).is_file()
                                                    for r in ("hip", "roc", "joint") if r in families[meta["parent"]]))}
        old_rows, older_sources, _ = family_rows(older_dir, present)
        attach_spans(rows_by, old_rows, timeline)
    docs = {fam: _document(fam, rows, sources[fam], older_sources.get(fam)) for fam, rows in rows_by.items()}
    return docs, stats


@dataclass(frozen=True)
class Override:
    """One ``[[overrides]]`` entry of ``timeline.toml`` (see that file)."""

    action: str  # switch | newer
    at: str | None
    cells: dict[str, object]
    reason: str


def load_timeline(path: Path = TIMELINE_TOML) -> dict:
    with path.open("rb") as f:
        return tomllib.load(f)


def _overrides(timeline: dict) -> dict[str, Override]:
    out: dict[str, Override] = {}
    for item in timeline.get("overrides", []):
        action = item["action"]
        if action not in ("switch", "newer") or (action == "switch") != ("at" in item):
            raise TableError(f"timeline.toml: bad override {item}")
        for cell in item.get("set", {}):
            if cell not in SIDE_COLUMNS["hip"]:
                raise TableError(f"timeline.toml: {cell!r} is not a HIP cell")
        # hip = "" : HIP has no such name (the headers read lack it); TOML has no null
        cells = {k: (None if k == "hip" and v == "" else v) for k, v in item.get("set", {}).items()}
        ov = Override(action, item.get("at"), cells, f"{item['reason']} [{item['source']}]")
        for name in item["names"]:
            if name in out:
                raise TableError(f"timeline.toml: {name} overridden twice")
            out[name] = ov
    return out


def _span(row: dict[str, object], start: str | None, until: str | None, note: str) -> list[object]:
    values = {"from": start, "until": until, "note": note or None}
    return [values[c] if c in values else row.get(c) for c in SPAN_COLUMNS]


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def default_switch(new: dict[str, object], synced: str) -> str | None:
    """When the newer edition's spelling takes over: its first C after the older edition's
    sync release, else its A when that is after the sync; None when the row cannot say."""
    after = sorted((v for v in new.get("hip_changed") or () if _version_key(v) > _version_key(synced)),
                   key=_version_key)
    if after:
        return str(after[0])
    added = new.get("hip_added")
    return str(added) if added and _version_key(str(added)) > _version_key(synced) else None


def attach_spans(rows_by: dict[str, dict[str, dict[str, object]]],
                 old_by: dict[str, dict[str, dict[str, object]]], timeline: dict) -> None:
    """Set every row's ``spans`` from the two editions and ``timeline.toml`` (whose
    comments state the rules). Unused or ineffective overrides are errors: a stale
    override would silently stop meaning what its reason says."""
    synced = str(timeline["older"]["synced_to"])
    overrides = _overrides(timeline)
    used: set[str] = set()
    for fam, rows in rows_by.items():
        old_rows = old_by.get(fam, {})
        for name, row in rows.items():
            row["spans"] = None
            old = old_rows.get(name)
            ov = overrides.get(name)
            if ov is not None:
                used.add(name)
            old_hip = old.get("hip") if old else None
            if ov is not None and ov.action == "newer":
                row.update(ov.cells)
                row["spans"] = [_span(row, None, None, ov.reason)]
                continue
            renamed = ov is not None and "hip" in ov.cells  # a header names the newer spelling
            if (old is None or old_hip is None or old_hip == row["hip"]) and not renamed:
                if ov is not None:
                    raise TableError(f"timeline.toml: {name}: both editions agree, nothing to switch")
                continue
            if row["hip"] is None and not renamed:
                raise TableError(f"{name}: only the older edition names it ({old_hip}); not modelled")
            switch = ov.at if ov is not None else default_switch(row, synced)
            if switch is None:
                raise TableError(f"{name}: the editions disagree ({old_hip} / {row['hip']}) and no "
                                 f"switch release is known: add an override to mappings/timeline.toml")
            older = dict(old if old is not None and old_hip is not None else row)
            if renamed:
                if ov.cells["hip"] in (older["hip"], row["hip"]):
                    raise TableError(f"timeline.toml: {name}: the override's hip name changes nothing")
                row.update(ov.cells)
            if older.get("hip_experimental") == synced and row.get("hip_experimental") is None:
                older["hip_experimental"] = None
            note = ov.reason if ov is not None else ""
            row["spans"] = [
                _span(older, None, switch, f"HIPIFY's ROCm {synced} edition"),
                _span(row, switch, None, note),
            ]
    unused = sorted(set(overrides) - used)
    if unused:
        raise TableError(f"timeline.toml: overrides for names no table lists: {', '.join(unused)}")
    add_rows(rows_by, timeline)


def add_rows(rows_by: dict[str, dict[str, dict[str, object]]], timeline: dict) -> None:
    """The ``[[additions]]`` of ``timeline.toml``: CUDA names no edition lists, read off the
    CUDA and HIP headers, each with one span carrying its reason."""
    for item in timeline.get("additions", []):
        rows = rows_by[item["family"]]
        if item["cuda"] in rows:
            raise TableError(f"timeline.toml: addition {item['cuda']} is already in the tables")
        if not any(r["section"] == item["section"] for r in rows.values()):
            raise TableError(f"timeline.toml: addition {item['cuda']}: no section {item['section']!r}")
        row: dict[str, object] = {c: None for c in COLUMNS}
        row.update(cuda=item["cuda"], kind=item["kind"], section=item["section"], hip=item["hip"],
                   hip_added=item.get("hip_added"))
        row["spans"] = [_span(row, None, None, f"{item['reason']} [{item['source']}]")]
        rows[item["cuda"]] = row


def _document(family: str, rows: dict[str, dict[str, object]], sources: list[str],
              older_sources: list[str] | None = None) -> dict:
    sections = sorted({str(r["section"]) for r in rows.values()})
    index = {s: i for i, s in enumerate(sections)}
    packed = []
    for name in sorted(rows):
        r = dict(rows[name], section=index[str(rows[name]["section"])])
        packed.append([r[c] for c in COLUMNS])
    spans = {name: rows[name]["spans"] for name in sorted(rows) if rows[name].get("spans")}
    doc = {
        "columns": list(COLUMNS),
        "family": family,
        "generated_by": GENERATED_BY,
        "rows": packed,
        "sections": sections,
        "sources": sources,
        "span_columns": list(SPAN_COLUMNS),
        "spans": spans,
    }
    if older_sources:
        doc["older_sources"] = older_sources
    return doc


def dumps(doc: dict) -> str:
    """Sorted keys, one row per line: small diffs when HIPIFY changes a cell."""
    parts = []
    for key in sorted(doc):
        if key == "rows":
            body = ",\n".join(json.dumps(r, separators=(",", ":")) for r in doc[key])
            parts.append(f'"rows":[\n{body}\n]')
        elif key == "spans" and doc[key]:
            body = ",\n".join(f"{json.dumps(n)}:{json.dumps(v, separators=(',', ':'))}" for n, v in doc[key].items())
            parts.append(f'"spans":{{\n{body}\n}}')
        else:
            parts.append(f"{json.dumps(key)}:{json.dumps(doc[key], sort_keys=True, separators=(',', ':'))}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def load_families(path: Path = FAMILIES_TOML) -> dict[str, dict]:
    with path.open("rb") as f:
        return tomllib.load(f)["families"]


def generate(tables_dir: Path, out_dir: Path, older_dir: Path | None = DEFAULT_OLDER) -> dict[str, MergeStats]:
    """Write every ``<family>.json`` into ``out_dir``; return the merge statistics."""
    docs, stats = build_families(tables_dir, load_families(), older_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for fam, doc in sorted(docs.items()):
        (out_dir / f"{fam}.json").write_text(dumps(doc), encoding="utf-8", newline="\n")
    return stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tables", nargs="?", type=Path, default=DEFAULT_TABLES)
    parser.add_argument("--older", type=Path, default=DEFAULT_OLDER,
                        help="the older HIPIFY edition (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    stats = generate(args.tables, args.out, args.older)
    for fam, st in sorted(stats.items()):
        for side in ("hip", "roc"):
            if st.from_joint[side] or st.disagreements[side]:
                print(f"{fam}: {side} side: {st.from_joint[side]} rows only in the joint table "
                      f"(used), {st.disagreements[side]} cells where the joint table differs "
                      f"(separate table used)")
    # Imported here: the summary applies hipport's own status rules to what was written.
    from hipport.mapping import MappingTable
    from hipport.report.mapping import format_summary
    print(format_summary(MappingTable.from_dir(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
