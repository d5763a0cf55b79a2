"""``--statistics``: counts instead of a listing, per rule and per API family.

Per rule (ruff's statistics): how many findings each code has. Per API family (hipify's
statistics mode): of the CUDA names the sources spell, how many hipport converts for the
target, how many it leaves for a person (not mapped on the target: reported by the HP1xx
rules unless suppressed or HIP-guarded), how many HIP spells the same (``threadIdx``,
``__shfl_sync``: nothing to do), and how many look like a CUDA API by their prefix
(``mappings/name-prefixes.toml``) but are in no table ("unknown"). A project's own
``#define cudaFoo hipFoo`` alias is not counted: the rewriter leaves it too.

Names are counted on the syntax tree (identifier tokens, never comments or strings) and
in ``#define`` bodies, and decided by the same mapping view the rewriter uses, so the
"converted" column agrees with what ``convert`` rewrites. It parses each source once more
in the main process: an opt-in report, not something every run pays for.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from hipport.findings import Finding
from hipport.options import Options

if TYPE_CHECKING:
    from hipport.pipeline import FileResult

CONVERTED, SAME, LEFT, UNKNOWN = "converted", "same", "left", "unknown"
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_DEFINES = ("preproc_def", "preproc_function_def")


@dataclass
class Statistics:
    rules: Counter = field(default_factory=Counter)  # code → findings
    slugs: dict[str, str] = field(default_factory=dict)
    families: dict[str, Counter] = field(default_factory=dict)  # family → outcome → names

    def add_findings(self, findings: Iterable[Finding]) -> None:
        for f in findings:
            self.rules[f.code] += 1
            self.slugs[f.code] = f.slug

    def add_source(self, src: bytes, options: Options) -> None:
        for family, outcome in name_outcomes(src, options):
            self.families.setdefault(family, Counter())[outcome] += 1

    def add_result(self, result: "FileResult", options: Options) -> None:
        """One file's findings, and its names read from its path: call it before a
        conversion writes over the file (``convert --in-place``)."""
        self.add_findings(result.findings)
        if result.status in ("converted", "unchanged"):
            self.add_file(Path(result.path), options)

    def add_file(self, path: Path, options: Options, data: bytes | None = None) -> None:
        """The CUDA names of one source (``data``, else read from ``path``)."""
        from hipport.files import looks_like_cuda, read_bytes

        if data is None:
            try:
                data = read_bytes(path)
            except OSError:
                return
        if looks_like_cuda(data):
            self.add_source(data, options)


@lru_cache(maxsize=1)
def _prefixes() -> tuple[tuple[re.Pattern[str], str], ...]:
    """(pattern, family) pairs, most specific first, from ``mappings/name-prefixes.toml``."""
    from hipport.datafiles import mappings
    from hipport.options import toml_module

    doc = toml_module().loads((mappings() / "name-prefixes.toml").read_text(encoding="utf-8"))
    return tuple((re.compile(p["pattern"]), p["family"]) for p in doc["prefix"])


def cuda_family(name: str) -> str | None:
    """The API family a CUDA-looking name belongs to by its prefix, or None."""
    for pattern, family in _prefixes():
        if pattern.match(name):
            return family
    return None


def name_outcomes(src: bytes, options: Options) -> list[tuple[str, str]]:
    """(family, outcome) for every CUDA name the file spells, in code or in macro bodies."""
    from hipport.analyze import mapping_view
    from hipport.parse import find_all, parse

    view = mapping_view(options.rocm, options.roc, options.experimental, options.mappings)
    tree = parse(src)
    out: list[tuple[str, str]] = []
    for node in find_all(tree.root_node, ("identifier", "type_identifier", "preproc_arg")):
        parent = node.parent
        if parent is not None and parent.type in _DEFINES and parent.child_by_field_name("name") == node:
            continue  # ``#define cudaFoo hipFoo``: the project's own alias, never rewritten
        spans = [src[node.start_byte:node.end_byte]] if node.type != "preproc_arg" \
            else _WORD.findall(src[node.start_byte:node.end_byte])
        for raw in spans:
            decided = _decide(view, raw.decode("utf-8", "replace"))
            if decided is not None:
                out.append(decided)
    return out


def _decide(view, name: str) -> tuple[str, str] | None:
    macro = view.macro(name)
    if macro is not None:
        if macro.action != "rewrite":
            return "macros", LEFT
        return "macros", SAME if macro.target == name else CONVERTED
    res = view.resolve(name)
    if res is not None:
        if not res.apply:
            return res.entry.family, LEFT
        return res.entry.family, SAME if res.target == name else CONVERTED
    family = cuda_family(name)
    return (family, UNKNOWN) if family is not None else None


def render(stats: Statistics) -> str:
    """Two small tables, counts right-aligned, biggest first (ties by name)."""
    lines = ["Findings per rule:"]
    if not stats.rules:
        lines.append("  none")
    for code, n in sorted(stats.rules.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  {n:>7}  {code}  {stats.slugs.get(code, '')}".rstrip())
    lines += ["", "CUDA names per API family:",
              f"  {'family':<12}{CONVERTED:>11}{SAME:>7}{LEFT:>7}{UNKNOWN:>9}"]
    if not stats.families:
        lines.append("  none")
    total: Counter = Counter()
    for family, counts in sorted(stats.families.items(), key=lambda kv: (-sum(kv[1].values()), kv[0])):
        total.update(counts)
        lines.append(f"  {family:<12}{counts[CONVERTED]:>11}{counts[SAME]:>7}{counts[LEFT]:>7}{counts[UNKNOWN]:>9}")
    if len(stats.families) > 1:
        lines.append(f"  {'total':<12}{total[CONVERTED]:>11}{total[SAME]:>7}{total[LEFT]:>7}{total[UNKNOWN]:>9}")
    return "\n".join(lines) + "\n"
