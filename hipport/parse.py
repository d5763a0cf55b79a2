"""tree-sitter setup and the few node helpers every stage needs.

The grammar is loaded once per process. Parsing never raises: tree-sitter recovers from
errors and marks them with ERROR/MISSING nodes, which is what lets hipport work on code
that does not compile yet (unlike hipify-clang).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import tree_sitter
import tree_sitter_cuda

Node = tree_sitter.Node
Tree = tree_sitter.Tree


@lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))


def parse(src: bytes) -> Tree:
    """Parse CUDA/C++ bytes; always returns a tree."""
    return _parser().parse(src)


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
