"""Facts the walk gathers once per file, for any rule to read.

Per file: object-like macros (name -> bodies and ``#define`` nodes) and file-scope
variables. Per function: its declarations with their types and initialisers, the values
assigned to plain names, the calls and binary expressions in it, and whether it is device
code. The visitors here only record nodes the walk meets anyway (a query per function
body was a second traversal of nearly every node); the facts are built from them on
first use.

What is recorded is declared by the rules that read it (``need``): the calls whose names
some rule looks up and the operators of the binary expressions some rule reads. A rule
that reads a call or an operator it did not declare finds nothing; the differential test
(pre-filters off, ``hipport.registry.prefilters``) records everything and so catches
such a rule on its fixtures. ``need(by=...)`` names the rules that read the facts after
the walk: the recorders are left out of a run where none of them is enabled (a reader
that asks then gets its facts from a query of the tree: slower, never different).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from hipport.parse import Node, call_name, find_all, function_qualifiers, text
from hipport.parse import enclosing_function as parse_enclosing_function
from hipport.registry import Registry, prefilters_on, words_of

if TYPE_CHECKING:
    from hipport.context import Context
    from hipport.options import Options
    from hipport.rule import Rule

REGISTRY = Registry()

#: Builtins whose use makes a function device code whatever its qualifiers say.
THREAD_BUILTINS = frozenset({"threadIdx", "blockDim"})

_COMMENT_RE = re.compile(r"/\*.*?\*/|//.*", re.S)


class Needs:
    """What the rules read, declared at import: calls by name, binaries by operator, and
    the calls that mark a function as device code. Filled before any file is analysed."""

    calls: set[str] = set()
    operators: set[str] = set()
    device_calls: set[str] = set()
    readers: dict["Rule", None] = {}  # the rules whose checks read recorded facts


def need(calls: Iterable[str] = (), operators: Iterable[str] = (), device_calls: Iterable[str] = (),
         by: Iterable["Rule"] = ()) -> None:
    """Declare that a rule reads these calls / binary operators from ``FunctionFacts``;
    ``device_calls`` are builtins whose call makes a function device-like; ``by``: rules
    whose checks read the facts once the walk is over (``recording``)."""
    Needs.calls.update(calls)
    Needs.operators.update(operators)
    Needs.device_calls.update(device_calls)
    Needs.calls.update(device_calls)
    Needs.readers.update(dict.fromkeys(by))
    _RECORDING.clear()


def recording(options: "Options") -> bool:
    """Whether a run with ``options`` records the nodes facts are built from: some rule
    that reads them is enabled (``need(by=...)``), or pre-filters are off. The recorders'
    ``when`` filter, so the engine leaves them out of other runs; decided once per options."""
    found = _RECORDING.get(options)
    if found is None:
        found = _RECORDING[options] = any(r.enabled(options) for r in Needs.readers)
    return found or not prefilters_on()


_RECORDING: dict = {}


class Var(NamedTuple):
    """A declared variable: enough to know its width and where its value came from.
    (A named tuple: functions declare many, and this is built for each.)"""

    name: str
    type: str
    node: Node  # the declared identifier
    init: Node | None
    in_for_init: bool = False


@dataclass
class FileFacts:
    macros: dict[str, list[tuple[str, Node]]] = field(default_factory=dict)  # name -> [(body, #define)]
    globals: dict[str, Var] = field(default_factory=dict)  # the last of each name
    #: every file-scope declaration of each name, in order: namespaces may each declare one
    declared: dict[str, list[Var]] = field(default_factory=dict)


@dataclass
class FunctionFacts:
    """What one function body declares and computes."""

    vars: dict[str, Var] = field(default_factory=dict)
    assigned: dict[str, list[Node]] = field(default_factory=dict)  # name -> values assigned (= |= &= ^=)
    calls: list[tuple[str, Node]] = field(default_factory=list)  # the needed names only
    binaries: list[Node] = field(default_factory=list)  # those with a needed operator
    device_like: bool = False


@dataclass
class Recorded:
    """The per-file state of this module: recorded nodes in document order."""

    nodes: list[Node] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    walked: bool = False  # the walk is over: ``nodes`` holds the whole file
    file: FileFacts | None = None


def normalised(type_text: str) -> str:
    return " ".join(type_text.split())


def macro_body(src: bytes, define: Node) -> str:
    """A ``#define``'s body, comments blanked, stripped."""
    value = define.child_by_field_name("value")
    return _COMMENT_RE.sub(" ", text(src, value)).strip() if value is not None else ""


# -- recording -----------------------------------------------------------------------------

_GATHERED = ("declaration", "assignment_expression", "call_expression", "binary_expression", "field_expression")
_FILE_NODES = ("preproc_def", "declaration", "function_definition")


@REGISTRY.visits(*(t for t in _GATHERED if t != "call_expression"), "preproc_def", "function_definition",
                 when=recording)
def record(node: Node, ctx: "Context") -> None:
    """Keep, in document order, the nodes the facts are built from."""
    if not ctx.in_macro_body:  # another tree: not part of any function body here
        rec = ctx.states.get(Recorded)  # (``ctx.state`` inlined: this runs for many nodes)
        if rec is None:
            rec = ctx.state(Recorded)
        rec.nodes.append(node)


def _needed_call(callee: str) -> bool:
    return not Needs.calls.isdisjoint(words_of(callee)) or not prefilters_on()



@REGISTRY.visits("call_expression", names=_needed_call, when=recording)
def record_call(node: Node, ctx: "Context") -> None:
    """``record`` for the calls some rule reads; most calls are none."""
    record(node, ctx)


@REGISTRY.visits_file
def walked(ctx: "Context") -> None:
    """What ``record`` kept is now the whole file (file visitors of rules run after)."""
    ctx.state(Recorded).walked = True


# -- reading -------------------------------------------------------------------------------

def file_facts(ctx: "Context") -> FileFacts:
    """Object-like macros and file-scope variables, collected once per file: from the
    nodes the walk recorded once it is over, else (a visitor asking during the walk) from
    a query of the whole tree. Both see the same nodes in the same order."""
    rec = ctx.state(Recorded)
    if rec.file is None:
        if rec.walked and recording(ctx.options):
            nodes = [n for n in rec.nodes if n.type in _FILE_NODES]
        else:
            nodes = find_all(ctx.tree.root_node, _FILE_NODES)
        rec.file = _collect_file_facts(ctx.src, nodes)
    return rec.file


def _collect_file_facts(src: bytes, nodes: list[Node]) -> FileFacts:
    """``nodes`` in document order, function definitions among them: a declaration is in a
    function when one of the definitions met before it has not ended (ranges nest), which
    spares a walk up the tree per declaration (``Node.parent`` descends from the root)."""
    facts = FileFacts()
    open_functions: list[Node] = []
    for node in nodes:
        t = node.type
        start = node.start_byte
        while open_functions and open_functions[-1].end_byte <= start:
            open_functions.pop()
        if t == "function_definition":
            open_functions.append(node)
        elif t == "preproc_def":
            name = node.child_by_field_name("name")
            if name is not None:
                facts.macros.setdefault(text(src, name), []).append((macro_body(src, node), node))
        elif not open_functions:
            for var in declared_vars(src, node):
                facts.globals[var.name] = var
                facts.declared.setdefault(var.name, []).append(var)
    return facts


@dataclass
class _OpenFunctions:
    """Per file: the definitions the walk has entered, innermost last, popped once the walk
    is past their end (``enclosing_function``)."""

    stack: list[Node] = field(default_factory=list)


@REGISTRY.visits("function_definition")
def enter_function(node: Node, ctx: "Context") -> None:
    if not ctx.in_macro_body:
        ctx.state(_OpenFunctions).stack.append(node)


def enclosing_function(ctx: "Context", node: Node) -> Node | None:
    """The innermost ``function_definition`` around ``node`` (not ``node`` itself), for a
    visitor during the walk: from the definitions the walk has entered, in constant time
    amortised. ``parse.enclosing_function`` climbs ``Node.parent``, which tree-sitter finds
    by descending from the root: quadratic in the nesting depth, for every node asking.
    (Nodes of a reparsed ``#define`` body belong to a small tree of their own: climbed.)"""
    if ctx.in_macro_body or ctx.state(Recorded).walked:
        return parse_enclosing_function(node)
    stack = ctx.state(_OpenFunctions).stack
    start = node.start_byte
    while stack and stack[-1].end_byte <= start:
        stack.pop()
    i = len(stack) - 1
    if i >= 0 and node.type == "function_definition" and stack[i].start_byte == start \
            and stack[i].end_byte == node.end_byte:
        i -= 1  # the definition itself: its enclosing one is below it
    return stack[i] if i >= 0 else None


def is_device_code(ctx: "Context", node: Node) -> bool:
    """True inside a ``__global__`` or ``__device__`` function body (``parse.is_device_code``
    without the climb)."""
    func = enclosing_function(ctx, node)
    return func is not None and bool(function_qualifiers(ctx.src, func) & {"__global__", "__device__"})


def is_device_only_code(ctx: "Context", node: Node) -> bool:
    """Inside a ``__global__`` or ``__device__`` function that is not also ``__host__``: code
    that never runs on the host, so a host-only declaration's absence cannot break it."""
    func = enclosing_function(ctx, node)
    if func is None:
        return False
    quals = function_qualifiers(ctx.src, func)
    return "__host__" not in quals and bool(quals & {"__global__", "__device__"})


@dataclass
class _InnerQualified:
    """Per file: (start, end) of the qualified names that are a part of a longer one."""

    ranges: set[tuple[int, int]] = field(default_factory=set)


def outermost_qualified(ctx: "Context", node: Node) -> bool:
    """Whether a ``qualified_identifier`` is not a part of a longer one (``a::b`` of
    ``a::b::c``), for its visitors during the walk: the walk meets the longer name first,
    which marks its parts, instead of each part asking for its parent (quadratic in
    nested names: 200 KB of ``cub::cub::…`` took a minute). Every visitor of the node
    gets the same answer."""
    inner = ctx.state(_InnerQualified).ranges
    outermost = (node.start_byte, node.end_byte) not in inner
    for child in node.children:
        if child.type == "qualified_identifier":
            inner.add((child.start_byte, child.end_byte))
    return outermost


def declared_vars(src: bytes, decl: Node, in_for_init: bool = False) -> Iterator[Var]:
    """Variables declared by a declaration or parameter declaration."""
    ty = decl.child_by_field_name("type")
    type_text = normalised(text(src, ty)) if ty is not None else ""
    for d in decl.children_by_field_name("declarator"):
        init = None
        if d.type == "init_declarator":
            init = d.child_by_field_name("value")
            d = d.child_by_field_name("declarator")
        if decl.type == "optional_parameter_declaration":
            init = decl.child_by_field_name("default_value")
        if d is not None and d.type == "identifier":
            yield Var(text(src, d), type_text, d, init, in_for_init)


def _shadowed_by_cuda_branch(ctx: "Context", earlier: Var | None, later: Var) -> bool:
    """``#ifdef USE_ROCM unsigned m = __ballot(p); #else unsigned m = __ballot_sync(…); #endif``:
    the name's later declaration is in a branch the HIP build does not compile, the earlier
    one in code it does. The function's facts keep the one the HIP build compiles; the last
    declaration won before, which hid the HIP branch's own 32-bit mask (the blind recall
    corpus's g02)."""
    return earlier is not None and ctx.in_cuda_only_branch(later.node.start_byte) \
        and not ctx.in_cuda_only_branch(earlier.node.start_byte)


def function_facts(ctx: "Context", func: Node) -> FunctionFacts:
    """What ``func`` declares, assigns and calls, from the nodes the walk recorded (or,
    for a function in a ``#define`` body, from a query of that body's own tree)."""
    src = ctx.src
    info = FunctionFacts(device_like=bool(function_qualifiers(src, func) & {"__global__", "__device__"}))
    declarator = func.child_by_field_name("declarator")
    params = declarator.child_by_field_name("parameters") if declarator is not None else None
    for p in params.named_children if params is not None else ():
        if p.type in ("parameter_declaration", "optional_parameter_declaration"):
            for var in declared_vars(src, p):
                info.vars[var.name] = var
    body = func.child_by_field_name("body")
    if body is None:
        return info
    nodes = _recorded_within(ctx, body) if not ctx.in_macro_body and recording(ctx.options) \
        else find_all(body, _GATHERED)
    operators, device_calls = Needs.operators, Needs.device_calls
    everything = not prefilters_on()
    for node in nodes:
        t = node.type
        if t == "declaration":
            parent = node.parent
            in_for = parent is not None and parent.type == "for_statement" and (
                parent.child_by_field_name("initializer") == node
            )
            for var in declared_vars(src, node, in_for):
                if not _shadowed_by_cuda_branch(ctx, info.vars.get(var.name), var):
                    info.vars[var.name] = var
        elif t == "assignment_expression" and _is_value_assignment(src, node.child_by_field_name("operator")):
            left = node.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                info.assigned.setdefault(text(src, left), []).append(node.child_by_field_name("right"))
        elif t == "call_expression":
            name = call_name(src, node)
            if name:
                info.calls.append((name, node))
                info.device_like |= name in device_calls
        elif t == "binary_expression":
            op = node.child_by_field_name("operator")
            if everything or op is None or op.type in operators:
                info.binaries.append(node)
        elif t == "field_expression" and not info.device_like:  # it only sets device_like
            arg = node.child_by_field_name("argument")
            info.device_like |= arg is not None and src[arg.start_byte:arg.end_byte] in _THREAD_BUILTIN_BYTES
    return info


_THREAD_BUILTIN_BYTES = frozenset(name.encode() for name in THREAD_BUILTINS)


#: Assignments whose right side's bits end up in the variable: ``m = v``, and the bitwise
#: ``m |= __ballot_sync(…)`` that accumulates votes (the left keeps the ballot's bits).
_VALUE_ASSIGNMENTS = frozenset({b"=", b"|=", b"&=", b"^="})


def _is_value_assignment(src: bytes, op: Node | None) -> bool:
    """Whether ``op`` is one of ``_VALUE_ASSIGNMENTS`` (compared as bytes: nothing decoded)."""
    return op is not None and src[op.start_byte:op.end_byte] in _VALUE_ASSIGNMENTS


def _recorded_within(ctx: "Context", node: Node) -> list[Node]:
    """The recorded nodes inside ``node`` (those starting within it), in document order."""
    rec = ctx.state(Recorded)
    nodes, starts = rec.nodes, rec.starts
    if len(starts) != len(nodes):
        starts = rec.starts = [n.start_byte for n in nodes]
    return nodes[bisect_left(starts, node.start_byte):bisect_left(starts, node.end_byte)]
