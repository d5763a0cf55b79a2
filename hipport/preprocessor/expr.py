"""A small, safe evaluator of ``#if`` expressions with a third answer: "maybe".

It reads exactly what the C preprocessor reads in a condition: integers and character
literals, ``defined X`` / ``defined(X)``, macros, ``! ~ - +``, the binary operators by C's
precedence, and ``?:``. A value is an ``int`` or ``None`` (cannot be decided: a macro
whose value is unknown, a function-like macro, ``__has_include(…)``), and ``None`` spreads
through arithmetic but not through a short-circuit that decides without it: ``0 && X`` is
0 whatever X is. The parts of a condition whose value cannot change the result (``X`` in
``!defined(GUARD) && X`` when GUARD is defined) are collected as *irrelevant* byte spans, so
findings on them can be dropped. Nothing is ever executed; malformed input is ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

Value = int | None

_TOKEN = re.compile(
    r"\s*(?:"
    r"(?P<num>\.?\d(?:[eEpP][+-]|[\w.'])*)"
    r"|(?P<chr>[uUL]?'(?:[^'\\]|\\.)*')"
    r"|(?P<str>[uUL8]*\"(?:[^\"\\]|\\.)*\")"
    r"|(?P<id>[A-Za-z_]\w*)"
    r"|(?P<op>&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%<>&|^!~?:(),#])"
    r")"
)
_INT = re.compile(r"^(0[xX][0-9A-Fa-f']+|0[bB][01']+|0[0-7']*|[1-9][0-9']*)([uUlLzZ]*)$")

#: Binary operators and their precedence (C's; higher binds tighter).
_PRECEDENCE: dict[str, int] = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7, "<=": 7, ">=": 7,
    "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}

#: Looks up a macro: (name) -> its value (None: unknown), and (name) -> whether it is defined
#: (1, 0, or None: maybe); ``function_like(name)`` says a ``NAME(...)`` call follows a macro.
Lookup = Callable[[str], Value]


class _Malformed(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Tok:
    kind: str  # num chr str id op end
    text: str
    start: int  # offset in the expression text
    end: int


@lru_cache(maxsize=4096)
def tokenize(text: str) -> tuple[Tok, ...]:
    """The tokens of a condition (cached: the same headers' conditions recur for every file)."""
    out, pos, n = [], 0, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip() == "":
                break
            raise _Malformed(text[pos:pos + 10])
        kind = m.lastgroup
        if kind is None:  # only whitespace was left
            break
        out.append(Tok(kind, m.group(kind), m.start(kind), m.end(kind)))
        pos = m.end()
    out.append(Tok("end", "", n, n))
    return tuple(out)


@dataclass
class Result:
    value: Value
    #: (start, end) offsets, in the expression text, of parts that cannot change the value.
    irrelevant: list[tuple[int, int]] = field(default_factory=list)


def evaluate(text: str, value_of: Lookup, defined: Lookup, calls: Lookup | None = None) -> Result:
    """Evaluate ``text`` (a condition, without the directive) under the given macros.

    ``value_of(name)`` is a macro's value (an undefined one is 0, as in C); ``defined(name)``
    is 1, 0 or None; ``calls(name)`` evaluates ``name(...)`` (default: unknown).
    """
    try:
        parser = _Parser(tokenize(text), value_of, defined, calls)
        value, _, _ = parser.conditional()
        if parser.peek().kind != "end":
            return Result(None)
        return Result(value, parser.irrelevant)
    except (_Malformed, RecursionError):
        return Result(None)


class _Parser:
    """Recursive descent by precedence; each rule returns (value, start, end) of its text."""

    def __init__(self, toks: tuple[Tok, ...], value_of: Lookup, defined: Lookup, calls: Lookup | None) -> None:
        self.toks, self.i = toks, 0
        self.value_of, self.defined, self.calls = value_of, defined, calls
        self.irrelevant: list[tuple[int, int]] = []

    def peek(self) -> Tok:
        return self.toks[self.i]

    def take(self, text: str | None = None) -> Tok:
        tok = self.toks[self.i]
        if text is not None and tok.text != text:
            raise _Malformed(f"expected {text!r}")
        if tok.kind == "end":
            raise _Malformed("unexpected end")
        self.i += 1
        return tok

    def conditional(self) -> tuple[Value, int, int]:
        cond, start, end = self.binary(1)
        if self.peek().text != "?":
            return cond, start, end
        self.take("?")
        yes, ys, ye = self.conditional()
        self.take(":")
        no, ns, ne = self.conditional()
        if cond is None:
            return (yes if yes == no else None), start, ne
        self.irrelevant.append((ns, ne) if cond else (ys, ye))
        return (yes if cond else no), start, ne

    def binary(self, min_precedence: int) -> tuple[Value, int, int]:
        """Precedence climbing: operators at ``min_precedence`` or tighter, left to right."""
        left, start, end = self.unary()
        while True:
            tok = self.toks[self.i]
            prec = _PRECEDENCE.get(tok.text) if tok.kind == "op" else None
            if prec is None or prec < min_precedence:
                return left, start, end
            self.i += 1
            right, rs, re_ = self.binary(prec + 1)
            left = self._logic(tok.text, left, (start, end), right, (rs, re_)) \
                if prec <= 2 else _arith(tok.text, left, right)
            end = re_

    def _logic(self, op: str, a: Value, a_span: tuple[int, int], b: Value, b_span: tuple[int, int]) -> Value:
        """Kleene's three-valued ``&&``/``||``; the operand that cannot matter is irrelevant."""
        decisive = 0 if op == "&&" else 1
        a_dec = a is not None and bool(a) == bool(decisive)
        b_dec = b is not None and bool(b) == bool(decisive)
        if a_dec:
            self.irrelevant.append(b_span)
            return decisive
        if b_dec:
            self.irrelevant.append(a_span)
            return decisive
        if a is None or b is None:
            return None
        return int(bool(a) and bool(b)) if op == "&&" else int(bool(a) or bool(b))

    def unary(self) -> tuple[Value, int, int]:
        tok = self.peek()
        if tok.kind == "op" and tok.text in ("!", "~", "-", "+"):
            self.take()
            v, _, end = self.unary()
            if v is None:
                return None, tok.start, end
            return {"!": int(not v), "~": ~v, "-": -v, "+": v}[tok.text], tok.start, end
        return self.primary()

    def primary(self) -> tuple[Value, int, int]:
        tok = self.take()
        if tok.kind == "num":
            return _number(tok.text), tok.start, tok.end
        if tok.kind == "chr":
            return _char(tok.text), tok.start, tok.end
        if tok.text == "(":
            v, _, _ = self.conditional()
            close = self.take(")")
            return v, tok.start, close.end
        if tok.kind != "id":
            raise _Malformed(tok.text)
        if tok.text == "defined":
            paren = self.peek().text == "("
            if paren:
                self.take("(")
            name = self.take()
            if name.kind != "id":
                raise _Malformed("defined needs a name")
            end = self.take(")").end if paren else name.end
            return self.defined(name.text), tok.start, end
        if tok.text in ("true", "false"):
            return int(tok.text == "true"), tok.start, tok.end
        if self.peek().text == "(":  # NAME(...): a function-like macro or a __has_* query
            end = self._skip_call()
            return (self.calls(tok.text) if self.calls else None), tok.start, end
        return self.value_of(tok.text), tok.start, tok.end

    def _skip_call(self) -> int:
        depth = 0
        while True:
            tok = self.take()
            depth += (tok.text == "(") - (tok.text == ")")
            if depth == 0:
                return tok.end


def _arith(op: str, a: Value, b: Value) -> Value:
    if a is None or b is None:
        return None
    if op in ("/", "%"):
        if b == 0:
            return None  # an error for the compiler; not ours to decide
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # C truncates toward zero
        return q if op == "/" else a - q * b
    if op in ("<<", ">>"):
        if b < 0 or b > 127:
            return None
        return a << b if op == "<<" else a >> b
    return {
        "|": lambda: a | b, "^": lambda: a ^ b, "&": lambda: a & b,
        "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b),
        ">": lambda: int(a > b), "<=": lambda: int(a <= b), ">=": lambda: int(a >= b),
        "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
    }[op]()


def _number(text: str) -> Value:
    m = _INT.match(text)
    if m is None:
        return None  # a floating literal: not allowed in #if; undecided rather than wrong
    digits = m.group(1).replace("'", "")
    if digits[:2] in ("0x", "0X"):
        return int(digits[2:], 16)
    if digits[:2] in ("0b", "0B"):
        return int(digits[2:], 2)
    if len(digits) > 1 and digits[0] == "0":
        return int(digits[1:], 8)
    return int(digits)


def _char(text: str) -> Value:
    body = text[text.index("'") + 1:-1]
    if len(body) == 1:
        return ord(body)
    simple = {"\\n": 10, "\\t": 9, "\\0": 0, "\\\\": 92, "\\'": 39, '\\"': 34, "\\r": 13}
    return simple.get(body)
