"""HP209 — the warp size defined as 32: ``#define WARP_SIZE 32``, ``constexpr int kWarpSize = 32``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hipport import facts
from hipport.facts import macro_body
from hipport.findings import Effort, Severity
from hipport.parse import Node
from hipport.rules import REGISTRY
from hipport.rules.warp.logical import defer_to_includers, header_for_includers, knows_wave64
from hipport.rules.warp.syntax import is_int
from hipport.rules.warp.vocab import WARP_LOG_NAME, WARP_WORD, is_warp_size_name

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class WarpSizeConstant32:
    """Warp size defined as 32

    ## Why
    `#define WARP_SIZE 32`, `constexpr int kWarpSize = 32`, `C10_WARP_SIZE`-style names
    (and `LOG_WARP_SIZE 5`) carry the 32-lane assumption into every mask, lane id, ladder
    and buffer that uses them (ROCm/pytorch #857, apex #231, bitsandbytes #86).

    ## Example
    ```cuda
    #define WARP_SIZE 32
    ```
    becomes
    ```cuda
    #if defined(__GFX8__) || defined(__GFX9__)
    #define WARP_SIZE 64
    #else
    #define WARP_SIZE 32
    #endif
    ```

    ## Fix
    Per-architecture value in device code; `hipDeviceAttributeWarpSize` on the host (a
    host-side 32 is wrong for Instinct GPUs whatever the device code does).

    Not reported where the project also names a wave size of 64 (a `WAVE_SIZE 64`, or a
    `physical_warp_size()` returning 64 for GFX9): its 32 is then a logical warp it chose,
    as llama.cpp's `WARP_SIZE` beside `ggml_cuda_get_physical_warp_size()`. In a header that
    names no wave itself, the files of the run that include it decide: when every one names
    the 64 (itself or through the headers it surely compiles), the finding is dropped.
    """

    code = "HP209"
    slug = "warp-size-constant-32"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


def _report_constant(ctx: Context, where: Node, name: str, value: str) -> None:
    if ctx.report(
        WarpSizeConstant32, where,
        f"`{name}` = {value} hard-codes the 32-lane warp; a wave on CDNA has 64",
        "use a per-architecture value (#if defined(__GFX8__) || defined(__GFX9__) -> 64, else 32) "
        "in device code and hipDeviceAttributeWarpSize on the host",
    ) and header_for_includers(ctx):
        defer_to_includers(ctx, name)  # a header's 32: logical when every includer names the wave


@REGISTRY.visits("preproc_def", "preproc_function_def", codes=(WarpSizeConstant32,))
def check_define(define: Node, ctx: Context) -> None:
    """``#define WARP_SIZE 32``, ``#define CUB_LOG_WARP_THREADS(arch) (5)``."""
    name_node = define.child_by_field_name("name")
    if name_node is None:
        return
    name, body = ctx.text(name_node), macro_body(ctx.src, define)
    value = body.strip("() ").rstrip("uU")
    if (is_warp_size_name(name) and value == "32") or (WARP_LOG_NAME.search(name) and value == "5"):
        if not defined_per_arch(ctx, name) and not knows_wave64(ctx):
            _report_constant(ctx, define.child_by_field_name("value") or define, name, body)


def defined_per_arch(ctx: Context, name: str) -> bool:
    """The file defines ``name`` with more than one value (the ported ``#if __GFX9__ … 64 #else 32``)."""
    bodies = {body for body, _ in facts.file_facts(ctx).macros.get(name, ())}
    return len(bodies) > 1


_CONSTANT_FIELDS = {  # node type -> (name field, value field)
    "init_declarator": ("declarator", "value"),
    "enumerator": ("name", "value"),
    "field_declaration": ("declarator", "default_value"),
}


@REGISTRY.visits(*_CONSTANT_FIELDS, codes=(WarpSizeConstant32,))
def check_constant(node: Node, ctx: Context) -> None:
    """``constexpr int kWarpSize = 32;``, ``enum { WARP_SIZE = 32 }``, class members alike."""
    if not ctx.may_contain(WARP_WORD, within=node):
        return  # both name patterns need "warp" in the name
    name_field, value_field = _CONSTANT_FIELDS[node.type]
    name_node, value = node.child_by_field_name(name_field), node.child_by_field_name(value_field)
    if name_node is None or value is None or name_node.type not in ("identifier", "field_identifier"):
        return
    name = ctx.text(name_node)
    if ((is_warp_size_name(name) and is_int(ctx.src, value, 32)) or (
        WARP_LOG_NAME.search(name) and is_int(ctx.src, value, 5)
    )) and not knows_wave64(ctx):
        _report_constant(ctx, value, name, ctx.text(value))
