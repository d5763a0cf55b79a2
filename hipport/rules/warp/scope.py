"""Inside one function: is this expression a thread index, a lane, a ballot?

Built from the function's facts (``hipport.facts.FunctionFacts``); the lane, mask and
bit-operation checks of this package all ask it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from hipport.facts import THREAD_BUILTINS, FunctionFacts
from hipport.parse import Node, call_name, text
from hipport.rules.warp.syntax import int_value, is_int, strip
from hipport.rules.warp.vocab import BALLOTS, THREAD_NAMES

_LANE_NAME = re.compile(r"lane", re.I)
_LANE_OR_WARP_NAME = re.compile(r"lane|warp|wid", re.I)
#: Operator -> the right operand that makes it warp arithmetic (``Scope.lane_op``);
#: ``tid < 32`` only in the condition of an ``if`` whose body does warp work (``_first_warp``).
LANE_OPERANDS = {"&": (31,), "%": (32,), "/": (32,), ">>": (5,), "<": (32,), ">=": (32,)}
_WARP_WORK_RE = re.compile(rb"shfl|warp|ballot|__any|__all|__activemask|__syncwarp|volatile", re.I)
#: Calls whose value is still an index when their arguments are (``min(tid, n - 1)``).
_INDEX_BUILTINS = THREAD_BUILTINS | {"blockIdx", "gridDim"}
_INDEX_CALLS = frozenset({"min", "max", "std::min", "std::max", "__mul24", "__umul24", "umin", "umax"})


class Scope:
    """Answers "is this expression a thread index / a lane / a ballot?" inside one function."""

    def __init__(self, src: bytes, info: FunctionFacts) -> None:
        self.src, self.info = src, info
        self._thread_vars: dict[str, str] | None = None  # derived on first use: most functions never ask
        self._lane_vars: set[str] = set()

    @property
    def thread_vars(self) -> dict[str, str]:
        """Variables initialised from a thread index: name -> ``"local"`` | ``"global"``."""
        if self._thread_vars is None:
            self._derive()
        return self._thread_vars  # type: ignore[return-value]

    @property
    def lane_vars(self) -> set[str]:
        """Variables initialised with a lane expression."""
        if self._thread_vars is None:
            self._derive()
        return self._lane_vars

    def _derive(self) -> None:
        self._thread_vars = {}  # seen (partly filled) by the derivations below
        for var in self.info.vars.values():  # document order: a derivation sees earlier ones
            if var.init is None or var.in_for_init:
                continue
            kind = self.thread_index_kind(var.init)
            if kind:
                self._thread_vars[var.name] = kind
            if self._is_lane_expr(var.init):
                self._lane_vars.add(var.name)

    def thread_index_kind(self, node: Node) -> str | None:
        """``"local"`` for an index within the block (threadIdx, blockDim, tid…), ``"global"``
        when blockIdx is mixed in (then ``% 32`` is as often a bitmap word as a lane), else None."""
        thread = block = False
        thread_vars = self.thread_vars
        for n in _index_parts(self.src, node):
            if n.type == "field_expression":
                arg = n.child_by_field_name("argument")
                name = text(self.src, arg) if arg is not None else ""
                block |= name == "blockIdx"
                thread |= name in THREAD_BUILTINS
            elif n.type == "identifier":
                name = text(self.src, n)
                kind = thread_vars.get(name)
                thread |= kind is not None or (self.info.device_like and name in THREAD_NAMES)
                block |= kind == "global"
        if not thread:
            return None
        return "global" if block else "local"

    def _is_lane_expr(self, node: Node) -> bool:
        node = strip(node)
        if node.type == "call_expression" and call_name(self.src, node) == "__lane_id":
            return True
        return node.type == "binary_expression" and self.lane_op(node) is not None

    def is_lane(self, node: Node) -> bool:
        node = strip(node)
        if node.type == "identifier":
            name = text(self.src, node)
            return name in self.lane_vars or (self.info.device_like and bool(_LANE_NAME.search(name)))
        return self._is_lane_expr(node)

    def lane_op(self, node: Node) -> str | None:
        """``"& 31"`` etc. when ``node`` is warp arithmetic with 32 on a thread index."""
        op = text(self.src, node.child_by_field_name("operator"))
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None:
            return None
        want = LANE_OPERANDS.get(op)
        if want is None:
            return None
        if op == "&" and is_int(self.src, left, 31):
            left, right = right, left
        v = int_value(self.src, right)
        kind = self.thread_index_kind(left) if v is not None and v[0] in want else None
        if kind is None or (kind == "global" and not _assigned_to_lane_or_warp(self.src, node)):
            return None
        if op in ("<", ">=") and (kind != "local" or not _first_warp(self.src, node)):
            return None
        return f"{op} {text(self.src, right)}"

    def is_ballot(self, node: Node, depth: int = 0) -> str | None:
        """The ballot builtin a value comes from (directly, through casts, &|^~, or a variable)."""
        node = strip(node)
        if depth > 4:
            return None
        if node.type == "call_expression":
            name = call_name(self.src, node)
            return name if name in BALLOTS else None
        if node.type == "cast_expression":
            value = node.child_by_field_name("value")
            return self.is_ballot(value, depth + 1) if value is not None else None
        if node.type in ("binary_expression", "unary_expression"):
            op = text(self.src, node.child_by_field_name("operator"))
            if op in ("&", "|", "^", "~"):
                for c in node.named_children:
                    found = self.is_ballot(c, depth + 1)
                    if found:
                        return found
            return None
        if node.type == "identifier":
            name = text(self.src, node)
            var = self.info.vars.get(name)
            values = self.info.assigned.get(name, [])
            if var is not None and var.init is not None:
                values = [var.init, *values]
            for v in values:
                if v is not None and v != node:
                    found = self.is_ballot(v, depth + 1)
                    if found:
                        return found
        return None


def _assigned_to_lane_or_warp(src: bytes, node: Node) -> bool:
    """``int lane = gid % 32;``: the name says the value is a lane or warp id."""
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    target = None
    if parent is not None and parent.type == "init_declarator":
        target = parent.child_by_field_name("declarator")
    elif parent is not None and parent.type == "assignment_expression":
        target = parent.child_by_field_name("left")
    return target is not None and bool(_LANE_OR_WARP_NAME.search(text(src, target)))


def _index_parts(src: bytes, node: Node) -> Iterator[Node]:
    """The nodes of ``node`` that make its value an index: not what it merely loads.

    ``a[tid]``, ``f(tid)``, ``*p``, ``p->field`` and ``x >> (4 * tid)`` are data read at,
    or shifted by, a thread-dependent amount; their value is not a thread index (llama.cpp's
    ``qh = get_int_b2(bxi->qh, 0) >> (4 * kqsx)`` is a quant word, and ``qh >> 5`` bit
    twiddling, not a warp id).
    """
    stack = [node]
    while stack:
        n = stack.pop()
        kind = n.type
        if kind == "subscript_expression":
            continue
        if kind == "call_expression" and call_name(src, n) not in _INDEX_CALLS:
            continue
        if kind == "pointer_expression" and text(src, n).lstrip().startswith("*"):
            continue
        if kind == "field_expression":
            arg = n.child_by_field_name("argument")
            if arg is None or text(src, arg) not in _INDEX_BUILTINS:
                continue
        yield n
        children = n.children
        if kind == "binary_expression" and text(src, n.child_by_field_name("operator")) in ("<<", ">>"):
            children = [n.child_by_field_name("left")]  # the shift count does not index
        stack.extend(reversed([c for c in children if c is not None]))


def _first_warp(src: bytes, cond: Node) -> bool:
    """Whether ``cond`` (``tid < 32``) is an ``if`` condition whose body does warp work: the
    CUDA idiom "the first warp finishes the reduction", half a wave on wave64."""
    node = cond.parent
    while node is not None and node.type in ("parenthesized_expression", "condition_clause"):
        node = node.parent
    if node is None or node.type != "if_statement":
        return False
    body = node.child_by_field_name("consequence")
    return body is not None and _WARP_WORK_RE.search(src, body.start_byte, body.end_byte) is not None
