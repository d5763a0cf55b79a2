"""Argument-level rewrites: calls whose HIP function takes other arguments than CUDA's.

A rename alone is right only when the signatures agree. Where they do not, hipify-clang's
transforming matchers change the arguments (``FuncArgCasts``); hipport does the same from
data, ``mappings/arguments.toml`` (every rewrite hipify-clang performs, each decided against
the HIP headers, plus the ones found the same way), and where a rewrite is not certain the
call gets an HP116 finding instead: never a silent wrong arity.

Indexes are those of the CUDA call, as in HIPIFY: an added argument goes before the
original argument of its index, or at the end when the index is past the last one.

Wraps and insertions only add bytes around arguments, so identifier renames inside them
still apply; an argument that is moved or copied is written with its identifiers renamed,
and the renames inside text that is replaced or dropped are dropped with it. A call is
rewritten for all of its rows or, when one cannot be done exactly, for none, and reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from hipport.context import Context
from hipport.datafiles import mappings, toml_data
from hipport.edits import Edit
from hipport.parse import Node, call_name, find_all
from hipport.rewrite import REGISTRY
from hipport.rewrite.roc_types import RocFile, defer_call, library_of
from hipport.names import NAME_NODES, in_tables, resolution_for, target_for
from hipport.rules import moot_where_provided
from hipport.rules.api.conversion import ARGUMENT_REWRITE, ROC_ARGUMENTS
from hipport.rules.api.signatures import SignatureDiffersForCuda


TRANSFORMS = frozenset({
    "reinterpret_cast", "HIP_SYMBOL", "add_const_argument", "add_var_argument", "remove_argument",
    "move_argument", "replace_argument_with_const", "reinterpret_cast_size_t", "cast", "require_null",
    "rename_call"})
DECISIONS = frozenset({"apply", "report", "elsewhere"})
_NULL_RE = re.compile(r"^(?:\(\s*\w+\s*\)\s*)?(?:0|0L|NULL|nullptr)$")
_ALREADY_CAST = ("reinterpret_cast<constvoid*>", "(constvoid*)", "(void*)", "reinterpret_cast<void*>")


@dataclass(frozen=True, slots=True)
class ArgRewrite:
    """One row of ``arguments.toml`` for one CUDA name (see that file for the fields)."""

    cuda: str
    applies: str  # always | roc | miopen
    arg: int
    transform: str
    value: str | None
    moved_to: int | None
    when_target: str | None
    when_arguments: int | None
    only_if: str | None
    decision: str
    reason: str
    rocm_from: tuple[int, ...] | None = None
    rocm_until: tuple[int, ...] | None = None
    when_argument: re.Pattern[str] | None = None
    fine: re.Pattern[str] | None = None
    when_type: re.Pattern[str] | None = None
    what: str | None = None
    answers_signature: bool = False

    def in_release(self, rocm: tuple[int, ...]) -> bool:
        """Whether the target release is in ``[rocm_from, rocm_until)``."""
        return (self.rocm_from is None or rocm >= self.rocm_from) and (
            self.rocm_until is None or rocm < self.rocm_until)


@lru_cache(maxsize=1)
def document() -> dict:
    """``mappings/arguments.toml``, parsed once."""
    return toml_data("arguments.toml")


@lru_cache(maxsize=1)
def rewrites() -> dict[str, tuple[ArgRewrite, ...]]:
    """CUDA name → its rewrites, in file order. Loaded on the first call seen."""
    doc = document()
    out: dict[str, list[ArgRewrite]] = {}
    for item in doc["rewrites"]:
        if item["transform"] not in TRANSFORMS or item["decision"] not in DECISIONS:
            raise ValueError(f"arguments.toml: bad rewrite {item}")
        for name in item["names"]:
            out.setdefault(name, []).append(ArgRewrite(
                name, item["applies"], int(item["arg"]), item["transform"], item.get("value"),
                item.get("moved_to"), item.get("when_target"), item.get("when_arguments"),
                item.get("only_if"), item["decision"], item["reason"],
                _release(item.get("rocm_from")), _release(item.get("rocm_until")),
                _regex(item.get("when_argument")), _regex(item.get("fine")),
                _regex(item.get("when_type")), item.get("what"),
                bool(item.get("answers_signature", False))))
    return {k: tuple(v) for k, v in out.items()}


def _release(text: str | None) -> tuple[int, ...] | None:
    return tuple(int(p) for p in text.split(".")) if text else None


def _regex(text: str | None) -> re.Pattern[str] | None:
    return re.compile(text) if text else None


def has_rewrites(name: str) -> bool:
    return name in rewrites()


@dataclass
class _Arguments:
    """Per file: each rewritten call's argument count after the rewrite (None: reported,
    so HP119 stays quiet), the argument text replaced or removed (start, end, the edit that
    did it) whose identifier renames go, the declared types (None until a cast asks), and
    the function names of calls ``rename_call`` or an ``answers_signature`` row rewrote to the
    HIP signature, whose HP107 the rewrite answers."""

    after: dict[int, int | None] = field(default_factory=dict)
    superseded: list[tuple[int, int, Edit]] = field(default_factory=list)
    declared_types: dict[str, str | None] | None = None
    renamed: list[tuple[int, int]] = field(default_factory=list)


@REGISTRY.visits("call_expression", names=has_rewrites)
def rewrite_arguments(node: Node, ctx: Context) -> None:
    """Rewrite the arguments of one call for every row that applies, or none of them and
    report the call: a half-rewritten argument list would be wrong in a new way."""
    fn = node.child_by_field_name("function")
    args = node.child_by_field_name("arguments")
    name = call_name(ctx.src, node)
    rows = rewrites().get(name or "")
    if fn is None or args is None or not rows or args.has_error:
        return
    res = resolution_for(ctx, fn, name)  # type: ignore[arg-type]
    if res is None or not res.apply or not res.target:
        return  # not renamed: the HP1xx rules report the name
    to_roc = res.entry.roc is not None and res.target == res.entry.roc and res.entry.roc != res.entry.hip
    argv = [c for c in args.named_children if c.type != "comment"]
    rocm = tuple(ctx.rocm)
    todo = [r for r in rows if (r.applies == "always" or to_roc) and r.decision != "elsewhere"
            and (r.when_target is None or r.when_target == res.target)
            and (r.when_arguments is None or r.when_arguments == len(argv))
            and r.in_release(rocm)
            and (r.when_argument is None or (r.arg < len(argv) and r.when_argument.fullmatch(ctx.text(argv[r.arg]))))
            and (r.when_type is None or (r.arg < len(argv) and _fits(ctx, argv[r.arg], r.when_type)))]
    edits: list[Edit] = []
    superseded: list[tuple[int, int, Edit]] = []
    problems: list[ArgRewrite] = []
    whys: list[str] = []
    for r in todo:
        why = _plan(ctx, args, argv, r, edits, superseded)
        if why is not None:
            problems.append(r)
            whys.append(why)
    if problems:
        _report(ctx, node, problems, whys, res.target)
        ctx.state(_Arguments).after[node.id] = None  # reported: HP119 stays quiet
        return
    if todo:
        added = sum(1 for r in todo if r.transform in ("add_const_argument", "add_var_argument"))
        removed = sum(1 for r in todo if r.transform == "remove_argument")
        ctx.state(_Arguments).after[node.id] = len(argv) + added - removed
    if edits:
        ctx.edits.extend(edits)
        ctx.state(_Arguments).superseded.extend(superseded)
        ctx.rewrites += 1
        if any(r.answers_signature for r in todo):  # the call now has the HIP function's signature
            ctx.state(_Arguments).renamed.append((fn.start_byte, fn.end_byte))


@dataclass(frozen=True, slots=True)
class RocCall:
    """A ``[[roc_calls]]`` entry: --roc calls whose arguments hipport cannot make exact."""

    cuda: re.Pattern[str] | None
    target: re.Pattern[str] | None
    argument: re.Pattern[str] | None
    when_unchecked: bool
    message: str
    types: str | None  # a [[roc_types]] group: the message holds unless the file's were rewritten


@lru_cache(maxsize=1)
def roc_calls() -> tuple[RocCall, ...]:
    doc = document()

    def rx(item: dict, key: str) -> re.Pattern[str] | None:
        return re.compile(item[key]) if key in item else None

    return tuple(RocCall(rx(i, "cuda"), rx(i, "target"), rx(i, "argument"),
                         bool(i.get("when_unchecked", False)), i["message"], i.get("types"))
                 for i in doc.get("roc_calls", []))


@lru_cache(maxsize=1)
def roc_arity() -> dict[str, int]:
    """ROC function → parameter count (``mappings/roc-arity.json``, tools/gen_roc_arity.py)."""
    import json

    return json.loads((mappings() / "roc-arity.json").read_bytes())["arity"]


def _maybe_roc_call(name: str) -> bool:
    return name.startswith(("cusparse", "cublas"))


@REGISTRY.visits("call_expression", names=_maybe_roc_call, when=lambda options: options.roc)
def roc_call_arguments(node: Node, ctx: Context) -> None:
    """HP119 where a call renamed to its ROC function keeps CUDA's argument types or list
    in a way ``[[roc_calls]]`` knows is wrong, or passes another number of arguments than
    the ROC function takes (``roc-arity.json``, after the rewrites above)."""
    fn = node.child_by_field_name("function")
    args = node.child_by_field_name("arguments")
    name = call_name(ctx.src, node)
    if fn is None or args is None or name is None or not _maybe_roc_call(name):
        return
    res = resolution_for(ctx, fn, name)
    if res is None or not res.apply or res.target is None or res.target != res.entry.roc:
        return
    library = library_of(res.target)
    if library is not None:
        ctx.state(RocFile).libraries.add(library)
    argv = [c for c in args.named_children if c.type != "comment"]
    done = ctx.state(_Arguments).after
    if node.id in done and done[node.id] is None:
        return  # HP116 already reports this call
    after = done.get(node.id)
    count = len(argv) if after is None else after
    expected = roc_arity().get(res.target)
    text = ctx.text(args)
    matched = [rc for rc in roc_calls()
               if (rc.cuda is None or rc.cuda.search(name)) and (rc.target is None or rc.target.search(res.target))
               and (rc.argument is None or rc.argument.search(text))
               and not (rc.when_unchecked and (after is not None or expected is not None))]
    found = [rc.message for rc in matched if rc.types is None]
    if expected is not None and count != expected:
        found.insert(0, f"the call passes {count} arguments, {res.target} takes {expected}")
    head = f"`{name}` → `{res.target}`: "
    suggestion = "compare the call with the ROC library's declaration and adjust the arguments"
    by_types = [(rc.types, rc.message) for rc in matched if rc.types is not None]
    if by_types:  # whether the element types hold depends on the whole file: decided at its end
        defer_call(ctx, node, head, found, by_types, suggestion)
    elif found:
        ctx.report(ROC_ARGUMENTS, node, head + "; ".join(found), suggestion)


def _plan(ctx: Context, args: Node, argv: list[Node], r: ArgRewrite, edits: list[Edit],
          superseded: list[tuple[int, int, Edit]]) -> str | None:
    """Add the edits of one row to ``edits``; or say why it cannot be done exactly."""
    n = len(argv)
    t = r.transform
    if r.decision == "report":
        return ""
    if (r.arg >= n and t != "add_const_argument") or (r.moved_to is not None and r.moved_to > n):
        return f"the call has {n} arguments, fewer than CUDA's signature"
    a = argv[r.arg] if r.arg < n else None

    def replace(start: int, end: int, text: str) -> None:
        e = Edit(start, end, text.encode())
        edits.append(e)
        superseded.append((start, end, e))

    if t in ("reinterpret_cast", "HIP_SYMBOL"):
        assert a is not None
        text = ctx.text(a).replace(" ", "")
        if t == "HIP_SYMBOL" and text.startswith("HIP_SYMBOL("):
            return None
        if t == "reinterpret_cast" and text.startswith(_ALREADY_CAST):
            return None
        edits.append(Edit(a.start_byte, a.start_byte,
                          b"HIP_SYMBOL(" if t == "HIP_SYMBOL" else b"reinterpret_cast<const void*>("))
        edits.append(Edit(a.end_byte, a.end_byte, b")"))
    elif t == "add_const_argument":
        value = _value(ctx, r)
        if r.arg < n:
            edits.append(Edit(argv[r.arg].start_byte, argv[r.arg].start_byte, (value + ", ").encode()))
        elif n:
            edits.append(Edit(argv[-1].end_byte, argv[-1].end_byte, (", " + value).encode()))
        else:
            edits.append(Edit(args.children[0].end_byte, args.children[0].end_byte, value.encode()))
    elif t == "cast":
        assert a is not None and r.value is not None
        text = ctx.text(a)
        if _NULL_RE.match(text.replace(" ", "")) or (r.fine is not None and _fits(ctx, a, r.fine)):
            return None  # converts implicitly: nothing to write
        before, after = r.value.split("{}")
        edits.append(Edit(a.start_byte, a.start_byte, before.encode()))
        edits.append(Edit(a.end_byte, a.end_byte, after.encode()))
    elif t == "require_null":
        assert a is not None
        if not _NULL_RE.match(ctx.text(a).replace(" ", "")):
            return f"`{ctx.text(a)}` is not null"
    elif t == "remove_argument":
        assert a is not None
        if r.only_if == "null" and not _NULL_RE.match(ctx.text(a).replace(" ", "")):
            return f"`{ctx.text(a)}` is not null, and dropping it would lose it"
        if r.arg > 0:
            replace(argv[r.arg - 1].end_byte, a.end_byte, "")
        else:
            replace(a.start_byte, argv[1].start_byte if n > 1 else a.end_byte, "")
    elif t == "replace_argument_with_const":
        assert a is not None
        replace(a.start_byte, a.end_byte, _value(ctx, r))
    elif t == "move_argument":
        assert a is not None and r.moved_to is not None and r.moved_to < n
        dest = argv[r.moved_to]
        replace(dest.start_byte, dest.end_byte, _rendered(ctx, a))
    elif t == "rename_call":
        # the call is written against a signature the target has under another name (CUDA
        # 13's cudaMemPrefetchAsync with a cudaMemLocation is HIP 7.1's hipMemPrefetchAsync_v2)
        fn = args.parent.child_by_field_name("function") if args.parent is not None else None
        assert fn is not None and r.value is not None
        replace(fn.start_byte, fn.end_byte, r.value)
        ctx.state(_Arguments).renamed.append((fn.start_byte, fn.end_byte))
    elif t == "add_var_argument":
        assert a is not None and r.moved_to is not None
        text = _rendered(ctx, a)
        if r.moved_to < n:
            edits.append(Edit(argv[r.moved_to].start_byte, argv[r.moved_to].start_byte, (text + ", ").encode()))
        else:
            edits.append(Edit(argv[-1].end_byte, argv[-1].end_byte, (", " + text).encode()))
    else:
        return ""
    return None


def supersede(ctx: Context, edit: Edit) -> None:
    """Have ``drop_superseded`` drop the identifier renames inside ``edit``'s bytes: an
    applied fix of a rule that removes text holding a CUDA name (HP331 dropping
    ``cudaBoundaryModeTrap``), which would otherwise overlap the rename."""
    ctx.state(_Arguments).superseded.append((edit.start, edit.end, edit))


@REGISTRY.visits_file
def drop_superseded(ctx: Context) -> None:
    """Drop the identifier renames inside argument text this module replaced or removed
    (their new spelling is already in the replacement, or the argument is gone)."""
    state = ctx.states.get(_Arguments)
    ranges = state.superseded if state is not None else None
    if not ranges:
        return
    mine = {id(e) for _, _, e in ranges}
    before = len(ctx.edits)
    ctx.edits[:] = [e for e in ctx.edits if id(e) in mine or e.start == e.end
                    or not any(s <= e.start and e.end <= t for s, t, _ in ranges)]
    ctx.rewrites -= before - len(ctx.edits)
    # A name the target lacks, in text that is gone (``cudaEnableDefault`` written 0), is
    # no longer left as written: its finding goes with it.
    spans = [(ctx.position(s), ctx.position(t)) for s, t, _ in ranges]
    moot = moot_where_provided()
    ctx.findings[:] = [f for f in ctx.findings if f.code not in moot
                       or not any(a <= (f.line, f.col) and (f.end_line, f.end_col) <= b for a, b in spans)]
    # A call renamed to the HIP function of its signature no longer follows the older one.
    renamed = [(ctx.position(s), ctx.position(t)) for s, t in state.renamed]
    ctx.findings[:] = [f for f in ctx.findings if f.code != SignatureDiffersForCuda.code
                       or not any(a <= (f.line, f.col) and (f.end_line, f.end_col) <= b for a, b in renamed)]


def _value(ctx: Context, r: ArgRewrite) -> str:
    """A constant argument; ``{hip_version}`` is the target's 100*major + minor (603)."""
    rocm = ctx.rocm
    return (r.value or "").replace("{hip_version}", str(rocm[0] * 100 + rocm[1]))


def _rendered(ctx: Context, node: Node) -> str:
    """The text of ``node`` as the conversion writes it: its identifiers renamed."""
    out: list[str] = []
    pos = node.start_byte
    stack = [node]
    leaves: list[Node] = []
    while stack:
        n = stack.pop()
        if n.type in NAME_NODES:
            leaves.append(n)
        else:
            stack.extend(reversed(n.children))
    for leaf in leaves:
        new = target_for(ctx, leaf, ctx.text(leaf)) if in_tables(ctx.text(leaf)) else None
        if new is not None:
            out.append(ctx.src[pos:leaf.start_byte].decode("utf-8", "replace"))
            out.append(new)
            pos = leaf.end_byte
    out.append(ctx.src[pos:node.end_byte].decode("utf-8", "replace"))
    return "".join(out)


def _report(ctx: Context, call: Node, rows: list[ArgRewrite], whys: list[str], target: str) -> None:
    """One finding for the call: what differs, and why it was not rewritten."""
    parts = []
    for r, why in zip(rows, whys):
        what = r.what or {"reinterpret_cast_size_t": f"argument {r.arg + 1} is a size_t* there",
                          "remove_argument": f"it has no argument {r.arg + 1}"}.get(
            r.transform, f"{r.transform.replace('_', ' ')} at argument {r.arg + 1}")
        parts.append(what + (f" ({why})" if why else ""))
    ctx.report(ARGUMENT_REWRITE, call,
               f"`{rows[0].cuda}` → `{target}` takes other arguments: " + "; ".join(parts)
               + "; the arguments are left as written", rows[0].reason)


_SPACES_RE = re.compile(r"\s*([*&<>,:])\s*")
_VECTOR_RE = re.compile(r"^(?:std::)?vector<(.+)>$")


def _fits(ctx: Context, arg: Node, fine: re.Pattern[str]) -> bool:
    """Whether the argument's type, as the file declares it, is one the HIP parameter
    takes as it is (``fine``): then no cast is written. An argument whose type the file
    does not say (an expression, a name declared elsewhere or twice) gets the cast."""
    ty = _expression_type(ctx, arg)
    return ty is not None and fine.fullmatch(ty) is not None


def _expression_type(ctx: Context, node: Node) -> str | None:
    """``T*``-style spelling of a name, ``&name`` or ``vec.data()``, from the file's
    declarations; ``T{…}`` is ``T``; a braced list of two or more elements is ``{,}``: an
    aggregate, which no scalar parameter accepts (``{cudaMemLocationTypeDevice, dev}``
    cannot be CUDA 12's ``int device``)."""
    t = node.type
    if t == "parenthesized_expression" and node.named_child_count == 1:
        return _expression_type(ctx, node.named_children[0])
    if t == "compound_literal_expression":
        ty = node.child_by_field_name("type")
        return _SPACES_RE.sub(r"\1", ctx.text(ty)) if ty is not None else None
    if t == "initializer_list":
        return "{,}" if sum(1 for c in node.named_children if c.type != "comment") >= 2 else None
    if t == "identifier":
        return _declared_types(ctx).get(ctx.text(node))
    if t == "pointer_expression" and ctx.text(node).startswith("&"):
        inner = node.child_by_field_name("argument")
        ty = _expression_type(ctx, inner) if inner is not None else None
        return ty + "*" if ty is not None else None
    if t == "call_expression":
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if fn is not None and fn.type == "field_expression" and args is not None and not args.named_children:
            field = fn.child_by_field_name("field")
            base = fn.child_by_field_name("argument")
            if field is not None and ctx.text(field) == "data" and base is not None:
                ty = _expression_type(ctx, base)
                m = _VECTOR_RE.match(ty or "")
                return m.group(1) + "*" if m else None
    return None


def _declared_types(ctx: Context) -> dict[str, str | None]:
    """Per file: name → its declared type (arrays decayed), None when declared with two
    types. Built on the first call that asks: only calls with a ``cast`` row do."""
    state = ctx.state(_Arguments)
    found = state.declared_types
    if found is None:
        found = state.declared_types = {}
        for decl in find_all(ctx.tree.root_node, ("declaration", "parameter_declaration", "field_declaration")):
            ty = decl.child_by_field_name("type")
            if ty is None:
                continue
            quals = [ctx.text(c) for c in decl.children if c.type == "type_qualifier"]
            base = _SPACES_RE.sub(r"\1", " ".join(sorted(set(quals)) + [ctx.text(ty)]))
            for d in decl.children_by_field_name("declarator"):
                name, spelled = _declarator(ctx, d, base)
                if name is not None:
                    found[name] = spelled if found.get(name, spelled) == spelled else None
    return found


def _declarator(ctx: Context, d: Node, ty: str) -> tuple[str | None, str]:
    """The declared name and its type, reading pointer and array declarators outside in."""
    while True:
        t = d.type
        if t == "init_declarator":
            d = d.child_by_field_name("declarator")
        elif t == "pointer_declarator":
            ty += "*" + ("const" if any(c.type == "type_qualifier" for c in d.children) else "")
            d = d.child_by_field_name("declarator")
        elif t == "array_declarator":
            ty += "*"
            d = d.child_by_field_name("declarator")
        elif t in ("identifier", "field_identifier"):
            return ctx.text(d), ty
        else:
            return None, ty
        if d is None:
            return None, ty
