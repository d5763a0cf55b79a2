"""HP106: a CUDA version or toolkit macro whose meaning does not carry over to HIP."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from hipport.context import Context
from hipport.findings import Effort, Severity
from hipport.names import NAME_NODES
from hipport.parse import Node, ancestors, find_all, parse, text
from hipport.preprocessor.branches import project_header
from hipport.rules import REGISTRY, AboutAName


@REGISTRY.rule
class CudaMacroTest(AboutAName):
    """A CUDA macro whose meaning does not carry over to HIP

    ## Why
    Code tests CUDA version or toolkit macros (`CUDART_VERSION`, `CUDA_VERSION`,
    `__CUDA_ARCH__`, header include guards…), or a CUDA name with no HIP counterpart
    (`#ifdef CUB_USE_COOPERATIVE_GROUPS`: reported here, not as HP101, since nothing fails to
    compile at the test). Under hipcc they are undefined or mean something else, so the
    branch taken changes silently.

    ## Example

    ```cuda
    #if CUDART_VERSION >= 11020
      cudaMallocAsync(&p, n, s);
    #endif
    ```

    ```cuda
    #if CUDART_VERSION >= 11020 || defined(__HIP_PLATFORM_AMD__)
      hipMallocAsync(&p, n, s);
    #endif
    ```

    ## Fix

    Decide what the test is for and add the HIP condition (`HIP_VERSION`,
    `__HIP_PLATFORM_AMD__`, `__HIP_DEVICE_COMPILE__`) explicitly.
    """

    code = "HP106"
    slug = "cuda-macro-test"
    severity = Severity.MEDIUM
    effort = Effort.SMALL


@lru_cache(maxsize=1)
def _reported_macros() -> frozenset[str]:
    """The macros the tables say to report (``macros.toml`` action ``report``), whatever
    the target: the name filter of the visitor."""
    from hipport.mapping import load_table

    return frozenset(name for name, m in load_table().macros.items() if m.action == "report")


@REGISTRY.visits(*NAME_NODES, names=lambda name: name in _reported_macros(), codes=(CudaMacroTest,))
def cuda_macro_test(node: Node, ctx: Context) -> None:
    name = ctx.text(node)
    macro = ctx.view.macro(name)
    if macro is None or macro.action != "report":
        return
    where: Node | tuple[int, int] = node
    message = f"{name}: {macro.note}"
    taken = _branch_hip_compiles(node, ctx) if _undefined_in_hip(name) else None
    if taken is not None:
        # The finding spans the branch too: what fails to compile there is this test's doing.
        (start, end), what, op, value = taken
        first, last = ctx.position(start)[0], ctx.position(end)[0]
        where = (node.start_byte, end)
        message += (f"; a HIP build, where {name} is undefined (0 in #if), compiles lines "
                    f"{first}-{last} ({what}){_never_in_cuda(op, value)}"
                    f"{_skipped_includes(node.parent.parent, (start, end), ctx)}")
    ctx.report(CudaMacroTest, where, message,
               "Add the HIP condition explicitly (HIP_VERSION, __HIP_PLATFORM_AMD__).")


@lru_cache(maxsize=None)
def _undefined_in_hip(name: str) -> bool:
    """A CUDA macro no pass of a HIP build defines (gpus.toml [build] cuda), whose tests no
    other rule reports instead (HP309 takes ``#if __CUDA_ARCH__ >= 800`` whole: a span
    grown past its condition would escape that rule's ``Supersedes``)."""
    from hipport import gpus
    from hipport.rules import load

    if name not in gpus.table()["build"]["cuda"]:
        return False
    return not any(CudaMacroTest.code in s.codes and s.token and name.startswith(s.token)
                   for rule in load().rules.values() for s in rule.supersedes)


_CONDITIONALS = ("preproc_if", "preproc_elif")
_COMPARE = {">=": lambda a, b: a >= b, ">": lambda a, b: a > b, "<": lambda a, b: a < b,
            "<=": lambda a, b: a <= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def _branch_hip_compiles(node: Node, ctx: Context) -> tuple[tuple[int, int], str, str, int] | None:
    """For ``#if NAME >= 2020`` (any comparison with a number): the branch a HIP build
    compiles, where NAME is undefined and so 0 — the ``#if`` body when that holds, else its
    ``#else`` — as (start, end) bytes, which it is, and the test's operator and number. None for any other test (an
    ``#elif``'s depends on the tests before it) or an ``#elif`` next. (A project that
    defines NAME itself has no such finding: ``AboutAName``.)"""
    test = node.parent
    if test is None or test.type != "binary_expression" or test.child_by_field_name("left") != node:
        return None
    op, right = test.child_by_field_name("operator"), test.child_by_field_name("right")
    chain = test.parent
    if op is None or right is None or ctx.text(op) not in _COMPARE or not ctx.text(right).isdigit() \
            or chain is None or chain.type != "preproc_if" or chain.child_by_field_name("condition") != test:
        return None
    op_text, value = ctx.text(op), int(ctx.text(right))
    if _COMPARE[op_text](0, value):
        branch, what = chain, "the #if branch"
    else:
        branch, what = chain.child_by_field_name("alternative"), "the #else branch"
        if branch is None or branch.type != "preproc_else":
            return None
    body = _body(branch, ctx)
    return (body, what, op_text, value) if body is not None else None


def _skipped_includes(chain: Node, taken: tuple[int, int], ctx: Context) -> str:
    """``; it skips the #include of "k.cuh" (line 80), which declares f, g`` for the
    project headers the other branch of ``chain`` includes: the HIP build's "use of
    undeclared identifier 'f'" further down is this test's doing too."""
    out = []
    for inc in find_all(chain, ("preproc_include",)):
        path = inc.child_by_field_name("path")
        if path is None or path.type != "string_literal" or taken[0] <= inc.start_byte < taken[1]:
            continue
        name = ctx.text(path).strip('"')
        names = _declared_functions(Path(ctx.path).parent / name)
        line = ctx.position(inc.start_byte)[0]
        shown = ", ".join(names[:_SHOWN]) + (", …" if len(names) > _SHOWN else "")
        out.append(f'; it skips the #include of "{name}" (line {line})' + (f", which declares {shown}" if names else ""))
    return "".join(out)


#: How many of a skipped header's functions a message names.
_SHOWN = 12
_HEADER_BYTES = 1 << 20


def _declared_functions(path: Path) -> list[str]:
    """The functions a project header declares or defines at file scope (in
    ``extern "C"`` too), in order; none when it is not a readable file of at most 1 MB.
    Read as the branch model reads project headers (``project_header``: regular files
    only, once per process)."""
    found = project_header(str(path))
    if found is None:
        return []
    (_, src), stamp = found
    if len(src) > _HEADER_BYTES:
        return []
    return list(_functions_of(str(path), stamp))


@lru_cache(maxsize=64)
def _functions_of(path: str, _stamp: tuple[int, int]) -> tuple[str, ...]:
    found = project_header(path)
    if found is None:
        return ()
    src = found[0][1]
    names: dict[str, None] = {}
    for decl in find_all(parse(src).root_node, ("function_declarator",)):
        inner = decl.child_by_field_name("declarator")
        if inner is not None and inner.type == "identifier" and not _nested(decl):
            names.setdefault(text(src, inner), None)
    return tuple(names)


#: Where a function declarator is no function of the file's scope: a local declaration,
#: a member, a parameter.
_NESTING = frozenset({"compound_statement", "field_declaration_list", "parameter_list"})


def _nested(node: Node) -> bool:
    return any(a.type in _NESTING for a in ancestors(node))


def _body(node: Node, ctx: Context) -> tuple[int, int] | None:
    """An ``#if``/``#elif``/``#else`` branch's lines: from the line after its directive to
    the next directive of the chain (None when empty)."""
    head = node.child_by_field_name("condition") if node.type in _CONDITIONALS else node.children[0]
    start = ctx.src.find(b"\n", head.end_byte) + 1
    alternative = node.child_by_field_name("alternative") if node.type in _CONDITIONALS else None
    end = alternative.start_byte if alternative is not None else (
        node.children[-1].start_byte if node.type == "preproc_if" else node.end_byte)
    end = start + len(ctx.src[start:end].rstrip())  # its last line, not the next directive's
    return (start, end) if 0 < start < end else None


def _never_in_cuda(op: str, value: int) -> str:
    """``, which every CUDA since 2.2 skips`` for ``NAME >= 2020`` / ``NAME < 2020`` (either
    way the HIP build takes the old-CUDA branch); empty for any other test."""
    number = value + (1 if op in (">", "<=") else 0)
    if op not in (">=", ">", "<", "<=") or number < 1000:
        return ""  # an equality, or not a CUDA version (1000 * major + 10 * minor)
    return f", which every CUDA since {number // 1000}.{number % 1000 // 10} skips"
