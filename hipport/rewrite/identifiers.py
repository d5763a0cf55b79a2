"""Rename CUDA API identifiers (functions, types, enum values, macros, namespaces).

Only identifier tokens of the syntax tree are touched, so comments and string literals
never change. What a name becomes, and whether it may be rewritten for the target, is the
mapping view's decision, read through ``hipport.names`` as the HP1xx rules read it: names
it does not apply stay as written and those rules report them. ``#define`` bodies are
reparsed in place by the walk (``analyze``), so their names come here like any other.
"""

from __future__ import annotations

from hipport.context import Context
from hipport.names import NAME_NODES, PerName, in_tables, target_for
from hipport.parse import Node
from hipport.rewrite import REGISTRY


@REGISTRY.visits(*NAME_NODES, names=in_tables)
def rename(node: Node, ctx: Context) -> None:
    """Rewrite one identifier leaf (of the file, or of a ``#define`` body reparsed in place)."""
    new = _target(ctx, node)
    if new is not None:
        ctx.edit(node.start_byte, node.end_byte, new)
        ctx.rewrites += 1


def _encoded_target(ctx: Context, node: Node, name: str) -> bytes | None:
    new = target_for(ctx, node, name)
    return new.encode() if new is not None else None


#: The new spelling of a name token as bytes, or None, remembered per name.
_target = PerName(_encoded_target)
