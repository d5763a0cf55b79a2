"""``--launch-syntax hip``: ``k<<<g, b, shm, s>>>(args)`` → ``hipLaunchKernelGGL(...)``.

HIP compiles triple-chevron launches, so the default keeps them. When asked, the launch is
rewritten the way hipify-clang writes it: ``hipLaunchKernelGGL(k, dim3(g), dim3(b), shm,
s, args)``, template kernels wrapped in ``HIP_KERNEL_NAME(...)`` (the macro protects the
commas of a template argument list; like hipify-clang, also when the template arguments are
deduced, for the templates this file declares), missing shared-memory and stream arguments
as 0. A configuration that is already ``dim3(...)`` is not wrapped again.

Only the punctuation between the parts is replaced; the kernel name, configuration and
arguments keep their bytes, so identifier rewrites inside them still apply. Launches in
macro bodies arrive here too (``analyze`` reparses them during the walk).
"""

from __future__ import annotations

from dataclasses import dataclass

from hipport.context import Context
from hipport.parse import Node, ancestors, function_declarator
from hipport.rewrite import REGISTRY


def _is_template(fn: Node, ctx: Context) -> bool:
    """Whether hipify-clang would write ``HIP_KERNEL_NAME(...)``: the kernel is a template
    instantiation, written with its arguments (``k<float>``) or deduced from the call
    (``k`` declared ``template <...> __global__ void k(...)`` in this file)."""
    if fn.type == "template_function" or (
            fn.type == "qualified_identifier" and b"<" in ctx.src[fn.start_byte:fn.end_byte]):
        return True
    name = ctx.text(fn).rsplit("::", 1)[-1]
    return name in _template_functions(ctx)


@dataclass
class _Templates:
    """Per file: the names of its function templates (None until a launch asks)."""

    names: frozenset[str] | None = None


def _template_functions(ctx: Context) -> frozenset[str]:
    """Names of the function templates this file declares or defines (found once per file)."""
    state = ctx.state(_Templates)
    found = state.names
    if found is None:
        names = set()
        if b"template" in ctx.src:
            stack = [ctx.tree.root_node]
            while stack:
                n = stack.pop()
                if n.type == "template_declaration":
                    decl = next((c for c in n.named_children
                                 if c.type in ("function_definition", "declaration")), None)
                    fd = function_declarator(decl) if decl is not None else None
                    target = fd.child_by_field_name("declarator") if fd is not None else None
                    if target is not None:
                        names.add(ctx.text(target).rsplit("::", 1)[-1])
                stack.extend(n.named_children)
        found = state.names = frozenset(names)
    return found


def _is_dim3(node: Node, ctx: Context) -> bool:
    """``dim3(...)`` or ``dim3{...}`` already: wrapping it again (``dim3(dim3(1))``) is noise."""
    if node.type == "call_expression":
        fn = node.child_by_field_name("function")
        return fn is not None and ctx.text(fn) == "dim3"
    if node.type == "compound_literal_expression":
        return ctx.text(node).startswith("dim3")
    return False


def _statement_is_clean(node: Node, in_macro_body: bool) -> bool:
    """Whether the statement (or declaration) holding the launch parsed without error.

    In broken code the parser's error recovery decides what a launch is: a clean launch
    inside a malformed one (``k<<<1,s>>>();}k<<<1,s>>>()`` read as one), or beside one
    in the same ERROR node (``m<<<0,m>>>();*m<<<6,m>>>()``). Rewriting it changes how the
    next run reads the rest (the other launch becomes clean: two runs, two outputs), so a
    launch is rewritten only when its own statement is whole; an error elsewhere in the
    function does not matter. A statement at file scope, where every macro body is
    parsed, is always read with a missing ``...`` after it (a parameter pack expansion):
    that one is no error in a macro body. Anywhere else a launch statement outside every
    function body is no code at all, only the parser's recovery from broken code around
    it, which an include added above changes (``4>b;f(s)k<<<1,s>>>();`` is one ERROR
    node, then three statements; ``){d<<<1,s>>>();`` an ERROR, then a block): left."""
    for up in ancestors(node):
        if up.type == "ERROR":
            return False
        if up.type.endswith("_statement") or up.type in _STATEMENT_LEVEL:
            if up.type == "expression_statement" and not in_macro_body and not _in_a_body(up):
                return False
            return not up.has_error or _only_missing_pack(up)
    return True


def _in_a_body(node: Node) -> bool:
    """Whether ``node`` is inside a function or a lambda (a block at file scope, ``){k<<<…``,
    is the parser's recovery too)."""
    return any(up.type in ("function_definition", "lambda_expression") for up in ancestors(node))


#: Where the walk up from a launch stops: the statement-like nodes that are not ``*_statement``.
_STATEMENT_LEVEL = frozenset(("declaration", "field_declaration", "init_declarator"))


def _only_missing_pack(statement: Node) -> bool:
    """Whether the statement's only errors are zero-width ``...`` tokens the parser made up
    (its reading of an expression statement at file scope)."""
    stack = [statement]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or (n.is_missing and n.type != "..."):
            return False
        stack.extend(c for c in n.children if c.has_error or c.is_missing)
    return True


@REGISTRY.visits("call_expression", when=lambda options: options.launch_syntax == "hip")
def rewrite_launch(node: Node, ctx: Context) -> None:
    if ctx.options.launch_syntax != "hip":
        return
    fn = node.child_by_field_name("function")
    config = next((c for c in node.children if c.type == "kernel_call_syntax"), None)
    args = node.child_by_field_name("arguments")
    if fn is None or config is None or args is None or args.child_count < 2:
        return
    parts = [c for c in config.named_children if c.type != "comment"]
    if not 2 <= len(parts) <= 4 or node.has_error:
        # Malformed launch: leave it for a person (and the compiler) to see. That covers
        # a kernel name that is only the parser's placeholder or holds an error (text the
        # parser skipped between the name and ``<<<``, which the rewrite would swallow
        # and collide with its renames), and error recovery that made a launch of code
        # only a reparse after conversion would read otherwise.
        return
    if not _statement_is_clean(node, ctx.in_macro_body):
        return
    template = _is_template(fn, ctx)
    open0, open1 = ("" if _is_dim3(p, ctx) else "dim3(" for p in parts[:2])
    close0, close1 = (")" if o else "" for o in (open0, open1))
    ctx.edit(fn.start_byte, fn.start_byte,
             "hipLaunchKernelGGL(" + ("HIP_KERNEL_NAME(" if template else ""))
    ctx.edit(fn.end_byte, parts[0].start_byte, (")" if template else "") + ", " + open0)
    ctx.edit(parts[0].end_byte, parts[1].start_byte, close0 + ", " + open1)
    tail = close1
    if len(parts) >= 3:
        ctx.edit(parts[1].end_byte, parts[2].start_byte, close1 + ", ")
        tail = ""
    if len(parts) == 4:
        ctx.edit(parts[2].end_byte, parts[3].start_byte, ", ")
    tail += ", 0" * (4 - len(parts))
    lparen = args.children[0]
    has_args = any(c.type != "comment" for c in args.named_children)
    ctx.edit(parts[-1].end_byte, lparen.end_byte, tail + (", " if has_args else ""))
    if not has_args:
        rparen = args.children[-1]
        ctx.edit(lparen.end_byte, rparen.start_byte, b"")
    ctx.rewrites += 1
