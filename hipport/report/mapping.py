"""``hipport map NAME``: everything the tables say about one name, across targets.

``describe`` is the JSON-ready value (``hipport map -f json``), ``format_description`` its
text; ``close_names`` the suggestions for a name the tables do not know; ``format_summary``
the generator's per-family table. The tables themselves are ``hipport.mapping``.
"""

from __future__ import annotations

from typing import Any

from hipport.mapping import Experimental, MappingTable, family_summary
from hipport.versions import Version, short_version


def _fmt(v: Version | None) -> str:
    return ".".join(map(str, v)) if v else "-"


def _fmt_many(vs: tuple[Version, ...]) -> str:
    return " ".join(_fmt(v) for v in vs) or "-"


def _fmt_exp(e: Experimental) -> str:
    return "yes" if e is True else _fmt(e)


def describe(table: MappingTable, name: str, targets: tuple[Version, ...], *,
             roc: bool = False, experimental: bool = False) -> dict[str, Any] | None:
    """Everything hipport knows about ``name`` (a CUDA or HIP/ROC name, a macro, a namespace
    or a header), JSON-ready; None when it knows nothing."""
    views = [table.view(t, roc=roc, experimental=experimental) for t in targets]
    direct = table.lookup(name)
    entries = [direct] if direct is not None else table.find_by_target(name)
    out: dict[str, Any] = {"query": name, "reverse": direct is None and bool(entries), "entries": []}
    for e in entries:
        item: dict[str, Any] = {
            "cuda": e.cuda, "hip": e.hip, "roc": e.roc, "family": e.family, "kind": e.kind,
            "section": e.section,
            "cuda_cells": {"A": _fmt(e.cuda_added), "D": _fmt(e.cuda_deprecated),
                           "C": _fmt_many(e.cuda_changed), "R": _fmt(e.cuda_removed)},
            "hip_cells": {"A": _fmt(e.hip_added), "D": _fmt(e.hip_deprecated),
                          "C": _fmt_many(e.hip_changed), "R": _fmt(e.hip_removed),
                          "U": _fmt_many(e.hip_unsupported_cuda), "E": _fmt_exp(e.hip_experimental)},
            "roc_cells": {"A": _fmt(e.roc_added), "D": _fmt(e.roc_deprecated),
                          "C": _fmt_many(e.roc_changed), "R": _fmt(e.roc_removed),
                          "E": _fmt_exp(e.roc_experimental)},
            "spans": [{"hip": s.hip, "range": s.range_text(), "note": s.note} for s in e.spans],
            "targets": {},
        }
        for v in views:
            r = v.resolve(e.cuda)
            assert r is not None  # e came from the table
            item["targets"][short_version(v.rocm)] = {
                "status": r.status.value, "target": r.target, "apply": r.apply, "detail": r.detail}
        out["entries"].append(item)
    rule = table.macros.get(name)
    if rule is not None:
        out["macro"] = {"action": rule.action, "target": rule.target, "note": rule.note}
    ns = table.namespaces.get(name)
    if ns is not None:
        out["namespace"] = {"action": ns.action, "target": ns.target, "library": ns.library, "note": ns.note}
    headers = {short_version(v.rocm): h for v in views if (h := v.header(name)) is not None}
    if headers:
        out["header"] = {t: {"action": h.action, "target": h.target, "library": h.library,
                             "note": h.note, "apply": h.apply} for t, h in headers.items()}
    if not entries and not any(k in out for k in ("macro", "namespace", "header")):
        return None
    return out


def format_description(desc: dict[str, Any]) -> str:
    """The text form of ``describe``: one block per entry, one line per target."""
    lines: list[str] = []
    if desc["reverse"]:
        names = ", ".join(e["cuda"] for e in desc["entries"])
        lines.append(f"{desc['query']} is the HIP/ROC name for: {names}")
    for e in desc["entries"]:
        lines.append(f"{e['cuda']}  {e['family']} {e['kind']}  ({e['section']})")
        lines.append(f"  HIP name: {e['hip'] or '-'}    ROC name: {e['roc'] or '-'}")
        for side in ("cuda", "hip", "roc"):
            cells = "  ".join(f"{k} {v}" for k, v in e[f"{side}_cells"].items())
            lines.append(f"  {side.upper():<4}  {cells}")
        for span in e["spans"]:
            lines.append(f"  HIP spelling {span['hip'] or '-'}: {span['range']}"
                         + (f" — {span['note']}" if span["note"] else ""))
        width = max(len(t) for t in e["targets"]) + 1
        for t, r in e["targets"].items():
            if r["apply"] and r["target"]:
                text = f"{r['status']} → {r['target']}"
                if r["detail"] != f"{e['cuda']} → {r['target']}":
                    text += f" ({r['detail']})"
            else:
                text = f"{r['status']} ({r['detail']})"
            lines.append(f"  {t + ':':<{width}} {text}")
    if "macro" in desc:
        m = desc["macro"]
        lines.append(f"macro {desc['query']}: {m['action']}"
                     + (f" → {m['target']}" if m["target"] else "") + (f" — {m['note']}" if m["note"] else ""))
    if "namespace" in desc:
        n = desc["namespace"]
        lines.append(f"namespace {desc['query']}: {n['action']}"
                     + (f" → {n['target']}" if n["target"] else "") + f" ({n['library']})"
                     + (f" — {n['note']}" if n["note"] else ""))
    for t, h in desc.get("header", {}).items():
        lines.append(f"header {desc['query']} on {t}: {h['action']}"
                     + (f" → {h['target']}" if h["target"] else "") + f" ({h['library']})"
                     + (f" — {h['note']}" if h["note"] else ""))
    return "\n".join(lines)


def close_names(table: MappingTable, name: str, n: int = 5) -> list[str]:
    """Known CUDA/HIP/ROC names, macros and headers spelled like ``name`` (for typos). The
    cutoff is stricter than for option keys: tens of thousands of names would otherwise
    answer every typo with a handful of unrelated ones."""
    from hipport.suggest import close_matches

    pool = [*table.entries, *table.reverse_index(), *table.macros, *table.headers]
    return close_matches(name, pool, n=n, cutoff=0.75)


def format_summary(table: MappingTable, targets: tuple[Version, ...] | None = None) -> str:
    """The generator's closing table: rows, rows with a HIP name, rows applied per target."""
    summary = family_summary(table, targets)
    heads = [short_version(t) for t in summary[0].applied] if summary else []
    lines = [f"{'family':<10}{'rows':>7}{'HIP name':>10}" + "".join(f"{'maps ' + h:>12}" for h in heads)]
    for s in summary:
        lines.append(f"{s.family:<10}{s.rows:>7}{s.with_hip:>10}" + "".join(f"{n:>12}" for n in s.applied.values()))
    total = [sum(s.applied[t] for s in summary) for t in (summary[0].applied if summary else ())]
    lines.append(f"{'total':<10}{sum(s.rows for s in summary):>7}{sum(s.with_hip for s in summary):>10}"
                 + "".join(f"{n:>12}" for n in total))
    return "\n".join(lines)
