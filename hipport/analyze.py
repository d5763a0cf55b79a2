"""One buffer through the tree: parse once, one walk, every rewriter and rule.

This is the heart the pipeline calls for each file; tests call it directly with bytes.
``#define`` bodies are reparsed as code during the walk (``walk_with_macro_bodies``), so
every visitor also sees the identifiers, launches and masks inside macros, at their real
byte offsets.
"""

from __future__ import annotations

from functools import lru_cache

from hipport import rewrite, rules
from hipport.context import Context
from hipport.options import Options
from hipport.parse import parse, walk_with_macro_bodies


@lru_cache(maxsize=8)
def mapping_view(rocm: tuple[int, ...], roc: bool, experimental: bool):
    """The mapping table seen from one target, loaded once per process."""
    from hipport.mapping import load_table

    return load_table().view(rocm, roc=roc, experimental=experimental)


def analyze(src: bytes, path: str, options: Options) -> Context:
    """Parse ``src`` and run every registered rewriter and rule over it in one walk."""
    tree = parse(src)
    view = mapping_view(options.rocm, options.roc, options.experimental)
    ctx = Context(path=path, src=src, tree=tree, options=options, view=view)
    registries = (rewrite.load(), rules.load())
    table: dict[str, list] = {}
    for reg in registries:
        for node_type, fns in reg.visitors.items():
            table.setdefault(node_type, []).extend(fns)
    for node in walk_with_macro_bodies(src, tree.root_node):
        for fn in table.get(node.type, ()):
            fn(node, ctx)
    for reg in registries:
        for fn in reg.file_visitors:
            fn(ctx)
    ctx.findings = _without_duplicates(ctx.findings)
    return ctx


def _without_duplicates(findings: list) -> list:
    """One finding per thing: exact repeats go, and a feature or library rule (HP3xx,
    HP4xx) at a place supersedes the bare mapping status (HP10x) of the same token,
    because it says what the construct is and what to do instead."""
    unique = list({(f.code, f.line, f.col, f.message): f for f in findings}.values())
    specific = {(f.line, f.col) for f in unique if f.code[:3] in ("HP3", "HP4")}
    return [f for f in unique if not (f.code in _MAPPING_STATUS and (f.line, f.col) in specific)]


#: The bare "what the tables say about this name" codes (unsupported, newer, removed,
#: deprecated, experimental); other HP1xx rules carry information of their own.
_MAPPING_STATUS = frozenset({"HP101", "HP102", "HP103", "HP104", "HP105"})
