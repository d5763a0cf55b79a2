"""Rename CUDA API identifiers (functions, types, enum values, macros, namespaces).

Only identifier tokens of the syntax tree are touched, so comments and string literals
never change. What a name becomes, and whether it may be rewritten for the target, is the
mapping view's decision, read through ``hipport.names`` as the HP1xx rules read it: names
it does not apply stay as written and those rules report them. ``#define`` bodies are
reparsed in place by the walk (``analyze``), so their names come here like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from hipport.context import Context
from hipport.names import NAME_NODES, PerName, defined_in_file, in_tables, kept_at, target_for
from hipport.parse import Node
from hipport.rewrite import REGISTRY


@REGISTRY.visits(*NAME_NODES, names=in_tables)
def rename(node: Node, ctx: Context) -> None:
    """Rewrite one identifier leaf (of the file, or of a ``#define`` body reparsed in place).
    A name the file defines itself, or a bundled library's name some file of the run
    defines (``Options.tree_macros``), is the project's and keeps its spelling."""
    new = _target(ctx, node)
    if new is not None and (node.start_byte, node.end_byte) not in ctx.state(_Declared).spans \
            and not (ctx.src[node.start_byte:node.end_byte] in _kept_names()
                     and (kept_at(ctx, ctx.text(node), node.start_byte) or defined_in_file(ctx, ctx.text(node)))) \
            and not (ctx.options.tree_macros and ctx.text(node) in ctx.options.tree_macros):
        ctx.edit(node.start_byte, node.end_byte, new)
        ctx.rewrites += 1


def _encoded_target(ctx: Context, node: Node, name: str) -> bytes | None:
    new = target_for(ctx, node, name)
    return new.encode() if new is not None else None


@lru_cache(maxsize=1)
def _kept_names() -> frozenset[bytes]:
    """The macros whose rewrite a file can keep from applying: every rewritten macro (one
    the file defines itself) and those with ``kept_if_tested``."""
    from hipport.mapping import load_table

    return frozenset(n.encode() for n, m in load_table().macros.items()
                     if m.kept_if_tested or m.action == "rewrite")


#: The new spelling of a name token as bytes, or None, remembered per name.
_target = PerName(_encoded_target)


#: Where a node is the name a declaration introduces: the declaring node's field.
_DECLARED = {"type_definition": "declarator", "struct_specifier": "name", "class_specifier": "name",
             "union_specifier": "name"}


@dataclass
class _Declared:
    """Per file: the spans of the names typedefs and struct/class/union definitions declare."""

    spans: set[tuple[int, int]] = field(default_factory=set)


@REGISTRY.visits(*_DECLARED)
def note_declared(node: Node, ctx: Context) -> None:
    """The name a ``typedef`` or a ``struct``/``class``/``union`` definition (with a body)
    introduces is the project's own entity, not a use of CUDA's, and is not renamed: a
    ported project's compat header (llama.cpp's ``typedef __hip_bfloat16 nv_bfloat16;``)
    became ``typedef __hip_bfloat16 hip_bfloat16;``, HIP's unrelated struct, and a SYCL
    stand-in ``struct __nv_fp8_e4m3 {…}`` was renamed to HIP's FNUZ type, redefining it.
    The walk meets the declaration before its name, so ``rename`` asks a set instead of
    each renamed name climbing to its parent (``Node.parent`` descends from the root:
    quadratic on 200 KB of ``cub::cub::…``)."""
    named = node.child_by_field_name(_DECLARED[node.type])
    if named is None or (node.type != "type_definition" and node.child_by_field_name("body") is None):
        return
    ctx.state(_Declared).spans.add((named.start_byte, named.end_byte))


@REGISTRY.visits("field_identifier", names=in_tables)
def rename_recovered_type(node: Node, ctx: Context) -> None:
    """``CV_EXPORTS static cudaStream_t getStream(const Stream&);`` in a class (OpenCV's
    cuda_stream_accessor.hpp): an export macro the parser does not know, before the type,
    makes it end a member declaration at the type (``cudaStream_t`` read as the member's
    name, the ``;`` missing) and read the rest as another declaration. There the name is
    the declaration's type, not a member's, and is renamed as ``rename`` would; a real
    member keeps its name, and is followed by its own ``;``."""
    parent = node.parent
    if parent is None or parent.type != "field_declaration" or parent.child_by_field_name("declarator") != node:
        return
    last = parent.children[-1]
    if last.type == ";" and last.is_missing:
        rename(node, ctx)
