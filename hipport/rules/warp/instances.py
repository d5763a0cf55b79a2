"""The values a function template's parameter takes at the instantiations its file spells.

DeepSpeed's transformer/softmax_kernels.cu (built for ROCm) tiles each block with
``cg::tiled_partition<tbSize>``, ``tbSize`` a template parameter, and launches the kernel
only as ``attn_softmax<2, …>`` … ``attn_softmax<32, …>``: every tile has at most 32 lanes,
so its shuffles stay inside 32-lane groups on a wave of 64 too (``logical._logical_groups``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from hipport.context import word_starts
from hipport.parse import Node, ancestors, function_declarator, walk
from hipport.preprocessor import directives as dv
from hipport.preprocessor.includers import HEADER_SUFFIXES
from hipport.rules.warp.syntax import small_constant

if TYPE_CHECKING:
    from hipport.context import Context


def template_values(ctx: Context, func: Node, name: str) -> list[int] | None:
    """The constant values template parameter ``name`` of ``func`` takes at each place the
    file names ``func`` (``uses``); None when ``name`` is no template parameter of ``func``,
    the file names it nowhere or is a header, one place gives that parameter something other than an
    integer constant (a name, a default left out, a pack, a call that deduces it), or a
    ``#define`` body spells ``func``'s name: the macro's uses give the values (``#define
    LAUNCH(n) f<n><<<…>>>`` then ``LAUNCH(64)``), which the tree of the file does not show."""
    template = next((a for a in ancestors(func) if a.type == "template_declaration"), None)
    params = template.child_by_field_name("parameters") if template is not None else None
    if params is None or name not in parameter_names(ctx, params):
        return None
    values = [given.get(name) for given in uses(ctx, func) or ()]
    return values if values and None not in values else None  # type: ignore[return-value]


def parameter_names(ctx: Context, params: Node) -> list[str | None]:
    """The name each parameter of a (template) parameter list declares, None for one
    without a name (``int``, ``typename...``)."""
    names: list[str | None] = []
    for p in params.named_children:
        found = p.child_by_field_name("declarator")
        while found is not None and found.type not in ("identifier", "type_identifier"):
            found = found.child_by_field_name("declarator")
        names.append(ctx.text(found) if found is not None else None)
    return names


def uses(ctx: Context, func: Node) -> list[dict[str, int | None]] | None:
    """For each place the file names ``func`` outside its own definition and declarations,
    the parameters that use binds: template parameters from ``f<…>``, and a kernel's
    parameters from a launch ``f<<<…>>>(…)``, each to its integer constant or None. A use
    that is no launch (a pointer, a launch helper's argument) binds only its template
    arguments. None when ``func`` is no plain-named function, when the file is a header
    (the files including it instantiate and launch it too, unseen here), or when a
    ``#define`` body spells its name (the macro's uses give the arguments, which the tree of
    the file does not show)."""
    if ctx.path.endswith(HEADER_SUFFIXES):
        return None
    declarator = function_declarator(func)
    target = declarator.child_by_field_name("declarator") if declarator is not None else None
    params = declarator.child_by_field_name("parameters") if declarator is not None else None
    if target is None or target.type != "identifier" or params is None:
        return None
    template = next((a for a in ancestors(func) if a.type == "template_declaration"), None)
    tparams = template.child_by_field_name("parameters") if template is not None else None
    fname = ctx.text(target)
    names = parameter_names(ctx, params)
    tnames = parameter_names(ctx, tparams) if tparams is not None else []
    spelled = re.compile(rb"\b" + re.escape(fname.encode()) + rb"\b")
    if pastes(ctx):
        return None
    found: list[dict[str, int | None]] = []
    for n in walk(ctx.tree.root_node):
        if n.type == "preproc_arg" and spelled.search(ctx.src, n.start_byte, n.end_byte):
            return None
        if n.type != "identifier" or func.start_byte <= n.start_byte < func.end_byte or ctx.text(n) != fname:
            continue
        use, given = n.parent, {}
        if use is not None and use.type == "function_declarator":
            continue  # a declaration
        if use is not None and use.type == "template_function" \
                and (args := use.child_by_field_name("arguments")) is not None:
            given.update(zip(tnames, (small_constant(ctx.src, a) for a in args.named_children)))
            use = use.parent
        if use is not None and use.type == "call_expression" \
                and any(c.type == "kernel_call_syntax" for c in use.children) \
                and (args := use.child_by_field_name("arguments")) is not None:
            given.update(zip(names, (small_constant(ctx.src, a) for a in args.named_children)))
        given.pop(None, None)
        found.append(given)
    return found


def never_instantiated(ctx: Context, func: Node | None) -> bool:
    """``func`` is a function template defined in a source file (not a header) that names it
    nowhere else, not even in a comment, a ``#define`` body or an explicit instantiation:
    no unit but this one sees the definition, so no HIP build instantiates it, and its code
    never runs (DeepSpeed 0.19.8 transformer/softmax_kernels.cu ``softmax_backward_kernel``,
    whose launchers all call ``softmax_backward_kernel_v2``). A header's template is another
    file's to instantiate; a source another file of the run includes is judged there
    (``logical.UNLESS_INCLUDED``, ``pipeline.collect``)."""
    if func is None or ctx.path.endswith(HEADER_SUFFIXES):
        return False
    known = ctx.state(_Unnamed).templates
    found = known.get(func.start_byte)
    if found is None:
        found = known[func.start_byte] = _named_only_where_defined(ctx, func)
    return found


@dataclass
class _Unnamed:
    """Per file: function start -> ``never_instantiated``'s answer (a kernel reports HP204
    at each of its lane expressions; the answer is the function's)."""

    templates: dict[int, bool] = field(default_factory=dict)


def _named_only_where_defined(ctx: Context, func: Node) -> bool:
    template = func.parent
    declarator = function_declarator(func)
    target = declarator.child_by_field_name("declarator") if declarator is not None else None
    if template is None or template.type != "template_declaration" or target is None \
            or target.type != "identifier":
        return False
    # every mention but the definition's own name counts, inside the template too: a parse
    # that error recovery stretched (vLLM's fused_qknorm_rope_kernel.cu, whose #if holds an
    # unbalanced brace) takes the file's later launchers into the template's range
    word = ctx.text(target).encode()
    starts = word_starts(ctx.src, word) if word.isascii() else [
        m.start() for m in re.finditer(rb"\b" + re.escape(word) + rb"\b", ctx.src)]
    return starts == [target.start_byte] and not pastes(ctx)


def pastes(ctx: Context) -> bool:
    """Whether a ``#define`` of the file or of a project header it compiles pastes tokens
    (``##``): the names its uses build (``#define LAUNCH(k) k##_kernel<<<…>>>``, then
    ``LAUNCH(softmax)``) are spelled nowhere, so the spelled uses of a function need not
    be all of them."""
    return any(b"##" in t and _pastes_in(t) for t in (ctx.src, *ctx.branches.header_texts()))


@lru_cache(maxsize=256)
def _pastes_in(text: bytes) -> bool:
    """``pastes`` for one text, read as the branch model reads directives (continued lines
    joined, in linear time: a regex over the raw lines took 17 s for 5,000 lines that each
    start a ``#define`` and continue it)."""
    return any(d.kind == "define" and d.macro is not None and "##" in d.macro[2] for d in dv.scan(text))
