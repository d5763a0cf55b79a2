"""One buffer through the tree: parse once, one walk, every rewriter and rule.

This is the heart the pipeline calls for each file; tests call it directly with bytes.
``#define`` bodies are reparsed as code during the walk, so
every visitor also sees the identifiers, launches and masks inside macros, at their real
byte offsets.
"""

from __future__ import annotations

import re
from functools import lru_cache

from hipport import facts, rewrite, rules
from hipport.context import Context
from hipport.options import Options
from hipport.registry import prefilters_on
from hipport.parse import (
    MACRO_DEFINITIONS, Node, loose_macro_body, macro_body_range, parse, parse_range, parser_language,
)


@lru_cache(maxsize=8)
def mapping_view(rocm: tuple[int, ...], roc: bool, experimental: bool, user: tuple = ()):
    """The mapping table seen from one target, loaded once per process; ``user``: the
    project's own pairs over it (``Options.mappings``, hipport.usermaps)."""
    from hipport.mapping import load_table

    view = load_table().view(rocm, roc=roc, experimental=experimental)
    if not user:
        return view
    from hipport import usermaps

    usermaps.register(user)
    return usermaps.user_view(view, user)


def forget_name_verdicts() -> None:
    """Drop the remembered name-filter verdicts: a filter has started admitting new names
    (a project mapping), and a verdict remembered before would hide them."""
    for memo in _NAME_MEMOS.values():
        memo.clear()


def prepare(options: Options) -> None:
    """Load what every ``analyze`` call needs (registries, mapping view, grammar) now."""
    rewrite.load()
    rules.load()
    mapping_view(options.rocm, options.roc, options.experimental, options.mappings)
    parser_language()


def analyze(src: bytes, path: str, options: Options) -> Context:
    """Parse ``src`` and run every registered rewriter and rule over it in one walk."""
    tree = parse(src)
    view = mapping_view(options.rocm, options.roc, options.experimental, options.mappings)
    ctx = Context(path=path, src=src, tree=tree, options=options, view=view)
    registries = (rewrite.load(), facts.REGISTRY, rules.load())
    _walk(tree.root_node, ctx, _dispatch(registries, options, src))
    for reg in registries:
        for visitor in reg.file_visitors:
            if visitor.wanted(options):
                visitor.fn(ctx)
    ctx.findings = _without_duplicates(ctx.findings, registries[-1].rules)
    return ctx


def _dispatch(registries: tuple, options: Options, src: bytes) -> dict:
    """Node kind id -> (visitor functions, text memo or None, field whose text the memo is
    keyed by, how to find the macro body the walk reparses in its place, or None, and
    for each visitor function (it, its name filter or None, that filter's verdicts)).

    Keyed by the grammar's integer kind ids, not type names: ``Node.type`` builds a new
    string (hashed anew) for each of the millions of nodes a walk meets. Every id whose
    name is a registered type gets the entry (aliases give one name several ids).
    Visitors that ``options`` make no-ops (their ``when`` says so, or every rule they
    report is ignored or outside the target's range), and those whose ``source`` filter
    rejects ``src``, are left out of this file's walk. Tables are built once per
    combination.
    """
    conditional, sourced = _conditional_visitors(registries)
    on = prefilters_on()
    key = _options_key(registries, options, conditional) + tuple(v.source(src) for v in sourced) \
        if on else None
    dispatch = _DISPATCH_TABLES.get((registries, key))
    if dispatch is None:
        left_out = {v for v, keep in zip(conditional + sourced, key) if not keep} if on else set()
        table: dict[str, list] = {}
        for reg in registries:
            for node_type, visitors in reg.visitors.items():
                table.setdefault(node_type, []).extend(v for v in visitors if v not in left_out)
        for t in _MACRO_BODIES:  # always an entry: the walk expands their bodies
            table.setdefault(t, [])
        by_name = {t: _entry(t, tuple(vs), on) for t, vs in table.items() if vs or t in _MACRO_BODIES}
        dispatch = _DISPATCH_TABLES[(registries, key)] = {
            kind: by_name[name] for kind, name in _kind_names() if name in by_name}
    return dispatch


def _entry(node_type: str, visitors: tuple, filtered: bool) -> tuple:
    fns = tuple(v.fn for v in visitors)
    filters = tuple(v.names if filtered else None for v in visitors)
    checks = tuple(zip(fns, filters))
    return (fns, _name_memo(node_type, fns, filters), _KEY_FIELDS.get(node_type),
            _MACRO_BODIES.get(node_type), checks)


#: A ``#define`` body that is one integer (``256``, ``(-1)``, ``0xffffffffu``). Its
#: reparse holds only nodes of the kinds in NUMBER_KINDS (a property test checks this),
#: so under a dispatch table with no entry for any of them it is not reparsed at all:
#: more than half the bodies of the benchmark corpus, 43% of CUTLASS's.
NUMBER_BODY = re.compile(
    rb"[ \t(+\-~]*(?:0[xX][0-9A-Fa-f](?:'?[0-9A-Fa-f])*|0[bB][01](?:'?[01])*|[0-9](?:'?[0-9])*)"
    rb"[uUlLzZ]*[ \t)]*\Z")
NUMBER_KINDS = frozenset({
    "translation_unit", "ERROR", "expression_statement", "parenthesized_expression",
    "unary_expression", "update_expression", "number_literal", "user_defined_literal",
    "literal_suffix", "character", "(", ")", "+", "-", "~", "++", "--", ".", "'", ";"})


@lru_cache(maxsize=1)
def _kind_names() -> tuple[tuple[int, str], ...]:
    """(kind id, type name) for every node kind of the grammar."""
    language = parser_language()
    return tuple((k, language.node_kind_for_id(k)) for k in range(language.node_kind_count))


@lru_cache(maxsize=1)
def _number_kind_ids() -> tuple[int, ...]:
    return tuple(k for k, name in _kind_names() if name in NUMBER_KINDS)


#: (registries, which conditional visitors are kept, or None with pre-filters off) -> table.
_DISPATCH_TABLES: dict[tuple, dict] = {}


def _conditional_visitors(registries: tuple) -> tuple[tuple, tuple]:
    """The visitors an options test can leave out (a ``when`` filter or rules they
    report), and those with a source filter, each in a fixed order."""
    found = _CONDITIONAL.get(registries)
    if found is None:
        by_options: dict = {}
        by_source: dict = {}
        for reg in registries:
            for visitors in reg.visitors.values():
                for v in visitors:
                    if v.when is not None or v.codes:
                        by_options.setdefault(v, None)
                    if v.source is not None:
                        by_source.setdefault(v, None)
        found = _CONDITIONAL[registries] = (tuple(by_options), tuple(by_source))
    return found


_CONDITIONAL: dict[tuple, tuple[tuple, tuple]] = {}


def _options_key(registries: tuple, options: Options, conditional: tuple) -> tuple[bool, ...]:
    """Which of ``conditional`` a run with ``options`` keeps; decided once per options."""
    found = _OPTIONS_KEYS.get((registries, options))
    if found is None:
        found = _OPTIONS_KEYS[(registries, options)] = tuple(v.wanted(options) for v in conditional)
    return found


_OPTIONS_KEYS: dict[tuple, tuple[bool, ...]] = {}


#: Node types whose macro body the walk reparses as code, and how to find that body:
#: ``#define`` nodes, and the body of one recovered as loose tokens inside an ERROR node.
_MACRO_BODIES = {t: macro_body_range for t in MACRO_DEFINITIONS} | {"preproc_arg": loose_macro_body}

#: Node types whose name filters look at a child's text rather than the node's own.
_KEY_FIELDS = {"call_expression": "function"}


def _walk(root: Node, ctx: Context, dispatch: dict) -> None:
    """Call the visitors of every node under ``root`` in document order: one walk.

    The dispatch is written into the cursor loop (a generator and a call per node
    cost a third of the walk): a ``#define``'s body is
    reparsed and walked in its place (``_walk_body``). The macro definition types always
    have a dispatch entry, so nodes without one need no further test.
    """
    src = ctx.src
    get = dispatch.get
    numbers_inert = prefilters_on() and not any(kind in dispatch for kind in _number_kind_ids())
    cursor = root.walk()
    first_child, next_sibling, parent = cursor.goto_first_child, cursor.goto_next_sibling, cursor.goto_parent
    while True:
        node = cursor.node
        entry = get(node.kind_id)
        if entry is None:
            if first_child():
                continue
        else:
            fns, memo, key_field, macro_body, _ = entry
            if memo is not None:  # a leaf (or a call's callee) whose visitors filter by text
                if key_field is None:  # inlined _filtered: a third of all nodes are names
                    fns = memo.get(src[node.start_byte:node.end_byte])
                    if fns is None:
                        fns = _admit(memo, entry, src[node.start_byte:node.end_byte])
                else:
                    fns = _filtered(entry, node, src)
            for fn in fns:
                fn(node, ctx)
            if macro_body is not None:
                body = macro_body(src, node)
                if body is not None and not (numbers_inert and NUMBER_BODY.match(src, *body)):
                    ctx.in_macro_body = True
                    try:
                        _walk_body(parse_range(src, *body, node).root_node, ctx, dispatch, body[0])
                    finally:
                        ctx.in_macro_body = False
            elif first_child():
                continue
        while not next_sibling():
            if not parent():
                return


def _walk_body(root: Node, ctx: Context, dispatch: dict, body_start: int) -> None:
    """``_walk`` for a reparsed ``#define`` body starting at ``body_start``: its root and
    anything before the body are skipped, and no macro is expanded again."""
    src = ctx.src
    get = dispatch.get
    cursor = root.walk()
    first_child, next_sibling, parent = cursor.goto_first_child, cursor.goto_next_sibling, cursor.goto_parent
    if not first_child():
        return
    while True:
        node = cursor.node
        if node.start_byte >= body_start:
            entry = get(node.kind_id)
            if entry is not None:
                fns = entry[0] if entry[1] is None else _filtered(entry, node, src)
                for fn in fns:
                    fn(node, ctx)
        if first_child():
            continue
        while not next_sibling():
            if not parent():
                return


def _filtered(entry: tuple, node: Node, src: bytes) -> tuple:
    """The visitors of a dispatch entry that want this node, decided by its text (or its
    callee's) once per distinct text."""
    _, memo, key_field, _, _ = entry
    if key_field is None:
        key = src[node.start_byte:node.end_byte]
    else:
        keyed = node.child_by_field_name(key_field)
        key = src[keyed.start_byte:keyed.end_byte] if keyed is not None else b""
    found = memo.get(key)
    return found if found is not None else _admit(memo, entry, key)


#: Per node type and visitor list: the text of a leaf (or callee) -> the visitors that want it.
_NAME_MEMOS: dict[tuple[str, tuple], dict[bytes, tuple]] = {}
_MEMO_LIMIT = 200_000  # distinct texts per node type before a memo starts over


def _name_memo(node_type: str, fns: tuple, filters: tuple) -> dict[bytes, tuple] | None:
    """The memo for a node type when any of its visitors filters by text, else None."""
    if all(f is None for f in filters):
        return None
    return _NAME_MEMOS.setdefault((node_type, fns), {})


def _admit(memo: dict[bytes, tuple], entry: tuple, key: bytes) -> tuple:
    """The visitors (in registration order) that may act on a leaf with text ``key``.

    Each filter judges the text here, once per memo. A second cache of every filter's
    verdict on every text (for a text met under several node types) was hit by 2-6 % of
    the judgements on the bench corpus and cuda-samples, and held ~27 MiB on the
    2,000-file corpus: most of convert's peak memory growth with the number of files."""
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    name = key.decode("utf-8", "replace")  # nearly every admitted text meets a filter's miss
    memo[key] = found = tuple([fn for fn, accepts in entry[4] if accepts is None or accepts(name)])
    return found


def _without_duplicates(findings: list, rules_by_code: dict) -> list:
    """One finding per thing: exact repeats go, and so does every finding another one
    supersedes (``Rule.supersedes``: e.g. a feature rule at a token makes the bare mapping
    status of that token redundant, because it says what the construct is and what to do
    instead)."""
    unique = list({(f.code, f.line, f.col, f.message): f for f in findings}.values())
    at_place: dict[tuple[int, int], set[str]] = {}
    around: list[tuple] = []  # (superseding finding, Supersedes) with ``within``
    for f in unique:
        rule = rules_by_code.get(f.code)
        for s in rule.supersedes if rule is not None else ():
            if s.within:
                around.append((f, s))
            else:
                at_place.setdefault((f.line, f.col), set()).update(s.codes)
    if not at_place and not around:
        return unique
    return [f for f in unique
            if f.code not in at_place.get((f.line, f.col), ())
            and not any(f.code in s.codes and _inside(f, g) and _starts_with(f, s.token) for g, s in around)]


def _starts_with(f, token: str) -> bool:
    return not token or f.source_line.encode("utf-8", "surrogateescape")[f.col - 1:].startswith(token.encode())


def _inside(inner, outer) -> bool:
    """Whether ``inner``'s range lies within ``outer``'s (1-based line and byte column)."""
    return (outer.line, outer.col) <= (inner.line, inner.col) \
        and (inner.end_line, inner.end_col) <= (outer.end_line, outer.end_col)
