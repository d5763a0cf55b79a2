"""HP101 for a CUDA driver-API constant no mapping table knows: it is left as written, and
a HIP build has no such name."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hipport.context import Context
from hipport.names import in_tables
from hipport.parse import Node, find_all
from hipport.rules import REGISTRY
from hipport.rules.api.status import NoHipCounterpart
from hipport.rules.released_headers.common import raw_data

_PATTERN = re.compile(raw_data()["unknown_names"]["pattern"])
#: Parents where the name is tested by the preprocessor (compiles either way: HP106's) or
#: is a macro's parameter.
_TESTED = frozenset({"preproc_ifdef", "preproc_elifdef", "preproc_defined", "preproc_if",
                     "preproc_elif", "preproc_params"})
#: Parents whose ``name`` / ``declarator`` field is a name the project declares itself.
_DECLARING = frozenset({"preproc_def", "preproc_function_def", "enumerator", "init_declarator",
                        "declaration", "field_declaration", "parameter_declaration"})


@dataclass
class _Enumerators:
    names: frozenset[str] | None = None


def _enumerators(ctx: Context) -> frozenset[str]:
    """The enumerators this file declares, found once (only files with a candidate ask)."""
    state = ctx.state(_Enumerators)
    if state.names is None:
        state.names = frozenset(ctx.text(n.child_by_field_name("name"))
                                for n in find_all(ctx.tree.root_node, ("enumerator",)))
    return state.names


def _unknown(name: str) -> bool:
    return _PATTERN.fullmatch(name) is not None and not in_tables(name)


@REGISTRY.visits("identifier", names=_unknown, codes=(NoHipCounterpart,))
def _unknown_name(node: Node, ctx: Context) -> None:
    parent = node.parent
    name = ctx.text(node)
    if parent is None or parent.type in _TESTED or not _unknown(name):
        return
    if parent.type in _DECLARING and node in (parent.child_by_field_name("name"),
                                              parent.child_by_field_name("declarator")):
        return
    if parent.type == "call_expression" and parent.child_by_field_name("function") == node:
        return  # CU_CHECK(x): a project's function-like macro, which CUDA's constants are not
    if name in _enumerators(ctx):
        return  # the project's own enum constant, declared in this file
    ctx.report(NoHipCounterpart, node,
               f"{name}: a CUDA driver-API name that no mapping table knows (no HIP "
               "counterpart in any release); left as written",
               f"Replace {name} by hand, or leave its use to the CUDA build "
               "(#ifndef __HIP_PLATFORM_AMD__).")
