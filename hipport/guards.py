"""Which bytes of a file are the CUDA-only side of a HIP guard.

Mixed codebases keep both paths in one file::

    #if defined(__HIP_PLATFORM_AMD__)
      ... HIP code: reported, it is what runs on AMD ...
    #else
      ... CUDA code: already handled by the author, not reported ...
    #endif

A branch is CUDA-only when its condition is a negated guard (``#ifndef USE_ROCM``,
``#if !defined(__HIPCC__) && ...``) or when it is an ``#elif``/``#else`` after a
condition that is purely a HIP test (a guard, or an ``||`` of guards). Anything the
classification is unsure of is treated as not guarded: a missed suppression is a visible
false positive, a wrong one would hide a real bug.
"""

from __future__ import annotations

import re

from hipport.parse import Node, Tree

_POS = r"(?:defined\s*\(\s*(?P<a>\w+)\s*\)|defined\s+(?P<b>\w+)|(?P<c>\w+))"
_POS_RE = re.compile(rf"^\s*{_POS}\s*$")
_NEG_RE = re.compile(rf"^\s*!\s*{_POS}\s*$")


def _strip_parens(s: str) -> str:
    s = s.strip()
    while s.startswith("(") and s.endswith(")") and _balanced(s[1:-1]):
        s = s[1:-1].strip()
    return s


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def _split_top(s: str, op: str) -> list[str]:
    parts, depth, cur, i = [], 0, [], 0
    while i < len(s):
        if s[i] == "(":
            depth += 1
        elif s[i] == ")":
            depth -= 1
        if depth == 0 and s.startswith(op, i):
            parts.append("".join(cur))
            cur = []
            i += len(op)
            continue
        cur.append(s[i])
        i += 1
    parts.append("".join(cur))
    return parts


def _guard_name(m: re.Match) -> str:
    return m.group("a") or m.group("b") or m.group("c")


def classify(condition: str, guards: tuple[str, ...]) -> str | None:
    """``"hip"`` if the condition holds only for HIP, ``"cuda"`` if only when not HIP, else None."""
    cond = _strip_parens(re.sub(r"/\*.*?\*/|//[^\n]*", " ", condition))
    ors = [_strip_parens(p) for p in _split_top(cond, "||")]
    if all((m := _POS_RE.match(p)) and _guard_name(m) in guards for p in ors):
        return "hip"
    if len(ors) == 1:
        for part in _split_top(cond, "&&"):
            m = _NEG_RE.match(_strip_parens(part))
            if m and _guard_name(m) in guards:
                return "cuda"
    return None


_CHAIN_STARTS = ("preproc_if", "preproc_ifdef")


def cuda_only_ranges(src: bytes, tree: Tree, guards: tuple[str, ...]) -> list[tuple[int, int]]:
    """Byte ranges (sorted by start) of CUDA-only branches of HIP guards.

    Only an ``#if``/``#ifdef`` chain with a guard's name in one of its conditions can
    have such a branch, and that condition lies inside the chain's first node with no
    other chain start in between. So instead of walking the whole tree, each place a guard
    is spelled is looked up in the tree and climbed from to its nearest chain start.
    """
    if not guards:
        return []
    root = tree.root_node
    starts: dict[tuple[int, int], Node] = {}
    for guard in dict.fromkeys(g.encode() for g in guards):
        at = src.find(guard)
        while at >= 0:
            node = root.descendant_for_byte_range(at, at + len(guard))
            while node is not None and node.type not in _CHAIN_STARTS:
                node = node.parent
            if node is not None:
                starts.setdefault((node.start_byte, node.end_byte), node)
            at = src.find(guard, at + 1)
    ranges: list[tuple[int, int]] = []
    for node in starts.values():
        _chain(src, node, guards, ranges)
    ranges.sort()
    return ranges


def _condition(src: bytes, node: Node) -> tuple[str, int] | None:
    """(condition text, byte where the branch body starts) of an #if/#ifdef/#elif node."""
    if node.type == "preproc_ifdef":
        name = node.child_by_field_name("name")
        if name is None:
            return None
        directive = node.children[0].type  # "#ifdef" / "#ifndef"
        word = src[name.start_byte:name.end_byte].decode("utf-8", "replace")
        cond = word if directive == "#ifdef" else f"!defined({word})"
        return cond, name.end_byte
    cond = node.child_by_field_name("condition")
    if cond is None:
        return None
    return src[cond.start_byte:cond.end_byte].decode("utf-8", "replace"), cond.end_byte


def _chain(src: bytes, node: Node, guards: tuple[str, ...], out: list[tuple[int, int]]) -> None:
    seen_hip = False
    branch: Node | None = node
    while branch is not None:
        alt = branch.child_by_field_name("alternative")
        end = alt.start_byte if alt is not None else branch.end_byte
        if branch.type == "preproc_else":
            if seen_hip:
                out.append((branch.start_byte, end))
            return
        cond = _condition(src, branch)
        kind = classify(cond[0], guards) if cond else None
        if cond and (kind == "cuda" or (seen_hip and kind != "hip")):
            out.append((cond[1], end))
        seen_hip = seen_hip or kind == "hip"
        branch = alt
