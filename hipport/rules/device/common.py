"""What several device hazards share: the once-per-file notes, the enclosing function's
key, and the callee of a plain (unqualified, non-member) call."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hipport import facts
from hipport.parse import Node, qualified_parts, text
from hipport.rule import Rule

if TYPE_CHECKING:
    from hipport.context import Context


@dataclass
class Noted:
    """Per file: the keys of the name-level notes already reported (``once``)."""

    keys: set[str] = field(default_factory=set)


def once(ctx: "Context", key: str, rule: Rule, where: Node | tuple[int, int], message: str,
         suggestion: str = "") -> None:
    """Report ``rule`` at its first occurrence of ``key`` in the file.

    A site inside a CUDA-only guard branch does not count as the first occurrence, so the
    first unguarded use is still reported; a site silenced by an ignore comment does.
    """
    noted = ctx.state(Noted).keys
    if key in noted:
        return
    start = where[0] if isinstance(where, tuple) else where.start_byte
    if ctx.in_cuda_only_branch(start):
        return
    noted.add(key)
    ctx.report(rule, where, message, suggestion)


def func_key(ctx: "Context", node: Node) -> int:
    """The start of the function around ``node`` (-1 at file scope): per-function state's key."""
    func = facts.enclosing_function(ctx, node)
    return func.start_byte if func is not None else -1


def function_name(ctx: "Context", node: Node) -> str:
    """The enclosing function's name, quoted for a message."""
    func = facts.enclosing_function(ctx, node)
    decl = func.child_by_field_name("declarator") if func is not None else None
    return f"`{ctx.text(decl).split('(')[0].strip()}`" if decl is not None else "this translation unit"


def callee(call: Node) -> Node | None:
    """The called expression of a ``call_expression``, template arguments dropped."""
    fn = call.child_by_field_name("function")
    if fn is not None and fn.type == "template_function":
        return fn.child_by_field_name("name")
    return fn


def plain_callee(ctx: "Context", call: Node) -> tuple[Node, str] | None:
    """(callee node, name) of a call to a plain name (``f(x)``, ``f<T>(x)``); None for
    members (``obj.f()``) and qualified names (``ns::f()``), which are other APIs."""
    fn = callee(call)
    if fn is None or fn.type == "field_expression":
        return None
    if fn.type == "qualified_identifier":
        parts = qualified_parts(ctx.src, fn)
        return (fn, parts[0]) if len(parts) == 1 else None
    return fn, text(ctx.src, fn)


#: The operators HP311 and HP317 look at (``+=`` counts as ``+``).
ARITH_OPS = frozenset({"+", "-", "*", "/", "<", ">", "<=", ">=", "==", "!="})


def operator_text(ctx: "Context", node: Node) -> str | None:
    """The operator of a binary or assignment expression, ``=`` of a compound assignment
    dropped; None when it has none."""
    op = node.child_by_field_name("operator")
    if op is None:
        return None
    return text(ctx.src, op).rstrip("=") if node.type == "assignment_expression" else text(ctx.src, op)


def operand_name(src: bytes, n: Node | None) -> str | None:
    """The variable an operand names (``x``, or ``p`` of ``p[i]``)."""
    if n is not None and n.type == "subscript_expression":
        n = n.child_by_field_name("argument")
    return text(src, n) if n is not None and n.type == "identifier" else None
