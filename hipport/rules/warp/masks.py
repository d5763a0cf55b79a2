"""HP201, HP202 — lane masks that hold 32 lanes: a full mask literal, a 32-bit mask variable.

A mask is judged where the syntax makes it one: the first argument of a ``*_sync``
builtin, or a variable that receives a ballot. One named by a macro or a file-scope
constant of this file is reported at the use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hipport import facts
from hipport.edits import Edit
from hipport.facts import Var
from hipport.findings import Effort, Severity
from hipport.parse import Node, ancestors, call_arguments, call_name, text
from hipport.registry import any_word_of
from hipport.rules import REGISTRY
from hipport.rules.warp import widen
from hipport.rules.warp.functions import calls_warp_builtin, function_check
from hipport.rules.warp.scope import Scope
from hipport.rules.warp.syntax import is_full_mask32, macro_is_full_mask32, strip
from hipport.rules.warp.vocab import FULL_MASK_64, MASK32_TYPES, MASKED

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class WarpMask32:
    """32-bit full mask passed to a warp-sync builtin

    ## Why
    HIP's `*_sync` builtins take a 64-bit lane mask and `static_assert` on its type: a
    32-bit literal such as `0xffffffff`, `~0u`, `(unsigned)-1` or `-1` does not compile, and
    a 64-bit-typed `0xffffffffull` compiles but names only lanes 0–31 of a 64-lane wave
    (CDNA), so half the wave silently drops out of the reduction. Also reported when the
    mask is a macro or a file-scope constant defined as such a value in the same file. Not
    reported in a function template the HIP build never instantiates (one a source file
    calls only in branches it never compiles): no code is generated, and the assertion
    never fires.

    ## Example
    ```cuda
    v += __shfl_down_sync(0xffffffff, v, offset);
    ```
    becomes
    ```cuda
    v += __shfl_down_sync(0xffffffffffffffffull, v, offset);
    ```

    ## Fix
    `hipport convert` replaces a literal full mask with `0xffffffffffffffffull`, and so
    redefines a mask macro of a source file (not a header) whose every use is the mask of a
    `*_sync` builtin. Other masks that come from a macro or a constant are reported at the
    use: widen the definition, or use `__activemask()` where the intent is "the lanes that
    are running".
    """

    code = "HP201"
    # clang 19 with the 7.1 headers accepts __ballot_sync(0xffffffff, b) in a function
    # template never instantiated, though b is not dependent: nothing to fix or run there
    needs_instantiation = True
    slug = "warp-mask-32bit"
    severity = Severity.HIGH
    effort = Effort.NONE

@REGISTRY.rule
class WarpMaskVariable32:
    """Lane mask stored in a 32-bit variable

    ## Why
    `__ballot_sync`, `__ballot`, `__activemask` and `__match_*_sync` return 64-bit masks on
    HIP. Storing one in `unsigned`/`uint32_t` drops lanes 32–63 of a wave64; passing a 32-bit
    variable as the mask of a `*_sync` builtin trips HIP's "mask must be a 64-bit integer"
    `static_assert`.

    ## Example
    ```cuda
    unsigned active = __ballot_sync(0xffffffffffffffffull, x > 0);
    ```
    becomes
    ```cuda
    unsigned long long active = __ballot_sync(0xffffffffffffffffull, x > 0);
    ```

    ## Fix
    Declare masks as `unsigned long long` (or `uint64_t`), including function parameters
    that carry a mask into a shuffle helper. `hipport convert` does so for a local variable
    declared alone with a ballot (or the full mask) as its value and used only as the mask
    of `*_sync` builtins.
    """

    code = "HP202"
    run_time_only = True  # judged by the GPU passes (Rule.run_time_only)
    slug = "warp-mask-variable-32bit"
    severity = Severity.HIGH
    effort = Effort.SMALL

facts.need(calls=MASKED)


@REGISTRY.visits("call_expression", names=any_word_of(MASKED), codes=(WarpMask32,))
def check_literal_mask(call: Node, ctx: Context) -> None:
    """``__shfl_down_sync(0xffffffff, …)``: fixed by ``convert``."""
    name = call_name(ctx.src, call)
    if name is None or name not in MASKED:
        return
    args = call_arguments(call)
    # A name the project defines itself for HIP (a compat header's macro) decides what its
    # mask means.
    if args and not ctx.branches.provides(name) and is_full_mask32(ctx.src, args[0]):
        report_full_mask(ctx, args[0], name, fix=True)


def report_full_mask(ctx: Context, node: Node, builtin: str, fix: bool) -> None:
    literal = ctx.text(node)
    ctx.report(
        WarpMask32, node,
        f"mask `{literal}` of `{builtin}` covers 32 lanes; a wave on CDNA has 64 and HIP masks are 64-bit",
        "use the 64-bit full mask `0xffffffffffffffffull`",
        fix=[Edit(node.start_byte, node.end_byte, FULL_MASK_64)] if fix else (),
    )


@function_check(WarpMask32, WarpMaskVariable32, hint=calls_warp_builtin)
def check_mask_variables(ctx: Context, scope: Scope) -> None:
    src, info = ctx.src, scope.info
    reported: set[str] = set()

    def report_var(var: Var, why: str, builtin: str = "") -> None:
        if var.name in reported:
            return
        if var.type in MASK32_TYPES:
            reported.add(var.name)
            ctx.report(
                WarpMaskVariable32, var.node,
                f"mask variable `{var.name}` is `{var.type}` (32 bits) but {why}; HIP lane masks are 64-bit",
                f"declare `{var.name}` as `unsigned long long`",
                fix=widen.variable_edits(ctx, var.node, var.name),
            )
        elif builtin and var.init is not None and is_full_mask32(src, var.init):
            reported.add(var.name)  # a 64-bit variable holding a 32-lane value; not fixed: used elsewhere
            report_full_mask(ctx, var.init, builtin, fix=False)

    for var in info.vars.values():
        source = scope.is_ballot(var.node)
        if source:
            report_var(var, f"receives `{source}`")
    for name, call in info.calls:
        if name not in MASKED or ctx.branches.provides(name):
            continue
        args = call_arguments(call)
        mask = strip(args[0]) if args else None
        if mask is not None and mask.type == "qualified_identifier":
            if (var := _qualified_var(ctx, mask)) is not None:  # ``detail::kFullMask``: this file's
                _check_file_level_mask(ctx, mask, var.name, name, qualified=var)
            continue
        if mask is None or mask.type != "identifier":
            continue
        mask_name = text(src, mask)
        var = info.vars.get(mask_name)
        if var is not None:
            report_var(var, f"is the mask of `{name}`", name)
            continue
        _check_file_level_mask(ctx, mask, mask_name, name)


def _qualified_var(ctx: Context, mask: Node) -> Var | None:
    """The file-scope variable ``a::b::kFullMask`` names: the one declaration of that name
    whose namespaces end with ``a::b``; None when none or several do (another namespace's
    ``kFullMask`` may be 64-bit: the last one declared answered for every qualifier)."""
    *scope, name = [p for p in "".join(text(ctx.src, mask).split()).split("::") if p]
    found = []
    for var in facts.file_facts(ctx).declared.get(name, ()):
        spaces = [text(ctx.src, n) for a in ancestors(var.node) if a.type == "namespace_definition"
                  and (n := a.child_by_field_name("name")) is not None]
        path = [p for space in reversed(spaces) for p in space.split("::")]
        if path[len(path) - len(scope):] == scope:
            found.append(var)
    return found[0] if len(found) == 1 else None


def _check_file_level_mask(ctx: Context, mask: Node, mask_name: str, builtin: str,
                           qualified: Var | None = None) -> None:
    """A mask named by a macro or a file-scope constant: report at the use, no fix.
    ``qualified``: the constant a qualified name (``ns::kMask``) names, which no macro can be."""
    file = facts.file_facts(ctx)
    if mask_name in file.macros and qualified is None:
        # A definition on the CUDA side of a HIP guard is not what HIP compiles.
        live = [(b, d) for b, d in file.macros[mask_name] if not ctx.in_cuda_only_branch(d.start_byte)]
        narrow = [(b, d) for b, d in live if macro_is_full_mask32(b)]
        if narrow:
            body, define = narrow[0]
            line, _ = ctx.position(define.start_byte)
            ctx.report(
                WarpMask32, mask,
                f"`{mask_name}` (defined as `{body}` at line {line}) is a 32-bit full mask for `{builtin}`; "
                "a wave on CDNA has 64 lanes and HIP masks are 64-bit",
                f"define `{mask_name}` as `0xffffffffffffffffull`",
                fix=widen.macro_edits(ctx, mask_name),
            )
        return
    var = qualified or file.globals.get(mask_name)
    if var is None:
        return
    line, _ = ctx.position(var.node.start_byte)
    if var.type in MASK32_TYPES:
        ctx.report(
            WarpMaskVariable32, mask,
            f"mask `{mask_name}` (line {line}) is `{var.type}` (32 bits); HIP lane masks are 64-bit",
            f"declare `{mask_name}` as `unsigned long long` with a 64-bit value",
        )
    elif var.init is not None and is_full_mask32(ctx.src, var.init):
        ctx.report(
            WarpMask32, mask,
            f"`{mask_name}` (line {line}) holds a 32-lane full mask for `{builtin}`; a wave on CDNA has 64",
            f"initialise `{mask_name}` with `0xffffffffffffffffull`",
        )
