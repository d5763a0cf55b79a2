"""HP201, HP202 as the deep engine sees them: the lane mask of a ``*_sync`` builtin whose
type is 32-bit where the text does not say so — a typedef in another header, or a
template parameter instantiated as ``unsigned`` (by a call in this file).

Calls are where templates get their arguments: each call records the instantiation it
makes, and a mask typed by a template parameter waits until the whole unit is seen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hipport.rules import REGISTRY
from hipport.rules.warp.masks import WarpMask32, WarpMaskVariable32
from hipport.rules.warp.vocab import MASKED

if TYPE_CHECKING:
    from clang.cindex import Cursor, TranslationUnit, Type

    from hipport.deep import ClangUnit


def clang_kinds():
    """The engine's libclang enum sets (imported on first use: the default engine never
    loads ``hipport.deep``)."""
    from hipport.deep import clang_kinds as kinds

    return kinds()

_CODES = (WarpMask32, WarpMaskVariable32)
_TYPE_PARAM_RE = re.compile(r"type-parameter-(\d+)-(\d+)")


@dataclass
class _PendingMask:
    """A ``*_sync`` call in a template whose mask type is the template's parameter ``index``."""

    call: "Cursor"
    mask: "Cursor"
    builtin: str
    index: int


@dataclass
class _Instantiation:
    args: list["Type"]
    call: "Cursor"
    label: str  # f<unsigned int>


@dataclass
class _Templates:
    """Per unit: masks typed by a template parameter (by the template's USR), and the
    instantiations calls make (by the primary template's USR)."""

    pending: dict[str, list[_PendingMask]] = field(default_factory=dict)
    instances: dict[str, list[_Instantiation]] = field(default_factory=dict)


@REGISTRY.visits_clang("CALL_EXPR", codes=_CODES)
def _call(call: "Cursor", unit: "ClangUnit") -> None:
    _record_instantiation(unit, call)
    templates = unit.templates
    name = _callee_name(call)
    if name not in MASKED:
        return
    args = list(call.get_arguments()) or list(call.get_children())[1:]
    if not args:
        return
    mask = _strip(args[0])
    mtype = mask.type.get_canonical()
    param = _TYPE_PARAM_RE.search(mtype.spelling)
    if param is not None:
        depth, index = int(param.group(1)), int(param.group(2))
        if depth < len(templates):
            unit.state(_Templates).pending.setdefault(templates[depth].get_usr(), []).append(
                _PendingMask(call, mask, name, index))
        return
    bits = _narrow_int_bits(mtype)
    if bits is None or not unit.in_main(call):
        return
    _narrow_mask(unit, mask, name, _shown_type(mask.type), bits, unit.span(mask), "")

def _narrow_mask(unit: "ClangUnit", mask: "Cursor", builtin: str, shown: str, bits: int,
                 where: tuple[int, int], why: str) -> None:
    """Report a mask of ``bits`` bits: HP201 for a constant, HP202 for a variable/expression.

    ``shown`` is the type as the message names it; ``why`` says how a template made it.
    """
    text = _text(unit.ctx.src, mask) or "mask"
    origin = _declared_where(mask.type, unit.main)
    ref = _direct_ref(mask)
    if ref is None and not why:
        unit.report(
            WarpMask32, where,
            f"mask `{text}` of `{builtin}` has type {shown} ({bits} bits){origin}; a wave on CDNA "
            "has 64 lanes and HIP masks are 64-bit",
            "use the 64-bit full mask `0xffffffffffffffffull`",
        )
        return
    unit.report(
        WarpMaskVariable32, where,
        f"mask `{text}` of `{builtin}` has type {shown} ({bits} bits){origin}{why}; "
        "HIP lane masks are 64-bit",
        "declare the mask as `unsigned long long` (or `uint64_t`)",
        also_lines=[unit.line_of(ref)] if ref is not None else [],
    )

def _record_instantiation(unit: "ClangUnit", call: "Cursor") -> None:
    """Calls are where templates get their arguments: a function template's, or the class's of a member."""
    from clang.cindex import conf

    fn = call.referenced
    if fn is None or fn.kind not in clang_kinds().functions:
        return
    primary = conf.lib.clang_getSpecializedCursorTemplate(fn)
    n = fn.get_num_template_arguments()
    if primary is not None and n > 0:
        args = [fn.get_template_argument_type(i) for i in range(n)]
        label = f"{fn.spelling}<{', '.join(a.spelling for a in args)}>"
        unit.state(_Templates).instances.setdefault(primary.get_usr(), []).append(_Instantiation(args, call, label))
    owner = fn.semantic_parent
    if owner is None:
        return
    owner_primary = conf.lib.clang_getSpecializedCursorTemplate(owner)
    n = owner.type.get_num_template_arguments()
    if owner_primary is not None and n > 0:
        args = [owner.type.get_template_argument_type(i) for i in range(n)]
        unit.state(_Templates).instances.setdefault(owner_primary.get_usr(), []).append(
            _Instantiation(args, call, owner.type.spelling))

@REGISTRY.visits_clang(codes=_CODES)
def _resolve_templates(unit: "ClangUnit", tu: "TranslationUnit") -> None:
    """A template's mask is 32-bit when an instantiation in this file makes it so."""
    found = unit.state(_Templates)
    for usr, masks in found.pending.items():
        for pm in masks:
            narrow = [(inst, bits) for inst in found.instances.get(usr, ())
                      if pm.index < len(inst.args) and (bits := _narrow_int_bits(inst.args[pm.index].get_canonical()))]
            if not narrow:
                continue
            if unit.in_main(pm.call):
                inst, bits = narrow[0]
                _narrow_mask(unit, pm.mask, pm.builtin, f"`{pm.mask.type.spelling}`", bits,
                                  unit.span(pm.mask), _instantiated(inst, pm, len(narrow)))
                continue
            for inst, bits in narrow:  # the template lives in a header: report the instantiation
                if unit.in_main(inst.call):
                    where = f"{Path(pm.call.location.file.name).name}:{pm.call.location.line}"
                    _narrow_mask(unit, pm.mask, pm.builtin, f"`{pm.mask.type.spelling}`", bits,
                                      unit.span(inst.call),
                                      f" in the template at {where}" + _instantiated(inst, pm, 1))


def _instantiated(inst: _Instantiation, pm: _PendingMask, count: int) -> str:
    more = f" and {count - 1} more" if count > 1 else ""
    arg = inst.args[pm.index].spelling
    return f", instantiated as `{arg}` by `{inst.label}` at line {inst.call.location.line}{more}"


def _callee_name(call: "Cursor") -> str:
    """The called name, also for a dependent call in a template (callee unresolved)."""
    from clang.cindex import CursorKind

    if call.spelling:
        return call.spelling
    stack = list(call.get_children())[:1]
    while stack:
        c = stack.pop()
        if c.kind in (CursorKind.DECL_REF_EXPR, CursorKind.OVERLOADED_DECL_REF) and c.spelling:
            return c.spelling
        stack.extend(c.get_children())
    return ""


def _strip(expr: "Cursor") -> "Cursor":
    """Look through implicit conversions and parentheses to the expression as written."""
    from clang.cindex import CursorKind

    while expr.kind in (CursorKind.UNEXPOSED_EXPR, CursorKind.PAREN_EXPR):
        children = list(expr.get_children())
        if len(children) != 1:
            break
        expr = children[0]
    return expr


def _direct_ref(expr: "Cursor") -> "Cursor | None":
    """The declaration a mask expression reads, when it reads one (not a pure constant)."""
    from clang.cindex import CursorKind

    stack = [expr]
    while stack:
        c = stack.pop()
        if c.kind in (CursorKind.DECL_REF_EXPR, CursorKind.MEMBER_REF_EXPR):
            ref = c.referenced
            if ref is not None and ref.kind != CursorKind.ENUM_CONSTANT_DECL:
                return ref
        stack.extend(c.get_children())
    return None


def _narrow_int_bits(t: "Type") -> int | None:
    """Bits of an integer type narrower than 64 (a HIP lane mask), else None."""
    t = t.get_canonical()
    if t.kind not in clang_kinds().integers:
        return None
    size = t.get_size()
    return size * 8 if 0 < size < 8 else None


def _shown_type(t: "Type") -> str:
    """`` `lane_mask_t` = `unsigned int` `` when a typedef hides the width, else the type."""
    canonical = t.get_canonical().spelling
    return f"`{t.spelling}`" + (f" = `{canonical}`" if canonical != t.spelling else "")


def _declared_where(t: "Type", main: str) -> str:
    """`` (typedef in mask.h:3)`` when a typedef or alias names the type in another file."""
    decl = t.get_declaration()
    loc = decl.location if decl is not None else None
    if loc is None or loc.file is None or loc.file.name == main:
        return ""
    return f" (declared in {Path(loc.file.name).name}:{loc.line})"


def _text(src: bytes, cursor: "Cursor") -> str:
    start, end = cursor.extent.start.offset, cursor.extent.end.offset
    if cursor.extent.start.file is None or not 0 <= start < end <= len(src) or end - start > 80:
        return ""
    return src[start:end].decode("utf-8", "replace")
