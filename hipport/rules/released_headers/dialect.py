"""HP339: the `register` storage class, which C++17 removed and the HIP targets compile as.
HP340: a pointer ordered against 0, which nvcc accepts and clang rejects.
HP341: a dynamic exception specification (`throw(T)`), which C++17 removed too."""

from __future__ import annotations

import re
from pathlib import Path

from hipport.context import Context
from hipport.edits import Edit
from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.registry import any_bytes_of
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.released_headers.common import declared_type


@REGISTRY.rule
class RegisterStorageClass(SaysWhatItIs):
    """The `register` storage class in C++, an error in C++17

    ## Why
    nvcc 11 compiles C++14 by default, where `register` is only deprecated; the 6.3 and
    7.2.1 targets compile C++17 (hipcc's clang default, and the dialect `hipport verify`
    checks with), which removed it: "ISO C++17 does not allow 'register' storage class
    specifier", an error by default (cuda-samples' `nvMatrix.h`, `register int i, j, p, jj;`).

    ## Example
    ```cuda
    register int i, j;
    ```
    becomes
    ```cuda
    int i, j;
    ```

    ## Fix
    `hipport convert` removes the keyword in C++ files: compilers have long ignored it, so
    nothing else changes. C keeps it (taking such a variable's address is an error there),
    and so does a GNU register variable (`register int x asm("r12")`), which clang accepts
    in C++17 and which is no register variable without it. A header with no CUDA in it is
    fixed too where a CUDA unit of the tree includes it (cuda-samples smokeParticles'
    `ParticleSystem.h`, included by `particleSystem.cu`): the HIP build compiles it as
    C++17 through that unit, and without `register` it means the same to every compiler.
    """

    code = "HP339"
    slug = "register-storage-class"
    severity = Severity.HIGH
    effort = Effort.NONE
    in_included_headers = (b"register",)


#: ``register int x asm("r12")``: the storage class is what binds the variable to the register.
_ASM_LABEL = re.compile(r"\b(?:asm|__asm|__asm__)\s*\(")


@REGISTRY.visits("storage_class_specifier", source=any_bytes_of(b"register"), codes=(RegisterStorageClass,))
def _register(node: Node, ctx: Context) -> None:
    if ctx.text(node) != "register" or Path(ctx.path).suffix.lower() == ".c":
        return
    decl = node.parent
    if decl is None or decl.type == "ERROR" or decl.child_by_field_name("declarator") is None:
        return  # no declaration: a stray word of broken code, left as it is
    if _ASM_LABEL.search(ctx.text(decl)):
        return  # a GNU register variable: C++17 compilers accept it, and without `register` the label is ignored
    end = node.end_byte
    while ctx.src[end:end + 1] in (b" ", b"\t"):
        end += 1
    ctx.report(RegisterStorageClass, node, "`register` is not C++17, which the HIP build compiles as "
               "(nvcc 11's default C++14 only deprecated it)", "drop `register`",
               fix=[] if ctx.in_macro_body else [Edit(node.start_byte, end, b"")])


@REGISTRY.rule
class DynamicExceptionSpecification(SaysWhatItIs):
    """A dynamic exception specification `throw(T, …)`, an error in C++17

    ## Why
    nvcc 11 compiles C++14 by default, where a function's `throw(std::bad_alloc)` list is
    only deprecated; the 6.3 and 7.2.1 targets compile C++17, which removed it: "ISO C++17
    does not allow dynamic exception specifications", an error by default in clang. Old
    helper classes carry it, often in a plain C++ header that a `.cu` includes.

    ## Example
    ```cuda
    explicit Buffer(size_t n) throw(std::bad_alloc) : v_(n) {}
    ```
    becomes
    ```cuda
    explicit Buffer(size_t n) : v_(n) {}
    ```

    ## Fix
    `hipport convert` removes a non-empty `throw(…)` (and `throw(...)`): a function without
    one may throw anything, which is what the list allowed a correct program; only a program
    that throws an exception its list leaves out behaves otherwise (it reached
    `std::unexpected`; now the exception propagates). `throw()` is still C++17 (it means
    `noexcept`) and is kept. A CUDA-free header is fixed too where a CUDA unit of the tree
    includes it.
    """

    code = "HP341"
    slug = "dynamic-exception-specification"
    severity = Severity.HIGH
    effort = Effort.NONE
    in_included_headers = (b"throw(", b"throw (")


@REGISTRY.visits("throw_specifier", source=any_bytes_of(b"throw"), codes=(DynamicExceptionSpecification,))
def _throw_specifier(node: Node, ctx: Context) -> None:
    if Path(ctx.path).suffix.lower() == ".c":
        return
    inside = ctx.src[node.start_byte:node.end_byte]
    listed = inside[inside.find(b"(") + 1:inside.rfind(b")")].strip()
    if not listed:
        return  # throw(): C++17's noexcept, still valid
    if node.has_error and listed != b"...":
        return  # broken code (MSVC's throw(...) aside, which the grammar does not know): left as it is
    start = node.start_byte
    while start > 0 and ctx.src[start - 1:start] in (b" ", b"\t"):
        start -= 1
    if start > 0 and ctx.src[start - 1:start] == b"\n":
        start = node.start_byte  # the specifier starts its line: keep the indentation
    ctx.report(DynamicExceptionSpecification, node, f"`{ctx.text(node)}` is not C++17, which the HIP "
               "build compiles as (nvcc 11's default C++14 only deprecated it)", "drop the specification",
               fix=[] if ctx.in_macro_body else [Edit(start, node.end_byte, b"")])


@REGISTRY.rule
class PointerOrderedAgainstZero(SaysWhatItIs):
    """A pointer compared with `<`, `>`, `<=` or `>=` against `0`, an error for clang

    ## Why
    nvcc's front end accepts an ordered comparison of a pointer with the literal `0`; clang
    rejects it in C++: "ordered comparison between pointer and zero" (OpenCV 4.6
    cudastereo/stereobm.cu, `if (col_ssd_extra > 0)` on a `volatile unsigned int *`). The
    comparison asks whether the pointer is null: addresses are unsigned, so `p > 0` holds
    for every non-null pointer and `p <= 0` for the null one.

    ## Example
    ```cuda
    if (extra > 0) InitColSSD(extra);
    ```
    becomes
    ```cuda
    if (extra != 0) InitColSSD(extra);
    ```

    ## Fix
    `hipport convert` writes `p > 0` (and `0 < p`) as `p != 0`, and `p <= 0` (`0 >= p`) as
    `p == 0`, for a name the function declares as a pointer. `p < 0` (never true) and
    `p >= 0` (always true) are reported only: the code likely meant something else.
    """

    code = "HP340"
    slug = "pointer-ordered-against-zero"
    severity = Severity.HIGH
    effort = Effort.NONE


#: ``p OP 0`` → the same test against null (None: always or never true, reported only)
_AS_NULL_TEST = {">": "!=", "<=": "==", "<": None, ">=": None}
_FLIPPED = {">": "<", "<": ">", ">=": "<=", "<=": ">="}


@REGISTRY.visits("binary_expression", source=any_bytes_of(b"0"), codes=(PointerOrderedAgainstZero,))
def _pointer_against_zero(node: Node, ctx: Context) -> None:
    src = ctx.src
    if src[node.end_byte - 1] != 0x30 and src[node.start_byte] != 0x30:
        return  # neither operand is the literal 0: a binary expression starts and ends with them
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None or "number_literal" not in (left.type, right.type):
        return
    op = node.child_by_field_name("operator")
    if op is None or ctx.text(op) not in _FLIPPED or Path(ctx.path).suffix.lower() == ".c":
        return
    operator = ctx.text(op)
    if right.type == "number_literal" and ctx.text(right) == "0" and left.type == "identifier":
        pointer, written = left, operator  # p OP 0
    elif left.type == "number_literal" and ctx.text(left) == "0" and right.type == "identifier":
        pointer, written = right, _FLIPPED[operator]  # 0 OP p, read as p OP' 0
    else:
        return
    declared = declared_type(ctx, node, ctx.text(pointer), pointer=True)
    if declared is None or not declared.endswith("*"):
        return
    test = _AS_NULL_TEST[written]
    name = ctx.text(pointer)
    ctx.report(PointerOrderedAgainstZero, node,
               f"`{ctx.text(node)}` orders the pointer `{name}` (`{declared}`) against 0: nvcc accepts "
               "it, clang does not",
               f"`{name} {test} 0`" if test else f"decide what `{ctx.text(node)}` should test: it is "
               f"{'never' if written == '<' else 'always'} true",
               fix=_null_test(node, op, test) if test and not ctx.in_macro_body else [])


#: Operators whose operand ``p > 0`` would regroup once written ``p != 0`` (``!=`` binds
#: looser than ``>``): ``b == p > 0`` is ``b == (p > 0)``, ``b == p != 0`` is ``(b == p) != 0``.
_REGROUPING = frozenset({"==", "!=", "<", ">", "<=", ">="})


def _null_test(node: Node, op: Node, test: str) -> list[Edit]:
    """The operator replaced by ``test``, the comparison parenthesised where it is an
    operand of an equality or relational operator, so that it keeps its grouping."""
    edits = [Edit(op.start_byte, op.end_byte, test.encode())]
    parent = node.parent
    outer = parent.child_by_field_name("operator") if parent is not None \
        and parent.type == "binary_expression" else None
    if outer is not None and outer.type in _REGROUPING:
        edits += [Edit(node.start_byte, node.start_byte, b"("), Edit(node.end_byte, node.end_byte, b")")]
    return edits

