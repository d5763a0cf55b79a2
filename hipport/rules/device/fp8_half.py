"""HP310, HP311 — reduced-precision types: fp8 formats that differ per GPU, and
operators on ``__half``/``__nv_bfloat16`` values that some builds reject.

Half variables and pointers are recorded per function from their declarations; an
operator is reported when an operand is such a variable (or an element ``p[i]`` of such
a pointer): ``p + i`` on a pointer is address arithmetic. Both are noted once per file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hipport import gpus
from hipport.findings import Effort, Severity
from hipport.parse import Node, text
from hipport.registry import any_bytes_of
from hipport.rules import REGISTRY, SaysWhatItIs
from hipport.rules.device.common import ARITH_OPS, func_key, once, operand_name, operator_text
from hipport.rules.device.declarations import Declaration, declared_names_and_indirection, recorder

if TYPE_CHECKING:
    from hipport.context import Context


@REGISTRY.rule
class Fp8Format(SaysWhatItIs):
    """fp8 types: FNUZ on gfx942, OCP on gfx950/gfx12

    ## Why
    `__nv_fp8_e4m3`/`__nv_fp8_e5m2` are OCP formats. gfx942 (MI300) implements the FNUZ
    variants (different bias, no negative zero, different NaN), so bit patterns and ranges
    differ (pytorch#144351); gfx950 and RDNA4 use OCP like NVIDIA.

    ## Example
    ```cuda
    // before
    __nv_fp8_e4m3 q = __nv_fp8_e4m3(x);
    // after
    #if defined(__gfx942__)
    __hip_fp8_e4m3_fnuz q(x);
    #else
    __hip_fp8_e4m3 q(x);
    #endif
    ```

    ## Fix
    Pick the format per target and rescale (e4m3 max is 448 in OCP, 240 in FNUZ);
    never reinterpret stored fp8 bytes across the two.
    """

    code = "HP310"
    slug = "fp8-format"
    severity = Severity.MEDIUM
    effort = Effort.MEDIUM


@REGISTRY.rule
class HalfOperators(SaysWhatItIs):
    """Arithmetic operators on `__half` / `__nv_bfloat16` values

    ## Why
    HIP defines these operators, but builds that define `__HIP_NO_HALF_OPERATORS__` or
    `__HIP_NO_BFLOAT16_OPERATORS__` (PyTorch extension builds do) reject them. Not reported
    on a `__half` value when the build undefines `__HIP_NO_HALF_OPERATORS__` (`-U`, as
    DeepSpeed's op builder does on ROCm), nor on a bfloat16 one when it undefines
    `__HIP_NO_BFLOAT16_OPERATORS__`.

    ## Example
    ```cuda
    // before
    __half y = a * b + c;
    // after
    __half y = __hadd(__hmul(a, b), c);
    ```

    ## Fix
    Use the intrinsic functions (`__hadd`, `__hmul`, `__hlt`…) or compute in float.
    """

    code = "HP311"
    slug = "half-operators"
    severity = Severity.LOW
    effort = Effort.SMALL


_FP8_RE = re.compile(r"^__nv_(?:fp8\w*|cvt_\w*fp8\w*)$")
#: The first release with the OCP fp8 API compatible with cuda_fp8.h.
_OCP_FP8_API = (7, 0, 0)
_HALF_TYPES = {"half", "__half", "half2", "__half2", "__nv_bfloat16", "nv_bfloat16", "__nv_bfloat162",
               "nv_bfloat162"}
#: The macro that takes each type's operators away (amd_hip_fp16.h, amd_hip_bf16.h).
_NO_OPERATORS = {t: "__HIP_NO_BFLOAT16_OPERATORS__" if "bfloat" in t else "__HIP_NO_HALF_OPERATORS__"
                 for t in _HALF_TYPES}


@REGISTRY.visits("identifier", "type_identifier", "field_identifier", names=lambda name: bool(_FP8_RE.match(name)),
                 codes=(Fp8Format,))
def _fp8_name(node: Node, ctx: "Context") -> None:
    name = text(ctx.src, node)
    if _FP8_RE.match(name):
        fix = "choose __hip_fp8_e4m3_fnuz (gfx942) or __hip_fp8_e4m3 (gfx950, gfx12) per target"
        note = "" if ctx.rocm >= _OCP_FP8_API else "; the OCP fp8 API compatible with cuda_fp8.h arrives in ROCm 7.0"
        once(ctx, "fp8", Fp8Format, node, f"fp8 type `{name}`: {_fp8_targets(ctx)}{note}", fix)


def _fp8_targets(ctx: "Context") -> str:
    """What the --offload-arch GPUs make of CUDA's (OCP) fp8, for HP310's message."""
    targets = gpus.gpus(gpus.archs_of(ctx.options))
    ocp = [g.arch for g in targets if g.fp8 == "ocp"]
    fnuz = [g.arch for g in targets if g.fp8 != "ocp"]
    if ocp and fnuz:
        return (f"{', '.join(ocp)} {_use(ocp)} CUDA's OCP encoding, {', '.join(fnuz)} FNUZ: no one HIP type "
                "means the same on all targets, so it is left as written")
    if ocp:
        return f"{', '.join(ocp)} {_use(ocp)} CUDA's OCP encoding: left as written, not mapped to gfx942's FNUZ type"
    return (f"{', '.join(fnuz)} {_use(fnuz)} the FNUZ encoding (gfx950/gfx12 the OCP one NVIDIA uses): values "
            "convert, bit patterns and ranges differ")


def _use(archs: list[str]) -> str:
    return "uses" if len(archs) == 1 else "use"


@dataclass
class HalfValues:
    """Per file: half/bfloat16 variables, and pointers and arrays of them, by (function start, name)."""

    values: set[tuple[int, str]] = field(default_factory=set)
    pointers: set[tuple[int, str]] = field(default_factory=set)
    #: the macro that would take the operators of each one's type away (``_NO_OPERATORS``)
    guard: dict[tuple[int, str], str] = field(default_factory=dict)


@recorder(b"half", b"bfloat16", codes=(HalfOperators,))
def _half_decl(decl: Declaration) -> None:
    if decl.last_type_part not in _HALF_TYPES:
        return
    st, key = decl.ctx.state(HalfValues), decl.function_key
    for n, indirect in declared_names_and_indirection(decl.node):
        (st.pointers if indirect else st.values).add((key, text(decl.ctx.src, n)))
        st.guard[key, text(decl.ctx.src, n)] = _NO_OPERATORS[decl.last_type_part]


@REGISTRY.visits("binary_expression", "assignment_expression", source=any_bytes_of(b"half", b"bfloat16"),
                 codes=(HalfOperators,))
def _operator(node: Node, ctx: "Context") -> None:
    st = ctx.state(HalfValues)
    if not st.values and not st.pointers:
        return
    op_text = operator_text(ctx, node)
    if op_text not in ARITH_OPS:
        return
    key = func_key(ctx, node)
    for side in (node.child_by_field_name("left"), node.child_by_field_name("right")):
        name = operand_name(ctx.src, side)
        element = side is not None and side.type == "subscript_expression"  # p[i]: a value
        if name is not None and ((key, name) in st.values or (element and (key, name) in st.pointers)):
            if st.guard[key, name] in ctx.options.undefines:
                return  # the build keeps the operators (-U): DeepSpeed's op builder on ROCm
            op = node.child_by_field_name("operator")
            once(ctx, "half-ops", HalfOperators, node, f"operator `{text(ctx.src, op)}` on half/bfloat16 "
                 f"value `{name}`: rejected when __HIP_NO_HALF_OPERATORS__ / __HIP_NO_BFLOAT16_OPERATORS__ "
                 "are defined (PyTorch extension builds)", "use __hadd/__hmul/__hlt… or compute in float")
            return
