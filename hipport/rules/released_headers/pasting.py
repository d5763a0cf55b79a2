"""HP190 at the definition: a ``#define`` that pastes a CUDA prefix onto its argument
(the rule and its page are in ``rules/deep/pasted_names.py``, whose deep engine reports
each use)."""

from __future__ import annotations

import re
from functools import lru_cache

from hipport.context import Context
from hipport.parse import Node
from hipport.rules import REGISTRY
from hipport.rules.deep.pasted_names import ApiNameBuiltByMacro
from hipport.rules.released_headers.common import data


@REGISTRY.visits("preproc_function_def", codes=(ApiNameBuiltByMacro,))
def _pasting_macro(node: Node, ctx: Context) -> None:
    """``#define RT(name) cuda##name``: the names the macro builds are never written, so
    never rewritten. The deep engine reports each use; this reports the definition, where
    the compiler's "expanded from macro" note points."""
    value = node.child_by_field_name("value")
    if value is None or not ctx.may_contain(b"##", within=value):
        return
    m = _pasted_prefix().search(ctx.text(value))
    if m is not None:
        name = node.child_by_field_name("name")
        macro = ctx.text(name) if name is not None else "?"
        ctx.report(ApiNameBuiltByMacro, node.child_by_field_name("name") or node,
                   f"macro `{macro}` pastes the CUDA prefix `{m[1]}` onto its argument: the names it "
                   "builds are not rewritten, so the HIP build still uses the CUDA ones",
                   f"write the names out, or paste the HIP prefix in a HIP branch of `{macro}`")


@lru_cache(maxsize=1)
def _pasted_prefix() -> re.Pattern[str]:
    prefixes = sorted(data().pasted_prefixes, key=len, reverse=True)
    return re.compile(r"(?<![\w])(" + "|".join(map(re.escape, prefixes)) + r")\s*##")
