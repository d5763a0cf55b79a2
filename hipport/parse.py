"""tree-sitter setup and the few node helpers every stage needs.

The grammar is loaded once per process. Parsing never raises: tree-sitter recovers from
errors and marks them with ERROR/MISSING nodes, which is what lets hipport work on code
that does not compile yet (unlike hipify-clang).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

import tree_sitter
import tree_sitter_cuda

Node = tree_sitter.Node
Tree = tree_sitter.Tree


@lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))


def parser_language() -> tree_sitter.Language:
    """The CUDA grammar (node kinds, queries)."""
    return _parser().language


class ParseBudgetExceeded(Exception):
    """Parsing one source cost more CPU time or memory than its ``budget`` allows: the file
    is one error naming the bound, not processed."""


@dataclass
class _Budget:
    cpu_deadline: float  # time.process_time() value
    cpu_seconds: float
    rss_ceiling: int | None  # bytes of resident memory, None where it cannot be read
    memory_bytes: int
    calls: int = 0
    exceeded: str = ""


#: The budget of the source this process is analysing (one at a time), or None: no bound.
_budget: _Budget | None = None
#: Sources up to this size are parsed without a budget: none can cost much (at worst
#: about 2 s or 230 MB), and the callbacks a budget needs are saved on nearly every file.
BUDGET_FROM = 64 << 10
#: Parsing a larger source may take this much CPU time, plus CPU_PER_MIB per MiB of it...
CPU_SECONDS = 5.0
CPU_PER_MIB = 1.0
#: ... and grow the process by this much memory, plus MEMORY_PER_BYTE times its size,
#: at most MEMORY_CAP. Dense real code needs about 1 s and 50 bytes per byte parsed; some
#: inputs cost the parser itself far more (``a<a<a<…``: 3.6 GB per MB of input, a run of
#: ``"\"``: 30 s per MB), whatever hipport does with the tree after.
MEMORY_BYTES = 256 << 20
MEMORY_PER_BYTE = 64
MEMORY_CAP = 1 << 30
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
#: How many progress calls between two memory checks (a call comes every ~100 bytes).
_MEMORY_EVERY = 64


def _rss() -> int | None:
    """Resident memory of this process now (Linux), or None."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


@contextmanager
def budget(size: int) -> Iterator[None]:
    """Bound every parse made inside (the file and its macro bodies) by the CPU time and
    memory a source of ``size`` bytes may take; ``ParseBudgetExceeded`` beyond."""
    global _budget
    if size <= BUDGET_FROM:
        yield
        return
    seconds = CPU_SECONDS + CPU_PER_MIB * size / (1 << 20)
    memory = min(MEMORY_BYTES + MEMORY_PER_BYTE * size, MEMORY_CAP)
    rss = _rss()
    outer, _budget = _budget, _Budget(time.process_time() + seconds, seconds,
                                      None if rss is None else rss + memory, memory)
    try:
        yield
    finally:
        _budget = outer


def _progress(_offset: int, _has_error: bool) -> bool:
    """tree-sitter's progress callback: True stops the parse (over budget)."""
    b = _budget
    if b is None:
        return False
    b.calls += 1
    if b.calls & 15 == 0 and time.process_time() > b.cpu_deadline:
        b.exceeded = f"more than {b.cpu_seconds:.1f} s of CPU time"
    elif b.rss_ceiling is not None and b.calls % _MEMORY_EVERY == 0 and (_rss() or 0) > b.rss_ceiling:
        b.exceeded = f"more than {b.memory_bytes >> 20:,} MiB of memory"
    return bool(b.exceeded)


def _parse_bounded(parser: tree_sitter.Parser, read: Callable[[int, object], bytes]) -> Tree:
    """``parser.parse(read)`` under the current budget."""
    try:
        return parser.parse(read, progress_callback=_progress)
    except ValueError:  # the callback stopped it ("Parsing failed")
        parser.reset()  # or the next parse would resume this one
        b = _budget
        if b is not None and b.exceeded:
            raise ParseBudgetExceeded(
                f"the parser needed {b.exceeded} (the bound for a source of this size): "
                "input it cannot parse in reasonable time or memory; not processed") from None
        raise


def parse(src: bytes) -> Tree:
    """Parse CUDA/C++ bytes; always returns a tree (under a ``budget``: or raises
    ParseBudgetExceeded)."""
    if _budget is None:
        return _parser().parse(src)
    # (tree-sitter calls the progress callback only when it reads through a callback)
    return _parse_bounded(_parser(), lambda offset, _point: src[offset:offset + _CHUNK])


#: Bytes handed to the parser per read.
_CHUNK = 1 << 16


def walk(root: Node) -> Iterator[Node]:
    """Every node, in document order, without recursion (deep nesting must not overflow)."""
    cursor = root.walk()
    while True:
        yield cursor.node
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


@lru_cache(maxsize=None)
def _types_query(types: tuple[str, ...]) -> tree_sitter.Query:
    return tree_sitter.Query(_parser().language, " ".join(f"({t}) @node" for t in types))


#: Sets of node types that one query serves: compiling a query costs tree-sitter ~120 M
#: instructions whatever its size (25–40 ms, once per process and query), while a few more
#: matches, filtered out, cost far less. Within a set no type starts another at its first
#: byte, so a request for several gets them in document order, as ``walk`` would (a
#: function's declarators come through its declarations: ``declarators``). A set holds types of about the same frequency, asked for over the
#: same ranges (the whole file, a function's body), so filtering stays cheap.
_SHARED_QUERIES = (("declaration", "field_declaration", "function_definition", "parameter_declaration",
                    "preproc_def", "preproc_function_def"),
                   ("struct_specifier", "class_specifier", "union_specifier", "namespace_alias_definition"),
                   ("identifier", "type_identifier", "field_identifier", "preproc_arg"))


def find_all(node: Node, types: tuple[str, ...]) -> list[Node]:
    """Every node of one of ``types`` in ``node``'s subtree (``node`` included), in document
    order, like filtering ``walk(node)``; the search runs in C, without a Python object
    per node of the subtree. ``types`` must be node types of the grammar."""
    shared = next((q for q in _SHARED_QUERIES if set(types) <= set(q)), None)
    matches = tree_sitter.QueryCursor(_types_query(shared or types)).matches(node)
    if shared is None or len(types) == len(shared):
        return [captures["node"][0] for _, captures in matches]
    return [n for _, captures in matches if (n := captures["node"][0]).type in types]


def declarators(node: Node) -> list[Node]:
    """The declarators of every declaration in ``node``'s subtree, in document order
    (``a[32]``, ``off = x % 32``; a ``for`` statement's too): through the shared query of
    declarations, where a search for ``init_declarator`` or ``array_declarator`` would
    compile a query of its own (~120 M instructions a process)."""
    return [d for decl in find_all(node, ("declaration",)) for d in decl.children_by_field_name("declarator")]


def text(src: bytes, node: Node) -> str:
    """A node's source text; undecodable bytes become U+FFFD (only for reading, never written)."""
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace")


def call_name(src: bytes, call: Node) -> str | None:
    """The called name of a ``call_expression`` (``f`` in ``f(x)``, ``ns::f``, ``f<T>``)."""
    fn = call.child_by_field_name("function")
    if fn is None:
        return None
    if fn.type == "template_function":
        fn = fn.child_by_field_name("name") or fn
    if fn.type in ("identifier", "qualified_identifier", "field_expression"):
        return text(src, fn)
    return None


def qualified_parts(src: bytes, node: Node) -> list[str]:
    """``a::b::c<T>`` → ``["a", "b", "c"]`` (template arguments dropped)."""
    parts: list[str] = []
    while node is not None and node.type == "qualified_identifier":
        scope = node.child_by_field_name("scope")
        if scope is not None:
            name = scope.child_by_field_name("name") if scope.type == "template_type" else scope
            parts.append(text(src, name or scope))
        node = node.child_by_field_name("name")
    if node is not None:
        if node.type in ("template_type", "template_function"):
            node = node.child_by_field_name("name") or node
        parts.append(text(src, node))
    return parts


def call_arguments(call: Node) -> list[Node]:
    """The argument expressions of a ``call_expression`` (comments excluded)."""
    args = call.child_by_field_name("arguments")
    if args is None:
        return []
    return [c for c in args.named_children if c.type != "comment"]


def ancestors(node: Node) -> Iterator[Node]:
    n = node.parent
    while n is not None:
        yield n
        n = n.parent


def enclosing_function(node: Node) -> Node | None:
    for a in ancestors(node):
        if a.type == "function_definition":
            return a
    return None


def function_declarator(node: Node) -> Node | None:
    """The ``function_declarator`` of a function definition or declaration, under the
    pointer and reference declarators of its return type (``T* f(…)``, ``T& f(…)``)."""
    found = node.child_by_field_name("declarator")
    while found is not None and found.type != "function_declarator":
        found = found.child_by_field_name("declarator")
    return found


def function_qualifiers(src: bytes, func: Node) -> set[str]:
    """CUDA execution-space qualifiers of a function_definition (``__global__``, ``__device__``…)."""
    quals = set()
    for c in func.children:
        if c.type in ("__global__", "__device__", "__host__", "__forceinline__"):
            quals.add(c.type)
        elif c.type in ("storage_class_specifier", "type_qualifier", "attribute_specifier"):
            t = text(src, c)
            if t.startswith("__") and t.endswith("__"):
                quals.add(t)
        elif c.type == "function_declarator":
            break
    return quals


def is_device_code(src: bytes, node: Node) -> bool:
    """True inside a ``__global__`` or ``__device__`` function body."""
    func = enclosing_function(node)
    if func is None:
        return False
    return bool(function_qualifiers(src, func) & {"__global__", "__device__"})


MACRO_DEFINITIONS = frozenset({"preproc_def", "preproc_function_def"})


def macro_body_range(src: bytes, node: Node) -> tuple[int, int] | None:
    """Byte range of a ``#define``'s replacement text, found textually.

    The grammar gives the body as opaque text (and a comment inside a body can even
    mangle the node's children), so the name and parameter list are skipped by hand.
    """
    i, end = node.start_byte, node.end_byte
    while end > i and src[end - 1:end] in (b"\n", b"\r"):
        end -= 1
    i = src.index(b"define", i, end) + len(b"define")
    while i < end and src[i:i + 1] in b" \t":
        i += 1
    while i < end and (src[i:i + 1].isalnum() or src[i:i + 1] == b"_"):
        i += 1
    if src[i:i + 1] == b"(":
        close = src.find(b")", i, end)
        if close < 0:
            return None
        i = close + 1
    while i < end and src[i:i + 1] in b" \t":
        i += 1
    return (i, end) if i < end else None


def loose_macro_body(src: bytes, arg: Node) -> tuple[int, int] | None:
    """The body of a ``#define`` the parser could only recover as loose tokens inside an
    ERROR node (unbalanced code before it): a ``preproc_arg`` there that follows a
    ``#define`` token. Other ``preproc_arg`` nodes (``#pragma`` arguments) are not code,
    except the "argument" of a directive in the middle of a line: ``x#pragma y`` in broken
    code is no directive (``starts_line``), so what follows it is code, as the parser reads
    it once conversion has changed the code around it."""
    if arg.parent is None:
        return None
    prev = arg.prev_sibling
    if prev is not None and prev.type == "preproc_directive" and not starts_line(src, prev.start_byte):
        return _without_newline(src, arg)
    if arg.parent.type != "ERROR":
        return None
    for _ in range(3):  # #define NAME [(params)] body
        if prev is None:
            return None
        if prev.type == "#define":
            return _without_newline(src, arg)
        prev = prev.prev_sibling
    return None


def _without_newline(src: bytes, arg: Node) -> tuple[int, int] | None:
    end = arg.end_byte
    while end > arg.start_byte and src[end - 1:end] in (b"\n", b"\r"):
        end -= 1
    return (arg.start_byte, end) if end > arg.start_byte else None


def starts_line(src: bytes, at: int) -> bool:
    """True when the ``#`` at ``at`` begins a preprocessor directive: only blanks and
    ``/* */`` comments stand before it on its line, and that line does not continue the
    one before it (a backslash splice).

    C recognizes a directive only there. tree-sitter also recovers directives from the
    middle of a line of broken code (``c#include <cuda.h>``, ``f(#pragma x``), but whether
    it does depends on the code around it, which a conversion changes: treating such text
    as a directive made the next conversion read the line differently (an identifier
    renamed, a header converted or an include added only on the second run). The bytes
    decide instead.
    """
    # (Byte indexing first: nearly every include stands right after a newline.)
    line_start = at if at == 0 or src[at - 1] == 10 else src.rfind(b"\n", 0, at) + 1
    if line_start >= 2 and (src[line_start - 2] == 92 or (
            src[line_start - 2] == 13 and line_start >= 3 and src[line_start - 3] == 92)):
        return False  # "\\\n" or "\\\r\n" ends the line before: a splice
    if line_start == at:
        return True
    before = src[line_start:at]
    if b"/*" in before:
        before = _BLOCK_COMMENT.sub(b" ", before)
    return not before.strip()


_BLOCK_COMMENT = re.compile(rb"/\*.*?\*/", re.S)


def _point(src: bytes, anchor: Node, offset: int) -> tuple[int, int]:
    """(row, column) of ``offset``, counted from ``anchor`` (a node at or before it) so
    that a file with thousands of ``#define``s does not rescan from its first byte."""
    row, col = anchor.start_point
    newlines = src.count(b"\n", anchor.start_byte, offset)
    if newlines == 0:
        return row, col + offset - anchor.start_byte
    return row + newlines, offset - (src.rfind(b"\n", anchor.start_byte, offset) + 1)


@lru_cache(maxsize=1)
def _range_parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(_parser().language)


def parse_range(src: bytes, start: int, end: int, anchor: Node) -> Tree:
    """Parse only ``src[start:end]`` (inside ``anchor``), keeping the real byte offsets in
    the resulting nodes.

    The text is parsed as if a ``;`` followed it, at ``end`` (where the ``#define``'s
    newline is): most macro bodies are a statement or an expression that lacks one, and
    tree-sitter's recovery from the missing ``;`` cost more than parsing the body (about
    35 µs a body, half of all the time spent on macro bodies). Only that ``;`` token and
    the statement it ends reach past ``end``. A body with ``//`` in it is parsed as it
    is: a line comment at its end would swallow the ``;``."""
    parser = _range_parser()
    body = src[start:end]
    tail = b"" if b"//" in body else b";"
    text = body + tail
    end_row, end_col = _point(src, anchor, end)
    parser.included_ranges = [tree_sitter.Range(
        _point(src, anchor, start), (end_row, end_col + len(tail)), start, end + len(tail))]

    def read(offset: int, _point: object) -> bytes:
        return text[offset - start:offset - start + _CHUNK] if start <= offset < start + len(text) else b""

    return parser.parse(read) if _budget is None else _parse_bounded(parser, read)
