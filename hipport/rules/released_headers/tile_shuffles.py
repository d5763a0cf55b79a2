"""HP338: a cooperative-groups tile shuffle of a value HIP's shuffles do not take."""

from __future__ import annotations

from dataclasses import dataclass

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.parse import Node, call_arguments, find_all
from hipport.registry import any_word_of
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.released_headers.common import declared_type, raw_data


@REGISTRY.rule
class TileShuffleType(SaysWhatItIs):
    """A tile shuffle of a vector, struct, pointer or half value: HIP's take only scalars

    ## Why
    CUDA's cooperative-groups shuffles (`tile.shfl`, `shfl_up`, `shfl_down`, `shfl_xor`)
    take any trivially copyable type and move it in 32-bit pieces. HIP's
    `static_assert` that the type is an integer or a floating-point type (6.2 and 7.1
    headers: "Neither an integer or float type."), so a `uint4`, a struct, a pointer or a
    `__half` does not compile.

    ## Example
    ```cuda
    struct packed { uint4 x, y; } r = …;
    r.y = tile.shfl_xor(r.y, 1);
    ```
    becomes
    ```cuda
    r.y = make_uint4(tile.shfl_xor(r.y.x, 1), tile.shfl_xor(r.y.y, 1),
                     tile.shfl_xor(r.y.z, 1), tile.shfl_xor(r.y.w, 1));
    ```

    ## Fix
    Shuffle each scalar component (or the value's bytes as integers, or a `__half`'s bits
    as an `unsigned short` via `__half_as_ushort`) and rebuild the value.
    """

    code = "HP338"
    slug = "tile-shuffle-type"
    severity = Severity.HIGH
    effort = Effort.SMALL


_DATA = raw_data()["tile_shuffles"]
_FUNCTIONS = frozenset(_DATA["functions"])
_NOT_SCALAR = frozenset(_DATA["other"]) | frozenset(
    f"{t}{n}" for t in raw_data()["vector_operators"]["types"] for n in range(1, 5))


@dataclass
class _Records:
    """Per file: the struct, class and union bodies it defines, by name, found once."""

    bodies: dict[str, Node] | None = None


def _bodies(ctx: Context) -> dict[str, Node]:
    state = ctx.state(_Records)
    if state.bodies is None:
        state.bodies = {}
        for spec in find_all(ctx.tree.root_node, ("struct_specifier", "class_specifier", "union_specifier")):
            name, body = spec.child_by_field_name("name"), spec.child_by_field_name("body")
            if name is not None and body is not None:
                state.bodies.setdefault(ctx.text(name), body)
    return state.bodies


@REGISTRY.visits("call_expression", names=any_word_of(_FUNCTIONS), codes=(TileShuffleType,))
def _shuffle(call: Node, ctx: Context) -> None:
    fn = call.child_by_field_name("function")
    member = fn.child_by_field_name("field") if fn is not None and fn.type == "field_expression" else None
    if member is None or ctx.text(member) not in _FUNCTIONS:
        return
    args = call_arguments(call)
    kind = _value_type(ctx, call, args[0]) if args else None
    if kind is not None and _not_scalar(ctx, kind):
        shown = " ".join(ctx.text(args[0]).split())
        ctx.report(TileShuffleType, call,
                   f"`{ctx.text(member)}` of `{shown}` (`{kind}`): HIP's tile shuffles take only "
                   "integer and floating-point types (static_assert \"Neither an integer or float type\")",
                   "shuffle each scalar component and rebuild the value")


def _value_type(ctx: Context, at: Node, value: Node) -> str | None:
    """The declared type of a name, or of a member of a struct the file defines
    (``r.y`` with ``r`` declared ``packed``); None when not known here."""
    while value.type == "parenthesized_expression" and value.named_child_count == 1:
        value = value.named_children[0]
    if value.type == "identifier":
        return declared_type(ctx, at, ctx.text(value), pointer=True)
    if value.type != "field_expression":
        return None
    base, member = value.child_by_field_name("argument"), value.child_by_field_name("field")
    if base is None or member is None or base.type != "identifier":
        return None
    owner = declared_type(ctx, at, ctx.text(base), pointer=True)
    arrow = ctx.text(value.child_by_field_name("operator")) == "->"
    if owner is None or owner.endswith("*") != arrow:
        return None
    body = _bodies(ctx).get(owner.rstrip("*").split()[-1])
    return _member_type(ctx, body, ctx.text(member)) if body is not None else None


def _member_type(ctx: Context, body: Node, name: str) -> str | None:
    for decl in body.named_children:
        if decl.type != "field_declaration" or (type_node := decl.child_by_field_name("type")) is None:
            continue
        for declarator in decl.children_by_field_name("declarator"):
            stars = ""
            while declarator.type == "pointer_declarator":
                stars += "*"
                declarator = declarator.child_by_field_name("declarator")
            if declarator.type == "field_identifier" and ctx.text(declarator) == name:
                return ctx.text(type_node) + stars
    return None


def _not_scalar(ctx: Context, kind: str) -> bool:
    base = kind.split()[-1] if kind else ""
    return kind.endswith("*") or base in _NOT_SCALAR or base in _bodies(ctx)
