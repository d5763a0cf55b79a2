"""Legacy cuBLAS (v1) calls are reported and left, not renamed with the wrong arguments.

``cublas.h`` declares the handle-less v1 API under the same names that ``cublas_v2.h``
maps to the handle API (``cublasSgemm`` is ``cublasSgemm_v2`` there). HIPIFY's tables map
the names only, and hipBLAS has only the handle API, so a v1 call renamed to hipBLAS would
compile against the wrong parameters or not at all. A call is v1 when the file includes
``cublas.h`` and not ``cublas_v2.h``, or when its first argument is a character literal
(``'N'``: a v1 transpose flag where v2 passes the handle). Only names with a ``_v2``
sibling in the tables can be v1 calls.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hipport.context import Context
from hipport.parse import Node, call_name
from hipport.rewrite import REGISTRY
from hipport.names import in_tables
from hipport.rules.api.conversion import LEGACY_CUBLAS

_V1_INCLUDE = re.compile(rb'#\s*include\s*[<"]cublas\.h[>"]')
_V2_INCLUDE = re.compile(rb'#\s*include\s*[<"]cublas_v2\.h[>"]')


def _maybe_v1(name: str) -> bool:
    return name.startswith("cublas") and not name.endswith("_v2") and in_tables(name + "_v2")


@dataclass
class _LegacyBlas:
    """Per file: whether it includes only the v1 cuBLAS header (None until asked), and the
    (start, end) of the reported v1 call names whose renames are undone."""

    v1_file: bool | None = None
    keep_names: set[tuple[int, int]] = field(default_factory=set)


def _v1_file(ctx: Context) -> bool:
    state = ctx.state(_LegacyBlas)
    found = state.v1_file
    if found is None:
        found = state.v1_file = bool(_V1_INCLUDE.search(ctx.src)) and not _V2_INCLUDE.search(ctx.src)
    return found


@REGISTRY.visits("call_expression", names=_maybe_v1)
def legacy_cublas_call(node: Node, ctx: Context) -> None:
    name = call_name(ctx.src, node)
    fn = node.child_by_field_name("function")
    args = node.child_by_field_name("arguments")
    if name is None or fn is None or args is None or fn.type != "identifier" or not _maybe_v1(name):
        return
    argv = [c for c in args.named_children if c.type != "comment"]
    if not (_v1_file(ctx) or (argv and argv[0].type == "char_literal")):
        return
    ctx.state(_LegacyBlas).keep_names.add((fn.start_byte, fn.end_byte))
    ctx.report(LEGACY_CUBLAS, node,
               f"`{name}` is a legacy cuBLAS (v1) call: hipBLAS has only the handle API, so it is left as written",
               "port it to the cuBLAS v2 API (cublas_v2.h, a cublasHandle_t) and convert again")


@REGISTRY.visits_file
def keep_legacy_names(ctx: Context) -> None:
    """Undo the renames of the reported v1 calls (the identifier rewriter renames by name)."""
    state = ctx.states.get(_LegacyBlas)
    keep = state.keep_names if state is not None else None
    if not keep:
        return
    before = len(ctx.edits)
    ctx.edits[:] = [e for e in ctx.edits if (e.start, e.end) not in keep or e.start == e.end]
    ctx.rewrites -= before - len(ctx.edits)

