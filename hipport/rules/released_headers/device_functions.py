"""HP332: CUDA device functions the released HIP headers do not declare, renamed to the
HIP function that does the same where the data names one."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hipport.context import Context
from hipport.edits import Edit
from hipport.facts import is_device_only_code
from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.preprocessor.directives import declares
from hipport.registry import any_word_of
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.released_headers.common import callee, data, declared_type


@REGISTRY.rule
class DeviceFunctionMissing(SaysWhatItIs):
    """A CUDA device function HIP's headers do not declare

    ## Why
    Block-scope atomics (`atomicAdd_block`…) and system-scope `atomicInc_system` /
    `atomicDec_system` are in no HIP header and in no mapping table. A block-scope atomic
    becomes the device-scope one, which orders more, never less; the system-scope increment
    and decrement need a CAS loop. The cache-hint loads `__ldcs`, `__ldcg` and `__ldca` are
    in the mapping tables, yet HIP declares them for `__half`/`__half2` only; `__ldg` is the
    same plain load for the other types. CUDA's float overloads of `sincos` and `sincospi`
    are not in HIP, which has them for double only (`sincosf`, `sincospif` for float).

    ## Example

    ```cuda
    atomicAdd_block(&count, 1);
    ```
    becomes
    ```cuda
    atomicAdd(&count, 1);
    ```

    ## Fix
    Use the device-scope atomic for `*_block` (`hipport convert` does), and write
    `atomicInc_system` / `atomicDec_system` as an `atomicCAS_system` loop. `__ldcs` & co.
    become `__ldg`; `sincos` whose outputs are declared `float` becomes `sincosf`, and one
    whose outputs have a macro or typedef type (relion's `XFLOAT`) is reported with that
    route.
    """

    code = "HP332"
    slug = "device-function-missing"
    severity = Severity.HIGH
    effort = Effort.SMALL


@REGISTRY.visits("call_expression", names=any_word_of(data().device), codes=(DeviceFunctionMissing,))
def _device_call(node: Node, ctx: Context) -> None:
    found = callee(ctx, node, data().device)
    if found is not None:
        _report_device(ctx, found.node, found.name, data().device[found.name])


def _report_device(ctx: Context, where: Node, name: str, facts: dict) -> None:
    """Rename to the HIP spelling the data gives, or report the route. A name the project
    defines itself is its own function; a device-only spelling is not applied where the
    call may run on the host."""
    if ctx.branches.provides(name) or _defined_here(ctx, name):
        return
    fix = facts.get("fix")
    if fix is None:
        ctx.report(DeviceFunctionMissing, where, f"`{name}` is not in HIP", facts["route"])
    elif facts.get("device_only") and not is_device_only_code(ctx, where):
        ctx.report(DeviceFunctionMissing, where,
                   f"`{name}` is not in HIP; `{fix}` ({facts['why']}) is device-only and this "
                   "code may run on the host", f"`{fix}` in a device-only function; on the host, the "
                   "standard library's (with the arguments cast to CUDA's parameter type)")
    else:
        ctx.report(DeviceFunctionMissing, where, f"`{name}` is not in HIP: `{fix}` does the same "
                   f"({facts['why']})", fix, fix=[Edit(where.start_byte, where.end_byte, fix.encode())])


@REGISTRY.visits("call_expression", names=any_word_of(data().float_overload),
                 codes=(DeviceFunctionMissing,))
def _float_overload_call(node: Node, ctx: Context) -> None:
    """``sincos(x, &s, &c)`` with float outputs: CUDA's float overload (host and device),
    which HIP lacks. Judged on what the outputs' declarations show: both ``float`` is a fix
    to the float name (where that name exists: ``sincospif`` is device-only, glibc has no
    host one), a type hipport cannot resolve here (a macro or typedef such as relion's
    ``XFLOAT``) a route, ``double`` or anything else nothing (HIP has the double overload)."""
    found = callee(ctx, node, data().float_overload)
    args = node.child_by_field_name("arguments")
    if found is None or args is None or found.templated or len(args.named_children) != 3:
        return
    if ctx.branches.provides(found.name) or _defined_here(ctx, found.name):
        return
    types = {_pointee(ctx, node, arg) for arg in args.named_children[1:]}
    if None in types or types & {"double", "long double"} or len(types) != 1:
        return
    [pointee] = types
    name, entry = found.name, data().float_overload[found.name]
    hip = entry["float"]
    host = entry.get("device_only") and not is_device_only_code(ctx, node)
    if pointee == "float" and not host:
        ctx.report(DeviceFunctionMissing, found.node, f"`{name}(float, float*, float*)` is not in HIP "
                   f"(it declares `{name}` for double only): `{hip}` is the same call", hip,
                   fix=[Edit(found.node.start_byte, found.node.end_byte, hip.encode())])
    elif pointee == "float":
        ctx.report(DeviceFunctionMissing, found.node, f"`{name}(float, float*, float*)` is not in HIP, and "
                   f"`{hip}` is device-only while this code may run on the host", f"`{hip}` in a "
                   "device-only function; on the host, sinf/cosf of the angle times pi")
    elif _TYPE_NAME.fullmatch(pointee) and pointee not in _NOT_FLOAT and not _float_branch_beside(ctx, node, hip):
        ctx.report(DeviceFunctionMissing, found.node, f"`{name}` with `{pointee}*` outputs: HIP declares "
                   f"`{name}` for double only, so where `{pointee}` is float there is no matching "
                   "function", f"`{hip}` where `{pointee}` is float (or a `{name}(float, float*, "
                   f"float*)` overload calling `{hip}`)")


#: A single type name that may stand for float (a macro or typedef); the builtin names that
#: cannot are left out.
_TYPE_NAME = re.compile(r"[A-Za-z_]\w*")
_NOT_FLOAT = frozenset({"int", "unsigned", "long", "short", "char", "bool", "auto", "void", "half",
                        "__half", "size_t"})


_BRANCHES = frozenset({"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"})


def _float_branch_beside(ctx: Context, call: Node, hip: str) -> bool:
    """The call sits in an ``#if`` branch whose group calls ``hip`` in another branch: the
    project's own precision switch (relion's ``#ifdef ACC_DOUBLE_PRECISION sincos(…)
    #else sincosf(…)``), where the type is double in this branch."""
    branch = call.parent
    while branch is not None and branch.type not in _BRANCHES:
        branch = branch.parent
    if branch is None:
        return False
    top = branch
    while top.type in ("preproc_else", "preproc_elif", "preproc_elifdef") and top.parent is not None \
            and top.parent.type in _BRANCHES:
        top = top.parent
    called = re.compile(rb"\b" + re.escape(hip.encode()) + rb"\s*\(")
    for other in (top, *_alternatives(top)):
        start, end = other.start_byte, _branch_body_end(other)
        if start <= call.start_byte < end:
            continue  # the call's own branch
        if called.search(ctx.src, start, end):
            return True
    return False


def _alternatives(node: Node) -> list[Node]:
    """The ``#elif``/``#else`` chain hanging off an ``#if`` node."""
    out = []
    alt = node.child_by_field_name("alternative")
    while alt is not None:
        out.append(alt)
        alt = alt.child_by_field_name("alternative")
    return out


def _branch_body_end(node: Node) -> int:
    """Where a branch's own text ends: before its ``#elif``/``#else``."""
    alt = node.child_by_field_name("alternative")
    return alt.start_byte if alt is not None else node.end_byte


def _pointee(ctx: Context, call: Node, arg: Node) -> str | None:
    """The type ``arg`` points to: ``&v`` of a variable declared ``T v``, or a pointer
    variable declared ``T* p`` in the function; None for anything else."""
    if arg.type == "pointer_expression" and ctx.text(arg).startswith("&"):
        target = arg.child_by_field_name("argument")
        if target is not None and target.type == "identifier":
            return declared_type(ctx, call, ctx.text(target))
        return None
    if arg.type == "identifier":
        declared = declared_type(ctx, call, ctx.text(arg), pointer=True)
        if declared is not None and declared.endswith("*") and not declared.endswith("**"):
            return declared[:-1].strip()
    return None


@dataclass
class _Defined:
    """Per file: whether the file defines a name itself, per name asked about."""

    names: dict[str, bool] = field(default_factory=dict)


def _defined_here(ctx: Context, name: str) -> bool:
    """The file defines ``name`` itself (a function or a macro): its own, not CUDA's."""
    cache = ctx.state(_Defined).names
    if name not in cache:
        cache[name] = bool(declares(ctx.src, (), name)) or re.search(
            rb"#[ \t]*define[ \t]+" + re.escape(name.encode()) + rb"\b", ctx.src) is not None
    return cache[name]
