"""HP306 — shared memory above what the target GPUs' LDS holds per block.

Constant-sized ``__shared__`` arrays are summed per function (element size × extents,
with the file's ``#define``/``constexpr`` constants); constant sizes given to
``cudaFuncAttributeMaxDynamicSharedMemorySize`` and to the third ``<<<>>>`` argument are
checked too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hipport import gpus
from hipport.findings import Effort, Severity
from hipport.parse import Node, call_arguments, text
from hipport.registry import any_word_of
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.device.common import function_name, plain_callee
from hipport.rules.device.constants import record_constants, value_of
from hipport.rules.device.declarations import Declaration, recorder
from hipport.versions import short_version

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class SharedMemoryOver64K(SaysWhatItIs):
    """Shared memory above 64 KiB per block

    ## Why
    LDS is 64 KiB per workgroup on gfx908/gfx90a/gfx942 and the RDNA GPUs; only gfx950
    (MI350/MI355, ROCm 7.0+) has 160 KiB. Kernels tuned for an H100 (up to ~227 KiB) fail
    to launch or to compile. hipport sums constant-sized `__shared__` arrays per function
    (element size × extents, using `#define`/`constexpr` constants of the same file), and
    checks constant sizes given to `cudaFuncAttributeMaxDynamicSharedMemorySize` and to the
    third `<<<>>>` argument.

    ## Example
    ```cuda
    // before
    __shared__ float tile[128][160];   // 80 KiB
    // after
    __shared__ float tile[64][160];    // 40 KiB: smaller tile, more blocks
    ```

    ## Fix
    Shrink the tiles (template the kernel on the tile size and pick per GPU), or keep
    part of the working set in registers.
    """

    code = "HP306"
    run_time_only = True  # judged by the GPU passes (Rule.run_time_only)
    slug = "shared-memory-over-64k"
    severity = Severity.HIGH
    effort = Effort.MEDIUM


#: The first release whose GPUs are not all 64 KiB of LDS (gfx950).
_LARGER_LDS = (7, 0, 0)
_TYPE_SIZES = {
    "char": 1, "bool": 1, "int8_t": 1, "uint8_t": 1, "short": 2, "int16_t": 2, "uint16_t": 2,
    "half": 2, "__half": 2, "__nv_bfloat16": 2, "nv_bfloat16": 2, "int": 4, "unsigned": 4,
    "float": 4, "int32_t": 4, "uint32_t": 4, "half2": 4, "__half2": 4, "__nv_bfloat162": 4,
    "long": 8, "double": 8, "int64_t": 8, "uint64_t": 8, "size_t": 8, "long long": 8,
    "float2": 8, "int2": 8, "uint2": 8, "float3": 12, "int3": 12, "float4": 16, "int4": 16,
    "uint4": 16, "double2": 16, "longlong2": 16, "double4": 32, "char4": 4, "uchar4": 4,
}


@dataclass
class SharedBytes:
    """Per file: static shared bytes so far, by function start (-1: file scope)."""

    by_function: dict[int, int] = field(default_factory=dict)


def _lds_limit(ctx: "Context") -> int:
    """LDS bytes per block every --offload-arch GPU has (64 KiB; 160 KiB when all are gfx950)."""
    return gpus.lds_limit(gpus.archs_of(ctx.options))


def _lds_note(ctx: "Context") -> str:
    archs = ", ".join(a.split(":")[0] for a in gpus.archs_of(ctx.options))
    note = f"LDS per block is {_lds_limit(ctx) // 1024} KiB on {archs}"
    if ctx.rocm < _LARGER_LDS:
        return f"{note}, as on every GPU supported by ROCm {short_version(ctx.rocm)}"
    return note if "gfx950" in archs else f"{note}; only gfx950 (MI350/MI355) has 160 KiB"


def check_shared_size(ctx: "Context", expr: Node, what: str) -> None:
    """Report a constant size expression above the LDS limit."""
    size = value_of(ctx, text(ctx.src, expr))
    limit = _lds_limit(ctx)
    if size is not None and size > limit:
        ctx.report(SharedMemoryOver64K, expr, f"{what} is {size} bytes (> {limit // 1024} KiB): {_lds_note(ctx)}",
                   "shrink the tile, or choose the size per GPU at run time")


def _element_size(decl: Declaration) -> int | None:
    if decl.type_node is None:
        return None
    name = decl.type_text
    name = re.sub(r"^(?:unsigned|signed)\s+", "", name) if name not in _TYPE_SIZES else name
    return _TYPE_SIZES.get(name) or _TYPE_SIZES.get(name.removesuffix(" int"))


def _array_extents(src: bytes, decl: Node) -> list[str] | None:
    """Extent texts of an array declarator; None for non-arrays and unsized (dynamic) arrays."""
    extents: list[str] = []
    node = decl
    while node is not None and node.type == "array_declarator":
        size = node.child_by_field_name("size")
        if size is None:
            return None  # extern __shared__ T x[]: dynamic, sized at launch
        extents.append(text(src, size))
        node = node.child_by_field_name("declarator")
    return extents or None


@recorder(b"__shared__", codes=(SharedMemoryOver64K,))
def _shared_decl(decl: Declaration) -> None:
    """Add constant-sized ``__shared__`` arrays to their function's total; report the one crossing the limit."""
    if "__shared__" not in decl.qualifiers:
        return
    elem = _element_size(decl)
    if elem is None:
        return
    ctx, node = decl.ctx, decl.node
    totals = ctx.state(SharedBytes).by_function
    for d in node.children_by_field_name("declarator"):
        extents = _array_extents(ctx.src, d)
        if extents is None:
            continue
        total = elem
        for e in extents:
            v = value_of(ctx, e)
            if v is None:
                return
            total *= v
        key = decl.function_key
        before = totals.get(key, 0)
        totals[key] = before + total
        limit = _lds_limit(ctx)
        if before <= limit < before + total:
            ctx.report(SharedMemoryOver64K, node, f"static __shared__ memory in {function_name(ctx, node)} reaches "
                       f"{before + total} bytes (> {limit // 1024} KiB): {_lds_note(ctx)}",
                       "shrink the tile, or move part of the buffer to dynamic shared memory sized per GPU")


@recorder(b"const", codes=(SharedMemoryOver64K,), parameters=False)
def _constant_decl(decl: Declaration) -> None:
    """Constants after the shared arrays of the same declaration, as they are in scope."""
    record_constants(decl.node, decl.ctx, decl.qualifiers)


@REGISTRY.visits("call_expression", names=any_word_of({"cudaFuncSetAttribute"}), codes=(SharedMemoryOver64K,))
def _func_attribute(node: Node, ctx: "Context") -> None:
    plain = plain_callee(ctx, node)
    if plain is None or plain[1] != "cudaFuncSetAttribute":
        return
    args = call_arguments(node)
    if len(args) >= 3 and text(ctx.src, args[1]) == "cudaFuncAttributeMaxDynamicSharedMemorySize":
        check_shared_size(ctx, args[2], "dynamic shared memory limit set by cudaFuncSetAttribute")


@REGISTRY.visits("kernel_call_syntax", codes=(SharedMemoryOver64K,))
def _launch_config(node: Node, ctx: "Context") -> None:
    config = [c for c in node.named_children if c.type != "comment"]
    if len(config) >= 3:
        check_shared_size(ctx, config[2], "dynamic shared memory in this launch")
