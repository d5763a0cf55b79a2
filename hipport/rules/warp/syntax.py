"""Small syntax helpers of the HP2xx rules: integer literals, full masks, qualifiers."""

from __future__ import annotations

import re
from functools import lru_cache

from hipport.facts import normalised
from hipport.parse import Node, parse, text, walk
from hipport.rules.warp.vocab import MASK32_TYPES

_INT_RE = re.compile(r"^(0[xX][0-9a-fA-F']+|0[bB][01']+|[0-9']+)([uUlLzZ]*)$")


def strip(node: Node) -> Node:
    """The expression inside any parentheses."""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def int_value(src: bytes, node: Node) -> tuple[int, str] | None:
    """(value, suffix) of an integer literal, with ``-1`` written as ``-1`` or ``- 1``."""
    node = strip(node)
    sign = 1
    if node.type == "unary_expression" and text(src, node.children[0]) == "-":
        sign, node = -1, strip(node.named_children[0])
    if node.type != "number_literal":
        return None
    raw = text(src, node)
    if raw.startswith("-"):
        sign, raw = -sign, raw[1:]
    m = _INT_RE.match(raw)
    if not m:
        return None
    digits = m.group(1).replace("'", "")
    prefix = digits[:2].lower()
    base = 16 if prefix == "0x" else 2 if prefix == "0b" else 8 if len(digits) > 1 and digits[0] == "0" else 10
    try:
        return sign * int(digits, base), m.group(2).lower()
    except ValueError:  # 09 and friends: not a valid literal
        return None


def small_constant(src: bytes, node: Node) -> int | None:
    """The value of an integer constant expression of literals: ``16 / 2``, ``(1 << 4)``
    (``+ - * / % << >>`` over integer literals; None for anything else)."""
    node = strip(node)
    if node.type != "binary_expression":
        v = int_value(src, node)
        return v[0] if v is not None else None
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    a = small_constant(src, left) if left is not None else None
    b = small_constant(src, right) if right is not None else None
    if a is None or b is None:
        return None
    op = text(src, node.child_by_field_name("operator"))
    return arithmetic(op, a, b) if op in ("+", "-", "*", "/", "%", "<<", ">>") else None


def arithmetic(op: str, a: int, b: int) -> int | None:
    """``a op b`` for an integer operator (``+ - * / % << >> & | ^``), C's truncating
    division; None for another operator, a division by zero or a shift out of 0..63."""
    if op in ("/", "%") and b == 0 or op in ("<<", ">>") and not 0 <= b < 64:
        return None
    return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: int(a / b),
            "%": lambda: a % b, "<<": lambda: a << b, ">>": lambda: a >> b,
            "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b}.get(op, lambda: None)()


def writes_of(name: str) -> re.Pattern[bytes]:
    """Where variable ``name`` is written: ``name = …``, a compound assignment
    (``name >>= 1``), or ``++``/``--`` on either side (``name == …`` is no write)."""
    word = re.escape(name.encode())
    return re.compile(rb"\b%s\s*(?:[-+*/%%&|^]|<<|>>)?=(?!=)|(?:\+\+|--)\s*%s\b|\b%s\s*(?:\+\+|--)"
                      % (word, word, word))


def step_of(src: bytes, update: Node, var: str) -> str | None:
    """``"down"`` for halving updates of loop variable ``var``, ``"up"`` for doubling ones."""
    s = "".join(text(src, update).split())
    if s in (f"{var}>>=1", f"{var}/=2", f"{var}={var}>>1", f"{var}={var}/2"):
        return "down"
    if s in (f"{var}<<=1", f"{var}*=2", f"{var}={var}<<1", f"{var}={var}*2"):
        return "up"
    return None


def is_int(src: bytes, node: Node | None, *values: int) -> bool:
    v = int_value(src, node) if node is not None else None
    return v is not None and v[0] in values


def is_full_mask32(src: bytes, node: Node) -> bool:
    """True for the spellings of "all 32 lanes": 0xffffffff (any suffix), ~0u, -1, (unsigned)-1."""
    node = strip(node)
    if node.type == "cast_expression":
        ty = node.child_by_field_name("type")
        value = node.child_by_field_name("value")
        if ty is None or value is None or normalised(text(src, ty)) not in MASK32_TYPES:
            return False
        return is_full_mask32(src, value) or is_int(src, value, -1)
    if node.type == "unary_expression" and text(src, node.children[0]) == "~":
        v = int_value(src, node.named_children[0])
        return v is not None and v[0] == 0 and "l" not in v[1]
    v = int_value(src, node)
    if v is None:
        return False
    return v[0] == 0xFFFFFFFF or (v[0] == -1 and "l" not in v[1])


@lru_cache(maxsize=256)
def macro_is_full_mask32(body: str) -> bool:
    """Whether a macro body is a 32-bit full mask: parse it as an expression and ask."""
    src = f"int __hipport_probe = ({body});".encode()
    tree = parse(src)
    for node in walk(tree.root_node):
        if node.type == "init_declarator":
            value = node.child_by_field_name("value")
            return value is not None and not tree.root_node.has_error and is_full_mask32(src, value)
    return False


def has_qualifier(decl: Node, keyword: str) -> bool:
    """``__shared__``/``constexpr`` among a declaration's type qualifiers."""
    return any(
        c.type == "type_qualifier" and c.child_count > 0 and c.children[0].type == keyword for c in decl.children
    )


def initialised_local(node: Node) -> Node | None:
    """The identifier ``node`` (through parentheses) initialises: ``int off = (node);``."""
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is None or parent.type != "init_declarator":
        return None
    target = parent.child_by_field_name("declarator")
    return target if target is not None and target.type == "identifier" else None
