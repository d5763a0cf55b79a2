"""The rule catalogue as ``hipport rules`` prints it: a table, a docs page, one rule's page.

Lives with the renderers rather than in ``cli`` so the command stays logic-free and the
Markdown page (the published rule reference) is built by the same code that users see.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from hipport.report.common import rocm_range
from hipport.report.markdown import anchor, code, escape
from hipport.rule import Rule
from hipport.suggest import close_matches
from hipport.versions import short_version


def find(rules: Mapping[str, Rule], query: str) -> Rule | None:
    """A rule by code (any case, ``hp201``) or by slug (``warp-mask-32bit``)."""
    wanted = query.strip().lower()
    for rule in rules.values():
        if wanted in (rule.code.lower(), rule.slug.lower()):
            return rule
    return None


def unknown_message(rules: Mapping[str, Rule], query: str) -> str:
    """The error for an unknown rule, naming the closest codes or slugs."""
    codes = [r.code for r in rules.values()]
    slugs = [r.slug for r in rules.values()]
    close = close_matches(query.strip(), codes) + close_matches(query.strip(), slugs)
    hint = f"; did you mean {', '.join(close)}?" if close else "; `hipport rules` lists them all"
    return f"hipport: unknown rule {query!r}{hint}"


def rule_dict(rule: Rule) -> dict:
    return {
        "code": rule.code,
        "slug": rule.slug,
        "title": rule.title,
        "severity": str(rule.severity),
        "effort": str(rule.effort),
        "family": rule.family,
        "rocm_min": short_version(rule.rocm_min) if rule.rocm_min else None,
        "rocm_max": short_version(rule.rocm_max) if rule.rocm_max else None,
        "doc": rule.doc,
    }


def _table(rules: list[Rule]) -> str:
    if not rules:
        return "no rules registered\n"
    rows = [("CODE", "SEVERITY", "SLUG", "ROCM", "TITLE")]
    rows += [(r.code, str(r.severity), r.slug, rocm_range(r), r.title) for r in rules]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[4] for row in rows]
    return "\n".join(lines) + "\n"


def _markdown_page(rule: Rule, level: int = 1) -> str:
    hashes = "#" * level
    meta = [
        ("Code", code(rule.code)),
        ("Slug", code(rule.slug)),
        ("Severity", str(rule.severity)),
        ("Effort", str(rule.effort)),
        ("Family", rule.family),
        ("ROCm", escape(rocm_range(rule))),
    ]
    lines = [f"{hashes} {rule.code}: {escape(rule.title)}", ""]
    lines += [f"- **{k}:** {v}" for k, v in meta]
    if rule.doc:
        lines += ["", rule.doc]
    return "\n".join(lines) + "\n"


def _markdown_list(rules: list[Rule]) -> str:
    lines = ["# hipport rules", "", "| Code | Severity | Slug | ROCm | Title |", "| --- | --- | --- | --- | --- |"]
    lines += [
        f"| [{r.code}](#{anchor(r.code)}) | {r.severity} | {code(r.slug)} | {escape(rocm_range(r))}"
        f" | {escape(r.title)} |"
        for r in rules
    ]
    pages = [f'<a id="{anchor(r.code)}"></a>\n\n{_markdown_page(r, level=2)}' for r in rules]
    return "\n".join(lines) + "\n\n" + "\n".join(pages)


def render_list(rules: Iterable[Rule], fmt: str = "text") -> str:
    """Every rule, sorted by code: an aligned table, a JSON array or a Markdown docs page."""
    ordered = sorted(rules, key=lambda r: r.code)
    if fmt == "json":
        return json.dumps([rule_dict(r) for r in ordered], indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return _markdown_list(ordered)
    return _table(ordered)


def render_page(rule: Rule, fmt: str = "text") -> str:
    """One rule's page: title, metadata, then its doc with the before/after example."""
    if fmt == "json":
        return json.dumps(rule_dict(rule), indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return _markdown_page(rule)
    meta = [
        ("severity", str(rule.severity)),
        ("effort", str(rule.effort)),
        ("family", rule.family),
        ("rocm", rocm_range(rule)),
    ]
    head = [f"{rule.code} ({rule.slug}): {rule.title}", ""]
    head += [f"  {k:<9}{v}" for k, v in meta]
    return "\n".join(head) + ("\n\n" + rule.doc if rule.doc else "") + "\n"
