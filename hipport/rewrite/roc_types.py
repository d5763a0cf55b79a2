"""With ``--roc``: the element types the ROC libraries take, written where that is sure.

A call renamed to rocBLAS or rocSPARSE takes ``rocblas_float_complex*`` (or
``rocsparse_float_complex*``, a distinct class) where the cuBLAS/cuSPARSE call took
``cuComplex*``; renaming the type to HIP's ``hipFloatComplex`` leaves every such call
uncompilable. hipify-clang writes the ROC type. hipport does too, per file and per type
group (``[[roc_types]]`` of ``mappings/arguments.toml``), but only where the file cannot
notice the difference: the ROC classes keep their parts private and have no HIP helper
functions, and ``rocblas_half`` is a struct without arithmetic. Where that is not sure the
HIP spelling stays, one HP119 finding says why, and the calls keep their HP119 findings.

The decision needs the whole file (a declaration may come after the calls), so the walk
only records the type tokens and the ROC calls; the file visitor decides, rewrites the
tokens' rename edits and reports the deferred call findings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from hipport.context import Context
from hipport.edits import Edit
from hipport.parse import Node
from hipport.rewrite import REGISTRY
from hipport.rules.api.conversion import ROC_ARGUMENTS

#: Node types a type token's declaration can be, climbing from the token.
_DECLARATIONS = frozenset({"declaration", "parameter_declaration", "field_declaration",
                           "optional_parameter_declaration"})
_LIBRARIES = {"rocblas_": "rocblas", "rocsparse_": "rocsparse"}
_LIBRARY_NAMES = {"rocblas": "rocBLAS", "rocsparse": "rocSPARSE"}


@dataclass(frozen=True, slots=True)
class Group:
    """One ``[roc_type_groups.*]``: what makes the file-wide rewrite unsure."""

    name: str
    helpers: re.Pattern[bytes]
    pointers_only: bool
    why: str


@dataclass(frozen=True, slots=True)
class RocType:
    cuda: str
    group: Group
    spellings: dict[str, str]  # library → ROC spelling


@lru_cache(maxsize=1)
def roc_types() -> dict[str, RocType]:
    from hipport.rewrite.arguments import document  # it imports this module

    doc = document()
    groups = {name: Group(name, re.compile(rb"\b(?:" + g["helpers"].encode() + rb")\b"),
                          bool(g["pointers_only"]), g["why"])
              for name, g in doc.get("roc_type_groups", {}).items()}
    return {t["cuda"]: RocType(t["cuda"], groups[t["group"]],
                               {lib: t[lib] for lib in _LIBRARY_NAMES if lib in t})
            for t in doc.get("roc_types", [])}


def _is_roc_type(name: str) -> bool:
    return name in roc_types()


def library_of(target: str) -> str | None:
    """``rocblas`` / ``rocsparse`` for a ROC function name, else None."""
    return next((lib for prefix, lib in _LIBRARIES.items() if target.startswith(prefix)), None)


@dataclass
class RocFile:
    """Per file: the ROC element-type tokens met, the HP119 call findings waiting for the
    file's decision, and the ROC libraries the file's rewritten calls belong to (added by
    ``hipport.rewrite.arguments``)."""

    tokens: list[tuple[Node, bool]] = field(default_factory=list)
    deferred: list[tuple] = field(default_factory=list)
    libraries: set[str] = field(default_factory=set)


@REGISTRY.visits("type_identifier", "identifier", names=_is_roc_type, when=lambda options: options.roc)
def record_type(node: Node, ctx: Context) -> None:
    """Remember a token of a ROC element type; ``rewrite_types`` decides at the end."""
    if ctx.text(node) in roc_types():
        ctx.state(RocFile).tokens.append((node, ctx.in_macro_body))


def defer_call(ctx: Context, node: Node, head: str, now: list[str], by_group: list[tuple[str, str]],
               suggestion: str) -> None:
    """An HP119 call finding whose type messages depend on the file's decision."""
    ctx.state(RocFile).deferred.append((node, head, now, by_group, suggestion))


@REGISTRY.visits_file
def rewrite_types(ctx: Context) -> None:
    """Write each sure group's tokens the ROC way; report the unsure ones and the calls."""
    state = ctx.states.get(RocFile)
    if state is None or (not state.tokens and not state.deferred):
        return
    tokens, deferred, libraries = state.tokens, state.deferred, state.libraries
    types = roc_types()
    by_group: dict[str, list[tuple[Node, bool]]] = {}
    for node, in_macro in tokens or ():
        by_group.setdefault(types[ctx.text(node)].group.name, []).append((node, in_macro))
    rewritten: set[str] = set()
    for group, found in by_group.items():
        if not libraries:
            continue  # no ROC call takes the type: the HIP spelling is right
        why, library = _unsure(ctx, found, libraries)
        first = found[0][0]
        name = ctx.text(first)
        if why is None:
            _respell(ctx, [n for n, _ in found], library)
            rewritten.add(group)
        else:
            ctx.report(ROC_ARGUMENTS, first,
                       f"`{name}` is not written as the ROC type: {why}",
                       "convert the values by hand where they meet the ROC calls, or convert "
                       "without --roc")
    for node, head, now, group_messages, suggestion in deferred:
        messages = now + [m for g, m in group_messages if g not in rewritten]
        if messages:
            ctx.report(ROC_ARGUMENTS, node, head + "; ".join(messages), suggestion)


def _unsure(ctx: Context, found: list[tuple[Node, bool]], libraries: set[str]) -> tuple[str | None, str]:
    """Why the group's tokens cannot be written the ROC way (None: they can), and the library."""
    rtype = roc_types()[ctx.text(found[0][0])]
    group = rtype.group
    if len(libraries) > 1:
        return "the file calls rocBLAS and rocSPARSE, whose element types are distinct classes", ""
    library = next(iter(libraries))
    if library not in rtype.spellings:
        return f"{_LIBRARY_NAMES[library]} has no {rtype.cuda} type", library
    if any(in_macro for _, in_macro in found):
        return "it is used in a #define body", library
    own = {t.encode() for t, r in roc_types().items() if r.group is group}
    helper = next((m.group(0).decode() for m in group.helpers.finditer(ctx.src) if m.group(0) not in own), None)
    if helper is not None:
        return f"the file uses `{helper}`; {group.why}", library
    for node, _ in found:
        why = _declared_unsure(ctx, node, group)
        if why is not None:
            return f"{why}; {group.why}", library
    return None, library


def _declared_unsure(ctx: Context, node: Node, group: Group) -> str | None:
    """Why a declaration by this token makes the group unsure, or None."""
    decl = node.parent
    for _ in range(3):  # the type, or a qualified / template type around it
        if decl is None or decl.type in _DECLARATIONS or decl.type == "type_definition":
            break
        decl = decl.parent
    if decl is None or decl.type not in _DECLARATIONS:
        return "a typedef names it" if decl is not None and decl.type == "type_definition" else None
    for d in decl.children_by_field_name("declarator"):
        pointer = False
        while d is not None and d.type not in ("identifier", "field_identifier"):
            pointer |= d.type in ("pointer_declarator", "array_declarator")
            d = d.child_by_field_name("declarator")
        if d is None:
            continue
        name = re.escape(ctx.text(d)).encode()
        if group.pointers_only and not pointer:
            return f"`{ctx.text(d)}` holds a value"
        if group.pointers_only and re.search(rb"\b" + name + rb"\s*\[", ctx.src):
            return f"`{ctx.text(d)}` is indexed"
        if re.search(rb"\b" + name + rb"\b(?:\s*\[[^\]]*\])*\s*(?:\.|->)\s*[xy]\b", ctx.src):
            return f"the file reads `{ctx.text(d)}`'s members"
    return None


def _respell(ctx: Context, nodes: list[Node], library: str) -> None:
    """Replace the rename edit of each token (or add one: ``__half`` keeps its name in HIP)."""
    at = {(e.start, e.end): i for i, e in enumerate(ctx.edits) if e.start != e.end}
    types = roc_types()
    for node in nodes:
        new = types[ctx.text(node)].spellings[library].encode()
        edit = Edit(node.start_byte, node.end_byte, new)
        i = at.get((node.start_byte, node.end_byte))
        if i is None:
            ctx.edits.append(edit)
            ctx.rewrites += 1
        else:
            ctx.edits[i] = edit
