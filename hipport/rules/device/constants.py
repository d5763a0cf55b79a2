"""Integer constants of a file (``#define``, ``const``/``constexpr``), evaluated the way
HP306 needs them: shared-memory extents and limits are usually named constants.

``const_value`` claims a value only for what it can compute (literals, known names,
+ - * / % << >>); ``sizeof``, casts, templates and unknown names give None.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from hipport.parse import Node, text
from hipport.rules import REGISTRY

if TYPE_CHECKING:
    from hipport.context import Context


@dataclass
class Constants:
    """Per file: the integer constants seen so far, in document order."""

    values: dict[str, int] = field(default_factory=dict)


_INT_SUFFIX_RE = re.compile(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b")
#: Every text ``const_value`` can give a value for is made of these (names, numbers,
#: + - * / % << >>, parentheses, blanks, line continuations); anything else is not parsed,
#: which spares a Python parse and its SyntaxError for every ``a.size()`` initialiser.
CONST_CHARS = re.compile(r"[\w\s+\-*/%<>()\\]*\Z")
_OPS = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__,
        ast.Div: int.__floordiv__, ast.FloorDiv: int.__floordiv__, ast.Mod: int.__mod__,
        ast.LShift: int.__lshift__, ast.RShift: int.__rshift__}


@lru_cache(maxsize=4096)
def const_ast(expr: str) -> ast.Expression | None:
    """``expr`` (integer suffixes dropped) parsed as a Python expression; None if it is not one."""
    try:
        with warnings.catch_warnings():  # "0xfor": Python's SyntaxWarning on the user's terminal
            warnings.simplefilter("ignore", SyntaxWarning)
            return ast.parse(_INT_SUFFIX_RE.sub(r"\1", expr.strip()), mode="eval")
    except SyntaxError:
        return None


def const_value(expr: str, env: dict[str, int]) -> int | None:
    """Value of a constant integer expression (literals, names in ``env``, + - * / % << >>)."""
    if CONST_CHARS.match(expr) is None:
        return None  # a member, an index, a string, a comparison…: never a constant here
    tree = const_ast(expr)
    if tree is None:
        return None

    def ev(n: ast.AST) -> int | None:
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.Name):
            return env.get(n.id)
        if isinstance(n, ast.BinOp) and type(n.op) in _OPS:
            a, b = ev(n.left), ev(n.right)
            if a is None or b is None or (b == 0 and isinstance(n.op, (ast.Div, ast.FloorDiv, ast.Mod))):
                return None
            return _OPS[type(n.op)](a, b)
        return None

    return ev(tree.body)


def value_of(ctx: "Context", expr: str) -> int | None:
    """``const_value`` with the file's constants seen so far."""
    return const_value(expr, ctx.state(Constants).values)


@REGISTRY.visits("preproc_def")
def _define(node: Node, ctx: "Context") -> None:
    """Remember integer ``#define`` constants: shared-memory extents are usually macros."""
    name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
    if name is None or value is None:
        return
    constants = ctx.state(Constants).values
    v = const_value(text(ctx.src, value), constants)
    if v is not None:
        constants[text(ctx.src, name)] = v


def record_constants(decl: Node, ctx: "Context", qualifiers: set[str]) -> None:
    """Remember ``const``/``constexpr`` integer variables of a declaration."""
    if not (qualifiers & {"constexpr", "const"}) or decl.type != "declaration":
        return
    src, constants = ctx.src, ctx.state(Constants).values
    for d in decl.children_by_field_name("declarator"):
        name, value = d.child_by_field_name("declarator"), d.child_by_field_name("value")
        if d.type == "init_declarator" and name is not None and name.type == "identifier" and value is not None:
            v = const_value(text(src, value), constants)
            if v is not None:
                constants[text(src, name)] = v
