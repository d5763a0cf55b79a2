"""Parse helpers: macro bodies are reparsed in place, with the real offsets and points."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hipport.analyze import NUMBER_BODY, NUMBER_KINDS
from hipport.parse import MACRO_DEFINITIONS, macro_body_range, parse, parse_range, walk

LINES = ["#define A(x) cudaMalloc(x, 4)", "int y;", "#define W 32", "", "  #define M \\\n  cudaFree(p)",
         "/* c */", "#define S \"str\" // c", "\tvoid f();"]


@given(st.lists(st.sampled_from(LINES), min_size=1, max_size=25))
def test_macro_bodies_parse_at_their_real_place(lines: list[str]) -> None:
    src = ("\n".join(lines) + "\n").encode()
    for node in walk(parse(src).root_node):
        if node.type not in MACRO_DEFINITIONS:
            continue
        body = macro_body_range(src, node)
        if body is None:
            continue
        root = parse_range(src, *body, node).root_node
        for leaf in walk(root):
            if leaf.child_count or leaf.start_byte < body[0] or leaf.start_byte == leaf.end_byte:
                continue
            row = src.count(b"\n", 0, leaf.start_byte)
            col = leaf.start_byte - (src.rfind(b"\n", 0, leaf.start_byte) + 1)
            assert leaf.start_point == (row, col)
            if leaf.start_byte == body[1]:  # the ";" the body is parsed with (not in src)
                assert leaf.type == ";" and leaf.end_byte == body[1] + 1
                continue
            assert body[0] <= leaf.start_byte <= leaf.end_byte <= body[1]


@given(st.from_regex(NUMBER_BODY, fullmatch=True))
def test_a_one_number_macro_body_parses_only_into_inert_kinds(body: bytes) -> None:
    """The walk skips reparsing a body like ``(-256u)`` when no visitor is registered for
    any kind of node such a body can hold; NUMBER_KINDS must list every one."""
    src = b"#define X " + body + b"\nint y;\n"
    define = next(n for n in walk(parse(src).root_node) if n.type in MACRO_DEFINITIONS)
    span = macro_body_range(src, define)
    if span is None:
        return
    kinds = {n.type for n in walk(parse_range(src, *span, define).root_node)}
    assert kinds <= NUMBER_KINDS, kinds - NUMBER_KINDS


def test_find_all_through_a_shared_query_is_the_walk_filtered():
    """Type sets inside one of parse._SHARED_QUERIES are served by that query's matches,
    filtered: still every node of the types asked for, in document order."""
    from hipport.parse import _SHARED_QUERIES, find_all, parse, walk

    src = (b"#define N 4\nstruct S { int a; void m(int k) { int j = k; } };\n"
           b"template <typename T> T f(T x, int y) { int z = y; struct L { int q; } l; return x; }\n"
           b"int g(int (*cb)(int w)) { return cb(N); }\n")
    root = parse(src).root_node
    for types in [("declaration",), ("declaration", "parameter_declaration"),
                  ("preproc_def", "declaration", "function_definition"),
                  ("declaration", "parameter_declaration", "field_declaration"), _SHARED_QUERIES[0]]:
        expected = [(n.start_byte, n.end_byte, n.type) for n in walk(root) if n.type in types]
        assert [(n.start_byte, n.end_byte, n.type) for n in find_all(root, types)] == expected, types
        assert expected
